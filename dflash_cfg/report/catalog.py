"""`catalog update` and `catalog show` as text or JSON: values in, strings out.

Repo ids, reasons and values come from the Hub, so text goes through `printable` and JSON through
`dumps_printable`: a hostile name cannot drive the terminal.
"""

from __future__ import annotations

import json
from typing import Any

from dflash_cfg.jsondoc.encode import dumps_printable
from dflash_cfg.model.catalog import Published, Revision, Shape, TargetShape
from dflash_cfg.model.catalog_update import AuthorTally, CatalogView, UpdateResult
from dflash_cfg.report.escape import printable

JSON_VERSION = 1


def _envelope(tool_version: str) -> dict[str, Any]:
    return {"version": JSON_VERSION, "tool": {"name": "dflash-cfg", "version": tool_version}}


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


# --- update ---------------------------------------------------------------------------------------------------


def update_text(result: UpdateResult) -> str:
    lines: list[str] = []
    for tally in result.authors:
        lines += _author_lines(tally)
    if result.bases:
        unknown = [b for b in result.bases if not b.known]
        lines.append(
            f"base models: {len(result.bases) - len(unknown)} read" + (f", {len(unknown)} unknown" if unknown else "")
        )
        lines += [f"  unknown   {printable(b.repo)}: {printable(b.why or 'not read')}" for b in unknown]
    retried = f", {_n(result.retries, 'request')} retried" if result.retries else ""
    lines.append(
        f"catalog: {printable(result.path)}: {_n(result.drafters, 'drafter')}, {_n(result.revisions, 'revision')} "
        f"({result.seconds:.1f} s{retried})"
    )
    if result.deadline is not None:
        left = sum(len(a.not_done) for a in result.authors)
        unlisted = sum(a.error is not None and a.listed is None for a in result.authors)
        parts = [f"{_n(left, 'repo')} not done"] if left or not unlisted else []
        parts += [f"{_n(unlisted, 'author')} not listed"] if unlisted else []
        lines.append(
            f"deadline: {result.deadline:g} s passed with {' and '.join(parts)}; what was read is kept, and a re-run "
            "reads only the rest"
        )
    return "\n".join(lines) + "\n"


def _author_lines(tally: AuthorTally) -> list[str]:
    name = printable(tally.author)
    if tally.error is not None:
        head = f"{name}: not listed: {printable(tally.error)}"
    else:
        listed = "" if tally.listed is None else f"{tally.listed} listed, "
        head = (
            f"{name}: {listed}{_n(len(tally.drafters), 'drafter')}: {_n(len(tally.new), 'new revision')}, "
            f"{len(tally.unchanged)} unchanged, {len(tally.skipped)} skipped, {len(tally.failed)} failed"
            + (f", {len(tally.not_done)} not done" if tally.not_done else "")
        )
    lines = [head]
    for new in tally.new:
        date = f"  {new.date[:10]}" if new.date else ""
        first = "  (new to the catalog)" if new.first else ""
        lines.append(f"  new       {printable(new.repo)}  {new.commit[:12]}{date}{first}")
    lines += [f"  failed    {printable(n.repo)}: {printable(n.why)}" for n in tally.failed]
    lines += [f"  not done  {printable(repo)}" for repo in tally.not_done]
    lines += [f"  skipped   {printable(n.repo)}: {printable(n.why)}" for n in tally.skipped]
    return lines


def update_json(result: UpdateResult, tool_version: str) -> str:
    doc = {
        **_envelope(tool_version),
        "complete": result.complete,
        "catalog": {"path": result.path, "drafters": result.drafters, "revisions": result.revisions},
        "authors": [
            {
                "author": t.author,
                "listed": t.listed,
                "error": t.error,
                "drafters": list(t.drafters),
                "new": [{"repo": n.repo, "commit": n.commit, "date": n.date, "first": n.first} for n in t.new],
                "unchanged": list(t.unchanged),
                "skipped": [{"repo": n.repo, "why": n.why} for n in t.skipped],
                "failed": [{"repo": n.repo, "why": n.why} for n in t.failed],
                "not_done": list(t.not_done),
            }
            for t in result.authors
        ],
        "base_models": [{"repo": b.repo, "known": b.known, "why": b.why} for b in result.bases],
        "deadline": result.deadline,
        "seconds": round(result.seconds, 3),
        "retries": result.retries,
    }
    return dumps_printable(doc, indent=2) + "\n"


# --- show -----------------------------------------------------------------------------------------------------


def show_text(view: CatalogView) -> str:
    if view.repo is not None:
        entry = view.catalog.get(view.repo)
        body = _entry_text(entry) if entry is not None else []
        return "\n".join([*body, "", view.says]) + "\n"
    header = ("repo", "method", "shape", "base model", "revisions", "newest", "trust")
    rows = [header, *(_row(e) for e in view.catalog.drafters)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    lines += [
        "",
        "shape: hidden size × draft layers → target depth; newest: commit and date of the newest revision",
        "",
    ]
    lines.append(view.says)
    return "\n".join(lines) + "\n"


def _shape_cell(shape: Shape | None) -> str:
    if shape is None:
        return "?"
    depth = "?" if shape.target_depth is None else str(shape.target_depth)
    return f"{shape.hidden_size}×{shape.num_hidden_layers}→{depth}"


def _row(entry: Published) -> tuple[str, ...]:
    newest = entry.revisions[-1] if entry.revisions else None
    commit = "-" if newest is None or newest.commit is None else newest.commit[:12]
    date = "" if newest is None or newest.date is None else f" {newest.date[:10]}"
    trusts = sorted({r.trust for r in entry.revisions}, key=lambda t: (t != "hub", t))
    return (
        printable(entry.repo) + (" (gated)" if entry.gated else ""),
        "?" if entry.shape is None else printable(entry.shape.method),
        _shape_cell(entry.shape),
        printable(entry.base_model or "-"),
        str(len(entry.revisions)),
        commit + date,
        ",".join(trusts),
    )


def _target(shape: TargetShape | None) -> str:
    if shape is None:
        return "its config not read"
    parts = [
        f"{shape.num_hidden_layers} layers" if shape.num_hidden_layers is not None else None,
        f"hidden {shape.hidden_size}" if shape.hidden_size is not None else None,
        f"vocab {shape.vocab_size}" if shape.vocab_size is not None else None,
    ]
    return ", ".join(p for p in parts if p)


def _entry_text(entry: Published) -> list[str]:
    lines = [printable(entry.repo) + ("  (gated)" if entry.gated else "")]
    shape = entry.shape
    if shape is not None:
        lines.append(
            f"  {printable(shape.method)}: {printable(str(shape.architecture))} ({printable(str(shape.model_type))}), "
            f"hidden {shape.hidden_size}, {shape.num_hidden_layers} layers, {shape.num_attention_heads} heads "
            f"({shape.num_key_value_heads} kv, head_dim {shape.head_dim}), intermediate {shape.intermediate_size}; "
            f"target depth {shape.target_depth}"
        )
    base = printable(entry.base_model) if entry.base_model else "not named by its card"
    lines.append(f"  base model: {base}" + (f" ({_target(entry.base_shape)})" if entry.base_model else ""))
    count = len(entry.revisions)
    for i, revision in enumerate(reversed(entry.revisions)):
        lines += ["", *_revision_lines(revision, f"revision {count - i} of {count}" + (" (newest)" if i == 0 else ""))]
    return lines


def _revision_lines(revision: Revision, title: str) -> list[str]:
    commit = revision.commit or "commit unknown"
    date = f", {revision.date}" if revision.date else ""
    partial = "" if revision.complete else ", a partial copy"
    lines = [f"  {title}: {commit}{date}, trust {revision.trust}{partial}"]
    if revision.git_blob_sha1:
        lines.append(f"    git blob {revision.git_blob_sha1}  sha256 {revision.sha256}")
    lines.append(f"    source {printable(revision.source)}")
    if revision.values is None:
        lines.append("    trained values unknown (only the hashes are recorded)")
        return lines
    width = max((len(k) for k in revision.values), default=0)
    lines += [f"    {printable(k).ljust(width)}  {printable(_value(v))}" for k, v in revision.values.items()]
    return lines


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def show_json(view: CatalogView, tool_version: str) -> str:
    doc = {
        **_envelope(tool_version),
        "user_catalog": {
            "path": view.user_path,
            "exists": view.user_exists,
            "updated": view.user_updated,
            "age": view.age,
        },
        "catalog": view.document,
    }
    return dumps_printable(doc, indent=2) + "\n"

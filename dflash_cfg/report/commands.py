"""What diff, fix, where and preflight print: values in, strings out, no I/O."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from dflash_cfg.jsondoc.document import git_blob_sha1
from dflash_cfg.jsondoc.encode import dumps
from dflash_cfg.report.check import JSON_VERSION
from dflash_cfg.report.escape import printable

if TYPE_CHECKING:  # the commands that produce these import them; `check` need not pay for it
    from dflash_cfg.commands.diff import DiffResult
    from dflash_cfg.commands.fix import Outcome, Plan
    from dflash_cfg.commands.preflight import Preflight
    from dflash_cfg.sources.where import Location


def _cell(value: Any) -> str:
    from dflash_cfg.lint.rules.upstream_rules import show

    text = show(value)
    return text if len(text) <= 40 else text[:37] + "..."


def diff_text(result: DiffResult) -> str:
    """One table: field, local raw, local through Qwen3Config, upstream; critical rows first, marked `!`."""
    up = result.upstream
    source = printable(f"{up.repo}@{up.commit}  ({up.revision})")
    head = [f"{click.style(printable(result.path), bold=True)}  vs  {source}"]
    if result.identical:
        head.append(click.style(f"identical to upstream (git blob {up.blob_id})", fg="green"))
    else:
        local = git_blob_sha1(result.local)[:12]
        head.append(f"differs from upstream: local git blob {local}, upstream {up.blob_id[:12]}")
    header = ("", "field", "local", "local via Qwen3Config", "upstream")
    table = [header]
    for r in result.rows:
        changed = r.differs or r.differs_effective
        if not (changed or r.critical):
            continue
        mark = ("!" if r.critical else " ") + ("≠" if changed else "=")
        local, seen, theirs = _cell(r.local), _cell(r.local_effective), _cell(r.upstream)
        table.append((mark, printable(r.pointer[1:]), printable(local), printable(seen), printable(theirs)))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [*head, ""]
    for i, row in enumerate(table):
        line = "  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip()
        if i and "≠" in row[0]:
            line = click.style(line, fg="red" if "!" in row[0] else "yellow")
        lines.append(line)
    same = sum(1 for r in result.rows if not (r.differs or r.differs_effective or r.critical))
    lines.append("")
    lines.append(
        f"! = DFlash-critical, ≠ differs; {same} other fields identical and not shown "
        f"(transformers {result.transformers_version})"
    )
    return "\n".join(lines) + "\n"


def diff_json(result: DiffResult) -> str:
    from dflash_cfg.lint.compare import MISSING, NOT_READ

    def value(v: Any) -> Any:
        return None if v is MISSING or v is NOT_READ else v

    up = result.upstream
    doc = {
        "version": JSON_VERSION,
        "path": result.path,
        "git_blob_sha1": git_blob_sha1(result.local),
        "upstream": {"repo": up.repo, "revision": up.revision, "commit": up.commit, "git_blob_sha1": up.blob_id},
        "identical": result.identical,
        "critical_differences": result.critical,
        "transformers_version": result.transformers_version,
        "rows": [
            {
                "pointer": r.pointer,
                "critical": r.critical,
                "differs": r.differs,
                "differs_effective": r.differs_effective,
                "local": value(r.local),
                "local_present": r.local is not MISSING,
                "local_effective": value(r.local_effective),
                "upstream": value(r.upstream),
                "upstream_present": r.upstream is not MISSING,
                "upstream_effective": value(r.upstream_effective),
            }
            for r in result.rows
        ],
    }
    return dumps(doc, indent=2) + "\n"


def fix_unchanged_text(p: Plan) -> str:
    same = f" (identical to {p.upstream.repo}@{p.upstream.commit})" if p.upstream and p.identical_to_upstream else ""
    return printable(f"{p.path}: nothing to change{same}")


def fix_written_text(p: Plan, out: Outcome) -> str:
    """What was written, with the hashes to check it by on another host."""
    w = out.written
    same = f"  identical to {p.upstream.repo}@{p.upstream.commit}" if p.upstream and p.identical_to_upstream else ""
    if w.pull_request is not None:  # the Hub: proposed, not written
        lines = [f"opened a pull request for {w.path}: {w.pull_request}", f"  sha256   {w.sha256}"]
        return printable("\n".join([*lines, f"  git blob {w.git_blob_sha1}{same}"]) + "\n", keep="\n")
    lines = [f"wrote {w.path}", f"  sha256   {w.sha256}", f"  git blob {w.git_blob_sha1}{same}"]
    if w.replaced_link:
        lines.append(f"  replaced the symlink to {w.replaced_link} with a regular file (the target is untouched)")
    if w.backup:
        lines.append(f"  backup   {w.backup}")
    folder = os.path.dirname(w.path)  # w.path is absolute
    if out.lock_file:
        lines.append(f"  recorded in {out.lock_file}; on each serving host: dflash-cfg verify {folder}")
    lines.append(f"  check it anywhere with: dflash-cfg check {folder} --expect-sha256 {w.sha256}")
    return printable("\n".join(lines) + "\n", keep="\n")


def where_text(loc: Location) -> str:
    rows = [("model", f"{loc.name}  ({loc.source})"), ("config", str(loc.config))]
    if loc.is_link:
        rows.append(("reads", f"{loc.resolved}  (symlink target)"))
    if loc.repo:
        ref = f"  ({loc.revision} -> commit)" if loc.revision and loc.revision != loc.commit else ""
        rows.append(("repo", loc.repo))
        rows.append(("commit", f"{loc.commit}{ref}"))
    rows += [("sha256", loc.sha256), ("git blob", loc.git_blob_sha1)]
    return "".join(f"{k:<9} {printable(v)}\n" for k, v in rows)


def where_json(loc: Location) -> str:
    doc = {
        "version": JSON_VERSION,
        "model": loc.name,
        "source": loc.source,
        "config": str(loc.config),
        "resolved": str(loc.resolved),
        "repo": loc.repo,
        "revision": loc.revision,
        "commit": loc.commit,
        "sha256": loc.sha256,
        "git_blob_sha1": loc.git_blob_sha1,
    }
    return dumps(doc, indent=2) + "\n"


def preflight_text(p: Preflight) -> str:
    launch = p.launch
    tokens = (
        f"num_speculative_tokens {launch.num_speculative_tokens}"
        if launch.engine == "vllm"
        else f"num_draft_tokens {launch.num_draft_tokens}"
    )
    lines = [
        f"preflight {launch.engine}: method {launch.method or '(auto)'}, {tokens}, "
        f"tensor-parallel {launch.tensor_parallel_size}",
        f"  target  {launch.target} -> {p.target.config}" + (f" @ {p.target.commit[:12]}" if p.target.commit else ""),
        f"  drafter {launch.drafter} -> {p.drafter.config}"
        + (f" @ {p.drafter.commit[:12]}" if p.drafter.commit else ""),
    ]
    return printable("\n".join(lines) + "\n", keep="\n")

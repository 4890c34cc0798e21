"""Reporters: Report -> str. Text for people, JSON (version 1) and SARIF 2.1.0 for machines."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import click

from dflash_cfg.jsondoc.document import git_blob_sha1
from dflash_cfg.lint.rules import ALL, REGISTRY, Rule
from dflash_cfg.model import FileReport, Finding, Report, Severity

if TYPE_CHECKING:  # the commands that produce these import them; `check` need not pay for it
    from dflash_cfg.commands.diff import DiffResult
    from dflash_cfg.commands.fix import Outcome, Plan
    from dflash_cfg.commands.preflight import Preflight
    from dflash_cfg.sources.where import Location

COLOURS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
JSON_VERSION = 1
INFORMATION_URI = "https://github.com/dflash-cfg/dflash-cfg"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_counts(report: Report) -> dict[str, int]:
    return {
        "files": len(report.files),
        "errors": report.count(Severity.ERROR),
        "warnings": report.count(Severity.WARNING),
        "infos": report.count(Severity.INFO),
    }


def text(report: Report) -> str:
    """Grouped per file; `path:line:col: severity ID name: message` so editors can jump to it.

    Styled with click.style; the CLI strips the styling when colour is off.
    """
    out: list[str] = []
    for f in report.files:
        out.extend(_text_file(f))
    counts = summary_counts(report)
    skipped = sum(1 for f in report.files if f.kind == "skipped")
    parts = [
        _plural(counts["files"], "file") + (f" ({skipped} skipped)" if skipped else ""),
        click.style(_plural(counts["errors"], "error"), fg="red", bold=True)
        if counts["errors"]
        else _plural(0, "error"),
        _plural(counts["warnings"], "warning"),
        _plural(counts["infos"], "info"),
    ]
    version = report.transformers_version
    tail = f"transformers {version}" if version else "transformers not installed"
    out.append(f"{', '.join(parts)}  ({tail}, dflash-cfg {report.tool_version})")
    return "\n".join(out) + "\n"


def _text_file(f: FileReport) -> list[str]:
    if f.kind == "skipped":
        return [click.style(f"{f.path}: skipped: {f.note}", dim=True)]
    head = f"{click.style(f.path, bold=True)}  [{f.kind}, sha256 {(f.sha256 or '')[:12]}]"
    lines = [head]
    if f.upstream is not None:
        lines.append(f"  upstream {f.upstream.repo}@{f.upstream.commit[:12]} ({f.upstream.revision})")
    lines.extend(f"  {p}" for p in f.picture)
    for x in f.findings:
        lines.append("  " + _text_finding(f.path, x))
        if x.fix is not None:
            lines.append(f"      fix{'' if x.fix.safe else ' (needs review)'}: {x.fix.summary}")
    if not f.findings:
        lines.append(click.style("  ok", fg="green"))
    return lines


def _text_finding(path: str, x: Finding) -> str:
    where = f"{path}:{x.line}:{x.column}" if x.line is not None else path
    level = click.style(x.severity.label, fg=COLOURS[x.severity], bold=x.severity == Severity.ERROR)
    ptr = f" {x.pointer}" if x.pointer else ""
    return f"{where}: {level} {x.rule} {x.name}{ptr}: {x.message}"


def as_json(report: Report) -> str:
    doc = {
        "version": JSON_VERSION,
        "tool": {"name": "dflash-cfg", "version": report.tool_version},
        "transformers_version": report.transformers_version,
        "files": [_json_file(f) for f in report.files],
        "summary": summary_counts(report),
    }
    if report.errors:
        doc["errors"] = list(report.errors)
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _json_file(f: FileReport) -> dict[str, Any]:
    out: dict[str, Any] = {
        "path": f.path,
        "sha256": f.sha256,
        "git_blob_sha1": f.git_blob_sha1,
        "kind": f.kind,
        "upstream": None
        if f.upstream is None
        else {
            "repo": f.upstream.repo,
            "revision": f.upstream.revision,
            "commit": f.upstream.commit,
            "git_blob_sha1": f.upstream.git_blob_sha1,
        },
        "findings": [x.to_json() for x in f.findings],
    }
    if f.note:
        out["note"] = f.note
    return out


SARIF_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def sarif(report: Report) -> str:
    used = sorted({x.rule for f in report.files for x in f.findings})
    index = {rule_id: i for i, rule_id in enumerate(used)}
    results = []
    for f in report.files:
        for x in f.findings:
            region: dict[str, int] = {"startLine": x.line or 1}
            if x.column is not None:
                region["startColumn"] = x.column
            key = f"{f.path}\0{x.rule}\0{x.pointer}".encode("utf-8", "backslashreplace")
            fingerprint = hashlib.sha256(key).hexdigest()[:32]
            result: dict[str, Any] = {
                "ruleId": x.rule,
                "ruleIndex": index[x.rule],
                "level": SARIF_LEVELS[x.severity],
                "message": {"text": x.message},
                "locations": [
                    {
                        "physicalLocation": {"artifactLocation": {"uri": _uri(f.path)}, "region": region},
                        "logicalLocations": [{"fullyQualifiedName": x.pointer or "/", "kind": "object"}],
                    }
                ],
                "partialFingerprints": {"dflashCfg/v1": fingerprint},
                "properties": {"pointer": x.pointer},
            }
            if x.fix is not None:
                result["properties"]["fix"] = x.fix.to_json()
            results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "dflash-cfg",
                        "version": report.tool_version,
                        "informationUri": INFORMATION_URI,
                        "rules": [_sarif_rule(REGISTRY[r]) for r in used],
                    }
                },
                "results": results,
                "properties": {"transformers_version": report.transformers_version},
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _uri(path: str) -> str:
    """A SARIF artifact URI (RFC 3986): relative paths stay relative, everything percent-encoded."""
    posix = path.replace("\\", "/").removeprefix("./")
    if posix.startswith("/"):
        return "file://" + quote(posix, safe="/")
    return quote(posix, safe="/")


def _sarif_rule(r: Rule) -> dict[str, Any]:
    return {
        "id": r.id,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.doc},
        "help": {"text": r.doc},
        "defaultConfiguration": {"level": SARIF_LEVELS[r.severity]},
    }


REPORTERS: dict[str, Callable[[Report], str]] = {"text": text, "json": as_json, "sarif": sarif}


def catalogue_text(rules: tuple[Rule, ...] = ALL, verbose: bool = False) -> str:
    out = []
    for r in rules:
        out.append(f"{click.style(r.id, bold=True)}  {r.name:<26} {r.severity.label:<8} {r.summary}")
        if verbose:
            out.extend("    " + line if line else "" for line in r.doc.splitlines()[1:])
            out.append("")
    return "\n".join(out) + "\n"


def catalogue_json(rules: tuple[Rule, ...] = ALL) -> str:
    return (
        json.dumps(
            [
                {"id": r.id, "name": r.name, "severity": r.severity.label, "summary": r.summary, "doc": r.doc}
                for r in rules
            ],
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )


def _cell(value: Any) -> str:
    from dflash_cfg.lint.rules.upstream_rules import show

    text = show(value)
    return text if len(text) <= 40 else text[:37] + "..."


def diff_text(result: DiffResult) -> str:
    """One table: field, local raw, local through Qwen3Config, upstream; critical rows first, marked `!`."""
    up = result.upstream
    head = [f"{click.style(result.path, bold=True)}  vs  {up.repo}@{up.commit}  ({up.revision})"]
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
        table.append((mark, r.pointer[1:], _cell(r.local), _cell(r.local_effective), _cell(r.upstream)))
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
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def fix_unchanged_text(p: Plan) -> str:
    same = f" (identical to {p.upstream.repo}@{p.upstream.commit})" if p.upstream and p.identical_to_upstream else ""
    return f"{p.path}: nothing to change{same}"


def fix_written_text(p: Plan, out: Outcome) -> str:
    """What was written, with the hashes to check it by on another host."""
    w = out.written
    same = f"  identical to {p.upstream.repo}@{p.upstream.commit}" if p.upstream and p.identical_to_upstream else ""
    lines = [f"wrote {w.path}", f"  sha256   {w.sha256}", f"  git blob {w.git_blob_sha1}{same}"]
    if w.replaced_link:
        lines.append(f"  replaced the symlink to {w.replaced_link} with a regular file (the target is untouched)")
    if w.backup:
        lines.append(f"  backup   {w.backup}")
    folder = os.path.dirname(w.path)  # w.path is absolute
    if out.lock_file:
        lines.append(f"  recorded in {out.lock_file}; on each serving host: dflash-cfg verify {folder}")
    lines.append(f"  check it anywhere with: dflash-cfg check {folder} --expect-sha256 {w.sha256}")
    return "\n".join(lines) + "\n"


def where_text(loc: Location) -> str:
    rows = [("model", f"{loc.name}  ({loc.source})"), ("config", str(loc.config))]
    if loc.is_link:
        rows.append(("reads", f"{loc.resolved}  (symlink target)"))
    if loc.repo:
        ref = f"  ({loc.revision} -> commit)" if loc.revision and loc.revision != loc.commit else ""
        rows.append(("repo", loc.repo))
        rows.append(("commit", f"{loc.commit}{ref}"))
    rows += [("sha256", loc.sha256), ("git blob", loc.git_blob_sha1)]
    return "".join(f"{k:<9} {v}\n" for k, v in rows)


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
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


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
    return "\n".join(lines) + "\n"

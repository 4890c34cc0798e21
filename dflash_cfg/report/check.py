"""A check's Report as text or JSON (version 1), and the statistics both can add: values in, strings out,
no I/O. The CI formats (GitHub workflow commands, SARIF) are in report.github and report.sarif."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import click

from dflash_cfg.jsondoc.encode import dumps_printable
from dflash_cfg.model import FileReport, Finding, Identity, Report, Severity, display
from dflash_cfg.report.escape import printable
from dflash_cfg.report.scope import message

COLOURS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
JSON_VERSION = 1
INFORMATION_URI = "https://github.com/dflash-cfg/dflash-cfg"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


_KEYS = {Severity.ERROR: "errors", Severity.WARNING: "warnings", Severity.INFO: "infos"}


def summary_counts(report: Report) -> dict[str, Any]:
    """The run's counts: the findings it gates on by severity, how many of all a safe fix repairs, how many
    --min-severity left out, and apart (`not_gating`) the findings about engines or releases it does not gate
    on, with why. The counts add up to every finding found."""
    counted = dict.fromkeys(_KEYS.values(), 0)
    apart = dict.fromkeys(_KEYS.values(), 0)
    fixable = 0
    for f in report.files:
        for x in f.findings:
            (counted if report.gating(x) is True else apart)[_KEYS[x.severity]] += 1
            fixable += x.fix is not None and x.fix.safe
    why = not_gating_why(report) if any(apart.values()) else None
    return {
        "files": len(report.files),
        **counted,
        "fixable": fixable,
        "hidden": report.hidden,
        "not_gating": {**apart, "why": why},
    }


def not_gating_why(report: Report) -> str:
    """Why the findings counted apart fail nothing: "for SGLang only; nothing says which engines serve the
    drafters", "for SGLang only; the run gates on vLLM (--engine)"."""
    names: list[str] = []
    for x in report.apart():
        for r in x.engines:
            if r.said not in names:
                names.append(r.said)
    scope = f"for {', '.join(names)} only"
    if not report.served:
        return f"{scope}; nothing says which engines serve the drafters (--engine, or engines in the project config)"
    serving = ", ".join(display(engine, version) for engine, version in report.served)
    by = f" ({report.served_by})" if report.served_by else ""
    return f"{scope}; the run gates on {serving}{by}"


def _summary_text(report: Report) -> list[str]:
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
    if counts["fixable"]:
        parts.append(f"{counts['fixable']} fixable")
    if report.hidden:
        parts.append(f"{report.hidden} below --min-severity {report.min_severity.label} not shown")
    version = report.transformers_version
    tail = f"transformers {version}" if version else "transformers not installed"
    lines = [f"{', '.join(parts)}  ({tail}, dflash-cfg {report.tool_version})"]
    apart = counts["not_gating"]
    if apart["why"] is not None:
        numbers = [_plural(apart[key], key[:-1]) for key in _KEYS.values() if apart[key]]
        lines.append(printable(f"not gating: {' and '.join(numbers)} {apart['why']}"))
    return lines


@dataclass(frozen=True, kw_only=True)
class Statistic:
    """How often one rule fired at one severity in a run, and how many of those findings `dflash-cfg fix`
    repairs (a safe fix). A rule that reports some cases at another severity has a row for each."""

    rule: str
    name: str
    severity: Severity
    count: int
    fixable: int

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity.label,
            "count": self.count,
            "fixable": self.fixable,
        }


def statistics(report: Report) -> tuple[Statistic, ...]:
    """Most frequent first, then by rule id and severity (most severe first), as ruff's --statistics."""
    counts: dict[tuple[str, str, Severity], list[int]] = {}
    for f in report.files:
        for x in f.findings:
            n = counts.setdefault((x.rule, x.name, x.severity), [0, 0])
            n[0] += 1
            n[1] += x.fix is not None and x.fix.safe
    rows = [
        Statistic(rule=rule, name=name, severity=severity, count=n, fixable=fixable)
        for (rule, name, severity), (n, fixable) in counts.items()
    ]
    return tuple(sorted(rows, key=lambda s: (-s.count, s.rule, -s.severity)))


def statistics_text(report: Report) -> str:
    """`count  ID  name  severity  N fixable`, aligned; "" when nothing fired."""
    rows = statistics(report)
    if not rows:
        return ""
    width = max(len(str(s.count)) for s in rows)
    name = max(len(s.name) for s in rows)
    lines = [
        f"{s.count:>{width}}  {s.rule}  {s.name:<{name}}  {s.severity.label:<7}  "
        f"{f'{s.fixable} fixable' if s.fixable else ''}".rstrip()
        for s in rows
    ]
    return "\n".join(lines) + "\n"


def text(
    report: Report, *, quiet: bool = False, with_statistics: bool = False, only: frozenset[str] | None = None
) -> str:
    """Grouped per file; `path:line:col: severity ID name: message` so editors can jump to it.
    `quiet`: the finding lines only (no file headers, pictures, fixes, "ok" lines or summary).
    `only`: the paths of the files to show (those that fail the run: the hook's output); the summary counts
    every file and says how many were left out.

    Styled with click.style; the CLI strips the styling when colour is off.
    """
    if quiet:
        body = "".join(_text_finding(f.path, x) + "\n" for f in report.files for x in f.findings)
        return body + (statistics_text(report) if with_statistics else "")
    out: list[str] = []
    for f in report.files:
        if only is None or f.path in only:
            out.extend(_text_file(f))
    out.extend(_summary_text(report))
    if only is not None and (passing := sum(1 for f in report.files if f.path not in only)):
        out.append(f"{passing} passing {'file' if passing == 1 else 'files'} not shown (-v shows them)")
    if with_statistics and (table := statistics_text(report)):
        out += ["", table.rstrip("\n")]
    return "\n".join(out) + "\n"


def _text_file(f: FileReport) -> list[str]:
    if f.kind == "skipped":
        return [click.style(printable(f"{f.path}: skipped: {f.note}"), dim=True)]
    through = f", through {f.config_class}" if f.config_class else ""
    head = (
        f"{click.style(printable(f.path), bold=True)}  [{f.kind}, sha256 {(f.sha256 or '')[:12]}{printable(through)}]"
    )
    lines = [head]
    if f.upstream is not None:
        up = f.upstream
        cached = f"; {up.unreachable}: compared with the local cache's copy" if up.unreachable else ""
        by = f", found by {_FOUND_BY[f.identity.found_by]}" if f.identity is not None else ""
        lines.append(printable(f"  upstream {up.repo}@{up.commit[:12]} ({up.revision}{by}{cached})"))
    elif f.identity is not None:
        lines.append(printable(f"  published {identity_line(f.identity)}"))
    lines.extend(printable(f"  {p}") for p in f.picture)
    for x in f.findings:
        lines.append("  " + _text_finding(f.path, x))
        if x.fix is not None:
            lines.append(printable(f"      fix{'' if x.fix.safe else ' (needs review)'}: {x.fix.summary}"))
    if not f.findings:
        lines.append(click.style("  ok", fg="green"))
    return lines


# How the text report says an upstream was found (model.catalog.FoundBy).
_FOUND_BY = {
    "option": "--from-hub",
    "project": "the project config",
    "cache": "the Hugging Face cache snapshot it is in",
    "lock": "the lock dflash-cfg wrote",
    "hf-path": "its hf:// path",
    "catalog": "the catalog",
}
_MATCH = {
    "identical": "byte for byte a published revision",
    "trained": "the trained values of a published revision",
    "older": "the trained values of an older revision",
    "differs": "its shape; trained values that match no published revision",
    "edited": "a cache snapshot edited in place",
}


def identity_line(identity: Identity) -> str:
    """`z-lab/X@28cadb796e2f (the catalog: its shape; ...)`: which published drafter a file is, and how known."""
    at = f"@{identity.commit[:12]}" if identity.commit else ""
    match = f": {_MATCH[identity.match]}" if identity.match else ""
    others = f"; same shape: {', '.join(identity.others)}" if identity.others else ""
    return f"{identity.repo}{at} (found by {_FOUND_BY[identity.found_by]}{match}{others})"


def _text_finding(path: str, x: Finding) -> str:
    where = printable(f"{path}:{x.line}:{x.column}" if x.line is not None else path)
    level = click.style(x.severity.label, fg=COLOURS[x.severity], bold=x.severity == Severity.ERROR)
    ptr = printable(f" {x.pointer}") if x.pointer else ""
    return f"{where}: {level} {x.rule} {x.name}{ptr}: {printable(message(x))}"


def json_chunks(
    report: Report, *, with_statistics: bool = False, extra: Mapping[str, Any] | None = None
) -> Iterator[str]:
    """The JSON document in pieces, a file at a time: the bytes of one dump of the whole document, without
    ever holding it (for a tree of 10,000 files, about 13 MB of text, and as much again in pieces). `extra`:
    top-level keys a command adds after "summary" (preflight's "engine_check")."""
    doc: dict[str, Any] = {
        "version": JSON_VERSION,
        "tool": {"name": "dflash-cfg", "version": report.tool_version},
        "transformers_version": report.transformers_version,
        "files": [],
        "summary": summary_counts(report),
        **(extra or {}),
    }
    if with_statistics:
        doc["statistics"] = [s.to_json() for s in statistics(report)]
    if report.errors:
        doc["errors"] = list(report.errors)
    whole = dumps_printable(doc, indent=2) + "\n"
    if not report.files:
        yield whole
        return
    before, after = whole.split('"files": []', 1)  # a key: no string value can hold it unescaped
    yield before + '"files": ['
    for i, f in enumerate(report.files):
        yield ("\n    " if i == 0 else ",\n    ") + dumps_printable(_json_file(f), indent=2).replace("\n", "\n    ")
    yield "\n  ]" + after


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
            "unreachable": f.upstream.unreachable,
        },
        "identity": None if f.identity is None else f.identity.to_json(),
        "findings": [x.to_json() for x in f.findings],
    }
    if f.note:
        out["note"] = f.note
    return out

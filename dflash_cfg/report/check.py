"""A check's Report as text, JSON (version 1) or SARIF 2.1.0: values in, strings out, no I/O."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import click

from dflash_cfg.jsondoc.encode import dumps
from dflash_cfg.lint.rules import REGISTRY, Rule
from dflash_cfg.model import FileReport, Finding, Report, Severity
from dflash_cfg.report.escape import printable

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
        return [click.style(printable(f"{f.path}: skipped: {f.note}"), dim=True)]
    through = f", through {f.config_class}" if f.config_class else ""
    head = (
        f"{click.style(printable(f.path), bold=True)}  [{f.kind}, sha256 {(f.sha256 or '')[:12]}{printable(through)}]"
    )
    lines = [head]
    if f.upstream is not None:
        up = f.upstream
        lines.append(printable(f"  upstream {up.repo}@{up.commit[:12]} ({up.revision})"))
    lines.extend(printable(f"  {p}") for p in f.picture)
    for x in f.findings:
        lines.append("  " + _text_finding(f.path, x))
        if x.fix is not None:
            lines.append(printable(f"      fix{'' if x.fix.safe else ' (needs review)'}: {x.fix.summary}"))
    if not f.findings:
        lines.append(click.style("  ok", fg="green"))
    return lines


def _text_finding(path: str, x: Finding) -> str:
    where = printable(f"{path}:{x.line}:{x.column}" if x.line is not None else path)
    level = click.style(x.severity.label, fg=COLOURS[x.severity], bold=x.severity == Severity.ERROR)
    ptr = printable(f" {x.pointer}") if x.pointer else ""
    return f"{where}: {level} {x.rule} {x.name}{ptr}: {printable(x.message)}"


def as_json(report: Report) -> str:
    doc = {
        "version": JSON_VERSION,
        "tool": {"name": "dflash-cfg", "version": report.tool_version},
        "transformers_version": report.transformers_version,
        "files": [],
        "summary": summary_counts(report),
    }
    if report.errors:
        doc["errors"] = list(report.errors)
    whole = dumps(doc, indent=2) + "\n"
    if not report.files:
        return whole
    # The same bytes as one dump of the whole document, made file by file: one dump of a tree of
    # 10,000 files holds every small piece of its output at once (about 100 MB).
    before, after = whole.split('"files": []', 1)  # a key: no string value can hold it unescaped
    parts = [before, '"files": [']
    for i, f in enumerate(report.files):
        parts.append("\n    " if i == 0 else ",\n    ")
        parts.append(dumps(_json_file(f), indent=2).replace("\n", "\n    "))
    parts += ["\n  ]", after]
    return "".join(parts)


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
    return dumps(log, indent=2) + "\n"


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

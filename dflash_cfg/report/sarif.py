"""A check's Report as SARIF 2.1.0 for GitHub code scanning: values in, a string out, no I/O.

What the command adds for it (Report.root, FileReport.artifact): the repository root, each file's
path under it, and the file's text, from which come the regions' ends, the line hashes GitHub uses to
follow an alert across commits, and each fix as the replacement `dflash-cfg fix` would make.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from dflash_cfg.errors import PatchError
from dflash_cfg.jsondoc.encode import dumps_printable
from dflash_cfg.model import Artifact, FileReport, Finding, Fix, Report, RuleDoc, Severity
from dflash_cfg.report.catalogue import markdown, plain
from dflash_cfg.report.check import not_gating_why, statistics, summary_counts
from dflash_cfg.report.regions import Region, Text
from dflash_cfg.report.scope import message

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/dflash-cfg/dflash-cfg"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
SRCROOT = "%SRCROOT%"


def sarif(report: Report, rule_docs: Mapping[str, RuleDoc], *, with_statistics: bool = False) -> str:
    """`rule_docs`: by id, the docs of (at least) every rule the findings name (`Report.rule_ids`), which the
    run describes in its driver's rules."""
    used = report.rule_ids()
    index = {rule_id: i for i, rule_id in enumerate(used)}
    apart = not_gating_why(report) if report.apart() else None
    results = [result for f in report.files for result in _results(f, index, report, apart)]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "dflash-cfg",
                "version": report.tool_version,
                "informationUri": INFORMATION_URI,
                "rules": [_rule(rule_docs[r]) for r in used],
            }
        },
    }
    if report.root is not None:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": _directory_uri(report.root)}}
    run["columnKind"] = "unicodeCodePoints"  # the linter counts columns in characters
    run["results"] = results
    properties: dict[str, Any] = {
        "transformers_version": report.transformers_version,
        "summary": summary_counts(report),
    }
    if with_statistics:
        properties["statistics"] = [s.to_json() for s in statistics(report)]
    if report.errors:
        properties["errors"] = list(report.errors)
    run["properties"] = properties
    if report.errors:  # files that could not be read: the run did not complete (exit 2)
        run["invocations"] = [
            {
                "executionSuccessful": False,
                "toolExecutionNotifications": [{"level": "error", "message": {"text": e}} for e in report.errors],
            }
        ]
    log = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return dumps_printable(log, indent=2) + "\n"


def _results(f: FileReport, index: dict[str, int], report: Report, apart: str | None) -> Iterable[dict[str, Any]]:
    """`apart`: why the findings this run does not gate on fail nothing (each such result says it)."""
    if not f.findings:
        return
    artifact = f.artifact or Artifact()
    location = _artifact_location(f.path, artifact)
    text = Text(artifact.text) if artifact.text is not None else None
    hashes = (
        _line_hashes(("\ufeff" if artifact.bom else "") + text.text, {x.line or 1 for x in f.findings}) if text else {}
    )
    for x in f.findings:
        region = text.region(x) if text is not None else None
        key = f"{f.path}\0{x.rule}\0{x.pointer}".encode("utf-8", "backslashreplace")
        fingerprints = {"dflashCfg/v1": hashlib.sha256(key).hexdigest()[:32]}
        if (line_hash := hashes.get(x.line or 1)) is not None:
            fingerprints["primaryLocationLineHash"] = line_hash
        result: dict[str, Any] = {
            "ruleId": x.rule,
            "ruleIndex": index[x.rule],
            "level": LEVELS[x.severity],
            "message": {"text": message(x)},
            "locations": [
                {
                    "physicalLocation": {"artifactLocation": location, "region": _region(x, region)},
                    "logicalLocations": [{"fullyQualifiedName": x.pointer or "/", "kind": "object"}],
                }
            ],
            "partialFingerprints": fingerprints,
            "properties": {"pointer": x.pointer, **({"engines": [str(r) for r in x.engines]} if x.engines else {})},
        }
        if apart is not None and report.gating(x) is not True:
            result["properties"]["not_gating"] = apart
        if x.fix is not None:
            fix, why = _fix(x.fix, location, text)
            if fix is not None:
                result["fixes"] = [fix]
            else:  # kept as data, with the reason it is no SARIF fix
                result["properties"]["fix"] = {**x.fix.to_json(), "not_a_sarif_fix": why}
        yield result


def _region(x: Finding, region: Region | None) -> dict[str, int]:
    if region is None:
        out = {"startLine": x.line or 1}
        if x.column is not None:
            out["startColumn"] = x.column
        return out
    return _bounds(region)


def _bounds(region: Region) -> dict[str, int]:
    return {
        "startLine": region.start_line,
        "startColumn": region.start_column,
        "endLine": region.end_line,
        "endColumn": region.end_column,
    }


def _fix(fix: Fix, location: dict[str, str], text: Text | None) -> tuple[dict[str, Any] | None, str]:
    """The fix as a SARIF fix object: the replacement the format-preserving patch makes on the file."""
    description = fix.summary + ("" if fix.safe else " (needs review)")
    if fix.edits and fix.patch:
        return None, "it mixes byte edits and a JSON Patch"
    if fix.edits:  # below JSON (a byte-order mark): byte regions of the file as it is on disk
        replacements: list[dict[str, Any]] = []
        for e in fix.edits:
            replacement: dict[str, Any] = {"deletedRegion": {"byteOffset": e.start, "byteLength": e.end - e.start}}
            if e.replacement:
                replacement["insertedContent"] = {"binary": base64.b64encode(e.replacement).decode("ascii")}
            replacements.append(replacement)
    elif text is None:
        return None, "the file was not read again for the report (changed, unreadable or too large)"
    else:
        from dflash_cfg.jsondoc.textpatch import apply_to_text  # only for a fix to render

        try:
            new = apply_to_text(text.text, fix.patch)
        except PatchError as exc:
            return None, f"the patch does not apply to the file: {exc}"
        old = text.text
        start = 0
        limit = min(len(old), len(new))
        while start < limit and old[start] == new[start]:
            start += 1
        end_old, end_new = len(old), len(new)
        while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
            end_old -= 1
            end_new -= 1
        # Whole lines, as a reviewer reads a change: the common prefix and suffix are the same text on
        # both sides, so widening into them changes nothing the replacement does.
        widen = start - (old.rfind("\n", 0, start) + 1)
        start -= widen
        if end_old > start and old[end_old - 1] == "\n":
            pass  # already ends a line
        else:
            newline = old.find("\n", end_old)
            more = (newline + 1 if newline != -1 else len(old)) - end_old
            end_old, end_new = end_old + more, end_new + more
        deleted = Region(*text.position(start), *text.position(end_old))
        replacements = [{"deletedRegion": _bounds(deleted), "insertedContent": {"text": new[start:end_new]}}]
    fix_object = {
        "description": {"text": description},
        "artifactChanges": [{"artifactLocation": location, "replacements": replacements}],
        "properties": {"safe": fix.safe, "patch": [op.to_json() for op in fix.patch]},
    }
    return fix_object, ""


def _artifact_location(path: str, artifact: Artifact) -> dict[str, str]:
    if artifact.repo_path is not None:
        return {"uri": _quote(artifact.repo_path), "uriBaseId": SRCROOT}
    return {"uri": _uri(path)}


def _quote(posix: str) -> str:
    return quote(posix, safe="/", errors="surrogateescape")


def _uri(path: str) -> str:
    """A SARIF artifact URI (RFC 3986): relative paths stay relative, everything percent-encoded."""
    posix = path.replace("\\", "/").removeprefix("./")
    if posix.startswith("/"):
        return "file://" + _quote(posix)
    return _quote(posix)


def _directory_uri(root: str) -> str:
    """An absolute directory as a file URI ending in "/" (SARIF 3.14.14: a base URI ends with a slash)."""
    uri = _uri(root if root.startswith("/") else "/" + root.replace("\\", "/"))
    return uri if uri.endswith("/") else uri + "/"


def _rule(r: RuleDoc) -> dict[str, Any]:
    return {
        "id": r.id,
        "name": r.name,
        "shortDescription": {"text": plain(r.summary)},
        "fullDescription": {"text": plain(r.doc)},
        "help": {"text": plain(r.doc), "markdown": markdown(r.doc)},
        "defaultConfiguration": {"level": LEVELS[r.severity]},
        "properties": {"tags": ["dflash", "config"]},
    }


# GitHub's line hash (primaryLocationLineHash), as github/codeql-action computes it in
# src/fingerprints.ts when an upload lacks one: a rolling hash (base 37, 64-bit) over the 100 characters
# (UTF-16 code units) that start each line, spaces and tabs skipped, CR LF and CR read as LF, the end of
# the file marked by 0xFFFF and padded with zeros; "hash:n" where n counts earlier lines of equal hash.
_BLOCK = 100
_MASK = (1 << 64) - 1
_FIRST = pow(37, _BLOCK, 1 << 64)


def _line_hashes(text: str, wanted: set[int]) -> dict[int, str]:
    window = [0] * _BLOCK
    line_at = [-1] * _BLOCK
    seen: dict[str, int] = {}
    out: dict[int, str] = {}
    state = {"hash": 0, "index": 0, "line": 0, "line_start": True, "prev_cr": False}
    last_wanted = max(wanted, default=0)

    def emit() -> None:
        value = format(state["hash"], "x")
        seen[value] = seen.get(value, 0) + 1
        line = line_at[state["index"]]
        if line in wanted:
            out[line] = f"{value}:{seen[value]}"
        line_at[state["index"]] = -1

    def update(unit: int) -> None:
        i = state["index"]
        begin = window[i]
        window[i] = unit
        state["hash"] = (37 * state["hash"] + unit - _FIRST * begin) & _MASK
        state["index"] = (i + 1) % _BLOCK

    def process(unit: int) -> None:
        if unit in (0x20, 0x09) or (state["prev_cr"] and unit == 0x0A):
            state["prev_cr"] = False
            return
        state["prev_cr"] = unit == 0x0D
        if unit == 0x0D:
            unit = 0x0A
        if line_at[state["index"]] != -1:
            emit()
        if state["line_start"]:
            state["line_start"] = False
            state["line"] += 1
            line_at[state["index"]] = state["line"]
        if unit == 0x0A:
            state["line_start"] = True
        update(unit)

    data = text.encode("utf-16-le", "surrogatepass")
    for k in range(0, len(data), 2):
        process(data[k] | data[k + 1] << 8)
        if state["line"] > last_wanted + _BLOCK:  # every wanted line's window is complete
            return out
    process(0xFFFF)
    for _ in range(_BLOCK):
        if line_at[state["index"]] != -1:
            emit()
        update(0)
    return out

"""`audit` as text or JSON: values in, strings out (the HTML report is report/audit_html.py).

Repo ids, reasons, messages and values come from the Hub, so text goes through `printable` and JSON through
`dumps_printable`: a hostile name cannot drive the terminal. The JSON document is described by
schemas/audit.schema.json (Draft 2020-12), shipped in the package.
"""

from __future__ import annotations

from typing import Any

from dflash_cfg.jsondoc.encode import dumps_printable
from dflash_cfg.model import Severity
from dflash_cfg.model.audit import AuditResult, AuditRow
from dflash_cfg.report.escape import printable

JSON_VERSION = 1
FIRST_ERROR_WIDTH = 110  # characters of the first error a text row shows; JSON and HTML have every finding whole


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def shown_repo(row: AuditRow) -> str:
    return row.repo if row.revision == "main" else f"{row.repo}@{row.revision}"


def shown_base(row: AuditRow) -> str:
    """The base model column: the target it was linted against, or that it was checked alone."""
    target = row.target
    if target is None:
        return "-"
    if target.status == "read":
        return target.repo or "-"
    if target.repo is None:
        return "(none named: checked alone)"
    return f"{target.repo} (not read: checked alone)"


def verdict_of(row: AuditRow) -> str:
    """The last column: the first error of a judged repo, else why it was not judged."""
    if row.status == "judged":
        first = row.first_error
        return "" if first is None else f"{first.rule} {first.name}: {first.message}"
    label = {"unreadable": "not read", "not-a-drafter": "not a drafter", "not-done": "not done"}[row.status]
    return f"{label}: {row.reason or ''}".rstrip(": ")


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def summary(result: AuditResult) -> dict[str, Any]:
    rows = result.rows
    return {
        "repos": len(rows),
        "judged": len(result.rows_with("judged")),
        "failing": len(result.failing),
        "unreadable": len(result.rows_with("unreadable")),
        "not_a_drafter": len(result.rows_with("not-a-drafter")),
        "not_done": len(result.rows_with("not-done")),
        "checked_alone": sum(1 for r in rows if r.status == "judged" and r.target and r.target.status != "read"),
        "errors": sum(r.count(Severity.ERROR) for r in rows),
        "warnings": sum(r.count(Severity.WARNING) for r in rows),
        "infos": sum(r.count(Severity.INFO) for r in rows),
        "reused": result.reused,
        "retries": result.retries,
        "seconds": round(result.seconds, 3),
    }


# --- text ------------------------------------------------------------------------------------------------------


def audit_text(result: AuditResult) -> str:
    header = ("REPO", "COMMIT", "DATE", "BASE MODEL", "ERR", "WARN", "INFO", "FIRST ERROR")
    table: list[tuple[str, ...]] = [header]
    for row in result.rows:
        judged = row.status == "judged"
        table.append(
            (
                printable(shown_repo(row)),
                (row.commit or "-")[:7],
                (row.date or "-")[:10],
                printable(shown_base(row)),
                str(row.count(Severity.ERROR)) if judged else "-",
                str(row.count(Severity.WARNING)) if judged else "-",
                str(row.count(Severity.INFO)) if judged else "-",
                printable(_cut(verdict_of(row), FIRST_ERROR_WIDTH)),
            )
        )
    lines: list[str] = []
    if result.rows:
        widths = [max(len(cells[i]) for cells in table) for i in range(len(header) - 1)]
        numeric = {4, 5, 6}
        for cells in table:
            shown = enumerate(zip(cells[:-1], widths, strict=True))
            padded = [c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in shown]
            lines.append("  ".join([*padded, cells[-1]]).rstrip())
    unread: dict[str, str] = {}
    for row in result.rows:
        if row.status == "judged" and row.target and row.target.status == "unknown" and row.target.repo:
            unread.setdefault(row.target.repo, row.target.why or "not read")
    if unread:
        lines.append("")
        lines.append("base models not read (their drafters were checked alone):")
        lines += [f"  {printable(repo)}: {printable(why)}" for repo, why in sorted(unread.items())]
    lines.append("")
    lines += _closing(result)
    return "\n".join(lines) + "\n"


def _closing(result: AuditResult) -> list[str]:
    lines = []
    for note in result.authors:
        name = printable(note.author)
        if note.error is not None:
            lines.append(f"{name}: not listed: {printable(note.error)}")
        else:
            lines.append(f"{name}: {note.listed} model repos listed, {_n(note.drafters, 'drafter repo')}")
    s = summary(result)
    parts = [f"{s['judged']} judged ({s['failing']} failing)"]
    for key, label in (("unreadable", "not read"), ("not_done", "not done"), ("not_a_drafter", "not drafters")):
        if s[key]:
            parts.append(f"{s[key]} {label}")
    alone = f"; {s['checked_alone']} checked alone (no base model read)" if s["checked_alone"] else ""
    lines.append(
        f"audit: {_n(s['repos'], 'repo')}: {', '.join(parts)}{alone}; "
        f"{_n(s['errors'], 'error')}, {_n(s['warnings'], 'warning')}, {_n(s['infos'], 'info')}"
    )
    retried = f", {_n(result.retries, 'request')} retried" if result.retries else ""
    reused = f"reused {_n(result.reused, 'finished repo')} from the journal" if result.reused else "none from a journal"
    lines.append(f"{result.seconds:.1f} s{retried}; {reused}; every finding: --format json or html")
    if result.deadline is not None:
        lines.append(
            f"deadline: {result.deadline:g} s passed with {_n(s['not_done'], 'repo')} not done; a re-run with the same "
            "arguments reuses what was judged"
        )
    return lines


def written(result: AuditResult, path: str) -> str:
    """The line on stderr when the report went to a file."""
    s = summary(result)
    return (
        f"audit: {_n(s['repos'], 'repo')}, {s['judged']} judged, {s['failing']} failing, {s['reused']} reused from "
        f"the journal; report written to {printable(path)}"
    )


def incomplete(result: AuditResult) -> str | None:
    """What was not judged, when something asked for was not (stderr, whatever the format)."""
    if result.complete:
        return None
    s = summary(result)
    missing = s["unreadable"] + s["not_done"] + sum(a.error is not None for a in result.authors)
    why = "the deadline passed" if result.deadline is not None else "some could not be read"
    return f"audit incomplete: {missing} not judged ({why}); a re-run with the same arguments reuses what was judged"


# --- JSON ------------------------------------------------------------------------------------------------------


def audit_document(result: AuditResult) -> dict[str, Any]:
    """The JSON report as data (schemas/audit.schema.json)."""
    return {
        "version": JSON_VERSION,
        "tool": {"name": "dflash-cfg", "version": result.tool_version},
        "transformers_version": result.transformers_version,
        "endpoint": result.endpoint,
        "asked": list(result.asked),
        "complete": result.complete,
        "deadline": result.deadline,
        "journal": result.journal,
        "authors": [
            {"author": a.author, "listed": a.listed, "drafters": a.drafters, "error": a.error} for a in result.authors
        ],
        "repos": [row.to_json() for row in result.rows],
        "summary": summary(result),
    }


def audit_json(result: AuditResult) -> str:
    return dumps_printable(audit_document(result), indent=2) + "\n"

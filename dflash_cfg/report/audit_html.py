"""`audit --format html`: one self-contained page. Pure: an AuditResult in, a str out.

One table row per repo and revision (each repo its own <tbody>, so its expandable details move with it when the
table is sorted), the findings and the history of the trained values in a <details> below it. The CSS and the few
lines of script are inline; the page loads nothing and links nowhere, and its Content-Security-Policy forbids any
fetch, so it can be mailed, attached to a CI run or opened offline. Every string from the Hub (repo ids, messages,
values) is escaped; none reaches the script, which reads the table from the DOM.

Sorting: each header is a button; a click sorts the repos by that column (again: the other way), keeping the
table's order for ties. `report.html#sort=errors-desc` opens the page sorted (the header is clicked as a reader
would): a link to a sorted view, and how the tests drive the script in a headless browser.
"""

from __future__ import annotations

import html
from dataclasses import replace
from urllib.parse import urlsplit

from dflash_cfg.jsondoc.encode import dumps_printable
from dflash_cfg.model import JSON, Severity
from dflash_cfg.model.audit import AuditResult, AuditRow, Step, Values
from dflash_cfg.report.audit import shown_base, shown_repo, summary, verdict_of
from dflash_cfg.report.escape import printable

# (key, header, type): the sortable columns, in order. `type` number sorts numerically.
COLUMNS = (
    ("repo", "repo", "text"),
    ("commit", "commit", "text"),
    ("date", "date", "text"),
    ("base", "base model", "text"),
    ("errors", "errors", "number"),
    ("warnings", "warnings", "number"),
    ("infos", "infos", "number"),
    ("verdict", "first error / why not judged", "text"),
)

CSS = """
:root { color-scheme: light; --fail: #b42318; --warn: #b54708; --info: #175cd3; --muted: #667085; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #101828; }
h1 { font-size: 20px; margin: 0 0 4px; }
p.meta { color: var(--muted); margin: 2px 0; }
ul.counts { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 8px 20px; margin: 12px 0; }
ul.counts b { font-size: 16px; }
table#audit { border-collapse: collapse; width: 100%; }
#audit th { text-align: left; border-bottom: 2px solid #d0d5dd; position: sticky; top: 0; background: #fff; }
#audit th button { font: inherit; font-weight: 600; border: 0; background: none; padding: 6px 4px; cursor: pointer; }
#audit th[aria-sort="ascending"] button::after { content: " \\25B2"; }
#audit th[aria-sort="descending"] button::after { content: " \\25BC"; }
#audit td { padding: 4px; vertical-align: top; border-bottom: 1px solid #eaecf0; }
#audit tbody tr.main td:first-child { border-left: 4px solid #12b76a; }
#audit tbody.fail tr.main td:first-child { border-left-color: var(--fail); }
#audit tbody.unread tr.main td:first-child, #audit tbody.other tr.main td:first-child { border-left-color: #98a2b3; }
#audit tbody.unread tr.main, #audit tbody.other tr.main { color: var(--muted); }
#audit td.num { text-align: right; font-variant-numeric: tabular-nums; }
#audit tr.main td:nth-child(-n+3) { white-space: nowrap; }
#audit tr.more td { border-bottom: 1px solid #d0d5dd; padding: 0 4px 6px 12px; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: 12.5px; }
details summary { cursor: pointer; color: var(--muted); }
table.inner { border-collapse: collapse; margin: 6px 0; }
table.inner th, table.inner td { border: 1px solid #eaecf0; padding: 2px 6px; text-align: left; vertical-align: top; }
.sev-error { color: var(--fail); font-weight: 600; }
.sev-warning { color: var(--warn); font-weight: 600; }
.sev-info { color: var(--info); }
td.changed { background: #fef0c7; font-weight: 600; }
"""

# Reads the table from the DOM: no data of the report is ever interpolated into it.
SCRIPT = """
(function () {
  "use strict";
  var table = document.getElementById("audit");
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  function value(body, i, numeric) {
    var cell = body.rows[0].cells[i];
    var text = cell.getAttribute("data-sort");
    if (text === null) { text = cell.textContent; }
    return numeric ? parseFloat(text) : text.toLowerCase();
  }
  function sortBy(i, dir) {
    var numeric = heads[i].getAttribute("data-type") === "number";
    var bodies = Array.prototype.slice.call(table.tBodies);
    bodies.sort(function (a, b) {
      var x = value(a, i, numeric), y = value(b, i, numeric);
      var order = x < y ? -1 : (x > y ? 1 : 0);
      return order * dir || (Number(a.getAttribute("data-index")) - Number(b.getAttribute("data-index")));
    });
    bodies.forEach(function (body) { table.appendChild(body); });
    heads.forEach(function (head, j) {
      head.setAttribute("aria-sort", j === i ? (dir > 0 ? "ascending" : "descending") : "none");
    });
    table.setAttribute("data-sorted", heads[i].getAttribute("data-key") + (dir > 0 ? "-asc" : "-desc"));
  }
  heads.forEach(function (head, i) {
    head.querySelector("button").addEventListener("click", function () {
      sortBy(i, head.getAttribute("aria-sort") === "ascending" ? -1 : 1);
    });
  });
  table.setAttribute("data-sortable", "yes");
  var wanted = /^#sort=([a-z]+)(?:-(asc|desc))?$/.exec(window.location.hash);
  if (wanted) {
    heads.forEach(function (head) {
      if (head.getAttribute("data-key") !== wanted[1]) { return; }
      var button = head.querySelector("button");
      button.click();
      if (wanted[2] === "desc") { button.click(); }
    });
  }
})();
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def _e(text: str) -> str:
    """Text from anywhere, safe in an element or a quoted attribute (and without control characters)."""
    return html.escape(printable(text), quote=True)


def _value(value: JSON) -> str:
    return _e(dumps_printable(value, separators=(",", ":")))


def _hosted(result: AuditResult, host: str) -> AuditResult:
    """The result with the Hub's URL in its reasons named by its host: the page names no URL at all."""
    if not result.endpoint:
        return result

    def say(text: str | None) -> str | None:
        return None if text is None else text.replace(result.endpoint, host)

    rows = tuple(
        replace(
            row,
            reason=say(row.reason),
            target=None if row.target is None else replace(row.target, why=say(row.target.why)),
        )
        for row in result.rows
    )
    authors = tuple(replace(a, error=say(a.error)) for a in result.authors)
    return replace(result, rows=rows, authors=authors)


def audit_html(result: AuditResult) -> str:
    host = urlsplit(result.endpoint).netloc or result.endpoint  # a host, not a link: the page names no URL
    result = _hosted(result, host)
    s = summary(result)
    asked = " ".join(f"<code>{_e(a)}</code>" for a in result.asked)
    counts = [
        ("repos", s["repos"]),
        ("judged", s["judged"]),
        ("failing", s["failing"]),
        ("not read", s["unreadable"]),
        ("not done", s["not_done"]),
        ("checked alone", s["checked_alone"]),
        ("errors", s["errors"]),
        ("warnings", s["warnings"]),
        ("infos", s["infos"]),
        ("reused from the journal", s["reused"]),
    ]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>dflash-cfg audit: {_e(' '.join(result.asked))}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        "<header>",
        "<h1>dflash-cfg audit</h1>",
        f"<p class=meta>{asked} on <code>{_e(host)}</code> · dflash-cfg {_e(result.tool_version)}, transformers "
        f"{_e(result.transformers_version or 'not installed')} · {result.seconds:.1f} s"
        + (f", {result.retries} requests retried" if result.retries else "")
        + "</p>",
        "<ul class=counts>" + "".join(f"<li><b>{n}</b> {_e(label)}</li>" for label, n in counts) + "</ul>",
    ]
    for note in result.authors:
        if note.error is not None:
            parts.append(f"<p class=meta>{_e(note.author)}: not listed: {_e(note.error)}</p>")
        else:
            parts.append(
                f"<p class=meta>{_e(note.author)}: {note.listed} model repos listed, {note.drafters} drafter repos</p>"
            )
    if result.deadline is not None:
        parts.append(
            f"<p class=meta>The deadline ({result.deadline:g} s) passed with {s['not_done']} repos not done; a re-run "
            "with the same arguments reuses what was judged.</p>"
        )
    parts.append("</header>")
    parts.append('<table id="audit" data-sortable="no">')
    heads = "".join(
        f'<th data-key="{key}" data-type="{kind}" aria-sort="none"><button type="button">{_e(label)}</button></th>'
        for key, label, kind in COLUMNS
    )
    parts.append(f"<thead><tr>{heads}</tr></thead>")
    parts += [_row(i, row) for i, row in enumerate(result.rows)]
    parts += ["</table>", f"<script>{SCRIPT}</script>", "</body>", "</html>"]
    return "\n".join(parts) + "\n"


def _row(index: int, row: AuditRow) -> str:
    judged = row.status == "judged"
    group = "fail" if row.fails else "ok" if judged else "unread" if row.status != "not-a-drafter" else "other"
    counts = [row.count(level) if judged else -1 for level in (Severity.ERROR, Severity.WARNING, Severity.INFO)]
    repo = shown_repo(row)
    commit = row.commit or ""
    cells = [
        f'<td data-sort="{_e(repo.lower())}"><code>{_e(repo)}</code></td>',
        f'<td data-sort="{_e(commit)}" class=mono title="{_e(commit)}">{_e(commit[:7] or "-")}</td>',
        f'<td data-sort="{_e(row.date or "")}">{_e((row.date or "-")[:10])}</td>',
        f"<td>{_e(shown_base(row))}</td>",
        *(f'<td class=num data-sort="{n}">{n if n >= 0 else "-"}</td>' for n in counts),
        f"<td>{_e(verdict_of(row))}</td>",
    ]
    body = [
        f'<tbody class="repo {group}" data-index="{index}" data-repo="{_e(repo)}" data-status="{row.status}" '
        f'data-errors="{counts[0]}">',
        f'<tr class="main">{"".join(cells)}</tr>',
    ]
    more = _details(row)
    if more:
        body.append(f'<tr class="more"><td colspan="{len(COLUMNS)}">{more}</td></tr>')
    body.append("</tbody>")
    return "\n".join(body)


def _details(row: AuditRow) -> str:
    if row.status != "judged":
        return ""
    said = [f"{len(row.findings)} finding{'' if len(row.findings) == 1 else 's'}"]
    if row.history:
        said.append(f"{len(row.history)} revisions of config.json")
    inner = [f"<details><summary>{_e(' · '.join(said))}</summary>"]
    where = [f"<code>{_e(row.path or 'config.json')}</code> at <code>{_e(row.commit or '')}</code>"]
    if row.kind:
        where.append(f"format {_e(row.kind)}")
    if row.target is not None and row.target.status == "unknown":
        where.append(f"base model not read ({_e(row.target.why or 'unknown')}): checked alone")
    elif row.target is not None and row.target.status == "read":
        where.append(f"linted against <code>{_e(row.target.repo or '')}@{_e((row.target.commit or '')[:12])}</code>")
    inner.append(f"<p class=meta>{' · '.join(where)}</p>")
    if row.findings:
        lines = ["<table class=inner><tr><th>severity</th><th>rule</th><th>pointer</th><th>message</th></tr>"]
        for f in row.findings:
            scope = f" <i>({_e(', '.join(str(r) for r in f.engines))})</i>" if f.engines else ""
            lines.append(
                f"<tr><td class=sev-{f.severity.label}>{f.severity.label}</td>"
                f"<td><code>{_e(f.rule)}</code> {_e(f.name)}</td><td><code>{_e(f.pointer or '/')}</code></td>"
                f"<td>{_e(f.message)}{scope}</td></tr>"
            )
        lines.append("</table>")
        inner += lines
    inner.append(_history(row.history) if row.history else _values(row.values))
    inner.append("</details>")
    return "".join(inner)


def _values(values: Values) -> str:
    if not values:
        return ""
    cells = "".join(f"<tr><th>{_e(name)}</th><td><code>{_value(v)}</code></td></tr>" for name, v in values)
    return f"<table class=inner><caption>trained values</caption>{cells}</table>"


def _history(steps: tuple[Step, ...]) -> str:
    """The trained values at each revision, newest first; a value a revision changed is marked."""
    names = list(dict.fromkeys(name for step in steps for name, _ in (step.values or ())))
    head = "".join(f"<th>{_e(n)}</th>" for n in names)
    lines = [f"<table class=inner><caption>history</caption><tr><th>commit</th><th>date</th>{head}</tr>"]
    for step in steps:
        values = dict(step.values or ())
        if step.values is None:
            cells = f'<td colspan="{max(1, len(names))}">{_e(step.note or "")}</td>'
        else:
            cells = "".join(
                f"<td{' class=changed' if n in step.changed else ''}><code>"
                + (_value(values[n]) if n in values else "—")
                + "</code></td>"
                for n in names
            )
        lines.append(
            f'<tr><td class=mono title="{_e(step.commit)}">{_e(step.commit[:7])}</td>'
            f"<td>{_e((step.date or '-')[:10])}</td>{cells}</tr>"
        )
    lines.append("</table>")
    return "".join(lines)

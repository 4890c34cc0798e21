"""The rule catalogue (`dflash-cfg rules`) as text or JSON, and a rule's doc as plain text or Markdown.

Rule docs are written with reST-style ``code`` spans (they are docstrings); the text output shows them
as `code`, and JSON and SARIF's help.markdown as Markdown code spans. JSON gives a rule's parts as plain
fields (its declaration, summary, description, examples, engine reads) and its whole doc as Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import click

from dflash_cfg.jsondoc.encode import dumps_printable
from dflash_cfg.model import RuleDoc

_CODE = re.compile(r"``(.+?)``(?!`)", re.S)
# A line that starts a labelled part of a doc ("Fail:", "Fail (info):", "Pass (no finding):", "Severity:",
# "What the engines do:").
_LABEL = re.compile(r"^(?:[A-Z][A-Za-z]*(?: [a-z]+){0,4}(?: \([a-z ]+\))?:|- )")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_<>\[\]#|~])")


def plain(text: str) -> str:
    """``x`` -> `x`: how a terminal shows a code span."""
    return _CODE.sub(lambda m: f"`{m.group(1)}`", text)


def _code_span(code: str) -> str:
    """A Markdown code span holding `code` whatever backticks it has (CommonMark 6.1)."""
    longest = max((len(run) for run in re.findall("`+", code)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if code.startswith("`") or code.endswith("`") or longest else ""
    return f"{fence}{pad}{code}{pad}{fence}"


def _escape_markdown(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def markdown(text: str) -> str:
    """A rule doc as Markdown: code spans kept as code, everything else literal, and the labelled lines
    ("Fail: ...", "Pass: ...", list items) on lines of their own."""
    out: list[str] = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        parts: list[str] = []
        last = 0
        for m in _CODE.finditer(line):
            parts.append(_escape_markdown(line[last : m.start()]))
            parts.append(_code_span(m.group(1)))
            last = m.end()
        parts.append(_escape_markdown(line[last:]))
        rendered = "".join(parts)
        if rendered.startswith("\\- "):  # a list item stays a list item
            rendered = rendered[1:]
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if rendered and _LABEL.match(following):
            rendered += "  "  # a hard line break: the next labelled line starts a line of its own
        out.append(rendered)
    return "\n".join(out)


def _body(r: RuleDoc) -> list[str]:
    """The doc after its first paragraph (the summary, which the listing line already shows)."""
    rest = r.doc.split("\n\n", 1)
    return plain(rest[1]).splitlines() if len(rest) == 2 else []


def catalogue_text(rules: Sequence[RuleDoc], verbose: bool = False) -> str:
    out = []
    for r in rules:
        out.append(f"{click.style(r.id, bold=True)}  {r.name:<26} {r.severity.label:<8} {plain(r.summary)}")
        if verbose:
            out.append("")
            out.extend("    " + line if line else "" for line in _body(r))
            out.append("")
    return "\n".join(out) + "\n"


def _paragraphs(text: str) -> str:
    """Docstring text as plain text: code spans as `code`, each paragraph on one line."""
    return "\n\n".join(" ".join(p.split()) for p in plain(text).split("\n\n"))


def catalogue_entry(r: RuleDoc) -> dict[str, object]:
    return {
        "id": r.id,
        "name": r.name,
        "severity": r.severity.label,
        "severities": [s.label for s in r.severities],
        "fix": r.fix,
        "own_check": r.own_check,
        "summary": plain(r.summary),
        "description": _paragraphs(r.description),
        "examples": [{"label": label, "text": plain(text)} for label, text in r.examples],
        "reads": [read.to_json() for read in r.reads],
        "markdown": markdown(r.doc),
    }


def catalogue_json(rules: Sequence[RuleDoc]) -> str:
    return dumps_printable([catalogue_entry(r) for r in rules], indent=2) + "\n"

"""A check's Report in the format asked for: the one dispatch the commands that print one use."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from dflash_cfg.model import Report, RuleDoc
from dflash_cfg.report.check import json_chunks, statistics_text, text
from dflash_cfg.report.github import github
from dflash_cfg.report.sarif import sarif

FORMATS = ("text", "json", "github", "sarif")
CI_FORMATS = ("github", "sarif")  # the formats that need Report.root and FileReport.artifact


def render(
    report: Report,
    fmt: str,
    *,
    quiet: bool = False,
    with_statistics: bool = False,
    rule_docs: Mapping[str, RuleDoc] | None = None,
) -> str:
    """`quiet` narrows the text format to its finding lines; `with_statistics` adds the count per rule
    (text and github: a table after the findings; json: "statistics"; sarif: the run's properties).
    `rule_docs`: sarif only, which describes each rule the findings name: their docs by id."""
    return "".join(render_chunks(report, fmt, quiet=quiet, with_statistics=with_statistics, rule_docs=rule_docs))


def render_chunks(
    report: Report,
    fmt: str,
    *,
    quiet: bool = False,
    with_statistics: bool = False,
    extra: Mapping[str, Any] | None = None,
    rule_docs: Mapping[str, RuleDoc] | None = None,
    only: frozenset[str] | None = None,
) -> Iterator[str]:
    """`render`, in pieces to write as they come: JSON a file at a time (a big tree's report is never one
    string), the other formats whole. `extra`: top-level keys a command adds to the JSON document. `only`:
    text shows only these files (check --failing-only)."""
    if fmt == "text":
        yield text(report, quiet=quiet, with_statistics=with_statistics, only=only)
    elif fmt == "json":
        yield from json_chunks(report, with_statistics=with_statistics, extra=extra)
    elif fmt == "github":
        yield github(report) + (statistics_text(report) if with_statistics else "")
    elif fmt == "sarif":
        if rule_docs is None:  # said here, not as a KeyError on the first rule a finding names
            raise ValueError("sarif needs the docs of the rules the report's findings name")
        yield sarif(report, rule_docs, with_statistics=with_statistics)
    else:
        raise ValueError(f"unknown format {fmt!r}")

"""A check's Report in the format asked for: the one dispatch the commands that print one use."""

from __future__ import annotations

from dflash_cfg.model import Report
from dflash_cfg.report.check import as_json, statistics_text, text
from dflash_cfg.report.github import github
from dflash_cfg.report.sarif import sarif

FORMATS = ("text", "json", "github", "sarif")
CI_FORMATS = ("github", "sarif")  # the formats that need Report.root and FileReport.artifact


def render(report: Report, fmt: str, *, quiet: bool = False, with_statistics: bool = False) -> str:
    """`quiet` narrows the text format to its finding lines; `with_statistics` adds the count per rule
    (text and github: a table after the findings; json: "statistics"; sarif: the run's properties)."""
    if fmt == "text":
        return text(report, quiet=quiet, with_statistics=with_statistics)
    if fmt == "json":
        return as_json(report, with_statistics=with_statistics)
    if fmt == "github":
        return github(report) + (statistics_text(report) if with_statistics else "")
    if fmt == "sarif":
        return sarif(report, with_statistics=with_statistics)
    raise ValueError(f"unknown format {fmt!r}")

"""A check's Report as GitHub Actions workflow commands: one `::error`/`::warning`/`::notice` line per
finding, which the runner turns into an annotation on the file and line. Values in, strings out, no I/O.

    ::error file=models/d/config.json,line=50,col=3,endLine=50,endColumn=28,title=DF204 window-dropped::...

Escaping follows @actions/core (actions/toolkit, packages/core/src/command.ts, escapeData and
escapeProperty): in the message `%` -> `%25`, CR -> `%0D`, LF -> `%0A`; in a property value also
`:` -> `%3A` and `,` -> `%2C`. Every other control character is shown as an escape first (printable),
so an untrusted key or path can neither end the command early nor drive the terminal.
"""

from __future__ import annotations

from dflash_cfg.model import FileReport, Finding, Report, Severity
from dflash_cfg.report.escape import printable
from dflash_cfg.report.regions import Text
from dflash_cfg.report.scope import label, message

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return printable(text, keep="\r\n").replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    """`::name key=value,...::message`, properties in the order given, those that are None left out."""
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items() if value is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def github(report: Report) -> str:
    lines: list[str] = []
    for f in report.files:
        lines.extend(_file(f, report))
    lines += [command("error", error, title="dflash-cfg") for error in report.errors]
    return "".join(line + "\n" for line in lines)


def _file(f: FileReport, report: Report) -> list[str]:
    if not f.findings:
        return []
    artifact = f.artifact
    path = artifact.repo_path if artifact is not None and artifact.repo_path is not None else f.path
    text = Text(artifact.text) if artifact is not None and artifact.text is not None else None
    return [_finding(path, text, x, gating=report.gating(x) is True) for x in f.findings]


def _finding(path: str, text: Text | None, x: Finding, *, gating: bool = True) -> str:
    """`gating`: the run may fail on the finding; an annotation it does not gate on (about other engines or
    releases, or some engines where nothing says which serve the drafter) says so in its title, so that a red
    error never stands unexplained on a green check."""
    region = text.region(x) if text is not None else None
    # GitHub takes columns only for an annotation on one line.
    one_line = region is None or region.one_line
    said = message(x)
    said = f"{x.pointer}: {said}" if x.pointer else said
    return command(
        COMMANDS[x.severity],
        said,
        file=path,
        line=x.line,
        col=x.column if one_line else None,
        endLine=region.end_line if region is not None else None,
        endColumn=region.end_column if region is not None and one_line else None,
        title=f"{x.rule} {x.name}" + ("" if gating else f" ({label(x.engines)} only; not gating here)"),
    )

"""What the commands write: a line on stderr, text on stdout in colour or not, a machine document whole or
not at all, a check's report, and the exit code a check's verdict gives."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import click

from dflash_cfg.cli.parse_result import CiArgs
from dflash_cfg.errors import EXIT_FINDINGS, EXIT_OK, redact
from dflash_cfg.lint.gate import verdict
from dflash_cfg.model import Report, RuleDoc
from dflash_cfg.report.escape import printable
from dflash_cfg.report.formats import CI_FORMATS, render_chunks
from dflash_cfg.sources.hfenv import secrets


def say(message: str) -> None:
    """One line on stderr: no credential, no control character a terminal would act on."""
    click.echo(printable(redact(message, secrets())), err=True)


def colour(choice: str = "auto") -> bool | None:
    """--color wins; then https://no-color.org (a non-empty NO_COLOR: none), then https://force-color.org
    (a non-empty FORCE_COLOR: always; NO_COLOR first, as CPython orders them); else click decides
    (a terminal or not)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return None


# Whether this run has written its machine-readable document (write_whole): an interrupt after it must not
# write a second one. Reset by the CLI's run at the start of each command.
_written: list[bool] = []


def documents_reset() -> None:
    _written.clear()


def document_written() -> bool:
    return bool(_written)


def write_whole(text: str) -> None:
    """Write a machine-readable document whole or not at all: a SIGINT or SIGTERM that arrives while its
    bytes go out is held and re-raised after, so a CI step never parses half a document. JSON and SARIF are
    UTF-8 by their specifications, whatever the locale."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # a captured stdout (tests, an embedding program)
        click.echo(text, nl=False)
        _written.append(True)
        return
    sys.stdout.flush()
    # Python-level handlers, not a signal mask: a mask holds the signal only for this thread, and the
    # kernel hands a process-directed SIGTERM to any other thread (a pool's) that does not block it.
    held: list[int] = []
    previous: dict[int, Any] = {}
    with contextlib.suppress(ValueError):  # signal.signal works only in the main thread
        for wanted in (signal.SIGINT, signal.SIGTERM):
            previous[wanted] = signal.signal(wanted, lambda signum, _frame: held.append(signum))
    try:
        view = memoryview(text.encode("utf-8"))
        while view:
            view = view[os.write(fd, view) :]
        _written.append(True)
    finally:
        for restored, handler in previous.items():
            signal.signal(restored, handler)
        for arrived in dict.fromkeys(held):
            signal.raise_signal(arrived)


def _ci(report: Report, fmt: str) -> Report:
    if fmt not in CI_FORMATS:
        return report
    from dflash_cfg.commands.artifacts import attach

    return attach(report)


def rule_docs(report: Report, fmt: str) -> dict[str, RuleDoc] | None:
    """What the format needs of the rules: SARIF describes each rule the findings name (the renderer takes
    their docs as values, never lint's rules); the other formats nothing."""
    if fmt != "sarif":
        return None
    from dflash_cfg.lint.rules import REGISTRY, catalogue  # the rule modules, only for a SARIF run

    return {doc.id: doc for doc in catalogue(REGISTRY[rule_id] for rule_id in report.rule_ids())}


@contextlib.contextmanager
def reader_may_leave() -> Iterator[None]:
    """Output into a pipe whose reader left (`| head`, `| true`): the rest is dropped, not the verdict. The run
    goes on and exits with what it found (a `set -o pipefail` CI step must not fail on a clean file)."""
    try:
        yield
    except BrokenPipeError:
        # Later writes, and the flush at exit, go nowhere instead of failing again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def show_report(
    report: Report, ci: CiArgs, extra: Mapping[str, Any] | None = None, *, failing_only: bool = False
) -> None:
    """`failing_only`: text shows only the files that fail the run (check --failing-only, the hook's way)."""
    only = None
    if failing_only:
        only = frozenset(path for path, _ in verdict(report, report.fail_on, gate=report.gate).failing)
    with reader_may_leave():
        _show_report(report, ci, extra, only)


def _show_report(
    report: Report, ci: CiArgs, extra: Mapping[str, Any] | None, only: frozenset[str] | None = None
) -> None:
    chunks = render_chunks(
        _ci(report, ci.fmt),
        ci.fmt,
        quiet=ci.quiet,
        with_statistics=ci.statistics,
        extra=extra,
        rule_docs=rule_docs(report, ci.fmt),
        only=only,
    )
    if ci.fmt != "text":  # a document a machine parses: whole or not at all
        write_whole("".join(chunks))
        return
    for chunk in chunks:  # text streams: a long tree shows its first files at once
        click.echo(chunk, nl=False, color=colour(ci.color))


def exit_code(report: Report, exit_zero: bool = False, *, summarised: bool = False) -> int:
    """The run's verdict, and on a failure caused by warnings only, the ways forward (stderr).
    `exit_zero`: findings never fail the run (an error of the run itself still exits 2). `summarised`: the text
    summary said what fails nothing for want of an engine (its "not gating" line), so stderr does not again."""
    result = verdict(report, report.fail_on, gate=report.gate)
    if exit_zero and result.code == EXIT_FINDINGS:
        return EXIT_OK
    if result.note and not summarised:
        say(f"dflash-cfg: {result.note}")
    for step in result.next_steps:
        say(f"dflash-cfg: {step}")
    if result.advice:
        say(f"dflash-cfg: {result.advice}")
    return result.code

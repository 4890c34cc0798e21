"""The `dflash-cfg` command: the click group of every command, and `run`, the one place a run ends: each
failure becomes a one-line cause and its exit code (and, with a machine --format, a document that says it)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Iterator

import click

from dflash_cfg import progress
from dflash_cfg.cli import audit, catalog, files, probe, rules, serving
from dflash_cfg.cli.common_options import ALIASES
from dflash_cfg.cli.output import document_written, documents_reset, rule_docs, say, write_whole
from dflash_cfg.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, DflashCfgError, Documented, redact
from dflash_cfg.report.commands import error_json
from dflash_cfg.report.formats import render
from dflash_cfg.report.probe import probe_json
from dflash_cfg.sources.hfenv import secrets
from dflash_cfg.version import __version__

# Listed by name in --help, whatever the order here.
COMMANDS = (
    files.check_command,
    files.diff_command,
    files.fix_command,
    files.verify_command,
    serving.preflight_command,
    serving.engines_command,
    serving.where_command,
    probe.probe_command,
    rules.rules_command,
    catalog.catalog_group,
    audit.audit_command,
)


@click.group(commands=COMMANDS, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="dflash-cfg")
def cli() -> None:
    """Lint and repair the config.json of DFlash speculative-decoding drafters.

    Exit codes: 0 clean, 1 findings at the failing severity, 2 usage or environment error.
    """


FORMAT_NAMES = ("--format", *ALIASES)


def _requested_format(args: list[str]) -> tuple[str | None, str | None]:
    """The command and its --format from the command line (before any `--`), for an error document."""
    command, fmt = None, None
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg in FORMAT_NAMES and i + 1 < len(args):
            fmt = args[i + 1]
        elif arg.startswith(tuple(f"{name}=" for name in FORMAT_NAMES)):
            fmt = arg.split("=", 1)[1]
        elif command is None and not arg.startswith("-"):
            command = arg
    return command, fmt


def _error_document(args: list[str], message: str) -> None:
    """A run that exits 2 still writes one document in a machine format: CI parses stdout."""
    command, fmt = _requested_format(args)
    if command in ("check", "preflight") and fmt in ("json", "github", "sarif"):
        from dflash_cfg.commands.check import error_report

        report = error_report(message)
        write_whole(render(report, fmt, rule_docs=rule_docs(report, fmt)))
    elif command == "probe" and fmt == "json" and "--watch" in args:  # JSON lines: the error is one more line
        write_whole(probe_json(json.loads(error_json(command, __version__, message)), lines=True))
    elif command in ("diff", "fix", "verify", "where", "probe", "catalog", "audit") and fmt == "json":
        write_whole(error_json(command, __version__, message))


def _progress(args: list[str]) -> contextlib.AbstractContextManager[None]:
    """Progress lines on stderr for a text run on a terminal (dflash_cfg.progress); nothing in a machine format,
    a pipe or a CI log."""
    _, fmt = _requested_format(args)
    if fmt not in (None, "text") or not sys.stderr.isatty():
        return contextlib.nullcontext()
    return progress.shown_on(sys.stderr)


@contextlib.contextmanager
def _terminated_as_interrupted(args: list[str], terminated: list[int]) -> Iterator[None]:
    """A check or preflight writing a machine document takes SIGTERM as it takes Ctrl-C, so the document still
    goes out whole (the files checked so far, marked interrupted); `terminated` records it, and the run then
    ends by the signal, as supervisors expect of a terminated job. Text runs keep the default: they end at once."""
    command, fmt = _requested_format(args)
    if command not in ("check", "preflight") or fmt not in ("json", "github", "sarif"):
        yield
        return

    def interrupt(signum: int, _frame: object) -> None:
        terminated.append(signum)
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread (an embedding program): its own handling stands
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run(entry: click.Command, args: list[str] | None = None) -> int:
    """Invoke click without letting it exit, and turn every failure into a one-line cause (and, with a
    machine --format, into a document on stdout that says it)."""
    argv = list(sys.argv[1:] if args is None else args)
    terminated: list[int] = []
    documents_reset()

    def document(message: str) -> None:
        with contextlib.suppress(Exception):  # the one-line cause on stderr still says it
            _error_document(argv, redact(message, secrets()))

    try:
        try:
            # Without standalone mode click returns the command's exit code instead of exiting with it.
            with _progress(argv), _terminated_as_interrupted(argv, terminated):
                code = entry.main(args=args, prog_name="dflash-cfg", standalone_mode=False)
            return code if isinstance(code, int) else EXIT_OK
        except (KeyboardInterrupt, click.exceptions.Abort):  # click turns an interrupt inside a command into Abort
            if not document_written() and _requested_format(argv)[0] in ("check", "preflight"):
                # Stopped before its document: still one, saying the run was not made.
                document("interrupted before the report was made")
            raise
    except (KeyboardInterrupt, click.exceptions.Abort):  # Ctrl-C: a run that was not made, exit 2 by the contract
        with contextlib.suppress(Exception):
            click.echo("dflash-cfg: aborted", err=True)
        if terminated:  # SIGTERM: the document is out; end by the signal (143 in a shell)
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.raise_signal(signal.SIGTERM)
        return EXIT_USAGE
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:  # click's own usage errors
        document(exc.format_message())
        exc.show()
        return EXIT_USAGE
    except DflashCfgError as exc:  # the user's or the environment's: one line, the class says the exit code
        if not isinstance(exc, Documented):
            document(str(exc))
        say(f"dflash-cfg: error: {exc}")
        return int(exc.exit_code)
    except BrokenPipeError:
        # Output piped into `head`: nothing left to say; avoid a second error at interpreter exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDINGS
    except Exception as exc:  # a bug in dflash-cfg, not the user's fault: still one line
        if isinstance(exc, OSError) and not _cwd_exists():
            # A path relative to it, or a lookup starting from it, cannot be answered: the user's to fix.
            message = "the current working directory no longer exists (deleted?); cd to an existing one"
            document(message)
            say(f"dflash-cfg: error: {message}")
            return EXIT_USAGE
        if os.environ.get("DFLASH_CFG_DEBUG"):
            raise
        document(f"internal error: {type(exc).__name__}: {exc}")
        say(
            f"dflash-cfg: internal error: {type(exc).__name__}: {exc} "
            "(set DFLASH_CFG_DEBUG=1 for the traceback, and please report it)"
        )
        return EXIT_USAGE


def _cwd_exists() -> bool:
    try:
        os.getcwd()
    except OSError:
        return False
    return True


def main(args: list[str] | None = None) -> None:
    raise SystemExit(run(cli, args))

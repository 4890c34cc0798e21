"""probe: is speculative decoding working on a serving engine? commands/probe.py judges and explains each
window; this writes each answer as it comes (text, a JSON document, or a watch's JSON lines)."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from dflash_cfg.cli.common_options import colour_option, format_option, hub_options, parsed
from dflash_cfg.cli.output import colour, say, write_whole
from dflash_cfg.cli.parse_result import ProbeArgs
from dflash_cfg.errors import EXIT_FINDINGS, EXIT_OK, DflashCfgError, NotReady, ProbeError
from dflash_cfg.report.commands import error_json
from dflash_cfg.report.probe import diagnosis_text, probe_document, probe_json, probe_line, probe_text
from dflash_cfg.report.prometheus import rules_yaml
from dflash_cfg.version import __version__

if TYPE_CHECKING:  # imported when probe runs: the other commands need not load prometheus_client
    from dflash_cfg.commands.probe import Explained


@click.command("probe")
@click.argument("url", metavar="URL", required=False)
@click.option("--interval", type=float, metavar="SECONDS", help="Judge the window between two scrapes this far apart.")
@click.option(
    "--timeout",
    type=float,
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="Each scrape's deadline: connecting, redirects, headers and body.",
)
@click.option(
    "--min-acceptance-length",
    "min_length",
    type=float,
    metavar="X",
    help="A mean acceptance length below X is a collapse (default: the project config's, else 1.5).",
)
@click.option(
    "--wait",
    type=float,
    metavar="SECONDS",
    help="Wait up to SECONDS for an engine still loading (refused, 503, no speculative metrics yet).",
)
@click.option("--drafter", metavar="DIR", help="On a collapse, check this drafter (default: the project's).")
@click.option("--target", metavar="PATH", help="With the drafter's check: its target model dir.")
@hub_options
@click.option("--watch", is_flag=True, help="Judge a window every --interval (default 30 s), one line each.")
@click.option("--keep-going", "keep_going", is_flag=True, help="With --watch: report collapses and go on.")
@format_option()
@colour_option
@click.option(
    "--config", "config", metavar="FILE", type=click.Path(path_type=str, readable=False), help="Project config."
)
@click.option("--isolated", is_flag=True, help="Ignore every project config file.")
@click.option(
    "--emit-rules",
    "emit_rules",
    is_flag=True,
    help="Print Prometheus recording and alerting rules judging as probe does (window: --interval, default 300 s).",
)
@click.option(
    "--for",
    "hold",
    type=float,
    metavar="SECONDS",
    help="With --emit-rules: how long a collapse holds before the alert fires (default 600).",
)
@parsed(ProbeArgs)
def probe_command(args: ProbeArgs) -> int:
    """Is speculative decoding working? Acceptance from the engine's Prometheus URL (or a saved scrape).

    Exits 1 on a collapse (a mean acceptance length below the threshold), with the drafter's check when it is
    known; 0 when healthy; 2 when it cannot tell (endpoint down, not metrics, a restart between scrapes).
    """
    from dflash_cfg.commands import probe

    if args.emit_rules:
        rules = probe.rule_settings(args.interval, args.hold, args.min_length, args.config, args.isolated)
        write_whole(rules_yaml(rules))
        return EXIT_OK
    assert args.url is not None  # ProbeArgs requires it without --emit-rules
    hub = args.hub.options()
    s = probe.settings(args.url, args.every, args.timeout, args.min_length, args.config, args.isolated, args.wait)
    check = probe.DrafterCheck(
        drafter=args.drafter,
        target=args.target,
        hub=hub,
        offline=args.hub.offline,
        config=args.config,
        isolated=args.isolated,
    )
    if not args.watch:
        answer = probe.probe_once(s, check, waiting=_waiting)
        _show(answer, args.fmt, args.color)
        return EXIT_FINDINGS if answer.window.collapsed else EXIT_OK
    code = EXIT_OK
    try:
        with _stop_on_sigterm():
            for item in probe.probe_watch(s, check, args.keep_going, waiting=_waiting):
                if isinstance(item, NotReady):
                    say(f"dflash-cfg: {item} (scraped again at the next interval)")
                    continue
                if isinstance(item, ProbeError):
                    say(f"dflash-cfg: {item} (a new window starts from the counters now)")
                    continue
                if item.window.collapsed:  # before it is shown: a stop that follows the line must see it
                    code = EXIT_FINDINGS
                _show(item, args.fmt, args.color)
                sys.stdout.flush()  # a sidecar's log reader sees each window as it ends
    except (DflashCfgError, KeyboardInterrupt) as ended:
        if code != EXIT_FINDINGS:
            raise  # nothing collapsed: an endpoint that fails is exit 2, a stop is "aborted"
        # A --keep-going watch ends only this way: a window collapsed before, and that is what it exits with.
        _ended(ended, args.fmt)
    return code


@contextlib.contextmanager
def _stop_on_sigterm() -> Iterator[None]:
    """A supervisor stops a watch with SIGTERM: it ends as a Ctrl-C does, so the exit code says what was seen."""

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread (an embedding program): its own handling stands
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _ended(ended: BaseException, fmt: str) -> None:
    """Why a watch that saw a collapse ended: one line on stderr (and one JSON line in a watch's JSON lines)."""
    why = "stopped" if isinstance(ended, KeyboardInterrupt) else f"error: {ended}"
    if fmt == "json" and not isinstance(ended, KeyboardInterrupt):
        write_whole(probe_json(json.loads(error_json("probe", __version__, str(ended))), lines=True))
    say(f"dflash-cfg: {why} (exit 1: a window collapsed during the watch)")


def _waiting(line: str) -> None:
    say(f"dflash-cfg: {line}")


def _show(explained: Explained, fmt: str, color: str = "auto") -> None:
    """One window: a document (a watch's: one JSON line) or text, each drafter's check after it. A check that
    could not be made is one line on stderr."""
    for u in explained.unchecked:
        say(f"dflash-cfg: cannot check the drafter of {u.model_name}: {u.reason}")
    window, when = explained.window, explained.when
    diagnoses = [(d.model_name, d.drafter, d.upstream, d.report) for d in explained.diagnoses]
    if fmt == "json":
        doc = probe_document(window.source, window.interval, window.judged, __version__, diagnoses, when=when)
        write_whole(probe_json(doc, lines=when is not None))
    else:
        shown = colour(color)
        if when is None:
            click.echo(probe_text(window.source, window.interval, window.judged), nl=False, color=shown)
        else:
            click.echo(probe_line(when, window.judged), nl=False, color=shown)
        for d in diagnoses:
            click.echo(diagnosis_text(*d), nl=False, color=shown)

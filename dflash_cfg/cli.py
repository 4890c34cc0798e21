"""Command line: options -> one call -> render -> exit once. No domain logic here."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import click

import dflash_cfg as api
from dflash_cfg.commands.common import HubOptions, select_rules
from dflash_cfg.errors import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    DflashCfgError,
    Documented,
    ProbeError,
    UsageError,
    redact,
)
from dflash_cfg.lint.gate import verdict
from dflash_cfg.lint.rules import ALL
from dflash_cfg.model import FixResult, Report, Severity
from dflash_cfg.report.catalogue import catalogue_json, catalogue_text
from dflash_cfg.report.commands import (
    diff_json,
    diff_text,
    engine_step_json,
    error_json,
    fix_advice,
    fix_json,
    fix_plan_text,
    fix_prompt,
    fix_result_text,
    preflight_text,
    verify_json,
    verify_text,
    where_json,
    where_text,
)
from dflash_cfg.report.escape import printable
from dflash_cfg.report.formats import CI_FORMATS, FORMATS, render, render_chunks
from dflash_cfg.report.probe import diagnosis_text, probe_document, probe_json, probe_line, probe_text
from dflash_cfg.sources.hfenv import secrets
from dflash_cfg.version import __version__

if TYPE_CHECKING:  # imported when probe runs: the other commands need not load prometheus_client
    from dflash_cfg.commands.probe import Explained as ProbeExplained


def _say(message: str) -> None:
    """One line on stderr: no credential, no control character a terminal would act on."""
    click.echo(printable(redact(message, secrets())), err=True)


def _colour(choice: str = "auto") -> bool | None:
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


def colour_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--color",
        "color",
        type=click.Choice(("auto", "always", "never")),
        default="auto",
        show_default=True,
        help="Colour the text output (auto: on a terminal, unless NO_COLOR is set or FORCE_COLOR forces it).",
    )(f)


def ci_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """How a check's result is shown and what it exits with, for CI (check and preflight)."""
    f = click.option(
        "-q", "--quiet", is_flag=True, help="Text: the findings only (no file headers, layouts, fixes or summary)."
    )(f)
    f = click.option(
        "--statistics",
        is_flag=True,
        help='Add the count of findings per rule, with how many `fix` repairs (json: a "statistics" list).',
    )(f)
    f = click.option(
        "--exit-zero", "exit_zero", is_flag=True, help="Exit 0 even when findings fail the run (2 stays 2)."
    )(f)
    return colour_option(
        click.option(
            "--format",
            "fmt",
            type=click.Choice(FORMATS),
            default="text",
            show_default=True,
            help="text; json (versioned); github (Actions annotations); sarif (2.1.0, code scanning).",
        )(f)
    )


def exit_code(report: Report, exit_zero: bool = False) -> int:
    """The run's verdict, and on a failure caused by warnings only, the ways forward (stderr).
    `exit_zero`: findings never fail the run (an error of the run itself still exits 2)."""
    result = verdict(report, report.fail_on, gate=report.gate)
    if exit_zero and result.code == EXIT_FINDINGS:
        return EXIT_OK
    if result.advice:
        _say(f"dflash-cfg: {result.advice}")
    return result.code


def project_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """What decides a gate: the project config, and what fails."""
    f = click.option(
        "--fail-on",
        "fail_on",
        type=click.Choice(("error", "warning")),
        help="Fail (exit 1) on findings this severe (default: the project's fail-on, else error; gates: warning).",
    )(f)
    f = click.option("--strict", is_flag=True, help="Warnings fail too (as --fail-on warning).")(f)
    f = click.option("--isolated", is_flag=True, help="Ignore every project config file.")(f)
    return click.option(
        "--config",
        "config",
        metavar="FILE",
        type=click.Path(path_type=str, readable=False),
        help="The project config (default: the nearest dflash-cfg.toml or pyproject.toml [tool.dflash-cfg]).",
    )(f)


def _fail_on(fail_on: str | None, strict: bool) -> str | None:
    if strict and fail_on == "error":
        raise UsageError("--strict and --fail-on error contradict each other")
    return "warning" if strict else fail_on


def _requested_format(args: list[str]) -> tuple[str | None, str | None]:
    """The command and its --format from the command line (before any `--`), for an error document."""
    command, fmt = None, None
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--format" and i + 1 < len(args):
            fmt = args[i + 1]
        elif arg.startswith("--format="):
            fmt = arg.split("=", 1)[1]
        elif command is None and not arg.startswith("-"):
            command = arg
    return command, fmt


def _error_document(args: list[str], message: str) -> None:
    """A run that exits 2 still writes one document in a machine format: CI parses stdout."""
    command, fmt = _requested_format(args)
    if command in ("check", "preflight") and fmt in ("json", "github", "sarif"):
        from dflash_cfg.commands.check import error_report

        _write_whole(render(error_report(message), fmt))
    elif command == "probe" and fmt == "json" and "--watch" in args:  # JSON lines: the error is one more line
        _write_whole(probe_json(json.loads(error_json(command, __version__, message)), lines=True))
    elif command in ("diff", "fix", "verify", "where", "probe") and fmt == "json":
        _write_whole(error_json(command, __version__, message))


def _write_whole(text: str) -> None:
    """Write a machine-readable document whole or not at all: a SIGINT or SIGTERM that arrives while its
    bytes go out is held and re-raised after, so a CI step never parses half a document. JSON and SARIF are
    UTF-8 by their specifications, whatever the locale."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # a captured stdout (tests, an embedding program)
        click.echo(text, nl=False)
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


def _show_report(
    report: Report, fmt: str, color: str, quiet: bool, statistics: bool, extra: Mapping[str, Any] | None = None
) -> None:
    chunks = render_chunks(_ci(report, fmt), fmt, quiet=quiet, with_statistics=statistics, extra=extra)
    if fmt != "text":  # a document a machine parses: whole or not at all
        _write_whole("".join(chunks))
        return
    for chunk in chunks:  # text streams: a long tree shows its first files at once
        click.echo(chunk, nl=False, color=_colour(color))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="dflash-cfg")
def cli() -> None:
    """Lint and repair the config.json of DFlash speculative-decoding drafters.

    Exit codes: 0 clean, 1 findings at the failing severity, 2 usage or environment error.
    """


def hub_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option(
        "--offline", is_flag=True, help="Answer from the local Hugging Face cache only (as HF_HUB_OFFLINE=1)."
    )(f)
    f = click.option("--revision", metavar="REV", help="Branch, tag or commit of the Hub repo (default: main).")(f)
    return click.option(
        "--from-hub",
        "from_hub",
        metavar="[REPO]",
        is_flag=False,
        flag_value="",
        default=None,
        help="Compare with config.json of this Hub repo; without REPO, inferred from a cache snapshot path.",
    )(f)


def _hub(
    paths: tuple[str, ...], from_hub: str | None, revision: str | None, offline: bool
) -> tuple[tuple[str, ...], HubOptions | None]:
    if from_hub is None:
        if revision:
            raise UsageError("--revision needs --from-hub")
        return paths, None
    # `--from-hub PATH` (REPO omitted, PATH swallowed as its value): take it back as the path.
    if not paths and from_hub and os.path.exists(from_hub):
        return (from_hub,), HubOptions(None, revision, offline)
    return paths, HubOptions(from_hub or None, revision, offline)


@cli.command("check")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str, readable=False))
@click.option("--target", metavar="PATH", help="Target model dir (config.json, tokenizer files) to check against.")
@hub_options
@click.option(
    "--expect-sha256",
    "expect_sha256",
    metavar="HEX",
    help="Fail (DF702) unless the file's sha256 is this one (as printed by `fix`).",
)
@ci_options
@project_options
@click.option(
    "--gate",
    is_flag=True,
    help="As the pre-commit hook: fail on warnings unless the project relaxes it or the file is identical to "
    "its upstream, and compare with upstream whenever the repo is known.",
)
@click.option("--select", metavar="IDS", help="Only these rules: comma-separated ids or prefixes (DF2 = DF2xx).")
@click.option("--ignore", metavar="IDS", help="Skip these rules: comma-separated ids or prefixes.")
@click.option(
    "--no-cache",
    "no_cache",
    is_flag=True,
    help="Neither read nor write the cache of transformers views ($XDG_CACHE_HOME/dflash-cfg).",
)
@click.pass_context
def check_command(
    ctx: click.Context,
    paths: tuple[str, ...],
    target: str | None,
    from_hub: str | None,
    revision: str | None,
    offline: bool,
    expect_sha256: str | None,
    fmt: str,
    color: str,
    exit_zero: bool,
    statistics: bool,
    quiet: bool,
    config: str | None,
    isolated: bool,
    strict: bool,
    fail_on: str | None,
    gate: bool,
    select: str | None,
    ignore: str | None,
    no_cache: bool,
) -> None:
    """Lint drafter config.json files: PATH is a model dir, a config.json, a tree to search, or a Hub id."""
    paths, hub = _hub(paths, from_hub, revision, offline)
    if not paths:
        raise click.UsageError("missing PATH (a model dir, a config.json, or a tree)")
    report = api.check(
        paths,
        target=target,
        select=select,
        ignore=ignore,
        from_hub=None if hub is None else hub.repo or "",
        revision=revision,
        offline=offline,
        expect_sha256=expect_sha256,
        use_cache=not no_cache,
        config=config,
        isolated=isolated,
        fail_on=_fail_on(fail_on, strict),
        gate=gate,
    )
    _show_report(report, fmt, color, quiet, statistics)
    for error in report.errors:
        _say(f"dflash-cfg: error: {error}")
    ctx.exit(exit_code(report, exit_zero))


@cli.command("diff")
@click.argument("path", required=False, type=click.Path(path_type=str, readable=False))
@hub_options
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@colour_option
@click.pass_context
def diff_command(
    ctx: click.Context,
    path: str | None,
    from_hub: str | None,
    revision: str | None,
    offline: bool,
    fmt: str,
    color: str,
) -> None:
    """Field table of PATH against its upstream config.json: raw, through Qwen3Config, upstream.

    Exits 1 when a DFlash-critical field differs.
    """
    paths, hub = _hub((path,) if path else (), from_hub, revision, offline)
    if hub is None:
        raise click.UsageError("diff needs --from-hub [REPO]")
    if not paths:
        raise click.UsageError("missing PATH (a model dir or a config.json)")
    result = api.diff(paths[0], hub.repo or "", revision=revision, offline=offline)
    if fmt == "json":
        _write_whole(diff_json(result, __version__))
    else:
        click.echo(diff_text(result), nl=False, color=_colour(color))
    ctx.exit(EXIT_FINDINGS if result.critical else EXIT_OK)


@cli.command("fix")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str, readable=False))
@hub_options
@click.option("--only-critical", is_flag=True, help="With --from-hub: adopt only the DFlash-critical fields.")
@click.option("--target", metavar="PATH", help="Target model dir, for fixes that take a value from it.")
@click.option("--dry-run", is_flag=True, help="Print the unified diff and write nothing (exit 1 if it would change).")
@click.option("--yes", "-y", is_flag=True, help="Write without asking.")
@click.option("--no-backup", is_flag=True, help="Keep no config.json.<sha>.bak (e.g. in a git repo).")
@click.option("--no-lock", is_flag=True, help="Do not record the write in .dflash-cfg.lock (e.g. in a git repo).")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when a file was changed (pre-commit fixers).")
@click.option(
    "--min-severity",
    type=click.Choice(("info", "warning", "error")),
    default="info",
    show_default=True,
    help="Apply only the fixes of findings at least this severe (info includes portability mirrors).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "json")),
    default="text",
    show_default=True,
    help="json: one document for the whole run (needs --yes or --dry-run: it cannot ask).",
)
@colour_option
@click.pass_context
def fix_command(
    ctx: click.Context,
    paths: tuple[str, ...],
    from_hub: str | None,
    revision: str | None,
    offline: bool,
    only_critical: bool,
    target: str | None,
    dry_run: bool,
    yes: bool,
    no_backup: bool,
    no_lock: bool,
    exit_non_zero_on_fix: bool,
    min_severity: str,
    fmt: str,
    color: str,
) -> None:
    """Repair the config.json of each PATH: safe mechanical fixes, or upstream's bytes with --from-hub.

    Every write is atomic, read back and compared by sha256, kept with a backup, and recorded in
    .dflash-cfg.lock so `dflash-cfg verify` can prove later that the file is still the one written.
    """
    from dflash_cfg.commands.fix import ConfirmPolicy, confirmation
    from dflash_cfg.commands.fix import exit_code as fix_exit_code

    paths, hub = _hub(paths, from_hub, revision, offline)
    if not paths:
        raise click.UsageError("missing PATH (a model dir or a config.json)")
    as_json_doc = fmt == "json"
    policy = ConfirmPolicy(dry_run=dry_run, yes=yes, document=as_json_doc)
    colour = _colour(color)
    confirm = confirmation(
        policy,
        show=lambda p: click.echo(fix_plan_text(p), nl=False, color=colour),
        ask=lambda p: click.confirm(fix_prompt(p), abort=True),
        is_terminal=lambda: sys.stdin.isatty(),  # looked up when asked: a closed stdin is None
    )
    results = api.fix(
        paths,
        from_hub=None if hub is None else hub.repo or "",
        revision=revision,
        offline=offline,
        only_critical=only_critical,
        target=target,
        min_severity=min_severity,
        confirm=confirm,
        backup=not no_backup,
        record_lock=not no_lock,
    )
    code = EXIT_OK
    done: list[FixResult] = []
    try:
        for result in results:
            done.append(result)
            if not as_json_doc:  # the document says the rest
                click.echo(fix_result_text(result), nl=False, color=colour)
            for line in fix_advice(result):
                _say(line)
            code = max(code, fix_exit_code(result, exit_non_zero_on_fix))
    except DflashCfgError as exc:
        if not as_json_doc:
            raise
        # The files done so far, and why the run stopped.
        message = redact(str(exc), secrets())
        _write_whole(fix_json(done, __version__, dry_run=dry_run, errors=(message,)))
        raise Documented(exc) from exc
    if as_json_doc:
        _write_whole(fix_json(done, __version__, dry_run=dry_run))
    ctx.exit(code)


@cli.command("verify")
@click.argument("path", type=click.Path(path_type=str, readable=False))
@click.option("--expect-sha256", "expect_sha256", metavar="HEX", help="Compare with this sha256 instead of the lock.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@colour_option
@click.pass_context
def verify_command(ctx: click.Context, path: str, expect_sha256: str | None, fmt: str, color: str) -> None:
    """Is PATH's config.json still the file dflash-cfg last wrote (or the one with --expect-sha256)?"""
    v = api.verify(path, expect_sha256=expect_sha256)
    if fmt == "json":
        _write_whole(verify_json(v, __version__))
    text = verify_text(v, with_origin=expect_sha256 is None)
    if v.ok:
        if fmt == "text":
            click.echo(text, nl=False, color=_colour(color))
        ctx.exit(EXIT_OK)
    click.echo(text, nl=False, err=True)
    ctx.exit(EXIT_FINDINGS)


@cli.command("preflight", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@hub_options
@ci_options
@project_options
@click.option(
    "--no-cache",
    is_flag=True,
    help="Neither read nor write the caches: transformers results, and the engine step's answers.",
)
@click.option("--exec", "exec_", is_flag=True, help="Replace this process with COMMAND when the check is clean.")
@click.option(
    "--no-engine-check",
    "no_engine_check",
    is_flag=True,
    help="Do not run the launch's own engine on the drafter (DF90x); the project config's engine-check = false "
    "does the same.",
)
@click.pass_context
def preflight_command(
    ctx: click.Context,
    command: tuple[str, ...],
    from_hub: str | None,
    revision: str | None,
    offline: bool,
    fmt: str,
    color: str,
    exit_zero: bool,
    statistics: bool,
    quiet: bool,
    config: str | None,
    isolated: bool,
    strict: bool,
    fail_on: str | None,
    no_cache: bool,
    exec_: bool,
    no_engine_check: bool,
) -> None:
    """Check the drafter and target of a vLLM or SGLang launch COMMAND (after --) before it runs.

    Model ids are resolved in the local Hugging Face cache, as the engine would, without network.
    Example: dflash-cfg preflight --exec -- vllm serve Qwen/Qwen3.6-27B --speculative-config '{...}'
    """
    from dflash_cfg.commands import preflight

    argv = list(command[1:] if command and command[0] == "--" else command)
    if exec_ and exit_zero:
        raise UsageError("--exec launches only on a clean check: --exit-zero would launch whatever it found")
    _, hub = _hub((), from_hub, revision, offline)
    failing = _fail_on(fail_on, strict)
    result = preflight.run(
        argv,
        hub,
        no_cache,
        offline=offline,
        config=config,
        isolated=isolated,
        fail_on=None if failing is None else Severity[failing.upper()],
        engine_check=not no_engine_check,
    )
    if fmt == "text" and not quiet:
        click.echo(preflight_text(result), nl=False, color=_colour(color))
    step = result.engine_step
    engine = {"engine_check": engine_step_json(step, result.launch.engine_version)} if step is not None else None
    _show_report(result.report, fmt, color, quiet, statistics, engine)
    for error in result.report.errors:
        _say(f"dflash-cfg: error: {error}")
    code = exit_code(result.report, exit_zero)
    if exec_ and code == EXIT_OK:
        preflight.execute(result.launch)
    if exec_ and code != EXIT_OK:
        click.echo("dflash-cfg: not launching: the check failed", err=True)
    ctx.exit(code)


@cli.command("engines")
@click.argument("drafter", type=click.Path(path_type=str, readable=False))
@click.option("--target", metavar="PATH", help="The target model dir the drafter serves (its config.json).")
@click.option(
    "--python",
    "pythons",
    metavar="PY",
    multiple=True,
    help="An interpreter with an engine installed (repeatable); only these are asked. Default: this "
    "interpreter when an engine imports here, and those behind `vllm` and `sglang` on PATH.",
)
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@colour_option
@click.pass_context
def engines_command(
    ctx: click.Context, drafter: str, target: str | None, pythons: tuple[str, ...], fmt: str, color: str
) -> None:
    """What the installed engines read from DRAFTER: each engine's own config code, run on CPU, no weights.

    Exits 1 when an engine refuses the drafter or reads its taps, mask, layer types or window other than
    the file says; 2 when no engine is found (name one with --python).
    """
    from dflash_cfg.commands.engines import engines
    from dflash_cfg.report.engines import engines_json, engines_text

    result = engines(drafter, target, pythons)
    if fmt == "json":
        _write_whole(engines_json(result, __version__))
    else:
        click.echo(engines_text(result), nl=False, color=_colour(color))
    if all(a.record.failed is not None for a in result.answers):
        _say("dflash-cfg: error: no engine could answer (see each one's reason above)")
        ctx.exit(EXIT_USAGE)
    ctx.exit(EXIT_FINDINGS if result.failing else EXIT_OK)


@cli.command("where")
@click.argument("model")
@click.option("--revision", metavar="REV", help="For a Hub id: the branch, tag or commit (default: main).")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@colour_option
def where_command(model: str, revision: str | None, fmt: str, color: str) -> None:
    """Which config.json an engine would read for MODEL (a path, or a Hub id in the local cache)."""
    from dflash_cfg.commands.where import where

    location = where(model, revision)
    if fmt == "json":
        _write_whole(where_json(location, __version__))
    else:
        click.echo(where_text(location), nl=False, color=_colour(color))


@cli.command("probe")
@click.argument("url", metavar="URL")
@click.option("--interval", type=float, metavar="SECONDS", help="Judge the window between two scrapes this far apart.")
@click.option("--timeout", type=float, default=10.0, show_default=True, metavar="SECONDS", help="Per scrape.")
@click.option(
    "--min-acceptance-length",
    "min_length",
    type=float,
    metavar="X",
    help="A mean acceptance length below X is a collapse (default: the project config's, else 1.5).",
)
@click.option("--drafter", metavar="DIR", help="On a collapse, check this drafter (default: the project's).")
@click.option("--target", metavar="PATH", help="With the drafter's check: its target model dir.")
@hub_options
@click.option("--watch", is_flag=True, help="Judge a window every --interval (default 30 s), one line each.")
@click.option("--keep-going", "keep_going", is_flag=True, help="With --watch: report collapses and go on.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.option(
    "--config", "config", metavar="FILE", type=click.Path(path_type=str, readable=False), help="Project config."
)
@click.option("--isolated", is_flag=True, help="Ignore every project config file.")
@click.pass_context
def probe_command(
    ctx: click.Context,
    url: str,
    interval: float | None,
    timeout: float,
    min_length: float | None,
    drafter: str | None,
    target: str | None,
    from_hub: str | None,
    revision: str | None,
    offline: bool,
    watch: bool,
    keep_going: bool,
    fmt: str,
    config: str | None,
    isolated: bool,
) -> None:
    """Is speculative decoding working? Acceptance from the engine's Prometheus URL (or a saved scrape).

    Exits 1 on a collapse (a mean acceptance length below the threshold), with the drafter's check when it is
    known; 0 when healthy; 2 when it cannot tell (endpoint down, not metrics, a restart between scrapes).
    """
    from dflash_cfg.commands import probe

    if keep_going and not watch:
        raise UsageError("--keep-going needs --watch")
    if revision and from_hub is None:
        raise UsageError("--revision needs --from-hub")
    if watch and interval is None:
        interval = 30.0
    s = probe.settings(url, interval, timeout, min_length, config, isolated)
    hub = None if from_hub is None else HubOptions(from_hub or None, revision, offline)
    check = probe.DrafterCheck(drafter, target, hub, offline, config, isolated)
    if not watch:
        answer = probe.probe_once(s, check)
        _show_probe(answer, fmt)
        ctx.exit(EXIT_FINDINGS if answer.window.collapsed else EXIT_OK)
    code = EXIT_OK
    for item in probe.probe_watch(s, check, keep_going):
        if isinstance(item, ProbeError):
            _say(f"dflash-cfg: {item} (a new window starts from the counters now)")
            continue
        _show_probe(item, fmt)
        if item.window.collapsed:
            code = EXIT_FINDINGS
        sys.stdout.flush()  # a sidecar's log reader sees each window as it ends
    ctx.exit(code)


def _show_probe(explained: ProbeExplained, fmt: str) -> None:
    """One window: a document (a watch's: one JSON line) or text, each drafter's check after it. A check that
    could not be made is one line on stderr."""
    for u in explained.unchecked:
        _say(f"dflash-cfg: cannot check the drafter of {u.model_name}: {u.reason}")
    window, when = explained.window, explained.when
    diagnoses = [(d.model_name, d.drafter, d.upstream, d.report) for d in explained.diagnoses]
    if fmt == "json":
        doc = probe_document(window.source, window.interval, window.judged, __version__, diagnoses, when=when)
        _write_whole(probe_json(doc, lines=when is not None))
    else:
        text = (
            probe_text(window.source, window.interval, window.judged)
            if when is None
            else probe_line(when, window.judged)
        )
        click.echo(text, nl=False)
        for d in diagnoses:
            click.echo(diagnosis_text(*d), nl=False)


@cli.command("rules")
@click.argument("ids", nargs=-1)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "json")),
    default="text",
    show_default=True,
    help="json: each rule's declaration, summary, description, examples and engine reads as fields, its doc as "
    "Markdown.",
)
@click.option("-v", "--verbose", is_flag=True, help="Show each rule's full documentation.")
@colour_option
def rules_command(ids: tuple[str, ...], fmt: str, verbose: bool, color: str) -> None:
    """The rule catalogue with each rule's documentation (IDS or prefixes narrow it)."""
    chosen = select_rules(",".join(ids), None) if ids else ALL
    if fmt == "json":
        _write_whole(catalogue_json(chosen))
    else:
        click.echo(catalogue_text(chosen, verbose or bool(ids)), nl=False, color=_colour(color))


def run(entry: click.Command, args: list[str] | None = None) -> int:
    """Invoke click without letting it exit, and turn every failure into a one-line cause (and, with a
    machine --format, into a document on stdout that says it)."""
    argv = list(sys.argv[1:] if args is None else args)

    def document(message: str) -> None:
        with contextlib.suppress(Exception):  # the one-line cause on stderr still says it
            _error_document(argv, redact(message, secrets()))

    try:
        # Without standalone mode click returns ctx.exit()'s code instead of raising it.
        code = entry.main(args=args, prog_name="dflash-cfg", standalone_mode=False)
        return code if isinstance(code, int) else EXIT_OK
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:  # click's own usage errors
        document(exc.format_message())
        exc.show()
        return EXIT_USAGE
    except DflashCfgError as exc:  # the user's or the environment's: one line, the class says the exit code
        if not isinstance(exc, Documented):
            document(str(exc))
        _say(f"dflash-cfg: error: {exc}")
        return int(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("dflash-cfg: aborted", err=True)
        return EXIT_USAGE
    except KeyboardInterrupt:  # Ctrl-C: a run that was not made, as the contract says of exit 2
        with contextlib.suppress(Exception):
            click.echo("dflash-cfg: aborted", err=True)
        return EXIT_USAGE
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
            _say(f"dflash-cfg: error: {message}")
            return EXIT_USAGE
        if os.environ.get("DFLASH_CFG_DEBUG"):
            raise
        document(f"internal error: {type(exc).__name__}: {exc}")
        _say(
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

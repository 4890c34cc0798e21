"""The commands on a drafter's config.json: check (lint it), diff (against upstream), fix (repair it) and
verify (is it still the file fix wrote)."""

from __future__ import annotations

import sys

import click

from dflash_cfg.cli.common_options import ci_options, colour_option, format_option, hub_options, parsed, project_options
from dflash_cfg.cli.output import colour, exit_code, say, show_report, write_whole
from dflash_cfg.cli.parse_result import CheckArgs, DiffArgs, FixArgs, VerifyArgs
from dflash_cfg.errors import EXIT_FINDINGS, EXIT_OK, DflashCfgError, Documented, redact
from dflash_cfg.model import FixResult, Verification
from dflash_cfg.report.commands import (
    diff_json,
    diff_text,
    fix_advice,
    fix_json,
    fix_plan_text,
    fix_prompt,
    fix_result_text,
    verify_json,
    verify_text,
)
from dflash_cfg.sources.hfenv import secrets
from dflash_cfg.version import __version__


@click.command("check")
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
@click.option(
    "--engine",
    "engine",
    metavar="NAME",
    multiple=True,
    help="What serves the drafters: vllm, sglang, mlx or reference (repeatable, or comma-separated; default: "
    "the project's `engines`). A finding about other engines only fails no gate; with none known, a warning "
    "about some engines only is shown and fails nothing.",
)
@click.option(
    "--select",
    metavar="IDS",
    multiple=True,
    help="Only these rules: comma-separated ids, prefixes (DF2 = DF2xx) or names; repeatable, the lists add up.",
)
@click.option(
    "--ignore", metavar="IDS", multiple=True, help="Skip these rules: ids, prefixes or names; repeatable, as --select."
)
@click.option(
    "--failing-only/--verbose",
    " /-v",
    "failing_only",
    default=False,
    help="Text: only the files that fail the run, then the summary (the pre-commit hook's output). -v, --verbose: "
    "every file, the default (after --failing-only, as a hook's args: the whole output again).",
)
@click.option(
    "--min-severity",
    type=click.Choice(("info", "warning", "error")),
    default="info",
    show_default=True,
    help="Show only findings at least this severe (the summary counts the rest); never above what fails the run.",
)
@click.option(
    "--no-cache",
    "no_cache",
    is_flag=True,
    help="Neither read nor write the cache of transformers views ($XDG_CACHE_HOME/dflash-cfg).",
)
@parsed(CheckArgs)
def check_command(args: CheckArgs) -> int:
    """Lint drafter config.json files: PATH is a model dir, a config.json, a tree to search, or a Hub id."""
    from dflash_cfg.commands.check import Interrupted, check, check_options

    paths, hub = args.hub.resolve(args.paths)
    if not paths:
        raise click.UsageError("missing PATH (a model dir, a config.json, or a tree)")
    options = check_options(
        paths,
        target=args.target,
        # Repeated options add up, as ruff's do (and as --engine does): one comma-separated list each.
        select=",".join(args.select) if args.select else None,
        ignore=",".join(args.ignore) if args.ignore else None,
        hub=hub,
        expect_sha256=args.expect_sha256,
        use_cache=not args.no_cache,
        offline=args.hub.offline,
        config=args.project.config,
        isolated=args.project.isolated,
        fail_on=args.project.failing(),
        gate=args.gate,
        engines=tuple(name.strip() for given in args.engine for name in given.split(",") if name.strip()),
        min_severity=args.min_severity,
    )
    try:
        report = check(options)
    except Interrupted as stopped:
        if args.ci.fmt != "text":  # a machine document goes out whole: the files checked so far, marked interrupted
            show_report(stopped.report, args.ci)
        raise
    show_report(report, args.ci, failing_only=args.failing_only)
    for doubt in report.warnings:
        say(f"dflash-cfg: warning: {doubt}")
    for error in report.errors:
        say(f"dflash-cfg: error: {error}")
    return exit_code(report, args.ci.exit_zero, summarised=args.ci.fmt == "text" and not args.ci.quiet)


@click.command("diff")
@click.argument("path", required=False, type=click.Path(path_type=str, readable=False))
@hub_options
@format_option()
@colour_option
@parsed(DiffArgs)
def diff_command(args: DiffArgs) -> int:
    """Field table of PATH against its upstream config.json: raw, through Qwen3Config, upstream.

    Exits 1 when a DFlash-critical field differs.
    """
    from dflash_cfg.commands.diff import diff

    paths, hub = args.hub.resolve((args.path,) if args.path else ())
    if hub is None:
        raise click.UsageError("diff needs --from-hub [REPO]")
    if not paths:
        raise click.UsageError("missing PATH (a model dir or a config.json)")
    result = diff(paths[0], hub)
    if args.fmt == "json":
        write_whole(diff_json(result, __version__))
    else:
        click.echo(diff_text(result), nl=False, color=colour(args.color))
    return EXIT_FINDINGS if result.critical else EXIT_OK


@click.command("fix")
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
    "--failing-only/--verbose",
    " /-v",
    "failing_only",
    default=False,
    help="Text: say nothing of a file with nothing to change and nothing left failing (the fix hook's output). "
    "-v, --verbose: every file, the default.",
)
@format_option(help="json: one document for the whole run (needs --yes or --dry-run: it cannot ask).")
@colour_option
@parsed(FixArgs)
def fix_command(args: FixArgs) -> int:
    """Repair the config.json of each PATH: safe mechanical fixes, or upstream's bytes with --from-hub.

    Every write is atomic, read back and compared by sha256, kept with a backup, and recorded in
    .dflash-cfg.lock so `dflash-cfg verify` can prove later that the file is still the one written.
    """
    from dflash_cfg.commands.fix import ConfirmPolicy, Failed, confirmation, fix_options, fix_paths
    from dflash_cfg.commands.fix import exit_code as fix_exit_code

    paths, hub = args.hub.resolve(args.paths)
    if not paths:
        raise click.UsageError("missing PATH (a model dir, a config.json, or a tree)")
    as_json_doc = args.fmt == "json"
    policy = ConfirmPolicy(dry_run=args.dry_run, yes=args.yes, document=as_json_doc)
    shown = colour(args.color)
    confirm = confirmation(
        policy,
        show=lambda p: click.echo(fix_plan_text(p), nl=False, color=shown),
        ask=lambda p: click.confirm(fix_prompt(p), abort=True),
        is_terminal=lambda: sys.stdin.isatty(),  # looked up when asked: a closed stdin is None
    )
    options = fix_options(hub=hub, only_critical=args.only_critical, target=args.target, min_severity=args.min_severity)
    results = fix_paths(list(paths), options, confirm, backup=not args.no_backup, record_lock=not args.no_lock)
    code = EXIT_OK
    done: list[FixResult] = []
    failed: list[str] = []  # each PATH that could not be done, said in its place; the rest go on
    try:
        for result in results:
            if isinstance(result, Failed):
                message = redact(result.message, secrets())
                failed.append(message)
                say(f"dflash-cfg: error: {message}")
                code = max(code, result.error.exit_code)
                continue
            done.append(result)
            quiet = args.failing_only and not result.plan.changed and not result.remaining_errors
            if not as_json_doc and not quiet:  # the document says the rest
                click.echo(fix_result_text(result), nl=False, color=shown)
            for line in fix_advice(result):
                say(line)
            code = max(code, fix_exit_code(result, args.exit_non_zero_on_fix))
    except DflashCfgError as exc:
        if not as_json_doc:
            raise
        # The files done so far, and why the run stopped.
        message = redact(str(exc), secrets())
        write_whole(fix_json(done, __version__, dry_run=args.dry_run, errors=(*failed, message)))
        raise Documented(exc) from exc
    if as_json_doc:
        write_whole(fix_json(done, __version__, dry_run=args.dry_run, errors=failed))
    return code


@click.command("verify")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str, readable=False))
@click.option("--expect-sha256", "expect_sha256", metavar="HEX", help="Compare with this sha256 instead of the lock.")
@format_option()
@colour_option
@parsed(VerifyArgs)
def verify_command(args: VerifyArgs) -> int:
    """Is each PATH's config.json still the file dflash-cfg last wrote (or the one with --expect-sha256)?

    Says what that write was: upstream's bytes at a commit, or safe fixes only with the findings they left.
    Exits 0 when every file matches, 1 on a mismatch, 2 when a PATH cannot be verified (the worst of them).
    """
    from dflash_cfg.commands.verify import verify

    with_origin = args.expect_sha256 is None
    code = EXIT_OK
    results: list[Verification] = []
    errors: list[str] = []
    for path in args.paths:
        try:
            v = verify(path, args.expect_sha256)
        except DflashCfgError as exc:
            if len(args.paths) == 1:
                raise  # one PATH: its one-line cause, as ever
            message = redact(str(exc), secrets())
            errors.append(message)
            say(f"dflash-cfg: error: {message}")
            code = max(code, exc.exit_code)
            continue
        results.append(v)
        text = verify_text(v, with_origin=with_origin)
        if not v.ok:
            click.echo(text, nl=False, err=True)
            code = max(code, EXIT_FINDINGS)
        elif args.fmt == "text":
            click.echo(text, nl=False, color=colour(args.color))
    if args.fmt == "json":
        write_whole(verify_json(results, __version__, with_origin=with_origin, errors=errors))
    return code

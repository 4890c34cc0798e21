"""The commands about serving a drafter: preflight (check a vLLM or SGLang launch before it runs), engines
(what the installed engines read from a drafter) and where (which config.json an engine would read)."""

from __future__ import annotations

import click

from dflash_cfg.cli.common_options import ci_options, colour_option, format_option, hub_options, parsed, project_options
from dflash_cfg.cli.output import colour, exit_code, say, show_report, write_whole
from dflash_cfg.cli.parse_result import EnginesArgs, PreflightArgs, WhereArgs
from dflash_cfg.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from dflash_cfg.model import Severity
from dflash_cfg.report.commands import engine_step_json, preflight_text, where_json, where_text
from dflash_cfg.version import __version__


@click.command("preflight", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
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
@click.option(
    "--launch-file",
    metavar="FILE",
    help="Read the launch from FILE: its command line as written at a shell (a ConfigMap key mounted in a pod).",
)
@click.option(
    "--launch-env",
    metavar="NAME",
    help="Read the launch from the environment variable NAME: its command line as written at a shell.",
)
@parsed(PreflightArgs)
def preflight_command(args: PreflightArgs) -> int:
    """Check the drafter and target of a vLLM or SGLang launch COMMAND (after --) before it runs.

    Model ids are resolved in the local Hugging Face cache, as the engine would, without network.
    Example: dflash-cfg preflight --exec -- vllm serve Qwen/Qwen3.6-27B --speculative-config '{...}'
    """
    import os

    from dflash_cfg.commands import preflight

    _, hub = args.hub.resolve(())
    failing = args.project.failing()
    result = preflight.run(
        preflight.launch_argv(args.launch, args.launch_file, args.launch_env, os.environ),
        hub,
        args.no_cache,
        offline=args.hub.offline,
        config=args.project.config,
        isolated=args.project.isolated,
        fail_on=None if failing is None else Severity[failing.upper()],
        engine_check=not args.no_engine_check,
    )
    if args.ci.fmt == "text" and not args.ci.quiet:
        click.echo(preflight_text(result), nl=False, color=colour(args.ci.color))
    step = result.engine_step
    engine = {"engine_check": engine_step_json(step, result.launch.engine_version)} if step is not None else None
    show_report(result.report, args.ci, engine)
    for doubt in result.report.warnings:
        say(f"dflash-cfg: warning: {doubt}")
    for error in result.report.errors:
        say(f"dflash-cfg: error: {error}")
    code = exit_code(result.report, args.ci.exit_zero)
    if args.exec_ and code == EXIT_OK:
        preflight.execute(result.launch)
    if args.exec_ and code != EXIT_OK:
        click.echo("dflash-cfg: not launching: the check failed", err=True)
    return code


@click.command("engines")
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
@format_option()
@colour_option
@parsed(EnginesArgs)
def engines_command(args: EnginesArgs) -> int:
    """What the installed engines read from DRAFTER: each engine's own config code, run on CPU, no weights.

    Exits 1 when an engine refuses the drafter or reads its taps, mask, layer types or window other than
    the file says; 2 when no engine is found (name one with --python).
    """
    from dflash_cfg.commands.engines import engines
    from dflash_cfg.report.engines import engines_json, engines_text

    result = engines(args.drafter, args.target, args.pythons)
    if args.fmt == "json":
        write_whole(engines_json(result, __version__))
    else:
        click.echo(engines_text(result), nl=False, color=colour(args.color))
    if all(a.record.failed is not None for a in result.answers):
        say("dflash-cfg: error: no engine could answer (see each one's reason above)")
        return EXIT_USAGE
    return EXIT_FINDINGS if result.failing else EXIT_OK


@click.command("where")
@click.argument("model")
@click.option("--revision", metavar="REV", help="For a Hub id: the branch, tag or commit (default: main).")
@format_option()
@colour_option
@parsed(WhereArgs)
def where_command(args: WhereArgs) -> int:
    """Which config.json an engine would read for MODEL (a path, or a Hub id in the local cache)."""
    from dflash_cfg.commands.where import where

    location = where(args.model, args.revision)
    if args.fmt == "json":
        write_whole(where_json(location, __version__))
    else:
        click.echo(where_text(location), nl=False, color=colour(args.color))
    return EXIT_OK

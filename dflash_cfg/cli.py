"""Command line: options -> one call -> render -> exit once. No domain logic here."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import click

from . import __version__
from .model import Report, Severity
from .report import REPORTERS, catalogue_json, catalogue_text, diff_json, diff_text
from .rules import ALL
from .runner import CheckOptions, HubOptions, UsageError, check, diff, select_rules

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _colour() -> bool | None:
    # https://no-color.org: any non-empty value disables colour; otherwise click decides (tty or not).
    return False if os.environ.get("NO_COLOR") else None


def exit_code(report: Report, strict: bool) -> int:
    if report.errors:
        return EXIT_USAGE
    worst = report.worst()
    failing = Severity.WARNING if strict else Severity.ERROR
    return EXIT_FINDINGS if worst is not None and worst >= failing else EXIT_OK


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="dflash-cfg")
def cli() -> None:
    """Lint and repair the config.json of DFlash speculative-decoding drafters.

    Exit codes: 0 clean, 1 findings at the failing severity, 2 usage or environment error.
    """


def hub_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--offline", is_flag=True,
                     help="Answer from the local Hugging Face cache only (as HF_HUB_OFFLINE=1).")(f)
    f = click.option("--revision", metavar="REV", help="Branch, tag or commit of the Hub repo (default: main).")(f)
    return click.option(
        "--from-hub", "from_hub", metavar="[REPO]", is_flag=False, flag_value="", default=None,
        help="Compare with config.json of this Hub repo; without REPO, inferred from a cache snapshot path.")(f)


def _hub(paths: tuple[str, ...], from_hub: str | None, revision: str | None,
         offline: bool) -> tuple[tuple[str, ...], HubOptions | None]:
    if from_hub is None:
        if revision or offline:
            raise UsageError("--revision and --offline need --from-hub")
        return paths, None
    # `--from-hub PATH` (REPO omitted, PATH swallowed as its value): take it back as the path.
    if not paths and from_hub and os.path.exists(from_hub):
        return (from_hub,), HubOptions(None, revision, offline)
    return paths, HubOptions(from_hub or None, revision, offline)


@cli.command("check")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--target", metavar="PATH", help="Target model dir (config.json, tokenizer files) to check against.")
@hub_options
@click.option("--format", "fmt", type=click.Choice(tuple(REPORTERS)), default="text", show_default=True)
@click.option("--strict", is_flag=True, help="Warnings fail too (exit 1).")
@click.option("--select", metavar="IDS", help="Only these rules: comma-separated ids or prefixes (DF2 = DF2xx).")
@click.option("--ignore", metavar="IDS", help="Skip these rules: comma-separated ids or prefixes.")
@click.pass_context
def check_command(ctx: click.Context, paths: tuple[str, ...], target: str | None, from_hub: str | None,
                  revision: str | None, offline: bool, fmt: str, strict: bool, select: str | None,
                  ignore: str | None) -> None:
    """Lint drafter config.json files: PATH is a model dir, a config.json, or a tree to search."""
    paths, hub = _hub(paths, from_hub, revision, offline)
    if not paths:
        raise click.UsageError("missing PATH (a model dir, a config.json, or a tree)")
    report = check(CheckOptions(paths, target, select_rules(select, ignore), hub))
    click.echo(REPORTERS[fmt](report), nl=False, color=_colour() if fmt == "text" else False)
    for error in report.errors:
        click.echo(f"dflash-cfg: error: {error}", err=True)
    ctx.exit(exit_code(report, strict))


@cli.command("diff")
@click.argument("path", required=False, type=click.Path(path_type=str))
@hub_options
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.pass_context
def diff_command(ctx: click.Context, path: str | None, from_hub: str | None, revision: str | None, offline: bool,
                 fmt: str) -> None:
    """Field table of PATH against its upstream config.json: raw, through Qwen3Config, upstream.

    Exits 1 when a DFlash-critical field differs.
    """
    paths, hub = _hub((path,) if path else (), from_hub, revision, offline)
    if hub is None:
        raise click.UsageError("diff needs --from-hub [REPO]")
    if not paths:
        raise click.UsageError("missing PATH (a model dir or a config.json)")
    result = diff(paths[0], hub)
    rendered = diff_json(result) if fmt == "json" else diff_text(result)
    click.echo(rendered, nl=False, color=_colour() if fmt == "text" else False)
    ctx.exit(EXIT_FINDINGS if result.critical else EXIT_OK)


@cli.command("rules")
@click.argument("ids", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.option("-v", "--verbose", is_flag=True, help="Show each rule's full documentation.")
def rules_command(ids: tuple[str, ...], fmt: str, verbose: bool) -> None:
    """The rule catalogue with each rule's documentation (IDS or prefixes narrow it)."""
    chosen = select_rules(",".join(ids), None) if ids else ALL
    if fmt == "json":
        click.echo(catalogue_json(chosen), nl=False)
    else:
        click.echo(catalogue_text(chosen, verbose or bool(ids)), nl=False, color=_colour())


def run(entry: click.Command, args: list[str] | None = None) -> int:
    """Invoke click without letting it exit, and turn every failure into a one-line cause."""
    try:
        # Without standalone mode click returns ctx.exit()'s code instead of raising it.
        code = entry.main(args=args, prog_name="dflash-cfg", standalone_mode=False)
        return code if isinstance(code, int) else EXIT_OK
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:  # click's own usage errors
        exc.show()
        return EXIT_USAGE
    except UsageError as exc:
        click.echo(f"dflash-cfg: error: {exc}", err=True)
        return EXIT_USAGE
    except click.exceptions.Abort:
        click.echo("dflash-cfg: aborted", err=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head`: nothing left to say; avoid a second error at interpreter exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDINGS
    except Exception as exc:  # a bug in dflash-cfg, not the user's fault: still one line
        if os.environ.get("DFLASH_CFG_DEBUG"):
            raise
        click.echo(f"dflash-cfg: internal error: {type(exc).__name__}: {exc} "
                   "(set DFLASH_CFG_DEBUG=1 for the traceback, and please report it)", err=True)
        return EXIT_USAGE


def main(args: list[str] | None = None) -> None:
    raise SystemExit(run(cli, args))

"""catalog: the published drafters the tool knows. `update` refreshes the user's catalog from the Hub, `show` shows
the catalog (the shipped one with the user's added)."""

from __future__ import annotations

import click

from dflash_cfg.cli.common_options import deadline_option, format_option, jobs_option, parsed
from dflash_cfg.cli.output import say, write_whole
from dflash_cfg.cli.parse_result import ShowArgs, UpdateArgs
from dflash_cfg.errors import EXIT_OK, EXIT_USAGE
from dflash_cfg.version import __version__


@click.group("catalog")
def catalog_group() -> None:
    """The published drafters dflash-cfg knows: their revisions and trained values.

    A catalog ships with dflash-cfg; `catalog update` adds what the Hub has now to your own
    ($XDG_CACHE_HOME/dflash-cfg/catalog.json, or DFLASH_CFG_CATALOG). Nothing contacts the Hub unless asked.
    """


@catalog_group.command("update")
@click.argument("authors", nargs=-1, metavar="[AUTHOR]...")
@click.option("--repo", "repos", metavar="ORG/NAME", multiple=True, help="Also read this repo (repeatable).")
@jobs_option
@deadline_option("End the run after this long: what is not done by then is reported (exit 2), what was read is kept.")
@click.option("--offline", is_flag=True, help="As HF_HUB_OFFLINE=1: update then refuses, saying what the catalog has.")
@format_option(help="json: per author, what was listed, recorded, skipped and not read, as data.")
@parsed(UpdateArgs)
def update_command(args: UpdateArgs) -> int:
    """Read the DFlash-family drafters of each AUTHOR (and each --repo) from the Hub into your catalog.

    Each drafter's config.json is read at its current commit and verified against its git blob id; a new commit
    adds a revision, none is dropped. A re-run reads only what changed, and an interrupted run (Ctrl-C, the
    deadline) keeps what it read. Exits 0 when everything asked for was read, 2 when something was not.
    """
    # Imported here: a `check` never pays for the imports of a run over the Hub.
    from dflash_cfg.commands.catalog import UpdateOptions, update
    from dflash_cfg.report.catalog import update_json, update_text

    options = UpdateOptions(
        authors=args.authors, repos=args.repos, jobs=args.jobs, deadline=args.deadline, offline=args.offline
    )
    result = update(options)
    if args.fmt == "json":
        write_whole(update_json(result, __version__))
    else:
        click.echo(update_text(result), nl=False)
    if result.complete:
        return EXIT_OK
    not_read = sum(len(a.failed) + len(a.not_done) + (a.error is not None) for a in result.authors)
    why = "the deadline passed" if result.deadline is not None else "some could not be read"
    say(f"dflash-cfg: catalog update incomplete: {not_read} not read ({why}); what was read is kept")
    return EXIT_USAGE


@catalog_group.command("show")
@click.argument("repo", required=False, metavar="[REPO]")
@format_option(help="json: the catalog in its file format, with where your catalog is and when it was updated.")
@parsed(ShowArgs)
def show_command(args: ShowArgs) -> int:
    """The catalog: each drafter's method, shape, base model and revisions; with REPO, every revision's trained
    values. Works offline."""
    from dflash_cfg.commands.catalog import show
    from dflash_cfg.report.catalog import show_json, show_text

    view = show(args.repo)
    if args.fmt == "json":
        write_whole(show_json(view, __version__))
    else:
        click.echo(show_text(view), nl=False)
    return EXIT_OK

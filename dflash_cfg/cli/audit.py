"""audit: the published drafters of authors and repos on the Hub, each checked with the target it was published for."""

from __future__ import annotations

import contextlib
import sys

import click

from dflash_cfg import progress
from dflash_cfg.cli.common_options import ALIASES, deadline_option, jobs_option, parsed
from dflash_cfg.cli.output import say, write_whole
from dflash_cfg.cli.parse_result import AuditArgs

FORMATS = ("text", "json", "html")


@click.command("audit")
@click.argument("targets", nargs=-1, required=True, metavar="AUTHOR|ORG/NAME[@REV]...")
@jobs_option
@click.option(
    "--format",
    *ALIASES,
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text: a table, one row per repo; json: every finding and revision (schemas/audit.schema.json); html: a "
    "self-contained page with sortable columns and each repo's findings and history.",
)
@click.option(
    "--output",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=str),
    help="Write the report to FILE (replaced whole) instead of stdout; a one-line summary goes to stderr.",
)
@deadline_option("End the run after this long: repos not done by then are rows saying so; a re-run goes on from there.")
@parsed(AuditArgs)
def audit_command(args: AuditArgs) -> int:
    """Check the DFlash-family drafters of each AUTHOR, and each repo ORG/NAME (at REV), on the Hub.

    Each drafter's config.json is read at its current commit (or REV) and linted as `check` lints it, against its
    published target (the model card's base_model: its config and tokenizer config); a repo whose card names no
    readable base model is checked alone. The last few commits give the history of its trained values. Finished
    repos are journaled in the cache dir: after Ctrl-C or the deadline, the same command goes on where it stopped.
    Exits 1 when a repo has an error, 2 when nothing could be judged, else 0 (repos that could not be read are
    rows saying why).
    """
    # Imported here: a `check` never pays for the imports of a run over the Hub.
    from dflash_cfg.commands.audit import AuditOptions, audit, exit_code, write_output
    from dflash_cfg.report.audit import audit_json, audit_text, incomplete, written
    from dflash_cfg.report.audit_html import audit_html

    render = {"text": audit_text, "json": audit_json, "html": audit_html}[args.fmt]
    options = AuditOptions(args.targets, args.jobs, args.deadline)
    # A report written to a file leaves stderr to the progress line, on a terminal (the group shows it for text).
    shown = args.output is not None and sys.stderr.isatty() and not progress.shown()
    with progress.shown_on(sys.stderr) if shown else contextlib.nullcontext():
        result = audit(options)
    text = render(result)
    if args.output is not None:
        write_output(args.output, text)
        say(f"dflash-cfg: {written(result, args.output)}")
    elif args.fmt == "text":
        click.echo(text, nl=False)
    else:
        write_whole(text)
    note = incomplete(result)
    if note:
        say(f"dflash-cfg: {note}")
    return exit_code(result)

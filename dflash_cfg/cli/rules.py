"""rules: the rule catalogue, each rule with its documentation."""

from __future__ import annotations

import click

from dflash_cfg.cli.common_options import colour_option, format_option, parsed
from dflash_cfg.cli.output import colour, write_whole
from dflash_cfg.cli.parse_result import RulesArgs
from dflash_cfg.commands.common import select_rules
from dflash_cfg.errors import EXIT_OK
from dflash_cfg.lint.rules import ALL, catalogue
from dflash_cfg.report.catalogue import catalogue_json, catalogue_text


@click.command("rules")
@click.argument("ids", nargs=-1)
@format_option(
    help="json: each rule's declaration, summary, description, examples and engine reads as fields, its doc as "
    "Markdown."
)
@click.option("-v", "--verbose", is_flag=True, help="Show each rule's full documentation.")
@colour_option
@parsed(RulesArgs)
def rules_command(args: RulesArgs) -> int:
    """The rule catalogue with each rule's documentation (IDS or prefixes narrow it)."""
    docs = catalogue(select_rules(",".join(args.ids), None) if args.ids else ALL)
    if args.fmt == "json":
        write_whole(catalogue_json(docs))
    else:
        click.echo(catalogue_text(docs, args.verbose or bool(args.ids)), nl=False, color=colour(args.color))
    return EXIT_OK

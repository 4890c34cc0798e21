"""rules: the rule catalogue, each rule with its documentation."""

from __future__ import annotations

import click

from dflash_cfg.cli.common_options import colour_option, format_option, parsed
from dflash_cfg.cli.output import colour, write_whole
from dflash_cfg.cli.parse_result import RulesArgs
from dflash_cfg.commands.common import select_rules
from dflash_cfg.errors import EXIT_OK, UsageError
from dflash_cfg.lint.rules import ALL, catalogue
from dflash_cfg.report.catalogue import catalogue_json, catalogue_text


@click.command("rules")
@click.argument("ids", nargs=-1, metavar="[RULE]...")
@format_option(
    help="json: each rule's declaration, summary, description, examples and engine reads as fields, its doc as "
    "Markdown."
)
@click.option("-v", "--verbose", is_flag=True, help="Show each rule's full documentation.")
@colour_option
@parsed(RulesArgs)
def rules_command(args: RulesArgs) -> int:
    """The rule catalogue with each rule's documentation (RULE narrows it: an id, a prefix such as DF2, or the
    name every finding prints, such as window-dropped)."""
    docs = catalogue(select_rules(",".join(rule_ids(args.ids)), None) if args.ids else ALL)
    if args.fmt == "json":
        write_whole(catalogue_json(docs))
    else:
        click.echo(catalogue_text(docs, args.verbose or bool(args.ids)), nl=False, color=colour(args.color))
    return EXIT_OK


def rule_ids(words: tuple[str, ...]) -> list[str]:
    """Each rule named by id, id prefix or name, as ids: a finding prints both (`DF105 tap-on-last-layer`),
    and either must find its documentation."""
    by_name = {r.name: r.id for r in ALL}
    ids = []
    for word in words:
        if word.lower() in by_name:
            ids.append(by_name[word.lower()])
        elif any(r.id.startswith(word.strip().upper()) for r in ALL) and word.strip():
            ids.append(word)
        else:
            raise UsageError(
                f"unknown rule {word!r}: give an id (DF204), an id prefix (DF2) or a name (window-dropped); "
                "`dflash-cfg rules` lists them"
            )
    return ids

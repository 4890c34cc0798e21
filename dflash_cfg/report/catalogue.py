"""The rule catalogue (`dflash-cfg rules`) as text or JSON."""

from __future__ import annotations

import click

from dflash_cfg.jsondoc.encode import dumps
from dflash_cfg.lint.rules import ALL, Rule


def catalogue_text(rules: tuple[Rule, ...] = ALL, verbose: bool = False) -> str:
    out = []
    for r in rules:
        out.append(f"{click.style(r.id, bold=True)}  {r.name:<26} {r.severity.label:<8} {r.summary}")
        if verbose:
            out.extend("    " + line if line else "" for line in r.doc.splitlines()[1:])
            out.append("")
    return "\n".join(out) + "\n"


def catalogue_json(rules: tuple[Rule, ...] = ALL) -> str:
    return (
        dumps(
            [
                {"id": r.id, "name": r.name, "severity": r.severity.label, "summary": r.summary, "doc": r.doc}
                for r in rules
            ],
            indent=2,
        )
        + "\n"
    )

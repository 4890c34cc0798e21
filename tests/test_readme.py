"""The README is part of the product: its rule table and commands must match the code."""

from __future__ import annotations

import re

from helpers import ROOT

from dflash_cfg.lint.rules import ALL

START = "<!-- rules-table: generated from dflash_cfg.lint.rules; tests/test_readme.py keeps it in sync -->"
END = "<!-- end rules-table -->"


def rules_table() -> str:
    rows = ["| id | name | severity | what it reports |", "|---|---|---|---|"]
    rows += [f"| {r.id} | `{r.name}` | {r.severity.label} | {r.summary.replace('``', '`')} |" for r in ALL]
    return "\n".join(rows)


def test_rule_table_matches_the_catalogue() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split(START, 1)[1].split(END, 1)[0].strip()
    assert table == rules_table(), "regenerate: python -c 'import tests.test_readme as t; t.rewrite()'"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "./dev test" in readme
    assert re.search(r"^exec \./dev test$", ci, re.M)


def rewrite() -> None:
    path = ROOT / "README.md"
    text = path.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    path.write_text(f"{head}{START}\n{rules_table()}\n{END}{tail}", encoding="utf-8")

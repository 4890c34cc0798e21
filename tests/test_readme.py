"""The README is part of the product: the test command it gives is the one CI runs."""

from __future__ import annotations

import re

from helpers import ROOT


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "./dev test" in readme
    assert re.search(r"^exec \./dev test$", ci, re.M)

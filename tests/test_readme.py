"""The README is part of the product: the test command it gives is the one CI runs."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT
from installed import Installed


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "./dev test" in readme
    assert re.search(r"^exec \./dev test$", ci, re.M)


def _lines(section: str, pattern: str) -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    body = readme.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return [m.group(1).split("  #")[0].strip() for m in re.finditer(pattern, body, re.M)]


@pytest.mark.slow  # the installed command on a copy of the incident
def test_the_readmes_ci_and_commands_lines_stop_the_incident(installed: Installed, tmp_path: Path) -> None:
    """The check lines a user pastes from the README's "Commands" and "In CI" sections, run on a tree holding the
    incident's stale drafter, fail it (a line that asks for --exit-zero says it never fails, and is left out)."""
    shutil.copytree(FIXTURES / "incident" / "Qwen3.6-27B-DFlash", tmp_path / "models" / "Qwen3.6-27B-DFlash")
    shutil.copytree(FIXTURES / "targets" / "Qwen__Qwen3.6-27B", tmp_path / "target")
    lines = _lines("Commands", r"^(dflash-cfg check .*)$") + _lines("In CI", r"^- run: (dflash-cfg check .*)$")
    assert len(lines) >= 2, lines
    for line in lines:
        if "--exit-zero" in line:
            continue
        args = shlex.split(line.replace("/models/Qwen3.6-27B", str(tmp_path / "target")))
        done = installed.run(*args, cwd=tmp_path)
        assert done.returncode == 1, (line, done.stdout[-2000:], done.stderr)

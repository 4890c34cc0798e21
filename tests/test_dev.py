"""`./dev demo`, the README's main job, as a user runs it from the checkout."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from helpers import ROOT

pytestmark = pytest.mark.slow


def test_demo_runs_each_step_once_and_judges_that_run() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "DFLASH_CFG_"))}
    done = subprocess.run(["sh", str(ROOT / "dev"), "demo"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    out = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)
    steps = re.findall(r"^== ([0-9])\. ", out, re.MULTILINE)
    assert steps == ["1", "2", "3", "4", "5", "6"]
    assert len(re.findall(r"^\$ dflash-cfg ", out, re.MULTILINE)) == 6
    # Step 4 shows the run whose exit code is judged: the one that writes.
    repair = out.split("== 4. ", 1)[1].split("== 5. ", 1)[0]
    assert "wrote $TMP/Qwen3.6-27B-DFlash/config.json" in repair
    assert "demo: expected exit" not in done.stderr

"""Signals: Ctrl-C (SIGINT) and SIGTERM, to the process or to its whole process group, while `check` works
on a tree with forked workers or writes its JSON or SARIF. An interrupt is exit 2 and "aborted", never an
"internal error"; SIGTERM ends the process by the signal (143 in a shell); stdout is empty or one whole
document; no worker is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

import pytest
from helpers import REAL_DATA, ROOT, write_config

from dflash_cfg.commands import pool

# Ctrl-C lands while os.fork runs Python's at-fork callbacks (where the parent spends much of a start of
# 64 workers): the terminal sends it to the whole group, the parent and the children forked so far.
CTRL_C_DURING_FORK = """
import os, signal, sys
forks = 0
def ctrl_c() -> None:
    global forks
    forks += 1
    if forks == 2:
        os.killpg(os.getpgrp(), signal.SIGINT)
os.register_at_fork(after_in_parent=ctrl_c)
from dflash_cfg.cli import main
main(sys.argv[1:])
"""


def _tree(root: Path, n: int) -> Path:
    for i in range(n):
        write_config(root / f"m{i:03d}", {**REAL_DATA, "num_target_layers": 20 + i})
    return root


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_found_bug_ctrl_c_to_the_group_while_workers_start_is_aborted(tmp_path: Path, fmt: str) -> None:
    """Issue 21, item 13: was "internal error: WorkerLost" (the parent's KeyboardInterrupt was dropped
    inside an at-fork callback, its children were gone)."""
    tree = _tree(tmp_path / "tree", 8)
    env = {**os.environ, "DFLASH_CFG_JOBS": "4", "XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    child = subprocess.run(
        [sys.executable, "-c", CTRL_C_DURING_FORK, "check", str(tree), "--format", fmt],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        start_new_session=True,  # its own process group: the signal reaches it and its workers only
    )
    assert child.returncode == 2, (child.returncode, child.stderr)
    assert child.stderr.strip().splitlines() == ["dflash-cfg: aborted"], child.stderr
    assert child.stdout == "", child.stdout


def test_found_bug_an_interrupted_worker_is_an_interrupt(tmp_path: Path) -> None:
    """A worker that Ctrl-C reached (its parent's own interrupt dropped, or sent to the worker alone) makes
    the run an interrupted one, not a lost worker."""
    parent = os.getpid()
    reached = tmp_path / "a worker was interrupted"

    def interrupted_in_a_child(i: int) -> int:
        if os.getpid() != parent:
            reached.touch()
            os.kill(os.getpid(), signal.SIGINT)
        while not reached.exists():  # this process leaves the inputs to the workers until one is reached
            time.sleep(0.01)
        return i

    with pytest.raises(KeyboardInterrupt):
        list(pool.ordered_map(interrupted_in_a_child, range(40), 3))


# The console script pip writes for `[project.scripts]` (module:function), with Ctrl-C landing while the CLI
# is being imported (about half a second of a start).
CONSOLE_SCRIPT = """
import importlib.abc, os, signal, sys
class CtrlC(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "dflash_cfg.cli":
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, CtrlC())
sys.argv = ["dflash-cfg", *sys.argv[1:]]
from {module} import {function}
sys.exit({function}())
"""


@pytest.mark.slow
def test_found_bug_ctrl_c_while_the_command_starts_is_aborted(tmp_path: Path) -> None:
    """The `dflash-cfg` command imported the whole CLI before any code of its own could answer a Ctrl-C:
    a traceback instead of "aborted"."""
    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["dflash-cfg"]
    module, function = entry.split(":")
    write_config(tmp_path / "m")
    script = CONSOLE_SCRIPT.format(module=module, function=function)
    child = subprocess.run(
        [sys.executable, "-c", script, "check", str(tmp_path / "m")], capture_output=True, text=True, timeout=120
    )
    assert (child.returncode, child.stderr) == (2, "dflash-cfg: aborted\n"), child

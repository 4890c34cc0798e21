"""Signals: Ctrl-C (SIGINT) and SIGTERM, to the process or to its whole process group, while `check` works
on a tree with forked workers or writes its JSON or SARIF. An interrupt is exit 2 and "aborted", never an
"internal error"; SIGTERM ends the process by the signal (143 in a shell); stdout is empty (text) or one whole
document, holding the files checked before the signal; no worker is left behind. DFLASH_CFG_TEST_HOLD
(commands/check.py) holds a run after N files and says so through a named pipe, so a signal lands inside it."""

from __future__ import annotations

import json
import os
import select
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
    if fmt == "text":
        assert child.stdout == "", child.stdout
    else:  # the document goes out whole, marked as interrupted
        assert json.loads(child.stdout)["errors"][-1].startswith("interrupted"), child.stdout


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


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "sarif"])
@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_a_signal_during_the_run_still_writes_the_whole_document(tmp_path: Path, fmt: str, name: str) -> None:
    """Ctrl-C or SIGTERM while the files are being checked: the document goes out whole, with the files checked
    before it and the run marked as not done (JSON `errors`; SARIF's invocation not successful), instead of
    nothing. Ctrl-C then exits 2 ("aborted"); SIGTERM ends the process by the signal (143 in a shell). The test
    hook stops the run after 3 of 6 files and says so through a named pipe: the signal lands inside the run."""
    tree = _tree(tmp_path / "tree", 6)
    inside = tmp_path / "inside"
    os.mkfifo(inside)
    env = {
        **os.environ,
        "DFLASH_CFG_JOBS": "1",
        "DFLASH_CFG_TEST_HOLD": f"3:{inside}",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "NO_COLOR": "1",
    }
    reader = os.open(inside, os.O_RDONLY | os.O_NONBLOCK)  # before the child: its open for writing then returns
    child = subprocess.Popen(
        [sys.executable, "-m", "dflash_cfg", "check", str(tree), "--format", fmt],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        ready, _, _ = select.select([reader], [], [], 120)
        assert ready and os.read(reader, 100) == b"checked 3\n"
    finally:
        os.close(reader)
    child.send_signal(getattr(signal, name))
    out, err = child.communicate(timeout=120)
    assert child.returncode == (2 if name == "SIGINT" else -signal.SIGTERM), (child.returncode, err)
    assert err.decode().splitlines()[-1] == "dflash-cfg: aborted" and b"Traceback" not in err
    why = "interrupted after 3 of 6 files: the rest were not checked"
    doc = json.loads(out)
    if fmt == "json":
        assert [f["path"] for f in doc["files"]] == [str(tree / f"m{i:03d}" / "config.json") for i in range(3)]
        assert doc["errors"] == [why] and doc["summary"]["files"] == 3
    else:
        (run,) = doc["runs"]
        assert run["properties"]["errors"] == [why] and run["properties"]["summary"]["files"] == 3
        (invocation,) = run["invocations"]
        assert invocation["executionSuccessful"] is False
        assert invocation["toolExecutionNotifications"][0]["message"]["text"] == why


@pytest.mark.slow
def test_a_text_run_interrupted_stays_as_it_was(tmp_path: Path) -> None:
    """Text streams nothing before the report: an interrupt is "aborted", exit 2, and no partial report."""
    tree = _tree(tmp_path / "tree", 4)
    inside = tmp_path / "inside"
    os.mkfifo(inside)
    env = {**os.environ, "DFLASH_CFG_JOBS": "1", "DFLASH_CFG_TEST_HOLD": f"2:{inside}", "NO_COLOR": "1"}
    reader = os.open(inside, os.O_RDONLY | os.O_NONBLOCK)
    command = [sys.executable, "-m", "dflash_cfg", "check", str(tree)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        ready, _, _ = select.select([reader], [], [], 120)
        assert ready and os.read(reader, 100) == b"checked 2\n"
    finally:
        os.close(reader)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    assert (child.returncode, out, err.strip()) == (2, b"", b"dflash-cfg: aborted")

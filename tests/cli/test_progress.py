"""Progress on long work: shown on stderr when it is a terminal and the run is text, never otherwise, and gone
from the terminal when the work ends (the report is the same bytes either way)."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REAL

from dflash_cfg import progress

BIN = Path(sys.executable).parent


def test_an_activity_shows_its_label_and_time_then_clears(tmp_path: Path) -> None:
    stream = io.StringIO()
    with progress.shown_on(stream), progress.activity("vLLM (/x/python): building the drafter"):
        time.sleep(progress.DELAY + 4 * progress.TICK)
    shown = stream.getvalue()
    assert "vLLM (/x/python): building the drafter  00:0" in shown
    assert shown.rstrip("\r").endswith(" " * 20)  # the line is blanked when the work ends


def test_nothing_is_shown_unless_a_stream_is_set_or_the_work_is_short() -> None:
    stream = io.StringIO()
    with progress.activity("long"):  # no stream: the library and machine formats stay silent
        time.sleep(progress.DELAY + 2 * progress.TICK)
    with progress.shown_on(stream), progress.activity("short"), progress.counting(3, "checked", "files") as count:
        count.advance(3)
    assert stream.getvalue() == ""


def run_on_a_terminal(args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    """The installed command with stderr on a pseudo-terminal (as in an operator's shell), stdout a file."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CI")}
    with open(cwd / "stdout", "wb") as out:
        proc = subprocess.Popen([str(BIN / "dflash-cfg"), *args], stdout=out, stderr=follower, cwd=cwd, env=env)
        os.close(follower)
        err = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: every holder of the terminal's other side has closed it
                break
            if not chunk:
                break
            err += chunk
        os.close(leader)
        code = proc.wait()
    return code, (cwd / "stdout").read_bytes(), err


@pytest.mark.slow
def test_a_large_tree_shows_files_done_on_a_terminal_only(tmp_path: Path) -> None:
    tree = tmp_path / "models"
    for i in range(600):  # enough work to outlast progress.DELAY on any machine
        (tree / f"d{i:03}").mkdir(parents=True)
        (tree / f"d{i:03}" / "config.json").write_bytes(REAL.read_bytes())
    code, out, err = run_on_a_terminal(["check", "--no-cache", str(tree)], tmp_path)
    assert code == 0, err
    assert b"checked" in err and b"/600 files" in err
    piped = subprocess.run([str(BIN / "dflash-cfg"), "check", "--no-cache", str(tree)], capture_output=True)
    assert piped.returncode == 0 and b"checked" not in piped.stderr
    assert piped.stdout == out  # the report is the same bytes
    code, out, err = run_on_a_terminal(["check", "--no-cache", "--format", "json", str(tree)], tmp_path)
    assert code == 0 and b"checked" not in err and out.startswith(b"{")


def test_probes_window_goes_by_in_seconds_on_a_terminal() -> None:
    from dflash_cfg.commands.probe import _window

    slept: list[float] = []
    _window(2.5, slept.append)  # progress off: one wait, as before
    assert slept == [2.5]
    stream = io.StringIO()
    with progress.shown_on(stream):
        _window(1.5, time.sleep)
    assert "probe: the window  1/2 s" in stream.getvalue() or "probe: the window  2/2 s" in stream.getvalue()

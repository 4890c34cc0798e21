"""Signals during a run and during its output: `check --format json|sarif` on trees of 3 to 300 drafters, in
one process or with forked workers (DFLASH_CFG_JOBS up to 64), SIGINT or SIGTERM to the process or to its
whole process group, at a random delay or just as the document starts coming out.

Invariants: stdout is empty or one whole document that parses; SIGINT gives exit 2 and "aborted" as the
last line of stderr, SIGTERM ends the process by the signal (-15, 143 in a shell); a run the signal came
too late for exits 0 or 1 with its whole document; never a traceback or an "internal error"; no process of
the run's group is left behind."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from helpers import REAL_DATA, write_config

from fuzz.common import Tally

SIZES = [3, 40, 300]


@dataclass(frozen=True)
class SignalCase:
    size: int
    fmt: str
    signum: int
    group: bool
    when: str  # "delay": after `delay` seconds; "output": once the first byte of the document is out
    delay: float
    jobs: str | None
    cache: bool


def signal_case(rng: random.Random) -> SignalCase:
    size = rng.choice(SIZES)
    return SignalCase(
        size=size,
        fmt=rng.choice(["json", "sarif"]),
        signum=rng.choice([signal.SIGINT, signal.SIGTERM]),
        group=rng.random() < 0.6,
        when=rng.choice(["delay", "delay", "output"]),
        delay=rng.uniform(0, 4),
        jobs=rng.choice([None, "1", "2", "64"] if size < 300 else [None, "1", "2", "64", "8"]),
        cache=rng.random() < 0.5,
    )


def make_tree(root: Path, size: int) -> Path:
    """`size` drafters, every tenth with a finding, in nested dirs."""
    tree = root / f"tree-{size}"
    if not tree.exists():
        for i in range(size):
            data = {**REAL_DATA, "num_target_layers": 20 + i % 40}
            if i % 10 == 0:
                data["use_sliding_window"] = False
            write_config(tree / f"org-{i % 4}" / f"m{i:03d}", data)
    return tree


def _gone(pgid: int, within: float) -> bool:
    """Whether no process of the group is left (waiting up to `within` seconds for them to end)."""
    deadline = time.monotonic() + within
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # a zombie not yet reaped by init: it is gone for every purpose
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


# Python's own start (before the console script's first line runs the tool's guard) cannot answer a signal
# with "aborted": the interpreter dies by SIGINT's default action, or prints KeyboardInterrupt from site
# or the package root's imports. Counted apart, not a defect.
STARTUP = "startup window"


def startup_window(code: int, err: str) -> bool:
    if code == -signal.SIGINT and not err:
        return True
    tool_frames = [line for line in err.splitlines() if "dflash_cfg/" in line and 'File "' in line]
    return err.rstrip().endswith("KeyboardInterrupt") and all(
        "dflash_cfg/__init__.py" in line or "dflash_cfg/version.py" in line for line in tool_frames
    )


def signal_defect(case: SignalCase, home: Path) -> str | None:
    tree = make_tree(home / "trees", case.size)
    env = {**os.environ, "XDG_CACHE_HOME": str(home / "signal-cache"), "NO_COLOR": "1"}
    env.pop("DFLASH_CFG_JOBS", None)
    if case.jobs is not None:
        env["DFLASH_CFG_JOBS"] = case.jobs
    args = [str(Path(sys.executable).parent / "dflash-cfg"), "check", str(tree), "--format", case.fmt]
    child = subprocess.Popen(
        [*args, *([] if case.cache else ["--no-cache"])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        bufsize=0,
        start_new_session=True,  # its own group: a signal to the group reaches it and its workers only
    )
    assert child.stdout is not None
    first = b""
    if case.when == "output":
        first = child.stdout.read(1)  # the document has started: the signal lands while it goes out
    else:
        time.sleep(case.delay)
    sent = child.poll() is None
    if sent:
        (os.killpg if case.group else os.kill)(child.pid, case.signum)
    try:
        rest, err_bytes = child.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        return f"no end within 600 s after the signal <- {case}"
    out, err = (first + rest).decode("utf-8", "replace"), err_bytes.decode("utf-8", "replace")
    code = child.returncode
    found = None
    if startup_window(code, err):
        return STARTUP
    if "Traceback" in err or "internal error" in err:
        found = f"{err[-600:]!r}"
    elif out:
        try:
            json.loads(out)
        except ValueError:
            found = f"stdout is no whole document ({len(out)} characters, exit {code}): {out[-200:]!r}"
    if found is None:
        finished = code in (0, 1) and bool(out)  # the signal came after the run (or was held for the output)
        if case.signum == signal.SIGINT and not finished and code != 2:
            found = f"SIGINT: exit {code}, not 2: {err[-300:]!r}"
        elif case.signum == signal.SIGINT and code == 2 and err.strip().splitlines()[-1:] != ["dflash-cfg: aborted"]:
            found = f"SIGINT: exit 2 without 'aborted': {err[-300:]!r}"
        elif case.signum == signal.SIGTERM and not finished and code != -signal.SIGTERM:
            found = f"SIGTERM: exit {code}, not -15: {err[-300:]!r}"
    if found is None and not _gone(child.pid, 10):
        found = "a process of the run's group outlived it by 10 s"
        os.killpg(child.pid, signal.SIGKILL)
    return None if found is None else f"{found} <- {case} (signal {'sent' if sent else 'not sent: it had ended'})"


def campaign(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    for i in range(n):
        found = signal_defect(signal_case(rng), home)
        if found == STARTUP:
            tally.note("signals: a signal in the interpreter's start, before the tool's first line")
        elif found is not None:
            tally.defect("signals", f"{i}: {found}")
        tally.ran("signals")

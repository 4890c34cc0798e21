"""What the tests of the Hub-wide runs (`catalog update`, `audit`) share: the loopback Hub and its populations, the
test's cache dirs, and a wait for the reads a run left in flight at its deadline."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import ROOT
from publisherhub import Population, PublisherHub, populate

# The threads of a run over the Hub (commands/catalog.py, commands/audit.py) are named so.
RUN_THREADS = ("dflash-cfg-catalog-", "dflash-cfg-audit-")


def settle(timeout: float = 60.0) -> None:
    """Wait for the reads a run left behind at its deadline. They end soon (a read never retries past the deadline),
    but must not outlive their hub: a refused connection makes huggingface_hub close its shared client under the next
    test's run, and a test must never see another's requests."""
    end = time.monotonic() + timeout
    for thread in threading.enumerate():
        if thread.name.startswith(RUN_THREADS):
            thread.join(max(0.0, end - time.monotonic()))
            assert not thread.is_alive(), f"{thread.name} outlived its run by {timeout:g} s"


@pytest.fixture(autouse=True)
def settled() -> Iterator[None]:
    yield
    settle()


@pytest.fixture(scope="module")
def big() -> Iterator[tuple[PublisherHub, Population]]:
    """The whole population (200 repos of five authors and their targets); never changed by a test."""
    with PublisherHub() as hub:
        yield hub, populate(hub, seed=0, count=200)
        settle()


@pytest.fixture
def small() -> Iterator[tuple[PublisherHub, Population]]:
    """40 repos (with every special case) on a hub of this test's own: faults and new commits stay here."""
    with PublisherHub() as hub:
        yield hub, populate(hub, seed=1, count=40)
        settle()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's cache dirs: the user's catalog lands in the returned dir's dflash-cfg/catalog.json, an audit's
    journal under its dflash-cfg/audit/."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg"


def interrupted(args: list[str], ready: Callable[[], bool], hub: PublisherHub) -> None:
    """`dflash-cfg ARGS` in a child process, against `hub` slowed down (50 ms a request) so the run lasts seconds,
    interrupted with Ctrl-C once `ready()` says it has kept something (never after a fixed wait), and held to what an
    interrupted run does: exit 2, "aborted", no report."""
    hub.faults.latency = 0.05
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "dflash_cfg", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "NO_COLOR": "1"},
            cwd=ROOT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and child.poll() is None and not ready():
            time.sleep(0.02)
        assert child.poll() is None, "the run ended before it was interrupted"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        hub.faults.latency = 0.0
    assert child.returncode == 2, err
    assert err.strip().splitlines()[-1] == "dflash-cfg: aborted"
    assert out == ""  # no report of a run that was not made

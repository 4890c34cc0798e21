"""A tree checked by forked workers reads exactly as one process reads it: same bytes out, same order,
same errors and exit code; and small inputs never start a pool."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, REAL_DATA, ROOT, Result, mutated, write_config

from dflash_cfg.commands import pool


def _tree(root: Path) -> Path:
    """Every fixture and golden input, and variants of the real drafter, in nested dirs, plus a FIFO."""
    inputs = sorted(FIXTURES.rglob("config.json")) + sorted((ROOT / "tests" / "golden" / "inputs").glob("*.json"))
    for i, src in enumerate(inputs):
        dest = root / f"org-{i % 3}" / f"m{i:02d}" / "config.json"
        dest.parent.mkdir(parents=True)
        shutil.copyfile(src, dest)
    for i in range(40):
        data = mutated(lambda d: None)
        data.update(num_target_layers=20 + i, block_size=2 + i % 15)
        if i % 7 == 0:
            data.pop("use_sliding_window", None)
        write_config(root / "variants" / f"v{i:02d}" / "checkpoint-1", data)
    os.mkfifo(root / "org-0" / "zz-fifo-config.json")
    (root / "org-0" / "zz").mkdir()
    os.symlink(root / "org-0" / "zz-fifo-config.json", root / "org-0" / "zz" / "config.json")
    return root


@pytest.mark.parametrize("fmt", ["json", "text", "sarif"])
@pytest.mark.parametrize("cache", [True, False])
def test_a_tree_reads_the_same_with_and_without_the_pool(
    tmp_path: Path,
    dflash: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
    fmt: str,
    cache: bool,
) -> None:
    tree = _tree(tmp_path / "tree")
    args = ["check", tree, "--format", fmt, *([] if cache else ["--no-cache"])]
    started: list[int] = []
    real = pool.ordered_map

    def spy(work: Callable[[int], object], indices: list[int], processes: int) -> Iterator[object]:
        started.append(processes)
        return real(work, indices, processes)

    monkeypatch.setattr(pool, "ordered_map", spy)
    monkeypatch.setenv("DFLASH_CFG_JOBS", "1")
    one = dflash(*args)
    assert started == []
    monkeypatch.setenv("DFLASH_CFG_JOBS", "2")
    two = dflash(*args)
    assert started == [2]
    monkeypatch.setenv("DFLASH_CFG_JOBS", "2")
    again = dflash(*args)  # cache filled by the runs before (when on)
    assert one == two == again
    assert one.code == 2 and "not a regular file" in one.err
    if fmt == "json":
        assert len(one.json()["files"]) > 60


def test_the_default_starts_a_pool_for_a_tree_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DFLASH_CFG_JOBS", raising=False)
    monkeypatch.setattr(pool, "cores", lambda: 4)
    assert pool.jobs(1) == 1
    assert pool.jobs(pool.THRESHOLD - 1) == 1
    assert pool.jobs(pool.THRESHOLD) == 4
    monkeypatch.setenv("DFLASH_CFG_JOBS", "3")
    assert pool.jobs(1) == 1  # never for a single file
    assert pool.jobs(2) == 2
    assert pool.jobs(100) == 3
    monkeypatch.setenv("DFLASH_CFG_JOBS", "1")
    assert pool.jobs(1000) == 1


def test_a_single_file_never_starts_a_pool(
    tmp_path: Path, dflash: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DFLASH_CFG_JOBS", "8")
    monkeypatch.setattr(pool, "ordered_map", None)  # would fail if called
    path = write_config(tmp_path / "m", REAL_DATA)
    result = dflash("check", path, "--format", "json")
    assert result.code in (0, 1) and json.loads(result.out)["summary"]["files"] == 1


def test_a_huge_job_count_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DFLASH_CFG_JOBS", "100000")
    assert pool.jobs(10**6) == pool.MAX_JOBS


# Where each process signs in (set before the fork, so every child sees it) and how many must sign in.
_ROLL: list[Any] = []


def _pid_and_square(i: int) -> tuple[int, int]:
    time.sleep(0.002)  # the children are still at work when the results are abandoned
    return os.getpid(), i * i


def _signed_pid_and_square(i: int) -> tuple[int, int]:
    # A process's first input waits (at most 60 s) until every process holds one: on a loaded machine a
    # child can start after the others have taken all 60 inputs, and "every process works" would be luck.
    roll, processes = _ROLL
    mine = roll / str(os.getpid())
    if not mine.exists():
        mine.touch()
        deadline = time.monotonic() + 60
        while len(list(roll.iterdir())) < processes and time.monotonic() < deadline:
            time.sleep(0.005)
    return os.getpid(), i * i


@pytest.mark.parametrize("processes", [2, 3, 5])
def test_results_come_in_input_order_from_every_process(processes: int, existing: set[int], tmp_path: Path) -> None:
    indices = list(range(60, 0, -1))
    _ROLL[:] = [tmp_path, processes]
    out = list(pool.ordered_map(_signed_pid_and_square, indices, processes))
    assert [square for _, square in out] == [i * i for i in indices]
    pids = {pid for pid, _ in out}
    assert len(pids) == processes and os.getpid() in pids  # this process takes its share too
    assert _children() <= existing


def _fails_on_7(i: int) -> int:
    time.sleep(0.002)
    if i == 7:
        raise ValueError(f"input {i}")
    return i


def test_an_exception_is_raised_in_its_place_in_the_order(existing: set[int]) -> None:
    got: list[int] = []
    with pytest.raises(ValueError, match="input 7"):
        for value in pool.ordered_map(_fails_on_7, range(40), 3):  # whichever process computed 7
            got.append(value)
    assert got == list(range(7))
    assert _children() <= existing


def test_a_child_that_dies_is_an_error_not_a_hang_or_a_short_result(existing: set[int]) -> None:
    parent = os.getpid()

    def dies_in_a_child(i: int) -> int:
        time.sleep(0.002)
        if os.getpid() != parent:
            os.kill(os.getpid(), 9)
        return i

    with pytest.raises(pool.WorkerLost, match="killed by signal 9"):
        list(pool.ordered_map(dies_in_a_child, range(40), 2))
    assert _children() <= existing


def test_abandoning_the_results_stops_the_children(existing: set[int]) -> None:
    results = pool.ordered_map(_pid_and_square, range(10_000), 3)
    next(results)
    results.close()
    assert _children() <= existing


def _children() -> set[int]:
    """This process's live or unreaped children (servers other tests started included)."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        found.update(int(pid) for pid in (task / "children").read_text().split())
    return found


@pytest.fixture
def existing() -> set[int]:
    """The children this process had before the test: whatever ordered_map forks must be gone after."""
    return _children()

"""One function over many inputs on every core: forked workers, results in input order.

Workers are forked, so they start with everything the caller loaded before (transformers, the schema
validator) instead of importing it again, and the function need not be picklable; only the results
cross back. Where fork does not exist (Windows), everything stays in one process.

`DFLASH_CFG_JOBS` sets the number of processes: 1 never starts a pool, N > 1 starts one of N workers
whenever there are at least two inputs; unset (or 0), a pool of one worker per core is started for
`THRESHOLD` inputs or more.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

# Below this many inputs one process is faster. Measured on 2 cores: a file costs about 1 ms (2-4 ms on
# a busy machine), forking the workers after transformers is loaded and sending the results back about
# 75 ms (100-200 ms busy), so two workers pay off from about 150 files; a busy machine has no spare core.
THRESHOLD = 128
MAX_CHUNK = 32

_work: Callable[[int], Any] | None = None


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def jobs(count: int) -> int:
    """How many processes `count` inputs get (1: no pool)."""
    if count < 2 or not hasattr(os, "fork"):
        return 1
    setting = os.environ.get("DFLASH_CFG_JOBS", "").strip()
    if setting.isdigit() and int(setting) > 0:
        return min(int(setting), count)
    if count < THRESHOLD:
        return 1
    return min(cores(), count)


def _call(i: int) -> Any:
    assert _work is not None
    return _work(i)


def ordered_map(work: Callable[[int], Any], indices: Sequence[int], processes: int) -> Iterator[Any]:
    """work(i) for each i, computed by `processes` forked workers, yielded in the order of `indices`."""
    import gc
    import multiprocessing  # only a tree pays for it

    global _work
    _work = work  # the workers inherit it through fork
    # What is loaded now (transformers, the schema validator) lives as long as the workers: out of the
    # collector's sight, a worker's collections neither walk it nor copy its pages.
    gc.freeze()
    try:
        chunk = max(1, min(MAX_CHUNK, len(indices) // (processes * 4)))
        with multiprocessing.get_context("fork").Pool(processes) as workers:
            yield from workers.imap(_call, indices, chunksize=chunk)
    finally:
        _work = None
        gc.unfreeze()

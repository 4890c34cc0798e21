"""One function over many inputs on every core: this process and forked children, results in input order.

Children are forked, so they start with everything the caller loaded before (transformers, the schema
predicate) instead of importing it again, and the function need not be picklable; only the results
cross back, through a pipe. This process takes a share of the inputs itself rather than waiting on
workers: on N cores the run is N processes, not N + 1, so the whole tree of processes holds one copy
of transformers fewer. Where fork does not exist (Windows), everything stays in one process.

`DFLASH_CFG_JOBS` sets the number of processes: 1 never forks, N > 1 runs N whenever there are at least
two inputs (at most `MAX_JOBS`); unset (or 0), one per core for `THRESHOLD` inputs or more.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
from collections.abc import Callable, Generator, Sequence
from typing import Any

# Below this many inputs one process is faster. Measured on 2 cores: a file costs about 1 ms (2-4 ms on
# a busy machine), forking a child after transformers is loaded and reading its results back about
# 20 ms, so a second process pays off well before 128 files; a busy machine has no spare core.
THRESHOLD = 128
MAX_JOBS = 64  # a typo of DFLASH_CFG_JOBS=1000 must not fork a thousand copies of transformers

_HEADER = struct.Struct("<Q")


class WorkerLost(RuntimeError):
    """A child ended without sending all its results (killed, out of memory)."""


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def jobs(count: int) -> int:
    """How many processes `count` inputs get (1: no fork)."""
    if count < 2 or not hasattr(os, "fork"):
        return 1
    setting = os.environ.get("DFLASH_CFG_JOBS", "").strip()
    if setting.isdigit() and int(setting) > 0:
        return min(int(setting), count, MAX_JOBS)
    if count < THRESHOLD:
        return 1
    return min(cores(), count, MAX_JOBS)


def ordered_map(work: Callable[[int], Any], indices: Sequence[int], processes: int) -> Generator[Any, None, None]:
    """work(i) for each i, yielded in the order of `indices`. Input k is computed by process
    k % processes: 0 is this one, the others are forked children that send each result back."""
    import gc

    indices = list(indices)
    # What is loaded now (transformers, the schema predicate) lives as long as the children: out of the
    # collector's sight, a child's collections neither walk it nor copy its pages.
    gc.freeze()
    children: list[_Child] = []
    try:
        for k in range(1, processes):
            children.append(_Child.fork(work, indices[k::processes], inherited=children))
        for k, i in enumerate(indices):
            owner = k % processes
            yield work(i) if owner == 0 else children[owner - 1].next()
    finally:
        for child in children:
            child.stop()
        gc.unfreeze()


class _Child:
    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.reader = os.fdopen(fd, "rb")

    @classmethod
    def fork(cls, work: Callable[[int], Any], share: list[int], inherited: list[_Child]) -> _Child:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns into the caller's code
            os.close(read_fd)
            for sibling in inherited:  # so that a sibling's pipe closes when the parent closes it
                sibling.reader.close()
            code = 1
            try:
                _serve(work, share, write_fd)
                code = 0
            finally:
                os._exit(code)  # no atexit handlers, no flushing the parent's buffered output
        os.close(write_fd)
        return cls(pid, read_fd)

    def next(self) -> Any:
        header = self.reader.read(_HEADER.size)
        if len(header) != _HEADER.size:
            raise WorkerLost(f"a worker process ended early ({self._how_it_ended()})")
        (size,) = _HEADER.unpack(header)
        body = self.reader.read(size)
        if len(body) != size:
            raise WorkerLost(f"a worker process ended mid-result ({self._how_it_ended()})")
        ok, value = pickle.loads(body)
        if not ok:
            raise value
        return value

    def stop(self) -> None:
        self.reader.close()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)  # done or abandoned: nothing it still does is wanted
        self._how_it_ended()

    def _how_it_ended(self) -> str:
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:  # already reaped
            return "already reaped"
        if os.WIFSIGNALED(status):
            return f"killed by signal {os.WTERMSIG(status)}"
        return f"exit code {os.waitstatus_to_exitcode(status)}"


def _serve(work: Callable[[int], Any], share: list[int], fd: int) -> None:
    """In the child: each result (or the exception that replaced it), pickled, length first."""
    with os.fdopen(fd, "wb") as out:
        for i in share:
            try:
                message = pickle.dumps((True, work(i)), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # noqa: BLE001 - re-raised in the parent, in its place in the order
                message = _pickled_error(exc)
            out.write(_HEADER.pack(len(message)) + message)
            out.flush()  # the parent may be waiting for exactly this result


def _pickled_error(exc: Exception) -> bytes:
    try:
        return pickle.dumps((False, exc), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an exception that does not pickle still reaches the parent
        return pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")), protocol=pickle.HIGHEST_PROTOCOL)

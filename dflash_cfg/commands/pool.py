"""One function over many inputs on every core: this process and forked children, results in input order.

Children are forked, so they start with everything the caller loaded before (transformers, the schema
predicate) instead of importing it again, and the function need not be picklable; only the results
cross back, through a pipe each. This process works too rather than waiting on workers: on N cores the
run is N processes, not N + 1, so the whole tree of processes holds one copy of transformers fewer.
Every process claims the next input from a counter they share, so a process slowed down by the machine
(or by reading the results of the others) simply takes fewer. Where fork does not exist (Windows),
everything stays in one process.

`DFLASH_CFG_JOBS` sets the number of processes: 1 never forks, N > 1 runs N whenever there are at least
two inputs (at most `MAX_JOBS`); unset (or 0), one per core for `THRESHOLD` inputs or more.

Ctrl-C reaches the whole process group. An interrupt stays an interrupt (KeyboardInterrupt in this
process, "aborted"), never a lost worker: it is held while children are forked (Python runs its at-fork
callbacks then, and drops an exception raised inside one), and a child that was interrupted makes this
process raise KeyboardInterrupt too.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import select
import signal
import struct
import tempfile
from collections.abc import Callable, Generator, Sequence
from typing import Any

# Below this many inputs one process is faster. Measured on 2 cores: a file costs about 1 ms (2-4 ms on
# a busy machine), forking a child after transformers is loaded about 10 ms, so a second process pays
# off well before 128 files; a busy machine has no spare core.
THRESHOLD = 128
MAX_JOBS = 64  # a typo of DFLASH_CFG_JOBS=1000 must not fork a thousand copies of transformers

INTERRUPTED = 130  # a child's exit code after its KeyboardInterrupt (128 + SIGINT, as a shell says it)
_HEADER = struct.Struct("<QQ")  # position in the input, size of the pickled (ok, value) that follows
_COUNTER = struct.Struct("<Q")


class WorkerLost(RuntimeError):
    """A child ended without sending the results it claimed (killed, out of memory)."""


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
    """work(i) for each i, yielded in the order of `indices`, computed by this process and
    `processes - 1` forked children. An exception raised by work(i) is raised in i's place."""
    import gc

    indices = list(indices)
    claims = _Claims(len(indices))
    # What is loaded now (transformers, the schema predicate) lives as long as the children: out of the
    # collector's sight, a child's collections neither walk it nor copy its pages.
    gc.freeze()
    children: list[_Child] = []
    try:
        with _Interrupts() as interrupts:
            for _ in range(1, processes):
                children.append(_Child.fork(lambda k: work(indices[k]), claims, children, interrupts))
        done: dict[int, tuple[bool, Any]] = {}
        out = 0
        while (k := claims.next()) is not None:
            try:
                done[k] = (True, work(indices[k]))
            except Exception as exc:  # noqa: BLE001 - raised in its place in the order, as a child's is
                done[k] = (False, exc)
            for child in children:
                done.update(child.ready(wait=False))
            while out in done:
                yield _unwrap(done.pop(out))
                out += 1
        while out < len(indices):
            while out not in done:
                done.update(_wait_any(children, missing=out))
            yield _unwrap(done.pop(out))
            out += 1
    finally:
        for child in children:
            child.stop()
        claims.close()
        gc.unfreeze()


def _unwrap(result: tuple[bool, Any]) -> Any:
    ok, value = result
    if not ok:
        raise value
    return value


class _Claims:
    """The next unclaimed position, in a file every forked process shares, under a POSIX record lock:
    the kernel releases such a lock when its holder dies, so a child killed mid-claim blocks nobody."""

    def __init__(self, total: int) -> None:
        self.total = total
        try:
            self.fd = os.memfd_create("dflash-cfg-claims")  # Linux: no directory needed
        except (AttributeError, OSError):
            self.fd = os.dup(tempfile.TemporaryFile().fileno())  # noqa: SIM115 - the dup outlives the object
        os.pwrite(self.fd, _COUNTER.pack(0), 0)

    def next(self) -> int | None:
        fcntl.lockf(self.fd, fcntl.LOCK_EX)
        try:
            (k,) = _COUNTER.unpack(os.pread(self.fd, _COUNTER.size, 0))
            if k >= self.total:
                return None
            os.pwrite(self.fd, _COUNTER.pack(k + 1), 0)
            return int(k)
        finally:
            fcntl.lockf(self.fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self.fd)


class _Interrupts:
    """SIGINT (and SIGTERM, which the CLI may answer as an interrupt) held (recorded, not raised) while children
    are forked, and raised on release. os.fork runs Python's at-fork callbacks (logging's, filelock's) in both
    processes, and a KeyboardInterrupt raised inside one is printed as "ignored" and dropped: the parent would
    carry on and find its interrupted children gone."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.held: list[int] = []
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> _Interrupts:
        with contextlib.suppress(ValueError):  # signal.signal works only in the main thread
            for signum in self.SIGNALS:
                self.previous[signum] = signal.signal(signum, self._hold)
        return self

    def _hold(self, signum: int, _frame: Any) -> None:
        self.held.append(signum)

    def release(self) -> None:
        """The handlers that were there before, and the signals that came meanwhile, raised now."""
        for signum, handler in self.previous.items():
            if handler is not None:  # None: a handler not set from Python, which cannot be set back
                signal.signal(signum, handler)
        self.previous = {}
        held, self.held = list(dict.fromkeys(self.held)), []
        for signum in held:
            signal.raise_signal(signum)

    def __exit__(self, *_: object) -> None:
        self.release()


class _Child:
    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd: int | None = fd
        self.buffer = bytearray()
        self.ended: str | None = None
        self.interrupted = False

    @classmethod
    def fork(
        cls, work: Callable[[int], Any], claims: _Claims, inherited: list[_Child], interrupts: _Interrupts
    ) -> _Child:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns into the caller's code
            code = 1
            try:
                interrupts.release()  # the parent's handler back, and an interrupt held since raised here
                os.close(read_fd)
                for sibling in inherited:  # so that a sibling's pipe ends when the parent closes it
                    sibling._close()
                _serve(work, claims, write_fd)
                code = 0
            except KeyboardInterrupt:
                code = INTERRUPTED
            finally:
                os._exit(code)  # no atexit handlers, no flushing the parent's buffered output
        os.close(write_fd)
        return cls(pid, read_fd)

    def ready(self, wait: bool) -> dict[int, tuple[bool, Any]]:
        """The results that have arrived (waiting for some if `wait`), by position."""
        if self.fd is None:
            return {}
        if wait or select.select([self.fd], [], [], 0)[0]:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self._close()
                self.ended = self._reap()
            self.buffer += chunk
        return self._frames()

    def _frames(self) -> dict[int, tuple[bool, Any]]:
        found = {}
        while len(self.buffer) >= _HEADER.size:
            k, size = _HEADER.unpack_from(self.buffer)
            end = _HEADER.size + size
            if len(self.buffer) < end:
                break
            found[k] = pickle.loads(self.buffer[_HEADER.size : end])
            del self.buffer[:end]
        return found

    def stop(self) -> None:
        self._close()
        if self.ended is not None:  # reaped already: its pid may be another process's by now
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)  # done or abandoned: nothing it still does is wanted
        self.ended = self._reap()

    def _close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _reap(self) -> str:
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:  # already reaped
            return "already reaped"
        if os.WIFSIGNALED(status):
            self.interrupted = os.WTERMSIG(status) == signal.SIGINT
            return f"killed by signal {os.WTERMSIG(status)}"
        self.interrupted = os.waitstatus_to_exitcode(status) == INTERRUPTED
        return f"exit code {os.waitstatus_to_exitcode(status)}"


def _wait_any(children: list[_Child], missing: int) -> dict[int, tuple[bool, Any]]:
    """Block until some child sends something; a result that can no longer come is an error."""
    open_fds = {child.fd: child for child in children if child.fd is not None}
    if not open_fds:
        if any(child.interrupted for child in children):  # Ctrl-C reached them: the run was interrupted
            raise KeyboardInterrupt
        how = "; ".join(f"pid {c.pid}: {c.ended}" for c in children if c.ended and c.ended != "exit code 0")
        raise WorkerLost(f"a worker process ended without the result of input {missing} ({how or 'no reason'})")
    readable, _, _ = select.select(list(open_fds), [], [])
    found: dict[int, tuple[bool, Any]] = {}
    for fd in readable:
        found.update(open_fds[fd].ready(wait=True))
    return found


def _serve(work: Callable[[int], Any], claims: _Claims, fd: int) -> None:
    """In the child: claim positions until none is left, and send each result (or the exception that
    replaced it), pickled, after its position and size."""
    with os.fdopen(fd, "wb") as out:
        while (k := claims.next()) is not None:
            try:
                message = pickle.dumps((True, work(k)), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # noqa: BLE001 - re-raised in the parent, in its place in the order
                message = _pickled_error(exc)
            out.write(_HEADER.pack(k, len(message)) + message)
            out.flush()  # the parent may be waiting for exactly this result


def _pickled_error(exc: Exception) -> bytes:
    try:
        return pickle.dumps((False, exc), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an exception that does not pickle still reaches the parent
        return pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")), protocol=pickle.HIGHEST_PROTOCOL)

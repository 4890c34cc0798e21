"""Finding and reading the config.json files a command was pointed at (the file-system edge)."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from dflash_cfg.errors import PathError
from dflash_cfg.jsondoc.document import MAX_BYTES

CONFIG = "config.json"
# Hugging Face cache blobs are content-addressed copies of snapshot files; the snapshot links are
# what a user means, so the blobs are never listed a second time.
SKIP_DIRS = {"blobs", "node_modules", "__pycache__"}


Kind = Literal["missing", "broken-link", "dir", "file", "other"]
_ABSENT = (errno.ENOENT, errno.ENOTDIR)


def probe(path: str | os.PathLike[str]) -> Kind:
    """What is at `path` (symlinks followed). Unlike Path.exists(), never raises for a directory the
    user cannot enter or a name too long for the file system: that is a one-line PathError."""
    try:
        st = os.stat(path)
    except ValueError:  # a NUL byte, or a lone surrogate no file-system encoding can hold
        raise PathError(
            f"not a usable path: {display(os.fspath(path))!r} holds a NUL or an unencodable character"
        ) from None
    except OSError as exc:
        if exc.errno not in (*_ABSENT, errno.ELOOP):
            raise PathError(f"cannot access {display(os.fspath(path))}: {exc.strerror or exc}") from None
        return "broken-link" if os.path.islink(path) else "missing"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    return "file" if stat.S_ISREG(st.st_mode) else "other"


def discover(path: Path, unlisted: list[str] | None = None) -> list[Path]:
    """config.json files under `path`: the file itself, or a recursive search of a directory. With
    `unlisted`, a subdirectory that cannot be listed is its own problem, said there, and the search goes
    on (one unreadable dir must not hide every other drafter of a tree); without it, it stops the search."""
    kind = probe(path)
    if kind in ("missing", "broken-link"):
        raise PathError(f"{'broken symlink' if kind == 'broken-link' else 'path not found'}: {display(path)}")
    if kind != "dir":
        return [path]
    found = []

    def failed(exc: OSError) -> None:
        if unlisted is None or exc.filename is None or os.path.abspath(exc.filename) == os.path.abspath(path):
            raise exc
        unlisted.append(
            f"cannot list {display(exc.filename)}: {exc.strerror or exc}; its config files were not checked"
        )

    try:
        for root, dirs, names in os.walk(path, onerror=failed):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
            if CONFIG in names:
                found.append(Path(root) / CONFIG)
    except OSError as exc:
        raise PathError(f"cannot list {display(exc.filename or path)}: {exc.strerror or exc}") from None
    return found


class NotRegularFile(OSError):
    """A FIFO, device, socket or directory where a file was expected."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(0, "not a regular file", os.fspath(path))


@contextmanager
def open_regular(path: str | os.PathLike[str]) -> Iterator[tuple[int, int]]:
    """The descriptor and size of a regular file (symlinks followed): the one way dflash-cfg opens a
    file to read. Opened non-blocking and refused unless regular, so a FIFO or a device named like a
    model file can neither hang the tool nor feed it forever. Raises OSError (NotRegularFile)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(path)
        yield fd, st.st_size
    finally:
        os.close(fd)


def read_exact(fd: int, n: int) -> bytes:
    """Up to `n` bytes from the descriptor's position (fewer only at end of file)."""
    chunks: list[bytes] = []
    remaining = n
    while remaining > 0:  # os.read may return less than asked (large reads, network file systems)
        chunk = os.read(fd, min(remaining, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read(path: Path, limit: int = MAX_BYTES) -> bytes:
    """The file's bytes, at most `limit` + 1 of them (the parser reports an oversized file)."""
    try:
        with open_regular(path) as (fd, _size):
            return read_exact(fd, limit + 1)
    except ValueError:  # a NUL byte, or a lone surrogate no file-system encoding can hold
        raise PathError(f"not a usable path: {display(path)!r} holds a NUL or an unencodable character") from None
    except OSError as exc:
        raise PathError(f"cannot read {display(path)}: {exc.strerror or exc}") from None


def hashes(path: Path) -> tuple[str, str]:
    """sha256 and git blob sha1 of the whole file, streamed: right for a file of any size, where `read`
    stops at its limit."""
    try:
        with open_regular(path) as (fd, size):
            sha256 = hashlib.sha256()
            blob = hashlib.sha1(b"blob %d\0" % size)
            done = 0
            while chunk := os.read(fd, 1 << 20):
                sha256.update(chunk)
                blob.update(chunk)
                done += len(chunk)
    except OSError as exc:
        raise PathError(f"cannot read {display(path)}: {exc.strerror or exc}") from None
    if done != size:  # it changed while it was read: a blob id of the wrong length would mislead
        raise PathError(f"cannot read {display(path)}: it changed while it was read")
    return sha256.hexdigest(), blob.hexdigest()


def read_optional(path: Path, limit: int = MAX_BYTES) -> bytes | None:
    """Like `read`, but None when there is no such file."""
    if probe(path) in ("missing", "broken-link"):  # a dangling symlink too: nothing to read
        return None
    try:
        return read(path, limit)
    except PathError:
        if probe(path) == "missing":  # removed in between
            return None
        raise


def display(path: Path | str) -> str:
    """A path as text that can always be printed: undecodable bytes of a file name become escapes."""
    try:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that is no escaped byte: show it as an escape
        return os.fspath(path).encode("utf-8", "backslashreplace").decode("ascii")

"""Finding and reading the config.json files a command was pointed at (the file-system edge)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from dflash_cfg.errors import PathError
from dflash_cfg.jsondoc.document import MAX_BYTES

CONFIG = "config.json"
# Hugging Face cache blobs are content-addressed copies of snapshot files; the snapshot links are
# what a user means, so the blobs are never listed a second time.
SKIP_DIRS = {"blobs", "node_modules", "__pycache__"}


def discover(path: Path) -> list[Path]:
    """config.json files under `path`: the file itself, or a recursive search of a directory."""
    if not path.exists():
        kind = "broken symlink" if path.is_symlink() else "path not found"
        raise PathError(f"{kind}: {display(path)}")
    if not path.is_dir():
        return [path]
    found = []
    try:
        for root, dirs, names in os.walk(path, onerror=_raise):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
            if CONFIG in names:
                found.append(Path(root) / CONFIG)
    except OSError as exc:
        raise PathError(f"cannot list {display(exc.filename or path)}: {exc.strerror or exc}") from None
    return found


def _raise(exc: OSError) -> None:
    raise exc


def read(path: Path, limit: int = MAX_BYTES) -> bytes:
    """The file's bytes, at most `limit` + 1 of them (the parser reports an oversized file).

    Opened non-blocking and refused unless regular, so a FIFO or a device named config.json can
    neither hang the tool nor feed it forever.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise PathError(f"cannot read {display(path)}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PathError(f"cannot read {display(path)}: not a regular file")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise PathError(f"cannot read {display(path)}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_optional(path: Path, limit: int = MAX_BYTES) -> bytes | None:
    """Like `read`, but None when there is no such file."""
    if not os.path.exists(path):  # also a dangling symlink: nothing to read
        return None
    try:
        return read(path, limit)
    except PathError:
        if not os.path.exists(path):  # removed in between
            return None
        raise


def display(path: Path | str) -> str:
    """A path as text that can always be printed: undecodable bytes of a file name become escapes."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")

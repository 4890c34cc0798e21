"""Finding and reading the config.json files a command was pointed at (the file-system edge)."""

from __future__ import annotations

import os
from pathlib import Path

CONFIG = "config.json"
# Hugging Face cache blobs are content-addressed copies of snapshot files; the snapshot links are
# what a user means, so the blobs are never listed a second time.
SKIP_DIRS = {"blobs", "node_modules", "__pycache__"}


class PathError(Exception):
    """A path the user gave cannot be used (missing, unreadable): exit 2."""


def discover(path: Path) -> list[Path]:
    """config.json files under `path`: the file itself, or a recursive search of a directory."""
    if not path.exists():
        kind = "broken symlink" if path.is_symlink() else "path not found"
        raise PathError(f"{kind}: {path}")
    if not path.is_dir():
        return [path]
    found = []
    try:
        for root, dirs, names in os.walk(path, onerror=_raise):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
            if CONFIG in names:
                found.append(Path(root) / CONFIG)
    except OSError as exc:
        raise PathError(f"cannot list {exc.filename or path}: {exc.strerror or exc}") from None
    return found


def _raise(exc: OSError) -> None:
    raise exc


def read(path: Path) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise PathError(f"cannot read {path}: {exc.strerror or exc}") from None

"""The one way dflash-cfg replaces a file it owns (cache entries, its record of Hub refs): a temp file
in the same directory, renamed over the old one, so a reader sees the old bytes or the new, never half.

It lives in sources/ because the modules that own those files (cache, hub) read the world: with the
primitive beside them, sources/ never imports write/, and write/ (the user's config.json: the directory
lock, the stale-write check, the backup, durability and the read-back on top of the same idea) may
import sources/. This module imports no locking, so a cold `check` that stores a cache entry does not
load the writer.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def replace_atomically(path: Path, data: bytes, *, make_parents: bool = False) -> None:
    """Write `data` to `path` through a temp file and a rename. Raises OSError; leaves no temp behind."""
    tmp = None
    try:
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:16]}.", suffix=".tmp", dir=path.parent)
        except FileNotFoundError:
            if not make_parents:
                raise
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:16]}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        tmp = None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

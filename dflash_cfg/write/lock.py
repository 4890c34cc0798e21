"""Recording a write in .dflash-cfg.lock (the format and its reader are in sources/lockfile.py)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from dflash_cfg.errors import WriteError
from dflash_cfg.jsondoc.encode import dumps
from dflash_cfg.model import Entry, Made, Written
from dflash_cfg.sources.lockfile import LOCK_FILE, VERSION, entry_to_json, new_entry, parse_files
from dflash_cfg.write.verified import locked_dir, read_at, replace_file


def record(config_path: Path, written: Written, made: Made, tool_version: str) -> Entry:
    """Add or replace `config_path`'s entry, atomically, under the same directory lock as the write.

    Refuses (WriteError, exit 1) if the file no longer holds `written`'s bytes: a lock recording a
    write that was already overwritten would make `verify` prove the wrong thing.
    """
    name = config_path.name
    directory = os.path.realpath(config_path.parent)
    where = Path(directory) / LOCK_FILE
    with locked_dir(directory) as dfd:
        current = read_at(dfd, name, directory)
        if current is None or hashlib.sha256(current).hexdigest() != written.sha256:
            raise WriteError(
                f"{os.path.join(directory, name)} changed after dflash-cfg wrote it (someone else "
                "wrote it); lock not recorded",
                1,
            )
        # config.json holds the new bytes by now: a lock that cannot be read must not be said "nothing written".
        landed = f"{os.path.join(directory, name)} holds the new bytes (sha256 {written.sha256}); lock not recorded"
        existing = read_at(dfd, LOCK_FILE, directory, note=landed)
        files = {} if existing is None else parse_files(existing, where)
        entry = new_entry(written, made, tool_version)
        files[name] = entry_to_json(entry)
        text = dumps({"version": VERSION, "files": files}, indent=2) + "\n"
        replace_file(dfd, LOCK_FILE, text.encode("utf-8"), directory, note=landed)
    return entry

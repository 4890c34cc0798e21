""".dflash-cfg.lock beside config.json: what dflash-cfg last wrote there, so a later `verify` (on this
host or another) can prove the file is still that write.

Format, version 1 (other files' entries are kept as they are when one entry is recorded):
    {"version": 1, "files": {"config.json": {"path": "/abs/config.json", "sha256": "...",
     "git_blob_sha1": "...", "source": {"repo": "...", "revision": "...", "commit": "..."} | null,
     "written_at": "2025-01-01T00:00:00Z", "tool_version": "0.1.0",
     "repair": "upstream" | "critical-fields" | "safe-fixes",
     "left": {"errors": 0, "warnings": 2}}}}
"repair" and "left" (what the write was, and the findings fix's re-check left in it) came later: an entry without
them is read as before, and an older dflash-cfg ignores them.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, get_args, overload

from dflash_cfg.errors import LockError, PathError
from dflash_cfg.model import Entry, Left, Made, Repair, Source, Url, Written
from dflash_cfg.sources import storage

LOCK_FILE = ".dflash-cfg.lock"
VERSION = 1
# A real lock file is a few hundred bytes per entry; refusing more keeps a hostile one from costing memory.
MAX_BYTES = 1024 * 1024
REPAIRS = get_args(Repair)
_HEX = {"sha256": re.compile(r"^[0-9a-f]{64}$"), "git_blob_sha1": re.compile(r"^[0-9a-f]{40}$")}


def new_entry(written: Written, made: Made, tool_version: str) -> Entry:
    """The entry recording a write made now."""
    written_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Entry(
        path=written.path,
        sha256=written.sha256,
        git_blob_sha1=written.git_blob_sha1,
        source=made.source,
        written_at=written_at,
        tool_version=tool_version,
        repair=made.repair,
        left=made.left,
    )


@overload
def lock_path(config_path: Path) -> Path: ...
@overload
def lock_path(config_path: Url) -> Url: ...
def lock_path(config_path: storage.Where) -> storage.Where:
    return config_path.parent / LOCK_FILE


def read_lock(config_path: storage.Where) -> Entry | None:
    """The entry for `config_path`'s file name; None if there is no lock file or no such entry."""
    where = lock_path(config_path)
    try:
        raw = storage.read_optional(where, MAX_BYTES)
    except PathError as exc:
        raise LockError(str(exc)) from None
    if raw is None:
        return None
    entries = parse_files(raw, where)
    found = entries.get(config_path.name)
    return None if found is None else _entry(found, config_path.name, where)


def refuse_unrecordable(config_path: storage.Where) -> None:
    """Raise LockError when a write of `config_path` could not be recorded in its lock, so that fix refuses
    before anything is written (a lock that fails only after config.json was replaced would leave a write no
    `verify` can prove): a lock that is not a dflash-cfg lock file (corrupt, too large, not a regular file), a
    directory marker where the lock object goes, a symlink that leads nowhere (dangling, or a loop). A symlink
    to a lock file is read through, and replaced by the new lock, never written through."""
    read_lock(config_path)
    where = lock_path(config_path)
    kind = storage.probe(where)
    if kind == "broken-link":
        raise LockError(
            f"{storage.display(where)} is a symlink that leads nowhere (dangling, or a loop), not a dflash-cfg "
            "lock file; remove it"
        )
    if kind == "dir":  # on disk read_lock refused it already (not a regular file); a key ending in `/` here
        raise LockError(f"{storage.display(where)} is a directory, not a dflash-cfg lock file; remove it")


def parse_files(raw: bytes, where: storage.Where) -> dict[str, Any]:
    if len(raw) > MAX_BYTES:
        raise LockError(f"{where} is larger than {MAX_BYTES} bytes: not a dflash-cfg lock file; remove it")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LockError(f"{where} is not valid JSON ({reason}); remove it or restore it from a backup") from None
    if not isinstance(doc, dict) or "version" not in doc:
        raise LockError(f"{where} is not a dflash-cfg lock file (no version); remove it")
    version = doc["version"]
    if type(version) is not int or version != VERSION:
        raise LockError(f"{where} has version {version!r}; this dflash-cfg reads version {VERSION}")
    files = doc.get("files")
    if not isinstance(files, dict):
        raise LockError(f"{where}: 'files' must be an object")
    return files


def _entry(raw: Any, name: str, where: storage.Where) -> Entry:
    def bad(why: str) -> LockError:
        return LockError(f"{where}: entry {name!r} {why}; remove the lock file or that entry")

    if not isinstance(raw, dict):
        raise bad("is not an object")
    fields = {}
    for key in ("path", "sha256", "git_blob_sha1", "written_at", "tool_version"):
        value = raw.get(key)
        if not isinstance(value, str):
            raise bad(f"has no string {key!r}")
        if key in _HEX and not _HEX[key].match(value):
            raise bad(f"has a malformed {key!r}")
        fields[key] = value
    source = raw.get("source")
    if source is not None:
        if not isinstance(source, dict) or not all(
            isinstance(source.get(k), str) for k in ("repo", "revision", "commit")
        ):
            raise bad("has a malformed 'source' (needs string repo, revision, commit, or null)")
        source = Source(source["repo"], source["revision"], source["commit"])
    repair = raw.get("repair")
    if repair is not None and repair not in REPAIRS:
        raise bad(f"has an unknown 'repair' {repair!r} (one of {', '.join(REPAIRS)}, or none)")
    left = raw.get("left")
    if left is not None:
        errors, warnings = (left.get(k) if isinstance(left, dict) else None for k in ("errors", "warnings"))
        if not (type(errors) is int and type(warnings) is int and errors >= 0 and warnings >= 0):
            raise bad("has a malformed 'left' (needs counts errors and warnings, or none)")
        left = Left(errors, warnings)
    return Entry(
        path=fields["path"],
        sha256=fields["sha256"],
        git_blob_sha1=fields["git_blob_sha1"],
        source=source,
        written_at=fields["written_at"],
        tool_version=fields["tool_version"],
        repair=repair,
        left=left,
    )


def entry_to_json(entry: Entry) -> dict[str, Any]:
    source = (
        None
        if entry.source is None
        else {"repo": entry.source.repo, "revision": entry.source.revision, "commit": entry.source.commit}
    )
    return {
        "path": entry.path,
        "sha256": entry.sha256,
        "git_blob_sha1": entry.git_blob_sha1,
        "source": source,
        "written_at": entry.written_at,
        "tool_version": entry.tool_version,
        "repair": entry.repair,
        "left": None if entry.left is None else {"errors": entry.left.errors, "warnings": entry.left.warnings},
    }

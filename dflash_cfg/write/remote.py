"""Writes of a config.json on object storage (compare-and-swap) and on the Hub (a pull request).

Object storage has no directory lock and no rename, so the guarantee is built from the store's own
conditional requests instead: the object is read with its ETag, its bytes must still be the ones the plan
was made from, and the new bytes are put with `If-Match` that ETag. A store that has replaced the object
in between refuses the put (412), so a repair made from stale bytes is never written over someone else's.
Then the object is read back and its sha256 compared. The backup is a sibling object written only if
absent (`If-None-Match: *`); the lock object (`.dflash-cfg.lock`) is read and put the same way as
config.json, so two writers never lose each other's entries.

On the Hub nothing is written in place: `fix` opens a pull request whose parent is the commit the file was
read at, so a branch that moved since is refused by the Hub rather than overwritten.
"""

from __future__ import annotations

import hashlib

from dflash_cfg.errors import LockError, PathError, WriteError
from dflash_cfg.jsondoc.document import git_blob_sha1
from dflash_cfg.jsondoc.encode import dumps
from dflash_cfg.model import Entry, Made, Url, Written
from dflash_cfg.sources import remote
from dflash_cfg.sources.lockfile import LOCK_FILE, VERSION, entry_to_json, new_entry, parse_files
from dflash_cfg.sources.remote import Conflict
from dflash_cfg.write.verified import _at

MAX_BYTES = 64 * 1024 * 1024  # a config.json or a lock file is far smaller; past this it is not one
_LOCK_TRIES = 5


def _stale(url: Url) -> WriteError:
    return WriteError(f"{url} changed since it was read (someone else wrote it); nothing written", 1)


def write_conditional(url: Url, new: bytes, expected_old_sha256: str, *, backup: bool = True) -> Written:
    """Replace the object `url` with `new` if it still holds the bytes whose sha256 the caller read."""
    try:
        # Test hook (DFLASH_CFG_FAULT=read:pause:FLAG, as in verified.py): hold the writer after it read
        # the object and before its conditional put, the window a concurrent writer races into.
        current = _at("read", lambda: remote.read_versioned(url, MAX_BYTES))
    except PathError as exc:
        raise WriteError(f"{exc}; nothing written", 2) from None
    if current is None:
        raise WriteError(f"{url} was removed since it was read; nothing written", 1)
    data, etag = current
    if hashlib.sha256(data).hexdigest() != expected_old_sha256:
        raise _stale(url)
    backup_url = None
    if backup:
        backup_url = url.parent / f"{url.name}.{expected_old_sha256[:12]}.bak"
        _write_backup(backup_url, data, url)
    want = hashlib.sha256(new).hexdigest()
    try:
        remote.put(url, new, if_match=etag)
    except (Conflict, PathError) as exc:
        # The answer is not proof of the outcome: a PUT applied whose answer was lost is retried by the
        # client and refused (412: the object no longer has the ETag, because it holds our bytes), and an
        # endpoint that dies after applying it looks like a failed write. Only the object says what happened.
        back = _settle(url, want, expected_old_sha256, exc)
    else:
        try:
            back = remote.read(url, MAX_BYTES)
        except PathError as exc:
            raise WriteError(
                f"{url} was written but could not be read back ({exc}); check it with dflash-cfg verify", 2
            ) from None
    got = hashlib.sha256(back).hexdigest()
    if got != want:
        raise WriteError(
            f"read-back mismatch: {url} holds sha256 {got}, expected {want} (written over by someone else, "
            "or the store does not keep what it is given)",
            1,
        )
    return Written(
        path=str(url),
        sha256=got,
        git_blob_sha1=git_blob_sha1(back),
        backup=None if backup_url is None else str(backup_url),
        replaced_link=None,
    )


def _settle(url: Url, want: str, old: str, failure: Exception) -> bytes:
    """After a put whose answer was a refusal or an error: the object's bytes if they are ours (the put
    was applied); otherwise the error, saying only what was read."""
    try:
        now = remote.read_optional(url, MAX_BYTES)
    except PathError as exc:
        cause = "the store refused the conditional write" if isinstance(failure, Conflict) else str(failure)
        raise WriteError(
            f"{cause}, and {url} could not be read to learn whether it was written ({exc}): the outcome is "
            f"unknown; run dflash-cfg verify {url.parent} when the store answers",
            2,
        ) from None
    sha = None if now is None else hashlib.sha256(now).hexdigest()
    if now is not None and sha == want and not (isinstance(failure, Conflict) and _recorded(url, want)):
        return now  # our bytes, and no other writer has recorded them: our put was applied
    if isinstance(failure, Conflict):
        raise _stale(url)
    if sha == old:
        raise WriteError(f"{failure}; {url} is unchanged (read after the failure)", 2)
    raise _stale(url)


def _recorded(url: Url, sha256: str) -> bool:
    """Whether the lock beside `url` already records these bytes: another fix wrote the same repair and
    finished first (a refusal then means ours lost the race, as when its bytes differ)."""
    try:
        raw = remote.read_optional(url.parent / LOCK_FILE, MAX_BYTES)
        files = {} if raw is None else parse_files(raw, url.parent / LOCK_FILE)
    except (PathError, LockError):
        return False
    entry = files.get(url.name)
    return isinstance(entry, dict) and entry.get("sha256") == sha256


def _write_backup(backup_url: Url, data: bytes, of: Url) -> None:
    try:
        remote.put(backup_url, data, if_none_match=True)
    except Conflict:
        # Named by the sha256 of the bytes it keeps: one already there with those bytes is the same backup.
        existing = remote.read_optional(backup_url, MAX_BYTES)
        if existing is None or hashlib.sha256(existing).digest() != hashlib.sha256(data).digest():
            raise WriteError(
                f"{backup_url} exists with other bytes; {of} is unchanged (remove it, or use --no-backup)", 2
            ) from None
    except PathError as exc:
        raise WriteError(f"cannot write {backup_url}: {exc}; {of} is unchanged", 2) from None


def record_remote(config_url: Url, written: Written, made: Made, tool_version: str) -> Entry:
    """Add or replace config_url's entry in the lock object beside it, with a conditional put; refuses
    (exit 1) if config.json no longer holds the written bytes."""
    lock_url = config_url.parent / LOCK_FILE
    entry = new_entry(written, made, tool_version)
    for _ in range(_LOCK_TRIES):
        try:
            now = remote.read(config_url, MAX_BYTES)
            existing = remote.read_versioned(lock_url, MAX_BYTES)
        except PathError as exc:
            raise WriteError(f"{exc}; lock not recorded", 2) from None
        if hashlib.sha256(now).hexdigest() != written.sha256:
            raise WriteError(
                f"{config_url} changed after dflash-cfg wrote it (someone else wrote it); lock not recorded", 1
            )
        files = {} if existing is None else parse_files(existing[0], lock_url)
        files[config_url.name] = entry_to_json(entry)
        text = (dumps({"version": VERSION, "files": files}, indent=2) + "\n").encode("utf-8")
        try:
            if existing is None:
                remote.put(lock_url, text, if_none_match=True)
            else:
                remote.put(lock_url, text, if_match=existing[1])
            return entry
        except Conflict:
            continue  # another writer recorded its entry meanwhile: read it again and add ours
        except PathError as exc:
            raise WriteError(f"{exc}; lock not recorded", 2) from None
    raise WriteError(f"{lock_url} kept changing while it was recorded; lock not recorded", 1)


def open_pull_request(url: Url, new: bytes, summary: str) -> Written:
    """Propose `new` as the file at an hf:// path (pinned to the commit it was read at) in a pull request
    whose parent is that commit."""
    pinned = remote.hub_commit(url)
    found = url.hub_repo
    if pinned is None or found is None:
        raise WriteError(f"{url}: not pinned to a commit, so a pull request could not name its parent", 2)
    repo, commit = pinned
    inside = found[2]
    from huggingface_hub import CommitOperationAdd, HfApi

    from dflash_cfg.sources.hub import settings

    s = settings()
    if not s.token:
        raise WriteError(f"{url}: opening a pull request on {s.endpoint} needs HF_TOKEN (a token with write access)", 2)
    try:
        info = HfApi(endpoint=s.endpoint, token=s.token).create_commit(
            repo,
            [CommitOperationAdd(path_in_repo=inside, path_or_fileobj=new)],
            commit_message=f"dflash-cfg fix: {inside}",
            commit_description=summary,
            create_pr=True,
            parent_commit=commit,
        )
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status in (409, 412):
            raise WriteError(f"{url}: {repo} moved past {commit[:12]} since it was read; nothing proposed", 1) from None
        raise WriteError(f"cannot open a pull request on {repo}: {remote.explain(exc, url, 'write')}", 2) from None
    pr = str(getattr(info, "pr_url", "") or getattr(info, "commit_url", ""))
    return Written(
        path=str(url),
        sha256=hashlib.sha256(new).hexdigest(),
        git_blob_sha1=git_blob_sha1(new),
        backup=None,
        replaced_link=None,
        pull_request=pr,
    )

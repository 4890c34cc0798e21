"""Provable writes of config.json: the only module that replaces a user's file (the write edge).

The incident behind this tool was a config.json rewrite that never landed and nobody noticed, so a
write here either ends with the new bytes read back from disk, or raises and says exactly what is on
disk. Every step works on one directory file descriptor, so the directory cannot be swapped mid-write,
and that descriptor is also the flock that keeps two dflash-cfg writers out of each other's way.

Temp files are named `.<name>.<pid>.<8 hex>.tmp`. A process killed mid-write (SIGKILL, power loss)
can leave one behind; the next write in that directory removes those whose pid is no longer alive.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import secrets
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from dflash_cfg.errors import WriteError
from dflash_cfg.jsondoc.document import git_blob_sha1
from dflash_cfg.model import Written
from dflash_cfg.sources.hub import repo_from_cache_path
from dflash_cfg.sources.lockfile import LOCK_FILE  # its temps are swept too

T = TypeVar("T")

FAULT_ENV = "DFLASH_CFG_FAULT"
_PAUSE_SECONDS = 60
_TEMP = re.compile(r"^\.(?P<base>.+)\.(?P<pid>[0-9]+)\.[0-9a-f]{8}\.tmp$")
_REASONS = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied (operation not permitted)",
    errno.EIO: "I/O error",
}
_HINTS = {
    errno.ENOSPC: "free some space and run it again",
    errno.EDQUOT: "free some space and run it again",
    errno.EROFS: "copy the model to a writable directory and fix the copy",
    errno.EACCES: "run as the directory's owner or fix its permissions",
    errno.EPERM: "run as the directory's owner or fix its permissions (or chattr -i)",
}


@dataclass(frozen=True, kw_only=True)
class _State:
    """What a name in the directory holds right now (through a symlink, as a reader sees it)."""

    data: bytes | None  # None: no such file
    sha256: str | None
    link: str | None  # resolved target when the name is a symlink
    mode: int | None  # permission bits of the file (of the link's target)
    uid: int = -1
    gid: int = -1


def write_verified(path: Path, new: bytes, expected_old_sha256: str | None, *, backup: bool = True) -> Written:
    """Replace `path` with `new` atomically, durably and verifiably.

    `expected_old_sha256` is the sha256 of the bytes the caller read (None: the file must not exist
    yet); if the file holds anything else now, nothing is written. Raises WriteError, never OSError.
    """
    target = Path(os.path.abspath(path))
    name = target.name
    real_dir = os.path.realpath(target.parent)
    where = os.path.join(real_dir, name)
    # A model directory may itself be a link into the cache, so both spellings are checked.
    for spelling in (target, Path(where)):
        _refuse_cache_snapshot(spelling)
    with _locked(real_dir, "locked") as dfd:
        _remove_stale_temps(dfd, name)
        before = _current(dfd, name, real_dir)
        if before.sha256 != expected_old_sha256:
            what = "appeared" if expected_old_sha256 is None else "changed"
            raise WriteError(f"{where} {what} since it was read (someone else wrote it); nothing written", 1)

        backup_path = None
        if backup and before.data is not None and before.sha256 is not None:
            bak = f"{name}.{before.sha256[:12]}.bak"
            backup_path = os.path.join(real_dir, bak)
            try:
                _at("backup", lambda: _write_backup(dfd, bak, before, real_dir, where))
            except OSError as exc:  # only the fault hook gets here; _replace already explains real ones
                raise _env_error(exc, f"cannot write {backup_path}", f"{where} is unchanged") from None

        def unchanged() -> None:
            # Narrows the window for a writer that ignores our lock (an editor) to the rename itself.
            now = _current(dfd, name, real_dir)
            if (now.sha256, now.link) != (before.sha256, before.link):
                raise WriteError(
                    f"{where} changed while it was being fixed (someone else wrote it); nothing written", 1
                )

        _replace(
            dfd, name, new, before, real_dir, hooked=True, unchanged=unchanged, unchanged_note=f"{where} is unchanged"
        )
        digest = hashlib.sha256(new).hexdigest()
        return Written(
            path=where, sha256=digest, git_blob_sha1=git_blob_sha1(new), backup=backup_path, replaced_link=before.link
        )


@contextmanager
def locked_dir(directory: str | os.PathLike[str]) -> Iterator[int]:
    """The directory's fd, holding the exclusive dflash-cfg lock (lock.py records under it too)."""
    with _locked(os.path.realpath(directory), None) as dfd:
        yield dfd


def replace_file(dfd: int, name: str, data: bytes, directory: str, *, note: str = "nothing written") -> None:
    """Atomic, durable, read-back-verified replace of `name` in the locked directory `dfd` (for lock.py).
    `note` says what is on disk when `name` cannot even be read."""
    _replace(
        dfd,
        name,
        data,
        _current(dfd, name, directory, note),
        directory,
        hooked=False,
        unchanged=None,
        unchanged_note=f"{os.path.join(directory, name)} is unchanged",
    )


def read_at(dfd: int, name: str, directory: str, *, note: str = "nothing written") -> bytes | None:
    """Bytes of `name` in the directory `dfd` (through a symlink), None if it does not exist. A refusal (a
    broken symlink, not a regular file, unreadable) ends with `note`: what is on disk then."""
    return _current(dfd, name, directory, note).data


def _at(step: str | None, call: Callable[[], T]) -> T:
    """Fault hook, for tests only: off unless DFLASH_CFG_FAULT=<step>:enospc (the step's os call fails
    with ENOSPC, for machines that cannot mount a small filesystem) or <step>:pause:<flagfile> (after
    the step: create flagfile, then wait up to 60 s so the test can SIGKILL the process there, or
    delete the flagfile to let it go on)."""
    fault = os.environ.get(FAULT_ENV, "") if step else ""
    name, _, action = fault.partition(":")
    if name == step and action == "enospc":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    result = call()
    if name == step and action.startswith("pause:"):
        flag = Path(action[len("pause:") :])
        flag.write_text(str(os.getpid()))
        deadline = time.monotonic() + _PAUSE_SECONDS
        while flag.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    return result


def _refuse_cache_snapshot(path: Path) -> None:
    found = repo_from_cache_path(path)
    if found:
        repo, commit = found
        raise WriteError(
            f"{path} is in the Hugging Face cache snapshot of {repo}@{commit[:12]}, which must keep "
            f"matching that commit; copy the model out of the cache (hf download {repo} --local-dir "
            "DIR) and fix the copy",
            2,
        )


@contextmanager
def _locked(directory: str, step: str | None) -> Iterator[int]:
    try:
        dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise _env_error(exc, f"cannot open the directory {directory}", "nothing written") from None
    try:
        try:
            _at(step, lambda: fcntl.flock(dfd, fcntl.LOCK_EX | fcntl.LOCK_NB))
        except BlockingIOError:
            # Fail fast: waiting would let the other fix's result be silently overwritten by ours.
            raise WriteError(f"another dflash-cfg fix is writing {directory}; nothing written", 2) from None
        except OSError as exc:
            raise _env_error(exc, f"cannot lock {directory}", "nothing written") from None
        yield dfd
    finally:
        os.close(dfd)  # also releases the flock


def _current(dfd: int, name: str, directory: str, note: str = "nothing written") -> _State:
    where = os.path.join(directory, name)
    try:
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            return _State(data=None, sha256=None, link=None, mode=None)
        link = os.path.realpath(where) if stat.S_ISLNK(st.st_mode) else None
        try:
            # O_NONBLOCK: a FIFO planted as config.json must not hang the tool.
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
        except FileNotFoundError:
            raise WriteError(f"{where} is a broken symlink (to {link}); {note}", 2) from None
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise WriteError(f"{where} is not a regular file; {note}", 2)
            data = fh.read()
    except OSError as exc:
        raise _env_error(exc, f"cannot read {where}", note) from None
    return _State(
        data=data,
        sha256=hashlib.sha256(data).hexdigest(),
        link=link,
        mode=stat.S_IMODE(info.st_mode),
        uid=info.st_uid,
        gid=info.st_gid,
    )


def _write_backup(dfd: int, bak: str, before: _State, directory: str, where: str) -> None:
    assert before.data is not None
    existing = _current(dfd, bak, directory)
    if existing.sha256 == before.sha256 and existing.link is None:
        return  # the same previous bytes were already backed up (e.g. a second fix in a row)
    # Same mode and owner as the original: a backup must not expose a private config more widely.
    like = _State(data=None, sha256=None, link=None, mode=before.mode, uid=before.uid, gid=before.gid)
    _replace(
        dfd, bak, before.data, like, directory, hooked=False, unchanged=None, unchanged_note=f"{where} is unchanged"
    )


def _replace(
    dfd: int,
    name: str,
    data: bytes,
    like: _State,
    directory: str,
    *,
    hooked: bool,
    unchanged: Callable[[], None] | None,
    unchanged_note: str,
) -> None:
    """temp (O_EXCL, `like`'s mode and owner) + write + fsync + os.replace + fsync(dir) + read back.

    os.replace renames over the name itself, so a symlink there becomes a regular file and its target
    (e.g. a cache blob) is never written.
    """
    where = os.path.join(directory, name)

    def step(label: str) -> str | None:
        return label if hooked else None

    tmp: str | None = None
    try:
        try:
            fd, tmp = _create_temp(dfd, name, like)
            try:
                if like.mode is not None:
                    _copy_owner_and_mode(fd, like)
                _at(step("temp-written"), lambda: _write_all(fd, data))
                _at(step("fsynced"), lambda: os.fsync(fd))
            finally:
                os.close(fd)
            if unchanged is not None:
                unchanged()
            src = tmp
            _at(step("replaced"), lambda: os.replace(src, name, src_dir_fd=dfd, dst_dir_fd=dfd))
            tmp = None
        except OSError as exc:
            raise _env_error(exc, f"cannot write {where}", unchanged_note) from None
    finally:
        if tmp is not None:
            # If even this fails, the sweep of the next write removes it (its pid will be dead by then).
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)

    try:
        # Without it the rename may not survive a crash even though the file's data would.
        _at(step("dir-fsynced"), lambda: os.fsync(dfd))
    except OSError as exc:
        raise WriteError(
            f"{where} now holds the new bytes but its directory could not be synced "
            f"({_reason(exc)}): the change may not survive a crash; check it with dflash-cfg "
            "verify",
            2,
        ) from None
    want = hashlib.sha256(data).hexdigest()
    try:
        got = _at(step("verified"), lambda: _read_back(dfd, name))
    except OSError as exc:
        raise WriteError(
            f"{where} was replaced but could not be read back ({_reason(exc)}); check it with dflash-cfg verify", 2
        ) from None
    if got != want:
        raise WriteError(
            f"read-back mismatch: {where} holds sha256 {got}, expected {want} (written over by "
            "someone else, or the storage does not keep what it is given)",
            1,
        )


def _create_temp(dfd: int, name: str, like: _State) -> tuple[int, str]:
    prefix = name if name.startswith(".") else "." + name
    # A new file gets 0o644 less the umask, as any editor would create it; an existing file's mode
    # is applied with fchmod afterwards, and until then the temp is private.
    mode = 0o644 if like.mode is None else 0o600
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(16):
        tmp = f"{prefix}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, flags, mode, dir_fd=dfd), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "could not create a unique temp file")


def _copy_owner_and_mode(fd: int, like: _State) -> None:
    assert like.mode is not None
    info = os.fstat(fd)
    if (info.st_uid, info.st_gid) != (like.uid, like.gid):
        # Root fixing a user's model must not leave it root-owned; others cannot chown, and keep theirs.
        with contextlib.suppress(PermissionError):
            os.fchown(fd, like.uid, like.gid)
    os.fchmod(fd, like.mode)  # after fchown, which may clear set-id bits


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_back(dfd: int, name: str) -> str:
    # O_NOFOLLOW: the name must now be the regular file we renamed there, not a link someone put back.
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    with os.fdopen(fd, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def _remove_stale_temps(dfd: int, name: str) -> None:
    """Temps of `name`, of its backups and of the lock file, left by writers that were killed."""
    try:
        names = os.listdir(dfd)
    except OSError:
        return
    for entry in names:
        match = _TEMP.match(entry)
        if not match or _alive(int(match["pid"])):
            continue
        base = match["base"]
        ours = base == name or base == LOCK_FILE[1:] or re.fullmatch(re.escape(name) + r"\.[0-9a-f]{12}\.bak", base)
        if not ours:
            continue
        try:
            if stat.S_ISREG(os.stat(entry, dir_fd=dfd, follow_symlinks=False).st_mode):
                os.unlink(entry, dir_fd=dfd)
        except OSError:
            pass  # best effort: a temp never affects what config.json holds


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except (OverflowError, ValueError):
        return False  # not a pid this system can have
    return True


def _reason(exc: OSError) -> str:
    return _REASONS.get(exc.errno or 0) or exc.strerror or str(exc)


def _env_error(exc: OSError, doing: str, state: str) -> WriteError:
    hint = _HINTS.get(exc.errno or 0)
    return WriteError(f"{doing}: {_reason(exc)}; {state}" + (f" ({hint})" if hint else ""), 2)

"""write_verified and the lock file, on real files and real processes: nothing here is mocked.

Faults are real where this machine allows (read-only directory via chattr +i or a read-only bind mount
when running as root, a full 64 KiB tmpfs, SIGKILL of a writer process at each step); DFLASH_CFG_FAULT
stands in only where the real fault cannot be produced, and is also run for every step on its own.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import ROOT

from dflash_cfg.errors import LockError, WriteError
from dflash_cfg.jsondoc.document import git_blob_sha1
from dflash_cfg.model import Entry, Left, Made, Source
from dflash_cfg.sources.lockfile import lock_path, read_lock
from dflash_cfg.write.lock import record
from dflash_cfg.write.verified import write_verified

OLD = b'{\n  "model_type": "qwen3",\n  "dflash_config": {"mask_token_id": 151643}\n}\n'
NEW = b'{\n  "model_type": "qwen3",\n  "dflash_config": {"mask_token_id": 151669}\n}\n'
COMMIT = "0123456789abcdef0123456789abcdef01234567"
SOURCE = Source("z-lab/Qwen3.6-27B-DFlash", "main", COMMIT)
BEFORE_REPLACE = ("locked", "backup", "temp-written", "fsynced")
AFTER_REPLACE = ("replaced", "dir-fsynced", "verified")
CHILD = Path(__file__).with_name("writer_child.py")
TEMP = re.compile(r"^\.config\.json\..*\.tmp$")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def model(tmp_path: Path, data: bytes = OLD, name: str = "drafter") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    config = folder / "config.json"
    config.write_bytes(data)
    return config


def temps(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".tmp"))


def refused(config: Path, new: bytes, expected: str | None, **kwargs: bool) -> WriteError:
    with pytest.raises(WriteError) as info:
        write_verified(config, new, expected, **kwargs)
    assert "\n" not in str(info.value)
    return info.value


# --- the happy path -------------------------------------------------------------------------------


def test_write_lands_the_new_bytes_provably(tmp_path: Path) -> None:
    config = model(tmp_path)
    config.chmod(0o640)
    written = write_verified(config, NEW, sha(OLD))

    assert config.read_bytes() == NEW and not config.is_symlink()
    assert written.path == str(config.resolve())
    assert written.sha256 == sha(NEW)
    hashed = subprocess.run(
        ["git", "hash-object", "--no-filters", str(config)], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert written.git_blob_sha1 == hashed.stdout.strip() == git_blob_sha1(NEW)
    assert written.backup == str(config.parent.resolve() / f"config.json.{sha(OLD)[:12]}.bak")
    assert Path(written.backup).read_bytes() == OLD
    assert stat.S_IMODE(config.stat().st_mode) == 0o640
    assert stat.S_IMODE(Path(written.backup).stat().st_mode) == 0o640  # a backup is no more readable
    assert written.replaced_link is None
    assert temps(config.parent) == []

    entry = record(config, written, Made(SOURCE, "upstream"), "0.1.0")
    doc = json.loads(lock_path(config).read_text())
    assert doc == {
        "version": 1,
        "files": {
            "config.json": {
                "path": written.path,
                "sha256": sha(NEW),
                "git_blob_sha1": git_blob_sha1(NEW),
                "source": {"repo": SOURCE.repo, "revision": "main", "commit": COMMIT},
                "written_at": entry.written_at,
                "tool_version": "0.1.0",
                "repair": "upstream",
                "left": None,
            }
        },
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", entry.written_at)
    assert read_lock(config) == entry
    assert sorted(os.listdir(config.parent)) == sorted(
        [".dflash-cfg.lock", "config.json", f"config.json.{sha(OLD)[:12]}.bak"]
    )


def test_an_identical_backup_is_not_rewritten(tmp_path: Path) -> None:
    config = model(tmp_path)
    first = write_verified(config, NEW, sha(OLD))
    assert first.backup is not None
    inode = os.stat(first.backup).st_ino
    write_verified(config, OLD, sha(NEW))  # undo: backs up NEW
    again = write_verified(config, NEW, sha(OLD))
    assert again.backup == first.backup and os.stat(first.backup).st_ino == inode
    assert len([n for n in os.listdir(config.parent) if n.endswith(".bak")]) == 2


def test_a_new_file_gets_the_default_mode_and_no_backup(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    old_umask = os.umask(0o027)
    try:
        written = write_verified(config, NEW, None)
    finally:
        os.umask(old_umask)
    assert config.read_bytes() == NEW and written.backup is None
    assert stat.S_IMODE(config.stat().st_mode) == 0o640  # 0o644 & ~0o027

    error = refused(config, OLD, None)  # "must not exist yet", but it does now
    assert error.exit_code == 1 and "appeared since it was read" in str(error)
    assert config.read_bytes() == NEW


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another owner")
def test_root_keeps_the_files_owner(tmp_path: Path) -> None:
    config = model(tmp_path)
    os.chown(config, 1234, 2345)
    written = write_verified(config, NEW, sha(OLD))
    assert written.backup is not None
    for path in (config, Path(written.backup)):
        info = path.stat()
        assert (info.st_uid, info.st_gid) == (1234, 2345)


# --- refusals ---------------------------------------------------------------------------------------


def test_a_file_changed_since_it_was_read_is_left_alone(tmp_path: Path) -> None:
    config = model(tmp_path)
    expected = sha(config.read_bytes())
    theirs = b'{"edited": "by someone else"}\n'
    config.write_bytes(theirs)  # the other writer, between our read and our write

    error = refused(config, NEW, expected)
    assert error.exit_code == 1
    assert str(error) == f"{config.resolve()} changed since it was read (someone else wrote it); nothing written"
    assert config.read_bytes() == theirs
    assert os.listdir(config.parent) == ["config.json"]  # no temp, and no backup either


@contextmanager
def read_only(folder: Path) -> Iterator[str]:
    """Make `folder` unwritable for this process; yields how. Root ignores mode bits, so as root the
    directory is made immutable (chattr +i) or bind-mounted read-only."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield "chmod 0o555"
        finally:
            folder.chmod(0o755)
        return
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0:
        try:
            yield "chattr +i"
        finally:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        return
    bind = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
    if bind.returncode == 0:
        try:
            if subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], capture_output=True).returncode:
                pytest.skip("running as root, and neither chattr +i nor a read-only bind mount is possible here")
            yield "read-only bind mount"
        finally:
            subprocess.run(["umount", str(folder)], check=True)
        return
    pytest.skip("running as root, and neither chattr +i nor a read-only bind mount is possible here")


@pytest.mark.parametrize("backup", [True, False])
def test_an_unwritable_directory_is_an_environment_error(tmp_path: Path, backup: bool) -> None:
    config = model(tmp_path)
    with read_only(config.parent):
        error = refused(config, NEW, sha(OLD), backup=backup)
    assert error.exit_code == 2
    assert re.search(r"permission denied|read-only file system", str(error))
    assert f"{config.resolve()} is unchanged" in str(error)
    assert config.read_bytes() == OLD
    assert os.listdir(config.parent) == ["config.json"]


@contextmanager
def small_filesystem(tmp_path: Path) -> Iterator[Path | None]:
    """A 64 KiB tmpfs mounted for the test, or None where mounting is not allowed."""
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount_point)], capture_output=True)
    if mounted.returncode != 0:
        yield None
        return
    try:
        yield mount_point
    finally:
        if subprocess.run(["umount", str(mount_point)], capture_output=True).returncode:
            subprocess.run(["umount", "-l", str(mount_point)], check=True)


def fill(folder: Path) -> Path:
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        while True:
            os.write(fd, b"\0" * 4096)  # unbuffered: the ENOSPC comes here, not from a later close
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


@pytest.mark.parametrize("backup", [True, False])
def test_a_full_disk_leaves_the_original_intact(tmp_path: Path, backup: bool) -> None:
    with small_filesystem(tmp_path) as tiny:
        if tiny is None:
            pytest.skip(
                "cannot mount a tmpfs here (needs root/CAP_SYS_ADMIN); the injected ENOSPC tests "
                "below cover the same paths"
            )
        config = model(tiny)
        filler = fill(tiny)
        error = refused(config, NEW, sha(OLD), backup=backup)
        assert error.exit_code == 2
        assert "no space left on device" in str(error) and f"{config.resolve()} is unchanged" in str(error)
        assert config.read_bytes() == OLD
        assert os.listdir(config.parent) == ["config.json"]
        filler.unlink()  # with space again, the same write goes through
        assert write_verified(config, NEW, sha(OLD), backup=backup).sha256 == sha(NEW)
        assert config.read_bytes() == NEW


@pytest.mark.parametrize("step", [*BEFORE_REPLACE, *AFTER_REPLACE])
def test_an_injected_enospc_at_each_step_says_what_is_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    config = model(tmp_path)
    monkeypatch.setenv("DFLASH_CFG_FAULT", f"{step}:enospc")
    error = refused(config, NEW, sha(OLD))
    assert error.exit_code == 2 and "no space left on device" in str(error)
    assert temps(config.parent) == []
    if step in AFTER_REPLACE[1:]:
        # The rename happened: the message must not claim the file is unchanged.
        assert config.read_bytes() == NEW and "unchanged" not in str(error)
    else:  # a rename that fails has not happened, like every step before it
        assert config.read_bytes() == OLD
        said = "; nothing written" if step == "locked" else f"; {config.resolve()} is unchanged"
        assert said in str(error)


# --- concurrent writers -------------------------------------------------------------------------------


def test_a_second_writer_fails_fast(tmp_path: Path) -> None:
    config = model(tmp_path)
    holder = os.open(config.parent, os.O_RDONLY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what another dflash-cfg fix holds
        error = refused(config, NEW, sha(OLD))  # returns at all while the lock is held: it did not wait
    finally:
        os.close(holder)
    assert error.exit_code == 2
    assert str(error) == f"another dflash-cfg fix is writing {config.parent.resolve()}; nothing written"
    assert os.listdir(config.parent) == ["config.json"]
    assert write_verified(config, NEW, sha(OLD)).sha256 == sha(NEW)  # free again once released


def spawn(config: Path, new: bytes, expected: str, fault: str) -> subprocess.Popen[bytes]:
    new_file = config.parent.parent / "new-bytes"
    new_file.write_bytes(new)
    env = {**os.environ, "DFLASH_CFG_FAULT": fault}
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(config), str(new_file), expected],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_for(flag: Path, child: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while not flag.exists():
        if child.poll() is not None:
            _, err = child.communicate()
            pytest.fail(f"writer exited with {child.returncode} before pausing: {err.decode()}")
        if time.monotonic() > deadline:
            child.kill()
            child.wait()
            pytest.fail("writer never reached its pause")
        time.sleep(0.01)


def kill(child: subprocess.Popen[bytes]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    child.communicate()  # reaped: a zombie would still count as a live pid for the stale-temp sweep
    assert child.returncode == -signal.SIGKILL


@pytest.mark.slow
def test_a_writer_in_another_process_holds_the_directory(tmp_path: Path) -> None:
    config = model(tmp_path)
    flag = tmp_path / "flag"
    child = spawn(config, NEW, sha(OLD), f"locked:pause:{flag}")
    try:
        wait_for(flag, child)
        error = refused(config, b"{}\n", sha(OLD))
        assert error.exit_code == 2 and "another dflash-cfg fix is writing" in str(error)
    finally:
        kill(child)
    assert config.read_bytes() == OLD
    assert write_verified(config, NEW, sha(OLD)).sha256 == sha(NEW)  # the kernel dropped the dead writer's lock


# --- symlinks and the Hugging Face cache ---------------------------------------------------------------


def fake_cache(tmp_path: Path) -> tuple[Path, Path]:
    """hub/models--o--n with one blob and a snapshot linking to it, as huggingface_hub lays it out."""
    repo = tmp_path / "hub" / "models--o--n"
    blob = repo / "blobs" / git_blob_sha1(OLD)
    blob.parent.mkdir(parents=True)
    blob.write_bytes(OLD)
    snapshot = repo / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").symlink_to(Path("..", "..", "blobs", blob.name))
    return blob, snapshot


def test_a_link_into_a_cache_blob_is_replaced_not_written_through(tmp_path: Path) -> None:
    blob, snapshot = fake_cache(tmp_path)
    blob.chmod(0o444)
    config = tmp_path / "drafter" / "config.json"
    config.parent.mkdir()
    config.symlink_to(blob)

    written = write_verified(config, NEW, sha(OLD))
    assert not config.is_symlink() and config.read_bytes() == NEW
    assert written.replaced_link == str(blob.resolve())
    assert stat.S_IMODE(config.stat().st_mode) == 0o444  # the mode the user saw through the link
    assert blob.read_bytes() == OLD and (snapshot / "config.json").read_bytes() == OLD
    assert written.backup is not None and Path(written.backup).parent == config.parent.resolve()


def test_a_cache_snapshot_is_refused(tmp_path: Path) -> None:
    blob, snapshot = fake_cache(tmp_path)
    linked_model = tmp_path / "linked"
    linked_model.symlink_to(snapshot, target_is_directory=True)
    for config in (snapshot / "config.json", linked_model / "config.json"):
        error = refused(config, NEW, sha(OLD))
        assert error.exit_code == 2
        assert "cache snapshot of o/n@0123456789ab" in str(error)
        assert "copy the model out of the cache (hf download o/n --local-dir DIR) and fix the copy" in str(error)
    assert (snapshot / "config.json").is_symlink() and blob.read_bytes() == OLD
    assert sorted(os.listdir(snapshot)) == ["config.json"]


# --- killed at each step ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("step", [*BEFORE_REPLACE, *AFTER_REPLACE])
def test_a_writer_killed_at_any_step_leaves_old_or_new_bytes(tmp_path: Path, step: str) -> None:
    config = model(tmp_path)
    flag = tmp_path / "flag"
    child = spawn(config, NEW, sha(OLD), f"{step}:pause:{flag}")
    try:
        wait_for(flag, child)
    finally:
        kill(child)

    assert config.read_bytes() == (OLD if step in BEFORE_REPLACE else NEW)
    assert not config.is_symlink()
    bak = f"config.json.{sha(OLD)[:12]}.bak"
    for name in os.listdir(config.parent):
        assert name in ("config.json", bak) or TEMP.match(name), name
    if bak in os.listdir(config.parent):
        assert (config.parent / bak).read_bytes() == OLD  # never a partial backup either
    if step != "locked":
        assert (config.parent / bak).read_bytes() == OLD
    if step in ("temp-written", "fsynced"):
        assert len(temps(config.parent)) == 1  # SIGKILL runs no cleanup: the next write must

    current = config.read_bytes()
    write_verified(config, b'{"third": true}\n', sha(current))
    assert config.read_bytes() == b'{"third": true}\n'
    assert temps(config.parent) == []


def test_a_write_that_ignores_the_lock_mid_fix_is_not_overwritten(tmp_path: Path) -> None:
    config = model(tmp_path)
    flag = tmp_path / "flag"
    child = spawn(config, NEW, sha(OLD), f"fsynced:pause:{flag}")
    try:
        wait_for(flag, child)
        theirs = b'{"saved": "by an editor"}\n'
        config.write_bytes(theirs)  # an editor knows nothing of our lock
        flag.unlink()  # let the writer go on to its replace
        _, err = child.communicate(timeout=30)
    finally:
        if child.returncode is None:
            kill(child)
    assert child.returncode == 1, err
    assert b"changed while it was being fixed" in err
    assert config.read_bytes() == theirs
    assert temps(config.parent) == []


@pytest.mark.slow
def test_the_sweep_keeps_temps_of_live_processes_and_of_other_files(tmp_path: Path) -> None:
    config = model(tmp_path)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    done = subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert done.returncode == 0
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        names = {
            f".config.json.{sleeper.pid}.deadbeef.tmp": True,  # a live writer ignoring our lock: not ours to delete
            f".config.json.{dead.pid}.deadbeef.tmp": False,
            f".config.json.{sha(OLD)[:12]}.bak.{dead.pid}.0badf00d.tmp": False,
            f".dflash-cfg.lock.{dead.pid}.0badf00d.tmp": False,
            f".tokenizer.json.{dead.pid}.deadbeef.tmp": True,  # another tool's file
        }
        for name in names:
            (config.parent / name).write_bytes(b"partial")
        write_verified(config, NEW, sha(OLD))
        assert sorted(temps(config.parent)) == sorted(n for n, kept in names.items() if kept)
    finally:
        sleeper.kill()
        sleeper.wait()


# --- the lock file ------------------------------------------------------------------------------------


def test_lock_round_trip_with_and_without_a_source(tmp_path: Path) -> None:
    config = model(tmp_path)
    assert read_lock(config) is None
    first = record(config, write_verified(config, NEW, sha(OLD)), Made(SOURCE, "upstream"), "0.1.0")
    assert read_lock(config) == first and first.source == SOURCE
    second = record(config, write_verified(config, OLD, sha(NEW)), Made(None, "safe-fixes", Left(1, 2)), "0.2.0")
    assert (
        read_lock(config)
        == second
        == Entry(
            path=str(config.resolve()),
            sha256=sha(OLD),
            git_blob_sha1=git_blob_sha1(OLD),
            source=None,
            written_at=second.written_at,
            tool_version="0.2.0",
            repair="safe-fixes",
            left=Left(errors=1, warnings=2),
        )
    )
    assert json.loads(lock_path(config).read_text())["files"]["config.json"]["source"] is None
    assert read_lock(config.parent / "generation_config.json") is None  # no entry for that file
    assert temps(config.parent) == []


def test_other_entries_of_the_lock_are_kept(tmp_path: Path) -> None:
    config = model(tmp_path)
    other = {
        "path": "/elsewhere/generation_config.json",
        "sha256": "a" * 64,
        "git_blob_sha1": "b" * 40,
        "source": None,
        "written_at": "2025-01-01T00:00:00Z",
        "tool_version": "0.0.9",
        "note": "kept as is",
    }
    lock_path(config).write_text(json.dumps({"version": 1, "files": {"generation_config.json": other}}))
    entry = record(config, write_verified(config, NEW, sha(OLD)), Made(SOURCE, "upstream"), "0.1.0")
    files = json.loads(lock_path(config).read_text())["files"]
    assert files["generation_config.json"] == other
    assert read_lock(config) == entry


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"\xff\xfe{}",
        b"[]",
        b'{"files": {}}',
        b'{"version": 2, "files": {}}',
        b'{"version": true, "files": {}}',
        b'{"version": 1, "files": []}',
        b'{"version": 1, "files": {"config.json": []}}',
        b'{"version": 1, "files": {"config.json": {"path": 1}}}',
        b'{"version": 1, "files": {"config.json": {"path": "/x", "sha256": "nothex", "git_blob_sha1": "'
        + b"b" * 40
        + b'", "source": null, "written_at": "t", "tool_version": "v"}}}',
        b'{"version": 1, "files": {"config.json": {"path": "/x", "sha256": "'
        + b"a" * 64
        + b'", "git_blob_sha1": "'
        + b"b" * 40
        + b'", "source": {"repo": "o/n"}, "written_at": "t", "tool_version": "v"}}}',
    ],
)
def test_a_corrupt_lock_is_one_line_error(tmp_path: Path, content: bytes) -> None:
    config = model(tmp_path)
    lock_path(config).write_bytes(content)
    with pytest.raises(LockError) as info:
        read_lock(config)
    assert "\n" not in str(info.value) and str(lock_path(config)) in str(info.value)

    written = write_verified(config, NEW, sha(OLD))
    if b'"config.json"' in content:  # only this file's own entry is bad: the new record replaces it
        entry = record(config, written, Made(SOURCE, "upstream"), "0.1.0")
        assert read_lock(config) == entry
    else:
        with pytest.raises(LockError):
            record(config, written, Made(SOURCE, "upstream"), "0.1.0")  # never silently drops what the lock held
        assert lock_path(config).read_bytes() == content
    assert temps(config.parent) == []


def test_a_lock_is_not_recorded_for_bytes_that_are_gone(tmp_path: Path) -> None:
    config = model(tmp_path)
    written = write_verified(config, NEW, sha(OLD))
    config.write_bytes(b'{"edited": "after the fix"}\n')
    with pytest.raises(WriteError) as info:
        record(config, written, Made(SOURCE, "upstream"), "0.1.0")
    assert info.value.exit_code == 1 and "lock not recorded" in str(info.value)
    assert not lock_path(config).exists()


@pytest.mark.parametrize("link", ["dangling", "loop"])
def test_a_lock_gone_bad_after_the_write_says_the_write_landed(tmp_path: Path, link: str) -> None:
    # fix refuses such a lock before writing; one made between that check and the record (another process)
    # fails the record only, and the line must say what is on disk: the new bytes, no lock entry.
    config = model(tmp_path)
    written = write_verified(config, NEW, sha(OLD))
    lock_path(config).symlink_to("gone" if link == "dangling" else lock_path(config).name)
    with pytest.raises(WriteError) as info:
        record(config, written, Made(SOURCE, "upstream"), "0.1.0")
    message = str(info.value)
    assert "nothing written" not in message and "\n" not in message, message
    assert f"{config.resolve()} holds the new bytes" in message and "lock not recorded" in message, message
    assert config.read_bytes() == NEW and lock_path(config).is_symlink() and temps(config.parent) == []

"""Integrity rules: is this still the file dflash-cfg wrote, or the one the user expects?

In the incident a rewrite "from the Hub" never landed; these rules make a stale or replaced file
visible wherever `check` runs (the serving host, CI, a pre-commit hook). Checks of dflash-cfg's own, about
the file on disk and its history: no engine reads a lock or a checksum, so they name no engine read.
"""

from __future__ import annotations

from collections.abc import Iterator

from dflash_cfg.lint.rules.base import Context, rule
from dflash_cfg.model import Integrity, Problem, Severity


def _integrity(ctx: Context) -> Integrity:
    assert ctx.integrity is not None
    return ctx.integrity


@rule("DF701", "lock-mismatch", Severity.ERROR, "integrity", own_check=True)
def lock_mismatch(ctx: Context) -> Iterator[Problem]:
    """The file differs from the one dflash-cfg last wrote here (recorded in ``.dflash-cfg.lock``).

    Something replaced it after ``dflash-cfg fix``: an old copy synced over it, a download script run
    again, an edit on the wrong host. ``dflash-cfg verify`` gives the details; ``fix`` writes it again.
    A lock file that cannot be read is reported here too. A check of dflash-cfg's own: no engine reads the
    lock.

    Fail: ``fix --from-hub`` wrote sha256 ``ab12…``; the file now hashes to ``9f3c…``
    Pass: the file's sha256 equals the recorded one (or there is no lock file)
    """
    integrity = _integrity(ctx)
    if integrity.lock_error is not None:
        yield Problem(pointer="", message=f".dflash-cfg.lock cannot be used: {integrity.lock_error}")
        return
    entry = integrity.lock
    if entry is None or entry.sha256 == integrity.sha256:
        return
    source = f" from {entry.source.repo}@{entry.source.commit[:12]}" if entry.source else ""
    yield Problem(
        pointer="",
        message=f"this is not the file dflash-cfg wrote at {entry.written_at}{source}: sha256 "
        f"{integrity.sha256[:12]}, recorded {entry.sha256[:12]} (.dflash-cfg.lock); something replaced it",
    )


@rule("DF702", "sha256-mismatch", Severity.ERROR, "integrity", own_check=True)
def sha256_mismatch(ctx: Context) -> Iterator[Problem]:
    """The file's sha256 is not the one given with ``--expect-sha256``.

    Use it on each serving host with the sha256 that ``fix`` printed on the host that repaired the
    file, before launching the engine. A check of dflash-cfg's own: no engine checks a checksum.

    Fail: ``--expect-sha256 ab12…`` and the file hashes to ``9f3c…``
    Pass: the same sha256
    """
    integrity = _integrity(ctx)
    expected = integrity.expect_sha256
    if expected is not None and expected.lower() != integrity.sha256:
        yield Problem(
            pointer="", message=f"sha256 is {integrity.sha256}, expected {expected.lower()} (--expect-sha256)"
        )


@rule("DF703", "cache-blob-link", Severity.WARNING, "integrity", own_check=True)
def cache_blob_link(ctx: Context) -> Iterator[Problem]:
    """config.json is a symlink into a Hugging Face cache ``blobs/`` file (outside the cache's own
    snapshot directories).

    The file the engine reads is then whatever that blob holds, shared by every snapshot that links
    to it, and an edit "in place" writes into the cache. ``dflash-cfg fix`` never writes through such
    a link: it replaces the link with a regular file. A check of dflash-cfg's own, about where the file
    lives rather than what an engine reads from it.

    Fail: ``/models/drafter/config.json -> ~/.cache/huggingface/hub/models--o--n/blobs/5f3a…``
    Pass: a regular file, or a snapshot inside the cache itself
    """
    integrity = _integrity(ctx)
    if integrity.link_target is not None and integrity.link_into_blobs and not integrity.in_snapshot:
        yield Problem(
            pointer="",
            message=f"config.json is a symlink into a Hugging Face cache blob ({integrity.link_target}): "
            "edits go into the cache, and the engine reads whatever the blob holds",
        )


@rule("DF704", "snapshot-edited", Severity.ERROR, "integrity", own_check=True)
def snapshot_edited(ctx: Context) -> Iterator[Problem]:
    """A config.json in a Hugging Face cache snapshot no longer hashes to the blob it is (edited in place).

    A file under ``models--ORG--NAME/snapshots/COMMIT/`` *is* that repo's file at that commit: huggingface_hub
    names each blob after its git blob id, so the bytes prove it offline. An edit through the snapshot's
    symlink writes into the shared blob: every engine that loads that commit from this cache reads the edited
    file, and nothing downloads it again (``hf cache verify`` reports it). Delete the snapshot's file (or the
    blob) and download it again, or copy the drafter out of the cache before changing it. A check of
    dflash-cfg's own: no engine verifies a cached file.

    Fail: ``snapshots/28cadb7…/config.json -> ../../blobs/02ded67…`` whose bytes hash to ``9f3c…``
    Pass: a snapshot file whose git blob id is its blob's name
    """
    edited = _integrity(ctx).edited_snapshot
    if edited is not None:
        repo, commit, blob = edited
        yield Problem(
            pointer="",
            message=f"this is {repo}@{commit[:12]} from the Hugging "
            "Face cache, edited in place: its bytes no longer hash "
            f"to the blob they are ({blob[:12]}); every engine that loads that commit from this cache reads the "
            f"edited file. Delete it and download it again (`hf download {repo} config.json --revision {commit}`)",
        )


RULES = (lock_mismatch, sha256_mismatch, cache_blob_link, snapshot_edited)

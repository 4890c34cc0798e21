"""S3 writes and reads through a fault-injecting proxy in front of moto (tests/faultproxy.py): a lost
answer, an endpoint that dies after a write, a directory marker where the lock object goes, an endpoint
that ignores Range or trickles. The outcome a user is told must be the one the store holds."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from faultproxy import FaultProxy
from helpers import REAL, Result
from s3server import S3Server

Run = Callable[..., Result]
BOM = b"\xef\xbb\xbf"
OLD = BOM + REAL.read_bytes()  # DF003: a BOM, which the safe fix strips


@pytest.fixture
def proxy(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultProxy]:
    server = FaultProxy(s3.port)
    server.start()
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", server.endpoint)
    yield server
    server.stop()


def drafter(s3: S3Server, data: bytes = OLD) -> tuple[str, str]:
    bucket = s3.new_bucket()
    s3.put(bucket, "team/drafter/config.json", data)
    return bucket, f"s3://{bucket}/team/drafter"


def test_a_lost_answer_to_an_applied_put_is_settled_by_reading(dflash: Run, s3: S3Server, proxy: FaultProxy) -> None:
    bucket, url = drafter(s3)
    proxy.faults, proxy.only_key = {"drop-put"}, "team/drafter/config.json"
    fixed = dflash("fix", url, "--yes")
    assert proxy.puts_applied >= 1
    assert fixed.code == 0, fixed.err
    new = s3.get(bucket, "team/drafter/config.json")
    assert new != OLD and not new.startswith(BOM)
    lock = json.loads(s3.get(bucket, "team/drafter/.dflash-cfg.lock"))
    assert lock["files"]["config.json"]["sha256"] == hashlib.sha256(new).hexdigest()
    proxy.reset()
    assert dflash("verify", url).code == 0


def test_an_endpoint_that_dies_after_the_put_never_says_unchanged(dflash: Run, s3: S3Server, proxy: FaultProxy) -> None:
    bucket, url = drafter(s3)
    proxy.faults, proxy.only_key = {"die-after-put"}, "team/drafter/config.json"
    fixed = dflash("fix", url, "--yes", "--format", "json")
    assert not s3.get(bucket, "team/drafter/config.json").startswith(BOM)  # it was applied
    assert fixed.code == 2, fixed.err
    assert "unchanged" not in fixed.err and "outcome is unknown" in fixed.err and "dflash-cfg verify" in fixed.err
    assert fixed.err.count("\n") == 1, fixed.err
    json.loads(fixed.out)


def test_a_failed_put_that_was_not_applied_is_said_unchanged_after_reading(
    dflash: Run, s3: S3Server, proxy: FaultProxy
) -> None:
    bucket, url = drafter(s3)
    proxy.dead = False
    proxy.faults, proxy.only_key = {"refuse-put"}, "team/drafter/config.json"
    fixed = dflash("fix", url, "--yes", "--no-backup")
    assert fixed.code == 2, fixed.err
    assert "unchanged (read after the failure)" in fixed.err, fixed.err
    assert s3.get(bucket, "team/drafter/config.json") == OLD


def test_a_directory_marker_where_the_lock_goes_is_refused_before_writing(
    dflash: Run, s3: S3Server, proxy: FaultProxy
) -> None:
    bucket, url = drafter(s3)
    s3.put(bucket, "team/drafter/.dflash-cfg.lock/", b"")
    fixed = dflash("fix", url, "--yes", "--format", "json")
    assert fixed.code == 2 and ".dflash-cfg.lock is a directory" in fixed.err, fixed.err
    assert s3.get(bucket, "team/drafter/config.json") == OLD  # nothing written
    assert s3.keys(bucket) == ["team/drafter/.dflash-cfg.lock/", "team/drafter/config.json"]


def test_an_answer_larger_than_the_range_is_refused(
    dflash: Run, s3: S3Server, proxy: FaultProxy, tmp_path: Path
) -> None:
    from checkpoints import save, small_config, small_shapes

    folder = tmp_path / "drafter"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(small_config()))
    save(folder / "model.safetensors", small_shapes())
    bucket = s3.new_bucket()
    s3.upload_dir(bucket, "team/drafter", folder)
    url = f"s3://{bucket}/team/drafter"
    # The shard's header read asks for 8 bytes: an endpoint that ignores Range answers the whole shard.
    proxy.faults, proxy.only_key = {"ignore-range"}, "model.safetensors"
    result = dflash("check", url, "--format", "json")
    doc = result.json()
    messages = [f["message"] for file in doc["files"] for f in file["findings"]] + list(doc.get("errors", []))
    assert any("ignores Range" in m for m in messages), messages
    assert "internal error" not in result.err
    # An endless answer: read no further than the range (and the config's size limit), never to the end.
    import resource

    proxy.endless = True
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    endless = dflash("check", url, "--format", "json")
    assert any("ignores Range" in f["message"] for file in endless.json()["files"] for f in file["findings"])
    proxy.only_key = "config.json"
    assert dflash("check", url).code in (1, 2)
    # Bounded by the config size limit (read once, joined once), whatever the server sends.
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024 < 400  # MB


def test_a_trickling_endpoint_is_held_to_the_deadline(
    dflash: Run, s3: S3Server, proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    _, url = drafter(s3)
    proxy.faults, proxy.only_key, proxy.trickle_delay = {"trickle"}, "team/drafter/config.json", 0.5
    monkeypatch.setenv("DFLASH_CFG_REMOTE_DEADLINE", "2")
    started = time.monotonic()
    result = dflash("check", url)
    assert time.monotonic() - started < 30
    assert result.code == 2 and "DFLASH_CFG_REMOTE_DEADLINE" in result.err, result.err
    assert result.err.count("\n") == 1
    monkeypatch.setenv("DFLASH_CFG_REMOTE_DEADLINE", "soon")
    bad = dflash("check", url)
    assert bad.code == 2 and "DFLASH_CFG_REMOTE_DEADLINE='soon'" in bad.err

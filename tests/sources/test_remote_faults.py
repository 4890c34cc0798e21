"""S3 writes through a fault-injecting proxy in front of moto (tests/faultproxy.py): a lost answer, an endpoint
that dies after a write, a directory marker where the lock object goes. The outcome a user is told must be the one
the store holds. The read faults of every store (Range ignored, a trickle): test_store_faults.py."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

import pytest
from faultproxy import FaultProxy
from helpers import REAL, Result
from s3server import S3Server

Run = Callable[..., Result]
BOM = b"\xef\xbb\xbf"
OLD = BOM + REAL.read_bytes()  # DF003: a BOM, which the safe fix strips


# The proxy (conftest's) in front of S3 alone: these are the writes, which only S3 takes.
pytestmark = pytest.mark.parametrize("store", ["s3"], indirect=True)


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

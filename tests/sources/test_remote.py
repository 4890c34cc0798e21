"""Model dirs on S3, against a real S3 API server on loopback (moto's standalone server, with request signatures
checked): fix and verify through s3:// paths, the compare-and-swap write under a race, wrong credentials. Without a
server: the one-line error of a missing extra. What holds on every store (check, where, a target, the faults as one
line) is test_stores.py's, run on S3 too."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from checkpoints import drafter_dir
from helpers import FIXTURES, REAL, ROOT, Result, upload
from s3server import S3Server

from dflash_cfg.errors import UsageError
from dflash_cfg.sources import remote

Run = Callable[..., Result]
BOM = b"\xef\xbb\xbf"


def test_the_server_refuses_a_stale_conditional_put(s3: S3Server) -> None:
    """What the compare-and-swap rests on: the server honours If-Match and If-None-Match on a put."""
    from botocore.exceptions import ClientError

    bucket = s3.new_bucket()
    client = s3.client()
    first = client.put_object(Bucket=bucket, Key="k", Body=b"one")["ETag"]
    client.put_object(Bucket=bucket, Key="k", Body=b"two", IfMatch=first)
    with pytest.raises(ClientError) as stale:
        client.put_object(Bucket=bucket, Key="k", Body=b"three", IfMatch=first)
    assert stale.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    with pytest.raises(ClientError) as exists:
        client.put_object(Bucket=bucket, Key="k", Body=b"four", IfNoneMatch="*")
    assert exists.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert s3.get(bucket, "k") == b"two"


def test_fix_verify_round_trip(dflash: Run, s3: S3Server, tmp_path: Path) -> None:
    old = BOM + REAL.read_bytes()  # DF003: a BOM, which the safe fix strips
    # No weights: the small test shard does not fit the real config (DF5xx errors), and fix exits as check would.
    bucket, url = upload(s3, drafter_dir(tmp_path, old, weights=False))
    fixed = dflash("fix", url, "--yes")
    assert fixed.code == 0, fixed.err
    new = s3.get(bucket, "team/drafter/config.json")
    assert not new.startswith(BOM)
    sha = hashlib.sha256(new).hexdigest()
    assert f"wrote {url}/config.json" in fixed.out and sha in fixed.out
    assert s3.get(bucket, f"team/drafter/config.json.{hashlib.sha256(old).hexdigest()[:12]}.bak") == old
    lock = json.loads(s3.get(bucket, "team/drafter/.dflash-cfg.lock"))
    assert lock["files"]["config.json"]["sha256"] == sha
    assert lock["files"]["config.json"]["path"] == f"{url}/config.json"

    ok = dflash("verify", url)
    assert ok.code == 0, ok.err
    assert sha in ok.out
    check = dflash("check", url, "--format", "json")
    assert "DF701" not in {f["rule"] for f in check.json()["files"][0]["findings"]}
    assert dflash("fix", url, "--yes").out.startswith(f"{url}/config.json: nothing to change")


def test_an_object_replaced_behind_verifys_back(dflash: Run, s3: S3Server, tmp_path: Path) -> None:
    bucket, url = upload(s3, drafter_dir(tmp_path, BOM + REAL.read_bytes(), weights=False))
    assert dflash("fix", url, "--yes").code == 0
    s3.put(bucket, "team/drafter/config.json", BOM + REAL.read_bytes())  # a stale upload from another host
    result = dflash("verify", url)
    assert result.code == 1
    assert "MISMATCH" in result.err
    check = dflash("check", url, "--format", "json")
    assert check.code == 1
    assert "DF701" in {f["rule"] for f in check.json()["files"][0]["findings"]}


def _child_fix(url: str, flag: Path) -> subprocess.Popen[str]:
    """A `fix` in its own process that stops after reading the object (before its conditional put)."""
    env = {**os.environ, "DFLASH_CFG_FAULT": f"read:pause:{flag}", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "dflash_cfg", "fix", url, "--yes"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(flag: Path, child: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not flag.exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the child fix never reached its read"
        time.sleep(0.02)


def test_two_fixers_racing_on_one_object(dflash: Run, s3: S3Server, tmp_path: Path) -> None:
    """Both read the same object; the second to put finds it replaced: exactly one write lands."""
    old = BOM + REAL.read_bytes()
    bucket, url = upload(s3, drafter_dir(tmp_path, old, weights=False))
    flag = tmp_path / "paused"
    slow = _child_fix(url, flag)
    _wait_for(flag, slow)  # the slow fixer has read the object and its ETag
    fast = dflash("fix", url, "--yes")
    assert fast.code == 0, fast.err
    won = s3.get(bucket, "team/drafter/config.json")
    lock_before = s3.get(bucket, "team/drafter/.dflash-cfg.lock")
    flag.unlink()  # let the slow fixer put, If-Match the ETag it read
    out, err = slow.communicate(timeout=60)
    assert slow.returncode == 1, (out, err)
    assert "changed since it was read" in err and "nothing written" in err
    assert len(err.strip().splitlines()) == 1
    assert s3.get(bucket, "team/drafter/config.json") == won
    assert s3.get(bucket, "team/drafter/.dflash-cfg.lock") == lock_before
    assert dflash("verify", url).code == 0


def test_an_upload_between_plan_and_write_is_not_overwritten(dflash: Run, s3: S3Server, tmp_path: Path) -> None:
    bucket, url = upload(s3, drafter_dir(tmp_path, BOM + REAL.read_bytes(), weights=False))
    flag = tmp_path / "paused"
    slow = _child_fix(url, flag)
    _wait_for(flag, slow)
    theirs = REAL.read_bytes().replace(b'"block_size"', b'"block_size" ', 1)
    s3.put(bucket, "team/drafter/config.json", theirs)  # someone else's upload, not through dflash-cfg
    flag.unlink()
    _, err = slow.communicate(timeout=60)
    assert slow.returncode == 1 and "changed since it was read" in err
    assert s3.get(bucket, "team/drafter/config.json") == theirs
    assert "team/drafter/.dflash-cfg.lock" not in s3.keys(bucket)


def test_wrong_credentials_are_refused_without_printing_them(
    dflash: Run, s3: S3Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _, url = upload(s3, drafter_dir(tmp_path))
    secret = "wrong-secret-Zq8vN2kP4tX7wB1mR5yH"
    for key_id in (s3.key_id, "AKIAEXAMPLEUNKNOWN01"):
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", key_id)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
        for command in ("check", "fix", "verify"):
            result = dflash(command, url, *(["--yes"] if command == "fix" else []))
            assert result.code == 2, (command, result)
            assert "refused the credentials" in result.err, result.err
            assert len(result.err.strip().splitlines()) == 1
            assert secret not in result.out + result.err


def test_a_missing_extra_is_one_line_naming_it(dflash: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "s3fs", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "gcsfs", None)
    for url, extra in (("s3://bucket/model", "s3"), ("gs://bucket/model", "gcs")):
        result = dflash("check", url)
        assert result.code == 2
        assert f"pip install 'dflash-cfg[{extra}]'" in result.err
        assert len(result.err.strip().splitlines()) == 1


def test_fix_from_hub_on_s3_then_the_lock_names_the_upstream(
    dflash: Run, s3: S3Server, hub: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The incident's repair, on the copy the fleet serves: upstream's bytes put on S3, and the lock object
    records where they came from, so a later check compares with it without being told."""
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    repo = "z-lab/Qwen3.6-27B-DFlash"
    incident = (FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json").read_bytes()
    upstream = (FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json").read_bytes()
    bucket, url = upload(s3, drafter_dir(tmp_path, incident, weights=False))
    diff = dflash("diff", url, "--from-hub", repo)
    assert diff.code == 1 and "248064" in diff.out and "248070" in diff.out, diff.err
    fixed = dflash("fix", url, "--from-hub", repo, "--yes")
    assert fixed.code == 0, fixed.err
    assert s3.get(bucket, "team/drafter/config.json") == upstream
    lock = json.loads(s3.get(bucket, "team/drafter/.dflash-cfg.lock"))
    assert lock["files"]["config.json"]["source"]["repo"] == repo
    check = dflash("check", url, "--from-hub", "--format", "json")
    assert check.code == 0, check.err
    assert "DF603" in {f["rule"] for f in check.json()["files"][0]["findings"]}


def test_an_empty_or_huge_config_object(dflash: Run, s3: S3Server, tmp_path: Path) -> None:
    """Read as a local file is: an empty object is invalid JSON; an oversized one is parsed from its first
    limit + 1 bytes (one ranged GET) and hashed whole once (objects past 64 MiB are refused, not hashed)."""
    from dflash_cfg.jsondoc.document import MAX_BYTES

    bucket = s3.new_bucket()
    s3.put(bucket, "empty/config.json", b"")
    huge_bytes = b'{"pad": "' + b"x" * (MAX_BYTES + 1024 * 1024) + b'"}'
    s3.put(bucket, "huge/config.json", huge_bytes)
    empty = dflash("check", f"s3://{bucket}/empty", "--format", "json")
    assert empty.code == 1 and empty.json()["files"][0]["findings"][0]["rule"] == "DF001", empty.err
    before = remote.bytes_received()
    huge = dflash("check", f"s3://{bucket}/huge", "--format", "json")
    assert huge.code == 1, huge.err
    assert remote.bytes_received() - before == MAX_BYTES + 1 + len(huge_bytes)
    assert huge.json()["files"][0]["sha256"] is None  # as for a local file past the limit


def test_urls_parse_and_compose() -> None:
    url = remote.parse("s3://models/fleet/drafter/")
    assert (url.scheme, url.path, str(url)) == ("s3", "models/fleet/drafter", "s3://models/fleet/drafter")
    assert str(url / "config.json") == "s3://models/fleet/drafter/config.json"
    assert (url / "config.json").parent == url and (url / "config.json").name == "config.json"
    assert str(remote.parse("gcs://b/m")) == "gs://b/m" and remote.parse("gs://b/m").scheme == "gcs"
    hf = remote.parse("hf://org/repo@v1.0/sub/config.json")
    assert hf.hub_repo == ("org/repo", "v1.0", "sub/config.json")
    assert remote.hub_commit(hf) is None
    pinned = remote.parse(f"hf://org/repo@{'a' * 40}")
    assert remote.hub_commit(pinned) == ("org/repo", "a" * 40)
    assert remote.pin(pinned) == pinned  # a commit needs no request
    for bad in ("s3://", "s3://b/../etc", "hf://org", "ftp://x/y"):
        with pytest.raises(UsageError):
            remote.parse(bad)
    assert not remote.is_url("models/s3:/x") and not remote.is_url("/abs/path") and remote.is_url("S3://b/k")


def test_failures_are_explained_without_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    from botocore.exceptions import ClientError, EndpointConnectionError

    secret = "Zq8vN2kP4tX7wB1mR5yHsecret"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://user:pass@127.0.0.1:9")
    url = remote.parse("s3://b/m")

    def client_error(code: str, status: int) -> ClientError:
        return ClientError(
            {"Error": {"Code": code, "Message": f"echo {secret}"}, "ResponseMetadata": {"HTTPStatusCode": status}},
            "GetObject",
        )

    cases = {
        "refused the credentials": client_error("SignatureDoesNotMatch", 403),
        "access denied": client_error("AccessDenied", 403),
        "answered SlowDown (HTTP 503)": client_error("SlowDown", 503),
        "is unreachable": EndpointConnectionError(endpoint_url="http://127.0.0.1:9"),
    }
    for said, exc in cases.items():
        wrapped = OSError("translated")
        wrapped.__cause__ = exc
        text = remote.explain(wrapped, url)
        assert said in text and secret not in text and "pass" not in text, text


def test_dry_run_and_no_backup_no_lock_on_s3(dflash: Run, s3: S3Server, tmp_path: Path) -> None:
    old = BOM + REAL.read_bytes()
    bucket, url = upload(s3, drafter_dir(tmp_path, old, weights=False))
    dry = dflash("fix", url, "--dry-run")
    assert dry.code == 1 and "-\ufeff{" in dry.out
    assert s3.get(bucket, "team/drafter/config.json") == old
    assert dflash("fix", url, "--yes", "--no-backup", "--no-lock").code == 0
    assert s3.keys(bucket) == ["team/drafter/config.json"]
    new = s3.get(bucket, "team/drafter/config.json")
    assert dflash("verify", url, "--expect-sha256", hashlib.sha256(new).hexdigest()).code == 0
    assert dflash("verify", url, "--expect-sha256", hashlib.sha256(old).hexdigest()).code == 1

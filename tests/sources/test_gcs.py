"""Model dirs on Google Cloud Storage (`gs://`), against a real GCS JSON-API server on loopback
(gcp-storage-emulator, found through STORAGE_EMULATOR_HOST, no credentials): check and where read the same
findings as for the copy on disk, a target on GCS, the faults as one line (missing bucket, missing object,
server down), and fix refusing to write where it cannot write conditionally. Runs that judge stderr start
the CLI as a user does, in a process of its own: only there do library log records reach the terminal."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from checkpoints import save, small_config, small_shapes
from gcsserver import GcsServer
from helpers import FIXTURES, REAL, Result
from hubserver import free_port

from dflash_cfg.sources import remote

Run = Callable[..., Result]
BOM = b"\xef\xbb\xbf"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"


def drafter_dir(tmp_path: Path, config: bytes | None = None, shapes: dict[str, tuple[int, ...]] | None = None) -> Path:
    """A small drafter model dir: config.json and one safetensors shard (of the small config's shapes)."""
    folder = tmp_path / "drafter"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_bytes(config if config is not None else json.dumps(small_config()).encode())
    save(folder / "model.safetensors", shapes if shapes is not None else small_shapes())
    return folder


def upload(gcs: GcsServer, folder: Path, prefix: str = "team/drafter") -> tuple[str, str]:
    bucket = gcs.new_bucket()
    gcs.upload_dir(bucket, prefix, folder)
    return bucket, f"gs://{bucket}/{prefix}"


def user_run(*args: str | Path) -> Result:
    """The CLI in a process of its own, with this test's environment (STORAGE_EMULATOR_HOST and the rest)."""
    done = subprocess.run(
        [sys.executable, "-m", "dflash_cfg", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=300,
    )
    return Result(done.returncode, done.stdout, done.stderr)


def rules(result: Result) -> list[tuple[str, str, str]]:
    return [(f["rule"], f["severity"], f["pointer"]) for f in result.json()["files"][0]["findings"]]


def test_check_reads_config_and_weight_headers_on_gcs(dflash: Run, gcs: GcsServer, tmp_path: Path) -> None:
    folder = drafter_dir(tmp_path, shapes=small_shapes(taps=8))  # fc.weight too wide for 5 taps: DF501
    _, url = upload(gcs, folder)
    before = remote.bytes_received()
    result = dflash("check", url, "--format", "json")
    received = remote.bytes_received() - before
    assert result.code == 1, result.err
    [file] = result.json()["files"]
    assert file["path"] == f"{url}/config.json"
    assert file["sha256"] == hashlib.sha256((folder / "config.json").read_bytes()).hexdigest()
    assert [f["rule"] for f in file["findings"] if f["severity"] == "error"] == ["DF501"]
    assert rules(result) == rules(dflash("check", folder, "--format", "json"))
    # config.json whole, and of the shard only its header: 8 bytes of length, then the JSON header
    with open(folder / "model.safetensors", "rb") as fh:
        header = 8 + int.from_bytes(fh.read(8), "little")
    assert received == len((folder / "config.json").read_bytes()) + header


def test_the_users_terminal_shows_the_report_and_nothing_else(gcs: GcsServer, tmp_path: Path) -> None:
    """Without credentials gcsfs cannot ask the storage-layout API what kind of bucket it reads and falls
    back to the JSON API, logging a warning per request: the user sees the report, not those records."""
    folder = drafter_dir(tmp_path)
    _, url = upload(gcs, folder)
    result = user_run("check", url)
    assert result.code == 0, result.err
    assert result.err == ""
    assert f"{url}/config.json  [dflash, sha256 " in result.out


def test_a_tree_under_a_prefix(dflash: Run, gcs: GcsServer, tmp_path: Path) -> None:
    bucket = gcs.new_bucket()
    gcs.upload_dir(bucket, "fleet/a", drafter_dir(tmp_path / "a"))
    gcs.upload_dir(bucket, "fleet/b", drafter_dir(tmp_path / "b"))
    gcs.put(bucket, "fleet/.hidden/config.json", b"{}")
    result = dflash("check", f"gs://{bucket}/fleet", "--format", "json")
    assert result.code == 0, result.err
    assert [f["path"] for f in result.json()["files"]] == [
        f"gs://{bucket}/fleet/a/config.json",
        f"gs://{bucket}/fleet/b/config.json",
    ]


def test_target_on_gcs(dflash: Run, gcs: GcsServer) -> None:
    _, url = upload(gcs, TARGET, "targets/Qwen3.6-27B")
    drafter = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
    remote_run = dflash("check", drafter, "--target", url, "--engine", "sglang", "--format", "json")
    local_run = dflash("check", drafter, "--target", TARGET, "--engine", "sglang", "--format", "json")
    assert remote_run.code == local_run.code == 1, remote_run.err
    assert rules(remote_run) == rules(local_run) and any(rule.startswith("DF4") for rule, _, _ in rules(local_run))


def test_where_on_gcs(dflash: Run, gcs: GcsServer, tmp_path: Path) -> None:
    folder = drafter_dir(tmp_path)
    _, url = upload(gcs, folder)
    result = dflash("where", url, "--format", "json")
    assert result.code == 0, result.err
    assert result.json()["config"] == f"{url}/config.json"
    assert result.json()["sha256"] == hashlib.sha256((folder / "config.json").read_bytes()).hexdigest()


def test_fix_on_gcs_refuses_and_writes_nothing(gcs: GcsServer, tmp_path: Path) -> None:
    """fix writes object storage only with a conditional put it can trust (If-Match on S3); on GCS it says
    so in one line, and the bucket keeps exactly what it held."""
    old = BOM + REAL.read_bytes()  # DF003: a BOM, which the safe fix would strip
    bucket, url = upload(gcs, drafter_dir(tmp_path, old))
    keys = gcs.keys(bucket)
    result = user_run("fix", url, "--yes")
    assert result.code == 2, result
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert "writes to gs:// are not supported" in result.err and "--dry-run" in result.err
    assert gcs.get(bucket, "team/drafter/config.json") == old
    assert gcs.keys(bucket) == keys  # no backup, no lock object
    dry = user_run("fix", url, "--dry-run")  # the change is still shown, to be made on a copy
    assert dry.code in (0, 1) and "-\ufeff{" in dry.out and "+{" in dry.out, dry
    assert gcs.keys(bucket) == keys


def test_the_fleets_copy_compared_with_upstream(dflash: Run, gcs: GcsServer, hub: Any, tmp_path: Path) -> None:
    """The incident's check, on the copy a fleet loads from GCS: its guessed values against the Hub's."""
    repo = "z-lab/Qwen3.6-27B-DFlash"
    incident = (FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json").read_bytes()
    bucket = gcs.new_bucket()
    gcs.put(bucket, "team/drafter/config.json", incident)
    url = f"gs://{bucket}/team/drafter"
    diff = dflash("diff", url, "--from-hub", repo)
    assert diff.code == 1 and "248064" in diff.out and "248070" in diff.out, diff.err
    check = dflash("check", url, "--from-hub", repo, "--format", "json", "--select", "DF6")
    assert check.code == 1, check.err
    assert [rule for rule, _, _ in rules(check)] == ["DF601"] * 3


def test_a_missing_bucket_or_object_is_one_line(gcs: GcsServer, tmp_path: Path) -> None:
    bucket, _ = upload(gcs, drafter_dir(tmp_path))
    for args, cause in (
        (("check", "gs://no-such-bucket/team/drafter"), "no such bucket"),
        (("check", f"gs://{bucket}/team/absent"), "path not found"),
        (("check", f"gs://{bucket}/team/drafter/absent.json"), "path not found"),
        (("verify", f"gs://{bucket}/team/absent"), "path not found"),
        (("verify", "gs://no-such-bucket/team/drafter"), "no such bucket"),
    ):
        result = user_run(*args)
        assert result.code == 2, (args, result)
        assert len(result.err.strip().splitlines()) == 1 and cause in result.err, (args, result.err)
        assert "Traceback" not in result.err


def test_server_down_is_one_line(gcs: GcsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    result = user_run("check", "gs://models-x/team/drafter")
    assert result.code == 2, result
    assert len(result.err.strip().splitlines()) == 1 and "unreachable" in result.err, result.err
    assert "STORAGE_EMULATOR_HOST" in result.err and "Traceback" not in result.err


def test_without_gcsfs_the_launch_gate_names_the_extra(dflash: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gcsfs", None)  # as if not installed
    spec = {"method": "dflash", "model": "gs://models/drafter", "num_speculative_tokens": 15}
    launch = ["vllm", "serve", str(TARGET), "--load-format", "runai_streamer", "--speculative-config"]
    for args in (("check", "gs://models/drafter"), ("preflight", "--", *launch, json.dumps(spec))):
        result = dflash(*args)
        assert result.code == 2, (args, result)
        assert "pip install 'dflash-cfg[gcs]'" in result.err and len(result.err.strip().splitlines()) == 1

"""Model dirs on Google Cloud Storage (`gs://`), against a real GCS JSON-API server on loopback
(gcp-storage-emulator, found through STORAGE_EMULATOR_HOST, no credentials): fix refusing to write where it cannot
write conditionally, and the launch gate without gcsfs. Runs that judge stderr start the CLI as a user does, in a
process of its own: only there do library log records reach the terminal. What holds on every store (check,
where, a target, the faults as one line) is test_stores.py's, run on GCS too."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from checkpoints import drafter_dir
from gcsserver import GcsServer
from helpers import FIXTURES, REAL, Result, run_as_user, upload

Run = Callable[..., Result]
BOM = b"\xef\xbb\xbf"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"


def test_fix_on_gcs_refuses_and_writes_nothing(gcs: GcsServer, tmp_path: Path) -> None:
    """fix writes object storage only with a conditional put it can trust (If-Match on S3); on GCS it says
    so in one line, and the bucket keeps exactly what it held."""
    old = BOM + REAL.read_bytes()  # DF003: a BOM, which the safe fix would strip
    bucket, url = upload(gcs, drafter_dir(tmp_path, old))
    keys = gcs.keys(bucket)
    result = run_as_user("fix", url, "--yes")
    assert result.code == 2, result
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert "writes to gs:// are not supported" in result.err and "--dry-run" in result.err
    assert gcs.get(bucket, "team/drafter/config.json") == old
    assert gcs.keys(bucket) == keys  # no backup, no lock object
    dry = run_as_user("fix", url, "--dry-run")  # the change is still shown, to be made on a copy
    assert dry.code in (0, 1) and "-\ufeff{" in dry.out and "+{" in dry.out, dry
    assert gcs.keys(bucket) == keys


def test_without_gcsfs_the_launch_gate_names_the_extra(dflash: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gcsfs", None)  # as if not installed
    spec = {"method": "dflash", "model": "gs://models/drafter", "num_speculative_tokens": 15}
    launch = ["vllm", "serve", str(TARGET), "--load-format", "runai_streamer", "--speculative-config"]
    for args in (("check", "gs://models/drafter"), ("preflight", "--", *launch, json.dumps(spec))):
        result = dflash(*args)
        assert result.code == 2, (args, result)
        assert "pip install 'dflash-cfg[gcs]'" in result.err and len(result.err.strip().splitlines()) == 1

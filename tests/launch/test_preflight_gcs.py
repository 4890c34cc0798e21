"""gs:// model arguments in a launch (vLLM's `--load-format runai_streamer`) are read through the same remote
sources as `check`: a GCS JSON-API server on loopback (gcp-storage-emulator)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from gcsserver import GcsServer
from helpers import FIXTURES, Result

Run = Callable[..., Result]

INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
UPSTREAM = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"


def vllm(target: str, drafter: str, tokens: int = 15) -> list[str]:
    spec = {"method": "dflash", "model": drafter, "num_speculative_tokens": tokens}
    return ["vllm", "serve", target, "--load-format", "runai_streamer", "--speculative-config", json.dumps(spec)]


def findings(result: Result) -> list[tuple[str, str, str]]:
    return [(f["rule"], f["severity"], f["pointer"]) for f in result.json()["files"][0]["findings"]]


def static(result: Result) -> list[tuple[str, str, str]]:
    """The file's findings without the engine step's (DF9xx): the engine check runs on local files only."""
    return [f for f in findings(result) if not f[0].startswith("DF9")]


def test_gcs_drafter_and_target_are_read_from_object_storage(dflash: Run, gcs: GcsServer, tmp_path: Path) -> None:
    bucket = gcs.new_bucket()
    gcs.upload_dir(bucket, "models/target", TARGET)
    gcs.put(bucket, "models/good/config.json", (UPSTREAM / "config.json").read_bytes())
    gcs.put(bucket, "models/stale/config.json", (INCIDENT / "config.json").read_bytes())
    local = tmp_path / "local"
    for name, source in (("good", UPSTREAM), ("stale", INCIDENT)):
        (local / name).mkdir(parents=True)
        (local / name / "config.json").write_bytes((source / "config.json").read_bytes())
    target = f"gs://{bucket}/models/target"

    good = dflash("preflight", "--", *vllm(target, f"gs://{bucket}/models/good"))
    assert good.code == 0, good.err
    assert f"drafter gs://{bucket}/models/good -> gs://{bucket}/models/good/config.json" in good.out
    assert "of 64 (target)" in good.out  # the target's depth was read from GCS
    for name, code in (("good", 0), ("stale", 1)):
        remote_run = dflash("preflight", "--format", "json", "--", *vllm(target, f"gs://{bucket}/models/{name}"))
        local_run = dflash("preflight", "--format", "json", "--", *vllm(str(TARGET), str(local / name)))
        assert remote_run.code == local_run.code == code, (name, remote_run.err)
        assert static(remote_run) == static(local_run), name
        notes = [f["message"] for f in remote_run.json()["files"][0]["findings"] if f["rule"] == "DF903"]
        assert notes == ["engine check: the engine check runs on local files only; the static rules still apply"]
    stale = dflash("preflight", "--format", "json", "--", *vllm(target, f"gs://{bucket}/models/stale"))
    assert "DF205" in {rule for rule, _, _ in findings(stale)}
    tokens = dflash("preflight", "--format", "json", "--", *vllm(target, f"gs://{bucket}/models/good", 7))
    assert tokens.code == 1 and "DF801" in {rule for rule, _, _ in findings(tokens)}
    missing = dflash("preflight", "--", *vllm(target, f"gs://{bucket}/models/absent"))
    assert missing.code == 2 and "no such object or prefix" in missing.err and missing.err.count("\n") == 1
    # SGLang too (its --load-format remote); a target dir as the drafter fails the gate
    sglang = ["python", "-m", "sglang.launch_server", "--model-path", target, "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", target]  # fmt: skip
    wrong = dflash("preflight", "--", *sglang)
    assert wrong.code == 1 and "not a DFlash drafter" in wrong.err, wrong.err

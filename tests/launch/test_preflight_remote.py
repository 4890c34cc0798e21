"""s3:// model arguments in a launch (vLLM's `--load-format runai_streamer`) are read through the same remote
sources as `check`: moto's S3 server on loopback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from helpers import FIXTURES, Result
from s3server import S3Server

Run = Callable[..., Result]

INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
UPSTREAM = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"


def test_s3_drafter_and_target_are_read_from_object_storage(dflash: Run, s3: S3Server, tmp_path: Path) -> None:
    bucket = s3.new_bucket()
    s3.put(bucket, "models/target/config.json", (TARGET / "config.json").read_bytes())
    s3.put(bucket, "models/target/tokenizer_config.json", (TARGET / "tokenizer_config.json").read_bytes())
    s3.put(bucket, "models/good/config.json", (UPSTREAM / "config.json").read_bytes())
    s3.put(bucket, "models/stale/config.json", (INCIDENT / "config.json").read_bytes())

    def launch(drafter: str, tokens: int = 15) -> list[str]:
        spec = {"method": "dflash", "model": f"s3://{bucket}/models/{drafter}", "num_speculative_tokens": tokens}
        return ["vllm", "serve", f"s3://{bucket}/models/target", "--load-format", "runai_streamer",
                "--speculative-config", json.dumps(spec)]  # fmt: skip

    good = dflash("preflight", "--", *launch("good"))
    assert good.code == 0, good.err
    assert f"drafter s3://{bucket}/models/good -> s3://{bucket}/models/good/config.json" in good.out
    assert "of 64 (target)" in good.out  # the target's depth was read from S3
    stale = dflash("preflight", "--format", "json", "--", *launch("stale"))
    assert stale.code == 1 and "DF205" in {f["rule"] for f in stale.json()["files"][0]["findings"]}
    tokens = dflash("preflight", "--format", "json", "--", *launch("good", 7))
    assert tokens.code == 1 and "DF801" in {f["rule"] for f in tokens.json()["files"][0]["findings"]}
    missing = dflash("preflight", "--", *launch("absent"))
    assert missing.code == 2 and "no such object or prefix" in missing.err and missing.err.count("\n") == 1
    # SGLang too (its --load-format remote); a target dir as the drafter fails the gate
    target = f"s3://{bucket}/models/target"
    sglang = ["python", "-m", "sglang.launch_server", "--model-path", target, "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", target]  # fmt: skip
    wrong = dflash("preflight", "--", *sglang)
    assert wrong.code == 1 and "not a DFlash drafter" in wrong.err, wrong.err

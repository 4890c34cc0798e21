"""Engine answers of the wrong shape, and drafter values past a float, through `engines --python PY` and preflight's
engine step: a stand-in interpreter answers the probe, the survey and the adapter. Found by the hostile-input
campaign's engine surface (tests/fuzz/engines.py): each was an internal error."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, Result

Run = Callable[..., Result]

DRAFTER = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"
READS: dict[str, Any] = {
    "layer_types": ["sliding_attention"] * 4 + ["full_attention"],
    "sliding_window": [2048, 2048, 2048, 2048, None],
    "causal": [False] * 5,
    "rope": [{"theta": 10000000.0, "scaling": None, "neox": True}] * 5,
    "rope_theta": 10000000.0,
    "logit_scalars": {},
    "target_layer_ids": [1, 16, 31, 46, 61],
    "mask_token_id": 248070,
}


def interpreter(root: Path, reads: dict[str, Any]) -> Path:
    """A `python` that has vLLM (as the probe and the survey ask) and whose vLLM adapter answers `reads`."""
    root.mkdir(parents=True)
    record = {"engine": "vllm", "version": "0.34.0", "python": "/x", "refused": None, "reads": reads}
    (root / "record.json").write_text(json.dumps({**record, "stand_ins": [], "failed": None}) + "\n")
    survey = {"engines": ["vllm"], "packages": {"vllm": {"version": "0.34.0"}}, "witnesses": []}
    (root / "survey.json").write_text(json.dumps(survey) + "\n")
    python = root / "python"
    python.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        "  -I) echo '[\"vllm\"]' ;;\n"
        f"  *dflash_adapter_survey.py) cat {root}/survey.json ;;\n"
        f"  *adapter_vllm.py) cat > /dev/null; cat {root}/record.json ;;\n"
        "  *) exit 1 ;;\n"
        "esac\n"
    )
    python.chmod(0o755)
    return python


def launch(python: Path, drafter: Path = DRAFTER) -> list[str]:
    spec = json.dumps({"method": "dflash", "model": str(drafter), "num_speculative_tokens": 15})
    return [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(TARGET), "-sc", spec]


def survived(result: Result) -> None:
    assert result.code in (0, 1, 2), result
    assert "internal error" not in result.out + result.err and "Traceback" not in result.err, result


def changed(**values: Any) -> dict[str, Any]:
    reads = copy.deepcopy(READS)
    reads.update(values)
    return reads


@pytest.mark.parametrize(
    "reads",
    [
        pytest.param(changed(rope_theta=10**400), id="theta-past-a-float"),
        pytest.param(changed(layer_types=[{}, [], 1, None, "full_attention"]), id="layer-types-not-strings"),
        pytest.param(changed(sliding_window="x"), id="window-a-string"),
        pytest.param(changed(sliding_window=[{}, [1]]), id="windows-not-numbers"),
        pytest.param(changed(causal="yes"), id="causal-a-string"),
        pytest.param(changed(causal=[[], {}]), id="causal-not-flags"),
        pytest.param(changed(rope=["x", 1]), id="rope-not-objects"),
        pytest.param(changed(logit_scalars=[1, 2]), id="logit-scalars-a-list"),
        pytest.param(changed(target_layer_ids=[[1], {}]), id="taps-not-numbers"),
        pytest.param(changed(mask_token_id=[248070]), id="mask-a-list"),
        pytest.param(changed(max_model_len=[1, 2]), id="max-model-len-a-list"),
    ],
)
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_found_bug_an_answer_of_another_shape_is_a_failed_record(
    dflash: Run, tmp_path: Path, reads: dict[str, Any], fmt: str
) -> None:
    python = interpreter(tmp_path / "engine", reads)
    engines = dflash("engines", DRAFTER, "--python", python, "--format", fmt)
    survived(engines)
    assert engines.code == 2 and "no engine could answer" in engines.err, engines  # its one answer was no record
    said = json.loads(engines.out)["engines"][0]["failed"] if fmt == "json" else engines.out
    assert "not a record" in said, said
    preflight = dflash("preflight", "--format", fmt, "--no-cache", "--", *launch(python))
    survived(preflight)
    if fmt == "json":
        check = json.loads(preflight.out)["engine_check"]
        assert check["status"] == "failed" and "not a record" in check["reason"], check


def test_found_bug_a_drafter_theta_past_a_float(dflash: Run, tmp_path: Path) -> None:
    drafter = tmp_path / "drafter"
    shutil.copytree(DRAFTER, drafter)
    data = json.loads((drafter / "config.json").read_text())
    data["rope_theta"] = 10**400  # JSON holds it; a float does not
    (drafter / "config.json").write_text(json.dumps(data))
    python = interpreter(tmp_path / "engine", READS)
    engines = dflash("engines", drafter, "--python", python, "--format", "json")
    survived(engines)
    [answer] = json.loads(engines.out)["engines"]
    assert answer["failed"] is None and answer["reads"]["rope_theta"] == 10000000.0, answer
    preflight = dflash("preflight", "--no-cache", "--", *launch(python, drafter))
    survived(preflight)

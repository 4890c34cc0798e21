"""Engine truth by execution: every fixture drafter, and the defect cases whose engine behaviour the rules must
match, run through the adapters in the pinned engines. Each assertion is against a record, i.e. against what
the engine's own code did."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dflash_cfg.sources.adapters import EngineRecord, Reads, Request
from engines.cases import (
    FIXTURE_DRAFTERS,
    QWEN36,
    TARGETS,
    UPSTREAM_36,
    changed,
    fixture_requests,
    run_all,
    write_drafter,
)

Records = dict[tuple[str, str], EngineRecord]
SPECULATORS_DIR = "upstream/RedHatAI__DeepSeek-V4-Flash-speculator.dflash/config.json"
INCIDENT = "incident/Qwen3.6-27B-DFlash/config.json"
S, F = "sliding_attention", "full_attention"


def _defects(root: Path) -> dict[str, Request]:
    target = str(TARGETS / QWEN36)

    def top_level_mask(d: dict[str, Any]) -> None:
        d["mask_token_id"] = d["dflash_config"].pop("mask_token_id")

    def conflicting_rope(d: dict[str, Any]) -> None:
        d["rope_scaling"] = {"rope_type": "yarn", "type": "linear", "factor": 4.0}

    cases: dict[str, tuple[str, Callable[[dict[str, Any]], object], str | None]] = {
        "mask-top-level": (UPSTREAM_36, top_level_mask, target),
        "window-0": (UPSTREAM_36, lambda d: d.__setitem__("sliding_window", 0), target),
        "theta-dropped": (UPSTREAM_36, lambda d: d.pop("rope_theta"), target),
        "rope-conflict": (UPSTREAM_36, conflicting_rope, target),
        "sink-top-level": (UPSTREAM_36, lambda d: d.__setitem__("attention_sink_bias", True), target),
        "no-num-target-layers": (
            "upstream/z-lab__Qwen3.5-4B-DFlash/config.json",
            lambda d: d.pop("num_target_layers"),
            None,
        ),
    }
    dflash2 = "upstream/z-lab__Qwen3.8-27B-DFlash2/config.json"

    def put(key: str, value: object, inner: bool) -> Callable[[dict[str, Any]], None]:
        return lambda d: (d["dflash_config"] if inner else d).__setitem__(key, value)

    for key, value in (("output_multiplier", 2.0), ("final_logit_softcapping", 30.0)):
        cases[f"dflash2-{key}-top-level"] = (dflash2, put(key, value, False), None)
        cases[f"dflash2-{key}-in-dflash_config"] = (dflash2, put(key, value, True), None)
    cases["sink-in-dflash_config"] = (UPSTREAM_36, put("attention_sink_bias", True, True), target)
    cases["num-target-layers-string"] = (UPSTREAM_36, lambda d: d.__setitem__("num_target_layers", "64"), target)
    cases["num-target-layers-float"] = (UPSTREAM_36, lambda d: d.__setitem__("num_target_layers", 64.0), target)
    cases["block-size-string"] = (UPSTREAM_36, put("block_size", "16", True), target)
    cases["is-causal-0"] = (UPSTREAM_36, lambda d: d.__setitem__("is_causal", 0), target)
    cases["window-string"] = (UPSTREAM_36, lambda d: d.__setitem__("sliding_window", "2048"), target)
    cases["window-float"] = (UPSTREAM_36, lambda d: d.__setitem__("sliding_window", 2048.0), target)
    cases["mask-string"] = (UPSTREAM_36, put("mask_token_id", "248070", True), target)
    cases["dflash2-labelled-v1"] = (dflash2, lambda d: d.__setitem__("architectures", ["DFlashDraftModel"]), None)
    deepseek = str(TARGETS / "deepseek-ai__DeepSeek-V4-Flash")
    cases["speculators-no-verifier"] = (
        SPECULATORS_DIR,
        lambda d: d["speculators_config"].pop("verifier"),
        deepseek,
    )
    cases["speculators-no-aux"] = (SPECULATORS_DIR, lambda d: d.pop("aux_hidden_state_layer_ids"), deepseek)
    return {
        name: Request(write_drafter(root / name, changed(rel, change)), t) for name, (rel, change, t) in cases.items()
    }


@pytest.fixture(scope="session")
def records(engine_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Records:
    root = tmp_path_factory.mktemp("engine-cases")
    return run_all(engine_python, {**fixture_requests(root), **_defects(root)})


def reads(records: Records, engine: str, case: str) -> Reads:
    record = records[(engine, case)]
    assert record.failed is None and record.refused is None, record
    assert record.reads is not None
    return record.reads


@pytest.mark.parametrize("engine", ["vllm", "sglang", "speculators"])
@pytest.mark.parametrize("drafter", sorted(FIXTURE_DRAFTERS))
def test_every_fixture_gets_an_answer_from_the_pinned_engine(records: Records, engine: str, drafter: str) -> None:
    record = records[(engine, drafter)]
    assert record.failed is None, record.failed
    assert record.checked and record.version
    assert (record.refused is None) != (record.reads is None)
    if record.refused is not None:
        assert record.refused.where and record.refused.where.startswith(engine + "/"), record.refused


def test_every_whole_published_drafter_loads_in_vllm_and_sglang(records: Records) -> None:
    whole = [d for d in FIXTURE_DRAFTERS if d.endswith("/config.json") and d not in (INCIDENT, SPECULATORS_DIR)]
    refused = {
        (engine, drafter): records[(engine, drafter)].refused
        for drafter in whole
        for engine in ("vllm", "sglang")
        if records[(engine, drafter)].refused is not None
    }
    # SGLang refuses the speculators format (below); the incident is stale; the partial copies lack keys
    # (most lack model_type, which both engines need). Every other fixture loads in both.
    assert refused == {}


def test_speculators_loads_only_its_own_format(records: Records) -> None:
    for drafter in FIXTURE_DRAFTERS:
        refused = records[("speculators", drafter)].refused
        assert (refused is None) == ("speculator.dflash" in drafter), drafter


def test_the_repaired_upstream_file_reads_as_trained_in_both_engines(records: Records) -> None:
    for engine in ("vllm", "sglang"):
        got = reads(records, engine, UPSTREAM_36)
        assert got.target_layer_ids == (1, 16, 31, 46, 61), engine
        assert got.mask_token_id == 248070, engine
        assert got.layer_types == (S, S, S, S, F), engine
        assert got.sliding_window == (2048, 2048, 2048, 2048, None), engine
        assert got.rope_theta == 1e7, engine
    assert reads(records, "vllm", UPSTREAM_36).engine_layer_ids == (2, 17, 32, 47, 62)


def test_sglang_refuses_the_incident_capturing_tap_63(records: Records) -> None:
    refused = records[("sglang", INCIDENT)].refused
    assert refused is not None and refused.type == "IndexError"
    assert refused.where is not None and refused.where.startswith("sglang/srt/models/qwen3_5.py:")
    # vLLM builds it: the stale taps, mask and layer types are what it runs with.
    got = reads(records, "vllm", INCIDENT)
    assert got.target_layer_ids == (1, 17, 33, 49, 63)
    assert got.mask_token_id == 248064
    assert got.layer_types == (F,) * 5


def test_a_mask_id_only_at_top_level_is_read_by_both_engines(records: Records) -> None:
    for engine in ("vllm", "sglang"):
        assert reads(records, engine, "mask-top-level").mask_token_id == 248070, engine


def test_window_0_vllm_refuses_and_sglang_runs_the_sliding_layers_unwindowed(records: Records) -> None:
    assert records[("vllm", "window-0")].refused is not None
    got = reads(records, "sglang", "window-0")
    assert got.extra["engine_sliding_window"] == [-1] * 5  # window_left -1: no window
    assert got.sliding_window == (None,) * 5
    assert got.causal == (True, True, True, True, False)  # the sliding layers stay causal


def test_sglang_bounds_the_taps_by_the_deepest_tap_without_num_target_layers(records: Records) -> None:
    got = reads(records, "sglang", "no-num-target-layers")
    assert got.target_layer_ids == (1, 5, 9, 13, 17, 21, 25, 29)
    assert got.fc_in_features == 8 * 2560


def test_a_dropped_rope_theta_makes_vllm_build_base_10000(records: Records) -> None:
    assert reads(records, "vllm", "theta-dropped").rope_theta == 10000.0


def test_conflicting_rope_type_spellings_vllm_refuses_and_sglang_builds_the_modern_one(records: Records) -> None:
    refused = records[("vllm", "rope-conflict")].refused
    assert refused is not None and "conflicts" in refused.message, refused
    # SGLang does not drop the scaling: it builds the modern field's rope_type (yarn), factor 4, on every layer.
    rope = reads(records, "sglang", "rope-conflict").rope
    assert rope is not None
    assert {(r["scaling"] or {}).get("class") for r in rope} == {"YaRNScalingRotaryEmbedding"}
    assert {(r["scaling"] or {}).get("factor") for r in rope} == {4.0}


def test_a_top_level_sink_flag_is_ignored_by_both_engines(records: Records) -> None:
    for engine in ("vllm", "sglang"):
        assert reads(records, engine, "sink-top-level").attention_sink is False, engine


def test_sglang_refuses_a_speculators_dir_and_vllm_reads_it_as_a_speculative_model(records: Records) -> None:
    refused = records[("sglang", SPECULATORS_DIR)].refused
    assert refused is not None and "model_type" in refused.message
    got = reads(records, "vllm", SPECULATORS_DIR)
    assert got.engine_layer_ids == (3, 13, 23, 32, 42)  # aux ids used as they are: the file's numbering + 1
    assert got.target_layer_ids == (2, 12, 22, 31, 41)
    assert reads(records, "speculators", SPECULATORS_DIR).engine_layer_ids == (3, 13, 23, 32, 42)


def test_a_dropped_rope_theta_makes_sglang_build_base_10000_too(records: Records) -> None:
    # DF304: no θ is an error, not a warning; neither engine falls back to vLLM's set_default_rope_theta(1e6).
    assert reads(records, "sglang", "theta-dropped").rope_theta == 10000.0


def test_laguna_rope_theta_is_per_layer_type_in_vllm_and_flat_in_sglang(records: Records) -> None:
    # DF304 documents this as a non-finding: transformers' LagunaConfig gives sliding layers their own 10000 by
    # design; SGLang's LagunaConfig uses the file's rope_theta for a drafter without full-attention layers.
    laguna = "upstream/poolside__Laguna-XS-2.1-DFlash/config.json"
    assert reads(records, "vllm", laguna).rope_theta == 10000.0
    assert reads(records, "sglang", laguna).rope_theta == 500000.0


def test_through_speculative_config_vllm_needs_the_aux_ids_but_not_the_verifier(records: Records) -> None:
    # DF161: the adapter launches through --speculative-config {"model": dir}. There a speculators file without
    # speculators_config.verifier is accepted (only `vllm serve <dir>` needs it), one without
    # aux_hidden_state_layer_ids is refused by the translator (KeyError) whatever the launch.
    assert reads(records, "vllm", "speculators-no-verifier").engine_layer_ids == (3, 13, 23, 32, 42)
    refused = records[("vllm", "speculators-no-aux")].refused
    assert refused is not None and refused.type == "KeyError", refused
    assert refused.where is not None and "speculators/algos.py" in refused.where


@pytest.mark.parametrize(("key", "value"), [("output_multiplier", 2.0), ("final_logit_softcapping", 30.0)])
def test_dflash2_logit_scalars_are_read_only_inside_dflash_config(records: Records, key: str, value: float) -> None:
    # DF108: at the top level both engines draft with their default; inside dflash_config with the value.
    default = 1.0 if key == "output_multiplier" else None
    for engine in ("vllm", "sglang"):
        assert reads(records, engine, f"dflash2-{key}-top-level").logit_scalars[key] == default, engine
        assert reads(records, engine, f"dflash2-{key}-in-dflash_config").logit_scalars[key] == value, engine


def test_a_sink_flag_inside_dflash_config_is_read_by_both_engines(records: Records) -> None:
    for engine in ("vllm", "sglang"):
        assert reads(records, engine, "sink-in-dflash_config").attention_sink is True, engine


def test_a_dflash2_checkpoint_labelled_dflash_draft_model_builds_the_v1_drafter(records: Records) -> None:
    # DF131: vLLM builds the v1 model (no candidate selector: its logit scalars are absent); SGLang's
    # DFlashDraftModel has no selector either (DFlash2DraftModel adds it).
    for engine in ("vllm", "sglang"):
        got = reads(records, engine, "dflash2-labelled-v1")
        assert got.logit_scalars["output_multiplier"] is None, engine
    assert reads(records, "vllm", "dflash2-labelled-v1").architecture == "DFlashQwen3ForCausalLM"
    assert reads(records, "sglang", "dflash2-labelled-v1").architecture == "DFlashDraftModel"


@pytest.mark.parametrize("case", ["num-target-layers-string", "num-target-layers-float", "block-size-string"])
def test_integer_fields_both_engines_coerce_read_as_meant(records: Records, case: str) -> None:
    # DF010 warns (portability), not errors: both engines run exactly as with the unmutated file.
    for engine in ("vllm", "sglang"):
        assert reads(records, engine, case) == reads(records, engine, UPSTREAM_36), (engine, case)


def test_is_causal_0_is_read_as_false_by_both_engines(records: Records) -> None:
    for engine in ("vllm", "sglang"):
        assert reads(records, engine, "is-causal-0").causal == (False,) * 5, engine


@pytest.mark.parametrize(
    ("case", "refusing"),
    [("window-string", ("vllm", "sglang")), ("window-float", ("vllm", "sglang")), ("mask-string", ("sglang",))],
)
def test_wrong_types_an_engine_refuses_stay_errors(records: Records, case: str, refusing: tuple[str, ...]) -> None:
    for engine in ("vllm", "sglang"):
        assert (records[(engine, case)].refused is not None) == (engine in refusing), (engine, case)


# `vllm serve <dir>` starts with vLLM's own maybe_override_with_speculators on the served directory (the adapter
# launches through --speculative-config, which skips it): run it as the serve path does.
_SERVE = """
import json, sys
from vllm.transformers_utils.config import maybe_override_with_speculators
for folder in sys.argv[1:]:
    try:
        model, _, spec = maybe_override_with_speculators(folder, folder, trust_remote_code=False)
        print(json.dumps({"ok": spec is not None}))
    except Exception as error:
        print(json.dumps({"refused": type(error).__name__, "message": str(error)}))
"""


def test_vllm_serve_of_a_speculators_dir_refuses_what_speculative_config_accepts(
    engine_python: Path, tmp_path: Path
) -> None:
    # DF161's "`vllm serve` of this directory refuses it": speculative_tokens or the verifier missing.
    import json
    import os
    import subprocess

    def drop_tokens(d: dict[str, Any]) -> None:
        d["speculators_config"]["proposal_methods"][0].pop("speculative_tokens")

    folders = [
        write_drafter(tmp_path / "whole", changed(SPECULATORS_DIR, lambda d: None)),
        write_drafter(tmp_path / "no-tokens", changed(SPECULATORS_DIR, drop_tokens)),
        write_drafter(
            tmp_path / "no-verifier", changed(SPECULATORS_DIR, lambda d: d["speculators_config"].pop("verifier"))
        ),
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "VLLM_TARGET_DEVICE": "cpu", "CUDA_VISIBLE_DEVICES": ""}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [str(engine_python), "-c", _SERVE, *folders], capture_output=True, text=True, env=env, timeout=600, check=True
    )
    whole, no_tokens, no_verifier = (json.loads(line) for line in done.stdout.splitlines()[-3:])
    assert whole == {"ok": True}
    for answer in (no_tokens, no_verifier):
        assert answer.get("refused") == "ValueError" and "Invalid speculators config structure" in answer["message"]

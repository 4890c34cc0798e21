"""Engine truth by execution: every fixture drafter, and the defect cases whose engine behaviour the rules must
match, run through the adapters in the pinned engines. Each assertion is against a record, i.e. against what
the engine's own code did."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dflash_cfg.model import EngineRecord, Reads
from dflash_cfg.sources.adapters import Request
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
    laguna = "upstream/poolside__Laguna-XS-2.1-DFlash/config.json"
    mimo = "upstream/XiaomiMiMo__MiMo-V2.5-Pro-FP4-DFlash/dflash/config.json"
    extra: dict[str, tuple[str, Callable[[dict[str, Any]], object], str | None]] = {
        "neox-rope-only-false": (UPSTREAM_36, lambda d: d.__setitem__("rope_is_neox_style", False), target),
        "neox-is-false": (UPSTREAM_36, lambda d: d.__setitem__("is_neox_style", False), target),
        "aux-off-in-dflash_config": (UPSTREAM_36, put("use_aux_hidden_state", False, True), target),
        "aux-off-at-top-level": (UPSTREAM_36, lambda d: d.__setitem__("use_aux_hidden_state", False), target),
        "aux-eagle-off-dflash-on": (UPSTREAM_36, _eagle_off_dflash_on, target),
        "arch-muse-glimmer": (UPSTREAM_36, _label("MuseGlimmerAssistantModel"), target),
        "arch-dflash2-beam": (dflash2, _label("DFlash2BeamDraftModel"), None),
        "arch-minimax-dflash2": (dflash2, _label("MiniMaxDFlash2DraftModel"), None),
        "arch-xpress": (UPSTREAM_36, _label("DFlashQwen3XPressModel"), target),
        "sample-from-anchor": (UPSTREAM_36, put("sample_from_anchor", True, True), target),
        "speculators-sample-from-anchor": (
            SPECULATORS_DIR,
            lambda d: d.__setitem__("sample_from_anchor", True),
            deepseek,
        ),
        "hidden-act-gelu": (UPSTREAM_36, lambda d: d.__setitem__("hidden_act", "gelu"), target),
        "hidden-act-swigluoai": (UPSTREAM_36, lambda d: d.__setitem__("hidden_act", "swigluoai"), target),
        "laguna-draft-vocab-differs": (laguna, lambda d: d.__setitem__("draft_vocab_size", 100000), None),
        "model-type-invented": (UPSTREAM_36, lambda d: d.__setitem__("model_type", "qwen3_dflash"), target),
        "target-hidden-size-doubled": (UPSTREAM_36, lambda d: d.__setitem__("target_hidden_size", 2 * 5120), target),
        "layer-types-short": (UPSTREAM_36, lambda d: d.__setitem__("layer_types", [S, S, S, F]), target),
        "value-scale-string": (UPSTREAM_36, put("attention_value_scale", "0.5", True), target),
        "sink-string": (UPSTREAM_36, put("attention_sink_bias", "yes", True), target),
        "mimo": (mimo, lambda d: None, str(TARGETS / "XiaomiMiMo__MiMo-V2.5-Pro")),
        "speculators-top-level-swa": (SPECULATORS_DIR, _top_level_swa, deepseek),
    }
    cases.update(extra)
    return {
        name: Request(drafter=write_drafter(root / name, changed(rel, change)), target=t)
        for name, (rel, change, t) in cases.items()
    }


def _label(architecture: str) -> Callable[[dict[str, Any]], None]:
    return lambda d: d.__setitem__("architectures", [architecture])


def _eagle_off_dflash_on(d: dict[str, Any]) -> None:
    d["eagle_config"] = {"use_aux_hidden_state": False}
    d["dflash_config"]["use_aux_hidden_state"] = True


def _top_level_swa(d: dict[str, Any]) -> None:
    # Keys a speculators file could carry beside transformer_layer_config: the pinned vLLM does not pass them on.
    d["layer_types"] = [F] * len(d["transformer_layer_config"].get("layer_types") or [F])
    d["sliding_window"] = 7
    d["use_sliding_window"] = True


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
    scalings = [r["scaling"] for r in rope]
    assert all(isinstance(s, dict) for s in scalings), scalings
    assert {s.get("class") for s in scalings if isinstance(s, dict)} == {"YaRNScalingRotaryEmbedding"}
    assert {s.get("factor") for s in scalings if isinstance(s, dict)} == {4.0}


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
    # DF134: vLLM builds the v1 model (no candidate selector: its logit scalars are absent); SGLang's
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


# How config.json reaches both engines: transformers' AutoConfig, as pinned with them (the transformers rows of
# lint/engines/transformers.py). One process, one answer line per file.
_AUTOCONFIG = """
import json, sys
from transformers import AutoConfig
for folder in sys.argv[1:]:
    try:
        c = AutoConfig.from_pretrained(folder)
        print(json.dumps({"class": type(c).__name__, "hidden_size": c.hidden_size,
                          "sliding_window": getattr(c, "sliding_window", None),
                          "num_key_value_heads": getattr(c, "num_key_value_heads", None),
                          "layer_types": getattr(c, "layer_types", None),
                          "rope_theta": repr((getattr(c, "rope_parameters", None) or {}).get("rope_theta"))}))
    except Exception as error:
        print(json.dumps({"refused": type(error).__name__, "message": str(error)[:300]}))
"""


def test_transformers_autoconfig_reads_config_json_as_the_rows_say(engine_python: Path, tmp_path: Path) -> None:
    import json
    import os
    import subprocess

    qwen = {
        "architectures": ["DFlashDraftModel"],
        "model_type": "qwen3",
        "hidden_size": 1024,
        "num_hidden_layers": 2,
        "num_attention_heads": 8,
        "head_dim": 128,
    }
    base = json.dumps(qwen)
    texts = {
        "bom": "\ufeff" + base,
        "cut": base[:-5],
        "duplicate": base[:-1] + ', "hidden_size": 2048}',
        "nan": base[:-1] + ', "rope_theta": NaN}',
        "legacy-layer-type": json.dumps({**qwen, "layer_types": ["attention", "full_attention"]}),
        "window-without-switch": json.dumps({**qwen, "sliding_window": 4096}),
        "no-model-type": json.dumps({k: v for k, v in qwen.items() if k != "model_type"}),
    }
    folders = []
    for name, text in texts.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(text, encoding="utf-8")
        folders.append(str(tmp_path / name))
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [str(engine_python), "-c", _AUTOCONFIG, *folders], capture_output=True, text=True, env=env, timeout=600
    )
    answers = dict(zip(texts, (json.loads(line) for line in done.stdout.splitlines()[-len(texts) :]), strict=True))
    for name in ("bom", "cut"):
        assert answers[name].get("refused") == "OSError" and "not a valid JSON" in answers[name]["message"], name
    assert answers["duplicate"]["hidden_size"] == 2048  # the last copy wins, without a word
    assert answers["nan"]["rope_theta"] == "nan"
    assert answers["legacy-layer-type"]["layer_types"] == ["full_attention", "full_attention"]
    assert answers["window-without-switch"]["sliding_window"] is None  # Qwen3Config drops it: no use_sliding_window
    assert answers["window-without-switch"]["num_key_value_heads"] == 32  # absent: the class default, not the heads
    assert answers["no-model-type"].get("refused") == "ValueError", answers["no-model-type"]


def _neox(got: Reads) -> list[object]:
    return [layer.get("neox") for layer in got.rope or ()]


def test_vllm_reads_only_is_neox_style_and_sglang_rope_is_neox_style_first(records: Records) -> None:
    # DF211: rope_is_neox_style false alone splits the engines; is_neox_style false is read by both.
    assert _neox(reads(records, "vllm", "neox-rope-only-false")) == [True] * 5
    assert _neox(reads(records, "sglang", "neox-rope-only-false")) == [False] * 5
    for engine in ("vllm", "sglang"):
        assert _neox(reads(records, engine, "neox-is-false")) == [False] * 5, engine
        assert _neox(reads(records, engine, UPSTREAM_36)) == [True] * 5, engine


def test_use_aux_hidden_state_dflash_config_wins_over_eagle_config_in_vllm(records: Records) -> None:
    # DF153: vLLM merges dflash_config over eagle_config, then falls back to the top level; false builds no fc.
    assert reads(records, "vllm", "aux-off-in-dflash_config").fc_in_features is None
    assert reads(records, "vllm", "aux-off-at-top-level").fc_in_features is None
    assert reads(records, "vllm", "aux-eagle-off-dflash-on").fc_in_features == 5 * 5120
    for case in ("aux-off-in-dflash_config", "aux-off-at-top-level"):
        assert reads(records, "sglang", case).fc_in_features == 5 * 5120, case  # SGLang does not read it


@pytest.mark.parametrize(
    ("case", "builders"),
    [
        ("arch-muse-glimmer", {"vllm": True, "sglang": True}),
        ("arch-dflash2-beam", {"vllm": False, "sglang": True}),
        ("arch-minimax-dflash2", {"vllm": False, "sglang": True}),
        ("arch-xpress", {"vllm": True, "sglang": False}),
    ],
)
def test_registered_architectures_as_each_engine_builds_them(
    records: Records, case: str, builders: dict[str, bool]
) -> None:
    # lint.engines.REGISTERED_ARCHITECTURES and DF133: SGLang builds every DFlash2 alias and vLLM only MuseGlimmer's;
    # vLLM builds the XPress drafter (its refiner on the DFlash model), SGLang has no XPress model.
    for engine, builds in builders.items():
        record = records[(engine, case)]
        assert record.failed is None, record
        assert (record.refused is None) == builds, record
    if case == "arch-xpress":  # the refiner's class, not the plain DFlash model
        assert reads(records, "vllm", case).architecture == "Qwen3XPressForCausalLM"


def test_sample_from_anchor_is_refused_by_vllm_and_not_read_by_sglang(records: Records) -> None:
    # DF123: vLLM's DFlash speculator (GPU worker only: the adapter stands in for its check, on the config vLLM
    # built) refuses the DSpark layout, also when the speculators translator writes it from the top-level key;
    # SGLang builds the drafter exactly as without the key.
    for case in ("sample-from-anchor", "speculators-sample-from-anchor"):
        record = records[("vllm", case)]
        assert record.refused is not None, record
        assert record.refused.where == "vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:DFlashSpeculator.__init__"
        assert "sample_from_anchor=True is not supported for DFlash" in record.refused.message
    assert reads(records, "sglang", "sample-from-anchor") == reads(records, "sglang", UPSTREAM_36)


def test_hidden_act_other_than_silu_is_refused_by_both_engines(records: Records) -> None:
    # DF151: swigluoai is refused by vLLM, and by SGLang without swiglu_alpha/swiglu_limit.
    for case in ("hidden-act-gelu", "hidden-act-swigluoai"):
        for engine in ("vllm", "sglang"):
            assert records[(engine, case)].refused is not None, (engine, case)
    refused = records[("vllm", "hidden-act-gelu")].refused
    assert (
        refused is not None
        and refused.where is not None
        and refused.where.startswith("vllm/model_executor/models/qwen2.py")
    )


def test_vllm_refuses_a_laguna_draft_vocab_other_than_the_targets(records: Records) -> None:
    # DF402: an error naming vLLM; SGLang builds it.
    refused = records[("vllm", "laguna-draft-vocab-differs")].refused
    assert refused is not None and "draft_vocab_size" in refused.message, refused
    assert records[("sglang", "laguna-draft-vocab-differs")].refused is None


def test_an_invented_model_type_and_a_short_layer_types_are_refused_by_both(records: Records) -> None:
    for engine in ("vllm", "sglang"):
        assert records[(engine, "model-type-invented")].refused is not None, engine
        refused = records[(engine, "layer-types-short")].refused
        assert refused is not None and "layer_types" in refused.message, (engine, refused)  # transformers' check


def test_target_hidden_size_widens_fc_in_vllm_only(records: Records) -> None:
    # DF154: vLLM builds fc for K x target_hidden_size, SGLang for K x hidden_size.
    assert reads(records, "vllm", "target-hidden-size-doubled").fc_in_features == 5 * 10240
    assert reads(records, "sglang", "target-hidden-size-doubled").fc_in_features == 5 * 5120


def test_sink_and_value_scale_of_the_wrong_type(records: Records) -> None:
    # DF210/DF212: SGLang refuses a non-bool sink and a string value scale; vLLM reads the sink by truthiness.
    assert reads(records, "vllm", "sink-string").attention_sink is True
    for case in ("sink-string", "value-scale-string"):
        refused = records[("sglang", case)].refused
        assert refused is not None and refused.where is not None and "dflash_utils.py" in refused.where, case


def test_mimo_use_swa_makes_every_vllm_layer_sliding_and_sglang_ignores_it(records: Records) -> None:
    vllm, sglang = reads(records, "vllm", "mimo"), reads(records, "sglang", "mimo")
    assert vllm.layer_types == (S,) * 5 and vllm.sliding_window == (1024,) * 5
    assert sglang.layer_types == (F,) * 5
    for got in (vllm, sglang):
        assert got.attention_sink is True and got.logit_scalars["attention_value_scale"] == 0.612


def test_vllm_does_not_pass_top_level_swa_keys_of_a_speculators_file_through(records: Records) -> None:
    # lint.speculators.PASSED_THROUGH is empty: transformer_layer_config's layer types and window count.
    assert reads(records, "vllm", "speculators-top-level-swa") == reads(records, "vllm", SPECULATORS_DIR)

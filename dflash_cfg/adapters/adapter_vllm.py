"""What vLLM reads from a DFlash drafter, by running vLLM's own config code: `PYTHON adapter_vllm.py` answers JSON
requests on stdin (see dflash_adapter_io). CPU only, no weights: the launch's configuration is built the way
`vllm serve TARGET --speculative-config ...` builds it (EngineArgs.create_engine_config: the target ModelConfig,
SpeculativeConfig(method="dflash"), VllmConfig), then the drafter the way load_dflash_model configures it, on
the meta device, and the per-layer values are read off the built modules.

Needs VLLM_TARGET_DEVICE=cpu and VLLM_USE_V2_MODEL_RUNNER=1 (V2 is what a GPU host runs by default; without
Triton the CPU platform would pick V1). dflash_cfg.sources.adapters sets both.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dflash_cfg.adapters import dflash_adapter_io as io
else:  # run as a script: this directory is sys.path[0], and dflash_cfg may not be installed here
    import dflash_adapter_io as io

ENGINE = "vllm"
_SLIDING = "sliding_attention"
_FULL = "full_attention"


def setup() -> None:
    io.first_import("torch", "vllm.engine.arg_utils", "vllm.model_executor.model_loader.utils")
    import torch  # noqa: F401 - the engine's own dependency
    from vllm.config import VllmConfig, set_current_vllm_config
    from vllm.distributed import ensure_model_parallel_initialized, init_distributed_environment

    # A one-process gloo group: the model classes read the tensor-parallel world size from it.
    with set_current_vllm_config(VllmConfig()):
        init_distributed_environment(
            world_size=1,
            rank=0,
            local_rank=0,
            backend="gloo",
            # A name in the adapter's own private directory: no other process can race for it (as for a
            # mktemp name in the shared temp dir), and it goes with the directory.
            distributed_init_method="file://" + os.path.join(io.scratch(), "rendezvous"),
        )
        ensure_model_parallel_initialized(1, 1)


def handle(case: io.Case) -> None:
    import torch
    from vllm.config import replace
    from vllm.engine.arg_utils import EngineArgs
    from vllm.model_executor.model_loader import utils as loader_utils
    from vllm.model_executor.models.qwen3_dflash import dflash_has_any_non_causal
    from vllm.v1.worker.gpu.spec_decode.eagle.eagle3_utils import get_eagle3_aux_layers_from_config
    from vllm.v1.worker.gpu.spec_decode.utils import get_parallel_drafting_token_id

    # Per-case state: the architecture cache is keyed by path and architectures, not by the config's content.
    loader_utils._MODEL_ARCH_BY_HASH.clear()
    request = case.request
    drafter = request["drafter"]
    target = request.get("target")
    target = _usable_target(case, target) if target else _stand_in_target(case, drafter)
    spec = dict(request.get("speculative_config") or {})
    spec.setdefault("method", "dflash")
    spec.setdefault("model", drafter)
    if request.get("num_speculative_tokens") is not None:
        spec["num_speculative_tokens"] = request["num_speculative_tokens"]
    elif spec.get("num_speculative_tokens") is None:
        spec["num_speculative_tokens"] = _default_tokens(case, drafter)
    tp = int(request.get("tensor_parallel_size") or 1)
    pp = int(request.get("pipeline_parallel_size") or 1)
    for name, size in (("tensor_parallel_size", tp), ("pipeline_parallel_size", pp)):
        if size != 1:
            case.stand_in(f"{name} {size}: the configuration checks ran with it; the models were built for 1")
    case.stand_in("tokenizer: not loaded (skip_tokenizer_init)")
    args = EngineArgs(
        model=target,
        speculative_config=spec,
        tensor_parallel_size=tp,
        pipeline_parallel_size=pp,
        skip_tokenizer_init=True,
        load_format="dummy",
        max_model_len=request.get("max_model_len"),
    )
    vllm_config = args.create_engine_config()
    spec_config = vllm_config.speculative_config
    draft = spec_config.draft_model_config
    hf = draft.hf_config
    aux = get_eagle3_aux_layers_from_config(spec_config)
    mask = get_parallel_drafting_token_id(hf)
    case.stand_in("target forward pass: not run (which layers the target really captures is not checked)")
    if target == request.get("target"):
        case.reads["max_model_len"] = {
            "served": vllm_config.model_config.max_model_len,
            "target": _target_length(args, target),
        }
        if pp > 1:
            _pipeline_capture(case, vllm_config, spec_config)
    case.stand_in("draft: built on the meta device as load_dflash_model configures it; no weights loaded")
    draft_config = replace(
        vllm_config,
        attention_config=replace(
            vllm_config.attention_config,
            use_non_causal=dflash_has_any_non_causal(hf),
            backend=spec_config.attention_backend,
        ),
    )
    with torch.device("meta"):
        model = loader_utils.initialize_model(draft_config, model_config=draft)
    if spec_config.method == "dflash":
        _speculator_checks(hf, draft.architectures)
    case.reads.update(_model_reads(case, model, hf, dflash_has_any_non_causal))
    case.reads.update(
        {
            "target_layer_ids": [a - 1 for a in aux] if aux else None,
            "engine_layer_ids": list(aux) if aux else None,
            "mask_token_id": mask,
            "num_draft_tokens": spec_config.num_speculative_tokens,
            "block_size": None,  # vLLM never reads it: num_speculative_tokens is the launch's
            "vocab_size": getattr(hf, "vocab_size", None),
        }
    )


def _target_length(args: Any, target: str) -> int:
    """The max_model_len the launch serves its target with when no drafter is attached: what a drafter's
    length can lower (VllmConfig._limit_max_model_len_to_draft)."""
    return int(dataclasses.replace(args, speculative_config=None).create_model_config().max_model_len)


def _pipeline_capture(case: io.Case, vllm_config: Any, spec_config: Any) -> None:
    """With pipeline parallelism the model runner's set-up of the target's capture
    (set_eagle3_aux_hidden_state_layers, use_pp) refuses a target whose decoder cannot relay the tapped hidden
    states between stages: the target built on the meta device, the engine's own set-up run on it."""
    import torch
    from vllm.config import set_current_vllm_config
    from vllm.model_executor.model_loader import utils as loader_utils
    from vllm.v1.worker.gpu.spec_decode.eagle.eagle3_utils import set_eagle3_aux_hidden_state_layers

    try:
        with set_current_vllm_config(vllm_config), torch.device("meta"):
            target = loader_utils.initialize_model(vllm_config, model_config=vllm_config.model_config)
    except Exception as error:  # noqa: BLE001 - the target's own limits here (a CPU build's kernels) are not a refusal
        case.stand_in(f"pipeline capture: the target was not built here ({type(error).__name__}); not checked")
        return
    case.stand_in("pipeline capture: the target built on the meta device, as one stage holding every layer")
    set_eagle3_aux_hidden_state_layers(target, spec_config, use_pp=True)


# The V2 model runner's DFlash speculators (vllm/v1/worker/gpu/spec_decode/__init__.py picks one by architecture).
_XPRESS = ("Qwen3XPressModel", "DFlashQwen3XPressModel")
_SPECULATOR = "worker: the {} speculator's sample_from_anchor check is stood in for (it is built only on a GPU worker)"
# The speculators' constructor checks, built only on a GPU worker.
STAND_INS = {
    "dflash-sample-from-anchor": io.StandIn(
        where="vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:DFlashSpeculator.__init__",
        code='dflash_config.get("sample_from_anchor", False)',
        kind="ValueError",
        message="sample_from_anchor=True is not supported for DFlash. DFlash uses a fixed 1+N query layout where "
        "the anchor is the bonus token.",
        stand_in=_SPECULATOR.format("DFlash"),
    ),
    "xpress-sample-from-anchor": io.StandIn(
        where="vllm/v1/worker/gpu/spec_decode/xpress/speculator.py:XPressSpeculator.__init__",
        code='getattr(hf, "sample_from_anchor", False)',
        kind="ValueError",
        message="sample_from_anchor=True is not supported for XPress: the refiner is trained and served in the "
        "fill-in layout (anchor at slot 0, slots 1..N predicted).",
        stand_in=_SPECULATOR.format("XPress"),
    ),
}


def _speculator_checks(hf: Any, architectures: list[str]) -> None:
    """The refusals of the speculator's constructor, which the adapter cannot build on CPU: the same tests on the
    same config, in the order the engine makes them (XPressSpeculator runs DFlashSpeculator's first)."""
    dflash_config = getattr(hf, "dflash_config", None) or {}
    if dflash_config.get("sample_from_anchor", False):
        raise io.Refused(STAND_INS["dflash-sample-from-anchor"])
    if any(arch in _XPRESS for arch in architectures) and getattr(hf, "sample_from_anchor", False):
        raise io.Refused(STAND_INS["xpress-sample-from-anchor"])


def _model_reads(case: io.Case, model: Any, hf: Any, has_any_non_causal: Any) -> dict[str, Any]:
    inner = getattr(model, "model", model)
    layers = list(inner.layers)
    if hasattr(model, "get_draft_attn_causal"):
        causal = [bool(c) for c in model.get_draft_attn_causal()]
    else:
        case.stand_in(
            f"causal: {type(model).__name__} has no per-layer flag; dflash_has_any_non_causal decides for all layers"
        )
        causal = [not has_any_non_causal(hf)] * len(layers)
    windows, types, rope, sinks = [], [], [], []
    for layer in layers:
        attn = getattr(layer, "self_attn", None)
        window = getattr(attn, "sliding_window", None)
        windows.append(window)
        types.append(_SLIDING if window is not None else _FULL)
        rope.append(_rope(getattr(attn, "rotary_emb", None)))
        sinks.append(getattr(attn, "attention_sink_bias", None) is not None)
    full = [r for r, t in zip(rope, types, strict=True) if t == _FULL]
    head = getattr(model, "lm_head", None)
    fc = getattr(inner, "fc", None)
    return {
        "layer_types": types,
        "sliding_window": windows,
        "causal": causal,
        "rope": rope,
        "rope_theta": (full or rope or [{}])[0].get("theta"),
        "attention_sink": any(sinks),
        "logit_scalars": _logit_scalars(model, inner, layers),
        "fc_in_features": getattr(fc, "input_size", getattr(fc, "in_features", None)),
        "lm_head_size": getattr(head, "num_embeddings", None),
        "architecture": type(model).__name__,
    }


def _rope(rotary: Any) -> dict[str, Any]:
    if rotary is None:
        return {"theta": None, "scaling": None, "neox": None}
    name = type(rotary).__name__
    scaling = None
    if name != "RotaryEmbedding":
        scaling = {"class": name, "factor": getattr(rotary, "scaling_factor", None)}
    base = getattr(rotary, "base", None)
    theta = float(base) if isinstance(base, (int, float)) else base
    return {"theta": theta, "scaling": scaling, "neox": getattr(rotary, "is_neox_style", None)}


def _logit_scalars(model: Any, inner: Any, layers: list[Any]) -> dict[str, Any]:
    scalars: dict[str, Any] = {}
    processor = getattr(model, "logits_processor", None)
    if processor is not None:
        scalars["logit_scale"] = getattr(processor, "scale", None)
        scalars["logit_soft_cap"] = getattr(processor, "soft_cap", None)
    candidates = getattr(model, "candidate_logits_processor", None)  # DFlash2: the selector's logits
    scalars["output_multiplier"] = getattr(candidates, "scale", None) if candidates is not None else None
    scalars["final_logit_softcapping"] = getattr(candidates, "soft_cap", None) if candidates is not None else None
    scalars["input_embedding_scale"] = getattr(inner, "input_embedding_scale", None)
    attn = getattr(layers[0], "self_attn", None) if layers else None
    scalars["attention_value_scale"] = getattr(attn, "v_scale", None)
    return scalars


def _default_tokens(case: io.Case, drafter: str) -> int:
    """vLLM refuses a launch without num_speculative_tokens; with none given, the drafter's own number stands in."""
    config = io.read_config(drafter)
    methods = _dict(config.get("speculators_config")).get("proposal_methods") or [{}]
    tokens = _dict(methods[0]).get("speculative_tokens")
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0:
        case.stand_in(f"num_speculative_tokens: none given; {tokens} from speculators_config stands in")
        return tokens
    block = _dict(config.get("dflash_config")).get("block_size", config.get("block_size"))
    if isinstance(block, int) and not isinstance(block, bool) and block > 1:
        case.stand_in(f"num_speculative_tokens: none given; block_size - 1 = {block - 1} stands in")
        return block - 1
    case.stand_in("num_speculative_tokens: none given and no block_size; 15 stands in")
    return 15


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _usable_target(case: io.Case, target: str) -> str:
    """The target, when vLLM can load its config here; else the stand-in. A target that needs remote code (or
    that this vLLM does not know) is the target's limit on this host, not the drafter's refusal."""
    from vllm.transformers_utils.config import get_config

    try:
        get_config(target, trust_remote_code=False)
    except Exception as error:  # noqa: BLE001 - any failure: the stand-in below says why
        case.stand_in(f"target: vLLM cannot load it here ({type(error).__name__}: {str(error)[:160]})")
        return _stand_in_target(case, case.request["drafter"])
    return target


def _stand_in_target(case: io.Case, drafter: str) -> str:
    """No usable target: a Qwen3 config as wide as the drafter, deep enough for its taps, stands in for one."""
    config = io.read_config(drafter)
    text: dict[str, Any] = _dict(config.get("transformer_layer_config"))
    dflash: dict[str, Any] = _dict(config.get("dflash_config"))

    def number(key: str, default: int) -> int:
        for source in (config, text):
            value = source.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
        return default

    taps = dflash.get("target_layer_ids") or config.get("aux_hidden_state_layer_ids") or []
    deepest = max([t for t in taps if isinstance(t, int) and not isinstance(t, bool)] or [0])
    hidden = number("target_hidden_size", number("hidden_size", 1024))
    layers = number("num_target_layers", deepest + 2)
    stand_in = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": hidden,
        "intermediate_size": hidden * 3,
        "num_hidden_layers": layers,
        "num_attention_heads": 8,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": number("vocab_size", 32000),
        "max_position_embeddings": number("max_position_embeddings", 32768),
        "rope_theta": 1000000.0,
        "torch_dtype": "bfloat16",
    }
    folder = tempfile.mkdtemp(prefix="target-", dir=io.scratch())  # removed with the adapter's directory
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as out:
        json.dump(stand_in, out)
    case.stand_in(
        f"target: a Qwen3 config with the drafter's hidden_size {hidden} and vocab_size, {layers} layers, stands in"
    )
    return folder


if __name__ == "__main__":
    io.serve(ENGINE, setup, handle)

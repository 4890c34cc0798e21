"""What SGLang reads from a DFlash drafter, by running SGLang's own config code: `PYTHON adapter_sglang.py` answers
JSON requests on stdin (see dflash_adapter_io). CPU only, no weights, in the order a server starts: the draft
ModelConfig (is_draft_model, speculative_algorithm="DFLASH") and parse_dflash_draft_config; the taps resolved
against the target's layer count as the target's model runner resolves them; the target class built on the
meta device and its capture configured (configure_aux_hidden_state_capture); then the draft class the registry
resolves, built on the meta device, with the per-layer values read off its modules.

ServerArgs itself is not built (its DFLASH set-up refuses device cpu): a dummy published config and a
tensor/pipeline-parallel state of size 1 stand in for it.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dflash_cfg.adapters import dflash_adapter_io as io
else:  # run as a script: this directory is sys.path[0], and dflash_cfg may not be installed here
    import dflash_adapter_io as io

ENGINE = "sglang"
_SLIDING = "sliding_attention"
_FULL = "full_attention"
# The worker's calls on the draft model, made only where the worker is built (a GPU host).
STAND_INS = {
    "set-block-size": io.StandIn(
        where="sglang/srt/speculative/dflash_worker_v2.py:DFlashWorkerV2.__init__",
        code="self.draft_model.set_block_size(self.block_size)",
        kind="AttributeError",
        message=None,
        stand_in="worker: DFlashWorkerV2's draft_model.set_block_size call is stood in for (the worker is not built "
        "here)",
    ),
}


def setup() -> None:
    io.first_import(
        "torch",
        "sglang.srt.configs.model_config",
        "sglang.srt.models.registry",
        "sglang.srt.speculative.dflash_utils",
        "sglang.srt.model_executor.model_runner_components.attention_backend_setup",
    )


@contextlib.contextmanager
def _one_process(model_path: str | None) -> Iterator[None]:
    """Build models as one rank of tp 1 and pp 1 would, with no process group (none is needed to construct).
    `model_path` is the served model, the target, as a server's context holds it: model classes read it (Qwen3.5
    looks for a joint_head_config.json there), and the dummy context's "dummy" would send them to the Hub."""
    from sglang.srt.runtime_context import get_context, get_parallel

    pipeline = types.SimpleNamespace(
        world_size=1, rank_in_group=0, rank=0, local_rank=0, is_first_rank=True, is_last_rank=True
    )
    with (
        get_context().override_server_args(device="cpu", **({"model_path": model_path} if model_path else {})),
        get_parallel().override(
            tp_size=1, tp_rank=0, attn_tp_size=1, attn_tp_rank=0, pp_size=1, pp_rank=0, pp_group=pipeline
        ),
    ):
        yield


def handle(case: io.Case) -> None:
    import torch
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.models.registry import ModelRegistry
    from sglang.srt.speculative.dflash_utils import parse_dflash_draft_config

    request = case.request
    case.stand_in("ServerArgs: not built (its DFLASH set-up refuses device cpu); a dummy config for device cpu")
    case.stand_in("parallel state: tp 1, pp 1 stated with get_parallel().override, no process group")
    tp = int(request.get("tensor_parallel_size") or 1)
    if tp != 1:
        case.stand_in(f"tensor_parallel_size {tp}: the models were built for 1")
    draft_model_config = ModelConfig(request["drafter"], is_draft_model=True, speculative_algorithm="DFLASH")
    hf = draft_model_config.hf_config
    parsed = parse_dflash_draft_config(draft_hf_config=hf)
    target_hf, taps = _target_taps(case, request.get("target"), hf, parsed)
    if target_hf is not None:
        _capture(case, request["target"], target_hf, taps)
    case.stand_in("draft: built on the meta device; no weights loaded")
    cls, _ = ModelRegistry.resolve_model_cls(getattr(hf, "architectures", None) or [])
    with _one_process(request.get("target") if target_hf is not None else None), torch.device("meta"):
        model = cls(config=hf, quant_config=None)
    tokens = request.get("num_speculative_tokens")
    if tokens is None:
        # _handle_dflash (ServerArgs, not run here) infers --speculative-num-draft-tokens this way.
        tokens = parsed.resolve_block_size(default=None) or 16
        case.stand_in(f"num_draft_tokens: none given; {tokens} by _handle_dflash's rule (block_size, else 16)")
    if not hasattr(model, "set_block_size"):
        # DFlashWorkerV2 calls draft_model.set_block_size(block_size) on whatever class the registry built:
        # a non-DFlash class (the target's Qwen3ForCausalLM) has none.
        raise io.Refused(
            STAND_INS["set-block-size"], f"'{type(model).__name__}' object has no attribute 'set_block_size'"
        )
    if parsed.mask_token_id is None:
        case.stand_in("mask_token_id: none in the config; the worker would resolve mask_token with the tokenizer")
    case.stand_in("worker: the mask id's checks against the target's vocab and tokenizer are not run")
    case.reads.update(_model_reads(case, model))
    file_taps = list(parsed.target_layer_ids) if parsed.target_layer_ids is not None else None
    case.reads.update(
        {
            "target_layer_ids": taps if file_taps is None or taps == file_taps else file_taps,
            "engine_layer_ids": taps if file_taps is not None and taps != file_taps else None,
            "mask_token_id": parsed.mask_token_id,
            "num_draft_tokens": tokens,
            "block_size": getattr(model, "block_size", None),
            "vocab_size": getattr(hf, "vocab_size", None),
        }
    )


def _target_taps(case: io.Case, target: str | None, hf: Any, parsed: Any) -> tuple[Any, list[int]]:
    """The taps the target's model runner captures (spec_aux_hidden_state._resolve_dflash_aux_hidden_state, which
    needs ServerArgs: its steps are called here one by one), and the target config when one could be loaded."""
    from sglang.srt.model_executor.model_runner_components import spec_aux_hidden_state as aux

    draft_layers = parsed.require_num_layers()
    target_hf = _load_target(case, target) if target else None
    if target_hf is None:
        if not target:
            case.stand_in("target: none given; the draft's own bound (num_target_layers, else max tap + 1) stands in")
        bound = parsed.num_target_layers
        if bound is None:
            bound = max(parsed.target_layer_ids) + 1 if parsed.target_layer_ids else draft_layers
        return None, list(parsed.resolve_target_layer_ids(target_num_layers=bound, draft_num_layers=draft_layers))
    text = target_hf.get_text_config() if hasattr(target_hf, "get_text_config") else target_hf
    layers = int(text.num_hidden_layers) * int(getattr(text, "num_loops", 1) or 1)
    taps = parsed.resolve_target_layer_ids(target_num_layers=layers, draft_num_layers=draft_layers)
    taps = aux._map_muse_target_layer_ids(target_hf_config=target_hf, draft_hf_config=hf, layer_ids=taps)
    return target_hf, list(taps)


def _load_target(case: io.Case, target: str) -> Any:
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.utils.hf_transformers_utils import get_config

    try:
        return ModelConfig(target).hf_config
    except Exception as error:  # noqa: BLE001 - e.g. mxfp4 targets: the CPU build lacks the quantization
        first = f"{type(error).__name__}: {error}"[:200]
    try:
        hf = get_config(target, trust_remote_code=False)
    except Exception as error:  # noqa: BLE001 - e.g. a target that needs remote code
        case.stand_in(f"target: SGLang cannot load it here ({first}; get_config: {type(error).__name__}); not used")
        return None
    case.stand_in(f"target: ModelConfig failed here ({first}); SGLang's get_config read it")
    return hf


def _capture(case: io.Case, target: str, target_hf: Any, taps: list[int]) -> None:
    """The target's capture of the taps, as the model runner configures it: the target class built on meta."""
    import torch
    from sglang.srt.model_executor.model_runner_components.attention_backend_setup import (
        configure_aux_hidden_state_capture,
    )
    from sglang.srt.models.registry import ModelRegistry

    try:
        cls, _ = ModelRegistry.resolve_model_cls(getattr(target_hf, "architectures", None) or [])
        with _one_process(target), torch.device("meta"):
            target_model = cls(config=target_hf, quant_config=None)
    except Exception as error:  # noqa: BLE001 - the target's own limits here are not the drafter's refusal
        case.stand_in(f"target capture: the target class was not built here ({type(error).__name__}); not checked")
        return
    case.stand_in("target: built on the meta device only to configure its capture; no forward pass")
    with _one_process(target):
        configure_aux_hidden_state_capture(
            model=target_model,
            eagle_use_aux_hidden_state=False,
            eagle_aux_hidden_state_layer_ids=None,
            dflash_use_aux_hidden_state=True,
            dflash_target_layer_ids=taps,
            is_dspark=False,
        )


def _model_reads(case: io.Case, model: Any) -> dict[str, Any]:
    from sglang.srt.layers.radix_attention import AttentionType

    layers = list(model.layers)
    windows, engine_windows, types_, causal, rope, sinks = [], [], [], [], [], []
    for layer in layers:
        attn = layer.self_attn
        left = getattr(attn, "sliding_window_size", None)  # SGLang's window_left: the file's window - 1
        engine_windows.append(left)
        window = left + 1 if isinstance(left, int) and left >= 0 else None
        windows.append(window)
        types_.append(_SLIDING if window is not None else _FULL)
        causal.append(getattr(attn, "attn_type", None) == AttentionType.DECODER)
        rotary = getattr(attn, "rotary_emb", None)
        base = getattr(rotary, "base", None)
        name = type(rotary).__name__
        rope.append(
            {
                "theta": float(base) if isinstance(base, (int, float)) else base,
                "scaling": None
                if name == "RotaryEmbedding"
                else {"class": name, "factor": getattr(rotary, "scaling_factor", None)},
                "neox": getattr(rotary, "is_neox_style", None),
            }
        )
        sinks.append(getattr(attn, "attention_sink_bias", None) is not None)
    full = [r for r, t in zip(rope, types_, strict=True) if t == _FULL]
    draft = getattr(model, "draft_config", None)
    unary = hasattr(model, "_transform_unary_logits")  # DFlash2: scales and caps the selector's logits
    fc = getattr(model, "fc", None)
    case.stand_in("lm_head: the draft has none of its own; SGLang uses the target's")
    return {
        "layer_types": types_,
        "sliding_window": windows,
        "engine_sliding_window": engine_windows,
        "causal": causal,
        "rope": rope,
        "rope_theta": (full or rope or [{}])[0].get("theta"),
        "attention_sink": any(sinks),
        "logit_scalars": {
            "output_multiplier": getattr(draft, "output_multiplier", None) if unary else None,
            "final_logit_softcapping": getattr(draft, "final_logit_softcapping", None) if unary else None,
            "attention_value_scale": getattr(layers[0].self_attn, "v_scale", None) if layers else None,
        },
        "fc_in_features": getattr(fc, "in_features", getattr(fc, "input_size", None)),
        "lm_head_size": None,
        "architecture": type(model).__name__,
    }


if __name__ == "__main__":
    io.serve(ENGINE, setup, handle)

"""What speculators reads from a DFlash drafter: `PYTHON adapter_speculators.py` answers JSON requests on stdin
(see dflash_adapter_io) with SpeculatorModelConfig.from_pretrained, the loader of speculators-format checkpoints.
No model is built: the reads are the config class's fields as the loader validated them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dflash_cfg.adapters import dflash_adapter_io as io
else:  # run as a script: this directory is sys.path[0], and dflash_cfg may not be installed here
    import dflash_adapter_io as io

ENGINE = "speculators"
_SLIDING = "sliding_attention"


def setup() -> None:
    io.first_import("speculators")


def handle(case: io.Case) -> None:
    from speculators import SpeculatorModelConfig

    if case.request.get("target"):
        case.stand_in("target: not read (the config loader does not take one)")
    case.stand_in("draft: no model built; the values are the loaded config class's fields")
    config = SpeculatorModelConfig.from_pretrained(case.request["drafter"])
    layer = getattr(config, "transformer_layer_config", None)
    aux = getattr(config, "aux_hidden_state_layer_ids", None)
    depth = getattr(layer, "num_hidden_layers", None)
    kinds = getattr(layer, "layer_types", None)
    kinds = list(kinds) if kinds is not None else None
    window = getattr(layer, "sliding_window", None)
    rope = getattr(layer, "rope_parameters", None) or {}
    theta = rope.get("rope_theta") if isinstance(rope, dict) else None
    scaling = {k: v for k, v in rope.items() if k != "rope_theta"} if isinstance(rope, dict) else None
    if scaling is not None and scaling.get("rope_type") in (None, "default") and len(scaling) <= 1:
        scaling = None
    entry = {"theta": float(theta) if isinstance(theta, (int, float)) else theta, "scaling": scaling}
    case.stand_in("causal: decided by the model code from sliding_window_non_causal (not built); not reported")
    case.reads.update(
        {
            "target_layer_ids": [a - 1 for a in aux] if aux else None,
            "engine_layer_ids": list(aux) if aux else None,
            "mask_token_id": getattr(config, "mask_token_id", None),
            "num_draft_tokens": _speculative_tokens(config),
            "block_size": getattr(config, "block_size", None),
            "layer_types": kinds,
            "sliding_window": [window if k == _SLIDING else None for k in kinds] if kinds else None,
            "causal": None,
            "rope": [entry] * depth if isinstance(depth, int) else None,
            "rope_theta": entry["theta"],
            "attention_sink": None,
            "logit_scalars": {},
            "fc_in_features": None,
            "vocab_size": getattr(layer, "vocab_size", None),
            "lm_head_size": getattr(config, "draft_vocab_size", None),
            "architecture": type(config).__name__,
            "sliding_window_non_causal": getattr(config, "sliding_window_non_causal", None),
        }
    )


def _speculative_tokens(config: Any) -> Any:
    methods = getattr(getattr(config, "speculators_config", None), "proposal_methods", None) or []
    return getattr(methods[0], "speculative_tokens", None) if methods else None


if __name__ == "__main__":
    io.serve(ENGINE, setup, handle)

"""DF16x: the speculators format (vLLM's): what its translator needs from the file as written."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_cfg.lint.rules.base import Context, rule
from dflash_cfg.model import Problem, Severity

SPECULATORS_REQUIRED = (
    ("/aux_hidden_state_layer_ids", "aux_hidden_state_layer_ids"),
    ("/mask_token_id", "mask_token_id"),
)


@rule(
    "DF161",
    "speculators-structure",
    Severity.ERROR,
    kinds=("speculators",),
    reads=(
        "speculators:aux_hidden_state_layer_ids",
        "speculators:mask_token_id",
        "speculators:transformer_layer_config",
        "speculators:speculators_config",
    ),
)
def speculators_structure(ctx: Context) -> Iterator[Problem]:
    """A speculators-format file lacks what vLLM's translator needs, so vLLM refuses it.

    ``SpeculatorsConfig`` requires ``transformer_layer_config`` (an object) and
    ``speculators_config.proposal_methods[0].speculative_tokens`` and ``verifier.name_or_path``;
    ``update_dflash`` indexes ``aux_hidden_state_layer_ids`` and ``mask_token_id`` (KeyError when absent).

    Fail: ``{"speculators_model_type": "dflash", "transformer_layer_config": {...}}`` without
    ``aux_hidden_state_layer_ids``
    Pass: the same with ``"aux_hidden_state_layer_ids": [2, 10, 18, 26, 34]`` and ``"mask_token_id": 151669``
    """
    doc = ctx.written  # ctx.data is vLLM's translation; the structure is checked on the file as written
    if doc is None:
        return
    layer = doc.get("transformer_layer_config")
    if not isinstance(layer, dict):
        state = "missing" if layer is None else f"a {type(layer).__name__}, not an object"
        yield Problem("/transformer_layer_config", f"transformer_layer_config is {state}: vLLM refuses the file")
    for where, key in SPECULATORS_REQUIRED:
        if key not in doc:
            yield Problem(where, f"{key} missing: vLLM's speculators translator raises KeyError")
    spec = doc.get("speculators_config")
    methods = spec.get("proposal_methods") if isinstance(spec, dict) else None
    first = methods[0] if isinstance(methods, list) and methods else None
    verifier = spec.get("verifier") if isinstance(spec, dict) else None
    if not isinstance(first, dict) or "speculative_tokens" not in first:
        yield Problem(
            "/speculators_config/proposal_methods",
            "speculators_config.proposal_methods[0].speculative_tokens missing: vLLM refuses the file "
            "(Invalid speculators config structure)",
        )
    if not isinstance(verifier, dict) or "name_or_path" not in verifier:
        yield Problem(
            "/speculators_config/verifier",
            "speculators_config.verifier.name_or_path missing: vLLM refuses the file "
            "(Invalid speculators config structure)",
        )


RULES = (speculators_structure,)

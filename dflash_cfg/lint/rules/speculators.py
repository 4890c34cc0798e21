"""DF16x: the speculators format (vLLM's): what its translator needs from the file as written."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_cfg.lint.engines import sglang, speculators
from dflash_cfg.lint.rules.base import Context, rule, show
from dflash_cfg.model import Problem, Requirement, Severity

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
        speculators.AUX_HIDDEN_STATE_LAYER_IDS,
        speculators.MASK_TOKEN_ID,
        speculators.TRANSFORMER_LAYER_CONFIG,
        speculators.SPECULATORS_CONFIG,
    ),
)
def speculators_structure(ctx: Context) -> Iterator[Problem]:
    """A speculators-format file lacks what vLLM's translator needs, so vLLM refuses it.

    ``update_dflash`` indexes ``aux_hidden_state_layer_ids`` and ``mask_token_id``: {vLLM} raises
    KeyError without them however it is launched. ``transformer_layer_config`` (an object) and
    ``speculators_config.proposal_methods[0].speculative_tokens`` and ``verifier.name_or_path`` are
    required only when the directory is the served model (``vllm serve <dir>``: ``SpeculatorsConfig``
    raises); through ``--speculative-config '{"model": "<dir>"}'`` {vLLM} accepts the file without
    them (the launch gives the target and the token count).

    A file whose ``speculators_config.algorithm`` is ``dflash`` but whose ``speculators_model_type`` says
    otherwise (``eagle3``) is refused too: vLLM picks its translator by the label and finds no DFlash mask
    token ("Model config must specify ... for parallel drafting", checked by running {vLLM}).

    SGLang cannot load the format at all: DF162.

    Fail: ``{"speculators_model_type": "dflash", "transformer_layer_config": {...}}`` without
    ``aux_hidden_state_layer_ids``
    Pass: the same with ``"aux_hidden_state_layer_ids": [2, 10, 18, 26, 34]`` and ``"mask_token_id": 151669``
    """
    doc = ctx.written  # ctx.data is vLLM's translation; the structure is checked on the file as written
    if doc is None:
        return
    label = doc.get("speculators_model_type")
    if label != "dflash":
        yield Problem(
            pointer="/speculators_model_type",
            message=f"speculators_model_type {show(label)} on a file whose speculators_config.algorithm is dflash: "
            "vLLM translates it as that algorithm and refuses a DFlash launch (no mask token for parallel drafting)",
        )
    layer = doc.get("transformer_layer_config")
    if not isinstance(layer, dict):
        state = "missing" if layer is None else f"a {type(layer).__name__}, not an object"
        yield Problem(
            pointer="/transformer_layer_config",
            message=f"transformer_layer_config is {state}: `vllm serve` of this directory refuses it "
            "(--speculative-config accepts it)",
        )
    for where, key in SPECULATORS_REQUIRED:
        if key not in doc:
            yield Problem(
                pointer=where, message=f"{key} missing: vLLM's speculators translator raises KeyError (any launch)"
            )
    spec = doc.get("speculators_config")
    methods = spec.get("proposal_methods") if isinstance(spec, dict) else None
    first = methods[0] if isinstance(methods, list) and methods else None
    verifier = spec.get("verifier") if isinstance(spec, dict) else None
    if not isinstance(first, dict) or "speculative_tokens" not in first:
        yield Problem(
            pointer="/speculators_config/proposal_methods",
            message="speculators_config.proposal_methods[0].speculative_tokens missing: `vllm serve` of this directory "
            "refuses it (Invalid speculators config structure; --speculative-config accepts it)",
        )
    if not isinstance(verifier, dict) or "name_or_path" not in verifier:
        yield Problem(
            pointer="/speculators_config/verifier",
            message="speculators_config.verifier.name_or_path missing: `vllm serve` of this directory refuses it "
            "(Invalid speculators config structure; --speculative-config accepts it)",
        )


@rule("DF162", "speculators-not-sglang", Severity.WARNING, kinds=("speculators",), reads=(sglang.MODEL_TYPE,))
def speculators_not_sglang(ctx: Context) -> Iterator[Problem]:
    """A speculators-format drafter: SGLang cannot load it.

    {SGLang}'s ``ModelConfig`` reads the directory's config.json through transformers, which finds no
    top-level ``model_type`` in the speculators format and raises "Unrecognized model ... Should have a
    `model_type` key" whatever else the file holds (checked by running it). A warning, not an error: a real
    published drafter (RedHatAI/DeepSeek-V4-Flash-speculator.dflash) is in this format on purpose and serves
    with vLLM. The warning concerns SGLang only: a gate fails on it only where SGLang serves the drafter
    (an SGLang launch in ``preflight``, ``engines = ["sglang"]`` or ``--engine sglang`` for ``check``).

    Fail (warning): ``{"speculators_model_type": "dflash", ...}`` without a top-level ``model_type``
    Pass: a z-lab-format drafter (``"model_type": "qwen3"``, ``"dflash_config": {...}``)
    """
    doc = ctx.written
    if doc is not None and "model_type" not in doc:
        yield Problem(
            pointer="/speculators_model_type",
            message="a speculators-format drafter: SGLang refuses the directory (no top-level model_type; it loads "
            "only the z-lab format); serve it with vLLM",
            engines=(Requirement("sglang"),),
        )


@rule(
    "DF163",
    "speculators-causality",
    Severity.ERROR,
    kinds=("speculators",),
    reads=(speculators.SLIDING_WINDOW_NON_CAUSAL,),
)
def speculators_causality(ctx: Context) -> Iterator[Problem]:
    """A speculators ``dflash`` file with sliding layers and no ``sliding_window_non_causal``: vLLM runs them
    non-causal, the speculators library causal.

    The speculators library's DFlash config defaults ``sliding_window_non_causal`` to false (sliding layers
    causal: the model it trains); vLLM's translation defaults it to true and writes ``dflash_config.causal:
    false``, so every sliding layer is served non-causal (checked by running both: tests/engines/test_branches.py,
    switch ``speculators-non-causal-absent``). DFlash2 files default to true in both.

    Fail: ``"speculators_model_type": "dflash"``, sliding ``transformer_layer_config.layer_types``, no
    ``sliding_window_non_causal``
    Pass: the same with ``"sliding_window_non_causal": false`` (RedHatAI/DeepSeek-V4-Flash-speculator.dflash)
    """
    doc = ctx.written
    if doc is None or doc.get("speculators_model_type") != "dflash" or "sliding_window_non_causal" in doc:
        return
    layer = doc.get("transformer_layer_config")
    types = layer.get("layer_types") if isinstance(layer, dict) else None
    sliding = sum(t == "sliding_attention" for t in types) if isinstance(types, list) else 0
    if sliding:
        yield Problem(
            pointer="/speculators_model_type",
            message=f"no sliding_window_non_causal on a dflash file with {sliding} sliding layers: the speculators "
            "library reads false (causal sliding layers, as it trains them), vLLM's translation reads true and runs "
            "every layer non-causal; write sliding_window_non_causal: false",
            engines=(Requirement("vllm"),),
        )


RULES = (speculators_structure, speculators_not_sglang, speculators_causality)

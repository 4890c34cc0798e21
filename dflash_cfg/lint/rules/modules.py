"""DF15x: the keys an engine's drafter class builds its modules from (the MLP, ``fc``, the draft vocabulary).

Each class has its own needs, so a rule here names the architectures it applies to.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from dflash_cfg.jsondoc.pointer import pointer
from dflash_cfg.lint.engines import sglang, vllm
from dflash_cfg.lint.rules.base import ENGINE_FORMAT, Context, rule, show
from dflash_cfg.model import Problem, Severity

# The architectures whose engine model is the Qwen3-style DFlash stack (vLLM qwen3_dflash, SGLang DFlashDraftModel).
QWEN_STACK = ("DFlashDraftModel", "DFlash2DraftModel")


@rule("DF151", "hidden-act", Severity.ERROR, reads=(sglang.HIDDEN_ACT, vllm.HIDDEN_ACT))
def hidden_act(ctx: Context) -> Iterator[Problem]:
    """``hidden_act`` is not ``silu`` on a Qwen-stack drafter (``DFlashDraftModel``/``DFlash2DraftModel``).

    {vLLM} builds the MLP as ``Qwen2MLP`` (imported as ``Qwen3MLP``), which raises "Unsupported
    activation: ... Only silu is supported for now."; {SGLang}'s ``DFlashMLP`` builds silu and
    ``swigluoai`` and raises "Unsupported DFlash activation" for anything else (both checked by running
    them). Drafters of other families (Laguna) have their own engine model and are not checked here.

    Fail: ``"hidden_act": "gelu"``
    Pass: ``"hidden_act": "silu"`` (or absent: the config class default is silu)
    """
    archs = ctx.data.get("architectures")
    if not isinstance(archs, list) or not any(a in QWEN_STACK for a in archs):
        return
    act = ctx.data.get("hidden_act")
    if act is not None and act != "silu":
        yield Problem(
            pointer="/hidden_act",
            message=f"hidden_act {show(act)}: vLLM's DFlash MLP builds only silu and refuses the file; SGLang's builds "
            + (
                "swigluoai only with swiglu_alpha and swiglu_limit"
                if act == "swigluoai"
                else "silu and swigluoai and refuses it too"
            ),
        )


@rule("DF152", "laguna-draft-vocab", Severity.ERROR, reads=(vllm.DRAFT_VOCAB_SIZE,))
def laguna_draft_vocab(ctx: Context) -> Iterator[Problem]:
    """A ``DFlashLagunaForCausalLM`` drafter has no ``draft_vocab_size``.

    vLLM's Laguna DFlash model raises "Laguna DFlash config requires `draft_vocab_size`" and the server does
    not start. The published Laguna drafters set it to the target vocabulary (100352).

    Fail: ``"architectures": ["DFlashLagunaForCausalLM"]`` without ``draft_vocab_size``
    Pass: the same with ``"draft_vocab_size": 100352``
    """
    archs = ctx.data.get("architectures")
    if isinstance(archs, list) and "DFlashLagunaForCausalLM" in archs and ctx.data.get("draft_vocab_size") is None:
        yield Problem(
            pointer="/draft_vocab_size",
            message="draft_vocab_size missing on a DFlashLagunaForCausalLM drafter: vLLM refuses the file "
            "(Laguna DFlash config requires draft_vocab_size)",
        )


@rule("DF153", "aux-hidden-state-off", Severity.ERROR, reads=(vllm.USE_AUX_HIDDEN_STATE,))
def aux_hidden_state_off(ctx: Context) -> Iterator[Problem]:
    """``use_aux_hidden_state`` is false where vLLM reads it.

    vLLM merges ``dflash_config`` over ``eagle_config`` and reads ``use_aux_hidden_state`` from the result,
    then from the top level (default true): a value in ``dflash_config`` wins over one in ``eagle_config``,
    which wins over the top level. A false value builds no ``fc`` layer, so the drafter drafts without the
    target's hidden states it was trained on (its ``fc`` weights are dropped). SGLang does not read the key
    and always feeds them. Every DFlash drafter reads target features: the switch belongs to EAGLE configs.

    Fail: ``"dflash_config": {"use_aux_hidden_state": false, ...}``
    Pass: ``use_aux_hidden_state`` absent or true (or false, overridden by ``dflash_config``'s true)
    """
    for where in ("dflash_config", "eagle_config", None):
        node = ctx.data.get(where) if where else ctx.data
        if isinstance(node, dict) and "use_aux_hidden_state" in node:
            value = node["use_aux_hidden_state"]
            name = f"{where}.use_aux_hidden_state" if where else "use_aux_hidden_state"
            if not value:
                yield Problem(
                    pointer=pointer(where, "use_aux_hidden_state") if where else "/use_aux_hidden_state",
                    message=f"{name} is {json.dumps(value)}: vLLM then builds no fc layer and drafts without the "
                    "target's hidden states (SGLang feeds them); remove the key",
                )
            return  # vLLM reads the first place that has the key, even a null (read as false)


@rule(
    "DF154",
    "target-hidden-size-differs",
    Severity.ERROR,
    kinds=ENGINE_FORMAT,
    reads=(vllm.TARGET_HIDDEN_SIZE, sglang.HIDDEN_SIZE, sglang.CHECKPOINT_TENSORS),
)
def target_hidden_size_differs(ctx: Context) -> Iterator[Problem]:
    """``target_hidden_size`` is set and differs from ``hidden_size`` on a ``DFlashDraftModel`` drafter.

    vLLM sizes the ``fc`` input as K × ``target_hidden_size`` (K = number of taps); SGLang's
    ``DFlashDraftModel`` does not read ``target_hidden_size`` and builds ``fc`` as K × ``hidden_size``, so
    the trained ``fc`` weights do not fit and SGLang refuses the checkpoint ("DFLASH fc.weight shape
    mismatch"). No published drafter sets the key; one that needs it serves only on vLLM.

    Fail: ``"hidden_size": 2560``, ``"target_hidden_size": 4096``
    Pass: no ``target_hidden_size``, or the same value as ``hidden_size``
    """
    archs = ctx.data.get("architectures")
    if not isinstance(archs, list) or "DFlashDraftModel" not in archs:
        return  # the SGLang model read is DFlashDraftModel's; other classes have their own
    declared, hidden = ctx.int_field("target_hidden_size"), ctx.int_field("hidden_size")
    if declared is not None and hidden is not None and declared != hidden:
        yield Problem(
            pointer="/target_hidden_size",
            message=f"target_hidden_size {declared} differs from hidden_size {hidden}: vLLM builds fc for "
            f"{declared}-wide target states, SGLang for {hidden}-wide ones and refuses the trained fc weights",
        )


@rule("DF155", "laguna-mixed-layers", Severity.ERROR, reads=(vllm.LAYER_TYPES,))
def laguna_mixed_layers(ctx: Context) -> Iterator[Problem]:
    """A ``DFlashLagunaForCausalLM`` drafter mixes full and sliding layers in ``layer_types``.

    vLLM's Laguna DFlash model builds one attention flavour for every layer and raises "Laguna DFlash
    drafter requires a uniform `layer_types`": the server does not start. SGLang builds each layer as
    listed. The published Laguna drafters are all sliding (checked by running {vLLM} on them and on
    mutants with one layer flipped).

    Fail: ``"architectures": ["DFlashLagunaForCausalLM"]``, ``"layer_types": ["full_attention",
    "sliding_attention"]``
    Pass: the same with every layer ``sliding_attention`` (or every layer ``full_attention``)
    """
    archs, types = ctx.data.get("architectures"), ctx.data.get("layer_types")
    if not isinstance(archs, list) or "DFlashLagunaForCausalLM" not in archs or not isinstance(types, list):
        return
    kinds = sorted({t for t in types if isinstance(t, str)})
    if len(kinds) > 1:
        yield Problem(
            pointer="/layer_types",
            message=f"layer_types mixes {' and '.join(kinds)} on a DFlashLagunaForCausalLM drafter: vLLM's "
            "Laguna drafter requires one kind for every layer and refuses the file; SGLang builds each layer as listed",
        )


RULES = (hidden_act, laguna_draft_vocab, aux_hidden_state_off, target_hidden_size_differs, laguna_mixed_layers)

"""DF15x: the keys an engine's drafter class builds its modules from (the MLP, ``fc``, the draft vocabulary).

Each class has its own needs, so a rule here names the architectures it applies to.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from dflash_cfg.jsondoc.pointer import pointer
from dflash_cfg.lint.engines import sglang, vllm
from dflash_cfg.lint.rules.base import ENGINE_FORMAT, Context, as_int, is_int, rule, show
from dflash_cfg.model import Problem, Requirement, Severity

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
    """A ``DFlashLagunaForCausalLM`` drafter has no ``draft_vocab_size``, or one other than the target's vocabulary.

    vLLM's Laguna DFlash model raises "Laguna DFlash config requires `draft_vocab_size`" without it, and, since it
    shares the target's lm_head, "requires `draft_vocab_size` to match the target vocabulary size" for another
    value (checked by running it: tests/engines/test_branches.py, switch ``draft-vocab``): the server does not
    start. The target's ``vocab_size`` is compared when a target is given, else the drafter's own. The published
    Laguna drafters set it to the target vocabulary (100352).

    Fail: ``"architectures": ["DFlashLagunaForCausalLM"]`` without ``draft_vocab_size``, or with 50176 for a
    100352-token vocabulary
    Pass: the same with ``"draft_vocab_size": 100352``
    """
    archs = ctx.data.get("architectures")
    if not isinstance(archs, list) or "DFlashLagunaForCausalLM" not in archs:
        return
    size = ctx.data.get("draft_vocab_size")
    if size is None:
        yield Problem(
            pointer="/draft_vocab_size",
            message="draft_vocab_size missing on a DFlashLagunaForCausalLM drafter: vLLM refuses the file "
            "(Laguna DFlash config requires draft_vocab_size)",
        )
        return
    target = ctx.target
    vocab = target.vocab_size if target is not None and target.vocab_size is not None else ctx.data.get("vocab_size")
    whose = "the target's" if target is not None and target.vocab_size is not None else "the drafter's"
    if is_int(size) and is_int(vocab) and size != vocab:
        yield Problem(
            pointer="/draft_vocab_size",
            message=f"draft_vocab_size {size} on a DFlashLagunaForCausalLM drafter, {whose} vocabulary is {vocab}: "
            "vLLM refuses the file (Laguna DFlash shares the target lm_head and requires them to match)",
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


@rule(
    "DF156",
    "domino-projector",
    Severity.ERROR,
    kinds=ENGINE_FORMAT,
    reads=(sglang.PROJECTOR_TYPE,),
    severities=(Severity.WARNING,),
)
def domino_projector(ctx: Context) -> Iterator[Problem]:
    """A Domino projector (``projector_type: "domino"``) that SGLang refuses, or that vLLM does not build.

    SGLang builds the Domino projector for ``projector_type`` ``"domino"`` (``dflash_config`` first, then the
    top level) and refuses to start unless ``shift_label`` is a bool, ``pure_draft_prefix_len`` is 1,
    ``gru_hidden_dim`` and ``emb_dim`` are given (an ``emb_dim`` in both places must agree) and the block is
    longer than 1: an error about SGLang. vLLM reads none of these keys: it builds the plain DFlash model,
    without the projector the drafter was trained with (a warning about vLLM). Both checked by running the
    engines (tests/engines/test_branches.py, switches ``domino`` and ``domino-top`` and their key edits).

    Fail: ``"dflash_config": {"projector_type": "domino", ...}`` without ``shift_label``
    Pass: no ``projector_type``, or a complete Domino block served by SGLang (a warning about vLLM)
    """
    block, top = ctx.dflash, ctx.data
    if block.get("projector_type", top.get("projector_type")) != "domino":
        return
    where = "/dflash_config/projector_type" if "projector_type" in block else "/projector_type"

    def field(key: str) -> object:
        return block.get(key, top.get(key))

    def said(value: object) -> str:
        return "missing" if value is None else show(value)

    reasons = []
    if not isinstance(field("shift_label"), bool):
        reasons.append(f"shift_label is {said(field('shift_label'))}, not a bool")
    # SGLang int()s the sizes (_parse_optional_int): "256" and 256.0 are 256 to it.
    prefix = field("pure_draft_prefix_len")
    if as_int(prefix) != 1:
        reasons.append(f"pure_draft_prefix_len is {said(prefix)}, not 1")
    gru = as_int(field("gru_hidden_dim"))
    if gru is None or gru < 1:
        reasons.append(f"gru_hidden_dim is {said(field('gru_hidden_dim'))}, not a positive integer")
    nested, flat = block.get("emb_dim"), top.get("emb_dim")
    if nested is not None and flat is not None and as_int(nested) != as_int(flat):
        reasons.append(f"emb_dim is {show(nested)} in dflash_config and {show(flat)} at the top level")
    emb = nested if nested is not None else flat
    if as_int(emb) is None or as_int(emb) < 1:  # type: ignore[operator]
        reasons.append(f"emb_dim is {said(emb)}, not a positive integer")
    size = field("block_size")
    if is_int(size) and size <= 1:
        reasons.append(f"block_size is {size}")
    if reasons:
        yield Problem(
            pointer=where,
            message=f"a Domino projector SGLang refuses at start-up: {'; '.join(reasons)}",
            engines=(Requirement("sglang"),),
        )
    yield Problem(
        pointer=where,
        message="projector_type domino: vLLM does not read it and builds the plain DFlash model, without the "
        "Domino projector the drafter was trained with; serve it with SGLang",
        severity=Severity.WARNING,
        engines=(Requirement("vllm"),),
    )


RULES = (
    hidden_act,
    laguna_draft_vocab,
    aux_hidden_state_off,
    target_hidden_size_differs,
    laguna_mixed_layers,
    domino_projector,
)

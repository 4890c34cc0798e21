"""DF14x: the keys only DFlash2 drafters have (the convolution and the selector)."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_cfg.jsondoc.pointer import pointer
from dflash_cfg.lint.engines import sglang, vllm
from dflash_cfg.lint.releases import NO_ROPE_LAYERS, VLLM_0_34
from dflash_cfg.lint.rules.base import Context, is_int, rule, show
from dflash_cfg.model import Problem, Requirement, Severity

DFLASH2_PAIRS = (("conv_kernel_size", "conv_group_size"), ("selector_rank", "selector_top_k"))


@rule("DF141", "dflash2-keys", Severity.ERROR, reads=(sglang.DFLASH2_KEYS,))
def dflash2_keys(ctx: Context) -> Iterator[Problem]:
    """A DFlash2 drafter lacks one of ``conv_kernel_size``, ``conv_group_size``, ``selector_rank``,
    ``selector_top_k``, or ``hidden_size`` is not a multiple of ``conv_group_size``.

    The reference ``DFlash2DraftModel`` requires all four; SGLang requires each pair set together.
    Wrong types and non-positive values are reported by the DFlash2 schema (DF010).

    Fail: ``"dflash_config": {"conv_kernel_size": 4, ...}`` without ``conv_group_size``
    Pass: all four present and positive, ``hidden_size % conv_group_size == 0``
    """
    if ctx.kind != "dflash2":
        return
    # Presence only: types and the "0 switches it off" range are the DFlash2 schema's (DF010).
    for pair in DFLASH2_PAIRS:
        for key in pair:
            if ctx.dflash.get(key) is None:
                yield Problem(
                    pointer=pointer("dflash_config", key),
                    message=f"DFlash2 needs dflash_config.{key} (missing; {' and '.join(pair)} are set together): "
                    "vLLM and SGLang refuse the file",
                )
    group, hidden = ctx.dflash.get("conv_group_size"), ctx.int_field("hidden_size")
    if is_int(group) and group > 0 and hidden is not None and hidden % group:
        yield Problem(
            pointer="/dflash_config/conv_group_size",
            message=f"hidden_size {hidden} is not a multiple of conv_group_size {group}",
        )


# The engines that run RoPE on every layer of a DFlash2 drafter, whatever no_rope_layers says.
ROPE_EVERYWHERE = (VLLM_0_34.before, Requirement("sglang"))


@rule(
    "DF142",
    "dflash2-no-rope-layers",
    Severity.WARNING,
    reads=(vllm.NO_ROPE_LAYERS, sglang.NO_ROPE_LAYERS),
    severities=(Severity.ERROR,),
    since=NO_ROPE_LAYERS,
    until=NO_ROPE_LAYERS,
)
def no_rope_layers(ctx: Context) -> Iterator[Problem]:
    """A DFlash2 drafter with ``no_rope_layers``: the layers it lists run without RoPE in vLLM 0.34 only.

    vLLM 0.34 reads the top-level key when the first architecture is ``DFlash2DraftModel`` and the value is
    truthy, and then builds the Ricursive variant (``RicursiveDFlash2ForCausalLM``) whose listed layers use no
    rotary embedding (``vllm/config/speculative.py:SpeculativeConfig.hf_config_override``). Each entry is a layer
    index: a per-layer 0/1 flag list (Llama 4's convention) makes layers 0 and 1 NoPE instead (an error), and
    ``true`` fails the build (TypeError, an error). vLLM 0.33 and SGLang 0.5.23 do not read the key for a drafter:
    they run RoPE on every layer, which a drafter trained with NoPE layers was not (a warning, for them).

    Fail: ``"no_rope_layers": [1, 0, 1, 0, 1]`` (flags, read as indices); ``"no_rope_layers": true``
    Fail (warning): ``"no_rope_layers": [1, 3]`` served by vLLM 0.33 or SGLang
    Pass: no ``no_rope_layers``, or an empty list
    """
    if ctx.kind != "dflash2":
        return
    architectures = ctx.data.get("architectures")
    value = ctx.data.get("no_rope_layers")
    first = architectures[0] if isinstance(architectures, list) and architectures else None
    if first != "DFlash2DraftModel" or not value:
        return
    if not isinstance(value, list):
        # Each layer asks `layer_idx in no_rope_layers`: a TypeError for a number or a string; an object's keys
        # are strings, which no layer index equals.
        said = (
            "builds the drafter with no layer without RoPE from it (its keys are not layer indices)"
            if isinstance(value, dict)
            else "fails to build the drafter"
        )
        yield Problem(
            pointer="/no_rope_layers",
            message=f"vLLM 0.34 {said}: no_rope_layers {show(value)} is not a list of layer indices",
            severity=Severity.ERROR,
            engines=(VLLM_0_34.on,),
        )
        return
    layers = ctx.int_field("num_hidden_layers")
    indices = [v for v in value if is_int(v)]
    if len(indices) == len(value) and len(set(indices)) < len(indices) and set(indices) <= {0, 1}:
        nope = sorted(set(indices))
        yield Problem(
            pointer="/no_rope_layers",
            message=f"vLLM 0.34 reads no_rope_layers as layer indices: {show(value)} makes layer(s)"
            f" {', '.join(map(str, nope))} run without RoPE; a per-layer flag list is not what it reads: list the"
            " indices of the NoPE layers",
            severity=Severity.ERROR,
            engines=(VLLM_0_34.on,),
        )
        return
    outside = [v for v in value if not is_int(v) or (layers is not None and not 0 <= v < layers)]
    if outside:
        yield Problem(
            pointer="/no_rope_layers",
            message=f"no_rope_layers names {show(outside[0])}, not a layer of this drafter's {layers} (vLLM 0.34 reads"
            " layer indices)",
            engines=(VLLM_0_34.on,),
        )
        return
    yield Problem(
        pointer="/no_rope_layers",
        message=f"layers {', '.join(map(str, value))} run without RoPE in vLLM 0.34 only: vLLM 0.33 and SGLang ignore"
        " no_rope_layers and rotate every layer, which this drafter was not trained with; serve it with vLLM 0.34",
        engines=ROPE_EVERYWHERE,
    )


RULES = (dflash2_keys, no_rope_layers)

"""Attention rules: which draft layers use sliding-window attention, and with what window.

DFlash drafters are *trained* with a given layout (z-lab #126: Qwen3.6 drafters interleave sliding
layers on purpose); a layout or window that the engine does not see as written changes what the
drafter computes without any error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from dflash_cfg.lint.engines import sglang, speculators, transformers, vllm
from dflash_cfg.lint.rules.base import ENGINE_FORMAT, Context, is_int, nemotron_35, rule, show, trtllm_mha_enabled
from dflash_cfg.model import Fix, PatchOp, Problem, Requirement, Severity

SLIDING, FULL = "sliding_attention", "full_attention"
KNOWN = (SLIDING, FULL)


def strip(layer_types: list[str] | None) -> str:
    """`S S S S F`: one letter per layer, the way people talk about layouts."""
    letters = {SLIDING: "S", FULL: "F"}
    types = layer_types or ()
    shown = " ".join(letters.get(t, "?") for t in types[:STRIP_MAX])
    # A message stays a line: no drafter has this many layers, a hostile file may have millions.
    return shown if len(types) <= STRIP_MAX else f"{shown} ... ({len(types)} layers)"


STRIP_MAX = 128


def _window(ctx: Context) -> int | None:
    value = ctx.data.get("sliding_window")
    return value if is_int(value) and value > 0 else None


def _swa_window(ctx: Context) -> int | None:
    value = ctx.dflash.get("swa_window_size")
    return value if is_int(value) and value > 0 else None


@rule(
    "DF201",
    "layer-types-length",
    Severity.ERROR,
    reads=(transformers.LAYER_TYPES, vllm.LAYER_TYPES, sglang.LAYER_TYPES),
)
def layer_types_length(ctx: Context) -> Iterator[Problem]:
    """``len(layer_types)`` differs from ``num_hidden_layers``.

    transformers 5.24's config class refuses it (``validate_layer_type``). Past a class that lets it
    through, both engines index the list per draft layer: a shorter list stops vLLM (IndexError) and
    SGLang (ValueError), and extra entries are silently ignored. A common origin: a drafter config built
    from the target's config object.

    Fail: ``"num_hidden_layers": 5`` with 36 ``layer_types``
    Pass: five entries for five layers
    """
    types, depth = ctx.data.get("layer_types"), ctx.int_field("num_hidden_layers")
    if isinstance(types, list) and depth is not None and len(types) != depth:
        yield Problem(pointer="/layer_types", message=f"{len(types)} layer_types for num_hidden_layers {depth}")


@rule(
    "DF202",
    "unknown-layer-type",
    Severity.ERROR,
    reads=(transformers.LAYER_TYPES, vllm.LAYER_TYPES, sglang.LAYER_TYPES),
    severities=(Severity.WARNING,),
    fix=True,
)
def unknown_layer_type(ctx: Context) -> Iterator[Problem]:
    """A ``layer_types`` entry is neither ``full_attention`` nor ``sliding_attention``.

    SGLang refuses any other entry; vLLM runs every entry that is not ``sliding_attention`` as full
    attention, so a misspelled sliding layer silently loses its window. The config class sees the list
    first: transformers 5.24 renames the legacy ``attention`` to ``full_attention`` (a warning: both engines
    then run the layer as full attention, checked by running them) and refuses names outside its own list
    of attention types.

    Fail: ``["swa", "swa", "swa", "swa", "full_attention"]``
    Pass: ``["sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention"]``
    """
    types = ctx.data.get("layer_types")
    if not isinstance(types, list):
        return
    for i, value in enumerate(types):
        if value == "attention":
            yield Problem(
                pointer=f"/layer_types/{i}",
                message=f'layer_types[{i}] = "attention": a legacy name; the config class renames it to {show(FULL)}, '
                "which vLLM and SGLang read; other loaders may not",
                fix=Fix(f"write it as {show(FULL)}", (PatchOp("replace", f"/layer_types/{i}", FULL),)),
                severity=Severity.WARNING,
            )
        elif value not in KNOWN:
            yield Problem(
                pointer=f"/layer_types/{i}",
                message=f"layer_types[{i}] = {show(value)}: DFlash engines know only {show(FULL)} and {show(SLIDING)}; "
                "vLLM and SGLang refuse the file",
            )


@rule(
    "DF203",
    "sliding-without-window",
    Severity.ERROR,
    reads=(vllm.SLIDING_WINDOW, sglang.SLIDING_WINDOW, speculators.SLIDING_WINDOW),
)
def sliding_without_window(ctx: Context) -> Iterator[Problem]:
    """Layers are ``sliding_attention`` but no positive ``sliding_window`` gives their window.

    What the engines do depends on the value (checked by running {vLLM} and {SGLang}):

    - null: vLLM raises "DFlash sliding attention requires a window size" unless
      ``dflash_config.swa_window_size`` gives one; SGLang reads only ``sliding_window`` and raises
      "DFLASH sliding_attention layers require config.sliding_window".
    - absent (or misspelled, or only inside ``dflash_config``): the config class fills its default
      (``Qwen3Config`` 4096, ``LagunaConfig`` 512), and both engines draft with that window.
    - 0: vLLM refuses it (no window size); SGLang runs the sliding layers unwindowed (window 0 - 1 = -1).
    - negative: vLLM builds the sliding layers with that window as written; SGLang runs them unwindowed.

    None of these is how the layers were trained, so each is an error; the HF reference silently runs
    those layers unwindowed.

    Fail: ``"layer_types": ["sliding_attention", ..., "full_attention"]``, ``"sliding_window": null``
    Pass: the same with ``"sliding_window": 2048``
    """
    types = ctx.layer_types()
    if not (types and SLIDING in types and _window(ctx) is None):
        return
    value = ctx.data.get("sliding_window")
    layers = f"{types.count(SLIDING)} sliding_attention layers"
    upstream = "the trained window must come from upstream"
    swa = _swa_window(ctx)
    default = ctx.effective.values.get("sliding_window") if ctx.effective.values else None
    if "sliding_window" not in ctx.data and is_int(default) and default > 0:
        yield Problem(
            pointer="/sliding_window",
            message=f"{layers} but sliding_window is absent: {ctx.effective.through} fills its default {default}, and "
            f"vLLM and SGLang draft with that window; {upstream}",
        )
        return
    state = "absent" if "sliding_window" not in ctx.data else show(value)
    if is_int(value) and value < 0:
        on_sglang = "SGLang runs them unwindowed"
        on_vllm = f"vLLM builds them with window {value} as written"
    elif is_int(value) and value == 0:
        on_sglang = "SGLang runs them unwindowed (window 0 - 1 = -1)"
        on_vllm = "vLLM refuses the file (no window size)"
    else:
        on_sglang = "SGLang reads only sliding_window and refuses the file"
        on_vllm = "vLLM refuses the file"
    if swa is not None and value is None and nemotron_35(ctx.data):
        return  # SGLang's Nemotron 3.5 layout falls back to swa_window_size too: both draft with it
    if swa is not None:
        yield Problem(
            pointer="/sliding_window",
            message=f"{layers} and sliding_window is {state}: vLLM takes dflash_config.swa_window_size {swa}, "
            f"{on_sglang}",
        )
    else:
        yield Problem(
            pointer="/sliding_window",
            message=f"{layers} but sliding_window is {state}: {on_vllm}, {on_sglang}; {upstream}",
        )


@rule(
    "DF204",
    "window-dropped",
    Severity.ERROR,
    "data",
    "effective",
    reads=(transformers.CONFIG_CLASS, vllm.SLIDING_WINDOW, sglang.SLIDING_WINDOW),
    fix=True,
)
def window_dropped(ctx: Context) -> Iterator[Problem]:
    """Layers are ``sliding_attention`` and the engine's config class drops the window, because
    ``use_sliding_window`` is false or absent.

    ``Qwen3Config.__post_init__`` sets ``sliding_window`` to ``None`` then (transformers 5.24), so engines see
    sliding layers without a window: vLLM and SGLang raise, the HF reference runs them as full
    attention. Classes that keep the window (``LagunaConfig``, ``GptOssConfig``: no such switch) are
    not reported. Safe fix (when a positive window is in the file): ``use_sliding_window: true``.

    Fail: four ``sliding_attention`` layers, ``"sliding_window": 2048``, no ``use_sliding_window`` (qwen3)
    Pass: the same with ``"use_sliding_window": true``
    """
    types = ctx.layer_types()
    if not types or SLIDING not in types or ctx.data.get("use_sliding_window") is True:
        return
    seen = ctx.effective.values
    if seen is None or _window(ctx) is None or seen.get("sliding_window") is not None:
        return  # refused (DF301), no window to drop (DF203), or the class kept it
    state = "absent" if "use_sliding_window" not in ctx.data else json.dumps(ctx.data.get("use_sliding_window"))
    window = _window(ctx)
    fix = None
    if window is not None:
        fix = Fix(
            "set use_sliding_window to true",
            (PatchOp("replace" if "use_sliding_window" in ctx.data else "add", "/use_sliding_window", True),),
        )
    window_text = json.dumps(ctx.data.get("sliding_window"))
    yield Problem(
        pointer="/use_sliding_window",
        message=f"use_sliding_window is {state} while {types.count(SLIDING)} layers are "
        f"sliding_attention: {ctx.effective.through} turns sliding_window {window_text} into null, so vLLM "
        "and SGLang refuse the file (sliding layers without a window)",
        fix=fix,
    )


@rule("DF205", "window-without-sliding", Severity.WARNING, reads=(vllm.LAYER_TYPES, sglang.LAYER_TYPES))
def window_without_sliding(ctx: Context) -> Iterator[Problem]:
    """A sliding window is configured and enabled but every layer is ``full_attention``.

    This is the signature of a stale file: the window was trained and kept, but ``layer_types`` came
    from somewhere else (a config object built from the target, a guessed rewrite). Both engines then run
    every layer with full attention, as ``layer_types`` says; a drafter trained with sliding layers and
    run fully attended loses acceptance at long context (z-lab #126). A warning: the file cannot show
    whether the window or the layout is the trained one.

    Fail: ``"layer_types": ["full_attention", x5]``, ``"sliding_window": 2048``, ``"use_sliding_window": true``
    Pass: ``"layer_types": ["sliding_attention", x4, "full_attention"]`` with that window
    """
    types, window = ctx.layer_types(), _window(ctx)
    if types and all(t == FULL for t in types) and window is not None and ctx.data.get("use_sliding_window") is True:
        yield Problem(
            pointer="/layer_types",
            message=f"sliding_window {window} is configured and use_sliding_window is true, but "
            f"all {len(types)} layers are full_attention ({strip(types)}): the stale-file signature; "
            "compare layer_types with upstream",
        )


@rule(
    "DF206",
    "layer-types-absent",
    Severity.INFO,
    "data",
    "effective",
    reads=(transformers.CONFIG_CLASS, vllm.LAYER_TYPES, sglang.LAYER_TYPES),
    severities=(Severity.ERROR,),
)
def layer_types_absent(ctx: Context) -> Iterator[Problem]:
    """``layer_types`` is absent, so the config class derives it (``Qwen3Config``: first
    ``max_window_layers`` full, the rest sliding, and all full unless ``use_sliding_window`` is true).

    Shows the derived layout. An error when the file gives a sliding window but the derived layout has no
    sliding layer: {vLLM} and {SGLang} then run every layer as full attention (checked by running
    them on drafters whose ``layer_types`` was dropped, misspelled or moved into ``dflash_config``, where
    neither reads it), and every published drafter that sets a window lists its sliding layers. Otherwise
    information: both engines read the layout the config class derives, the one the file means unless it was
    trained otherwise (z-lab/gpt-oss-20b-DFlash has no ``layer_types``), and ``dflash_config.use_swa`` says
    every layer slides in MiMo-style drafters, which vLLM resolves from ``use_swa``/``swa_window_size``.

    Fail: no ``layer_types``, ``"use_sliding_window": true``, ``"sliding_window": 2048`` (all full)
    Fail (info): no ``layer_types``, ``"sliding_window": 2048``, ``"max_window_layers": 5``
    Pass: an explicit ``layer_types``
    """
    if "layer_types" in ctx.data:
        return
    derived = ctx.effective.values.get("layer_types") if ctx.effective.values else None
    shown = strip(derived) if isinstance(derived, list) else "nothing"
    elsewhere = next(
        (f" ({name} is not read there)" for name in ("dflash_config.layer_types",) if "layer_types" in ctx.dflash),
        "",
    )
    window = _window(ctx)
    use_swa = ctx.dflash.get("use_swa") in (True, 1)  # both engines read it by truthiness
    no_sliding = not isinstance(derived, list) or SLIDING not in derived
    if not use_swa and window is not None and ctx.effective.error is None and no_sliding:
        yield Problem(
            pointer="/layer_types",
            message=f"layer_types absent{elsewhere} while sliding_window is {window}: {ctx.effective.through} derives "
            f"{shown}, so vLLM and SGLang run every layer as full attention and the window is unused; "
            "write the trained layout explicitly (upstream has it)",
            severity=Severity.ERROR,
        )
        return
    if use_swa:
        yield Problem(
            pointer="/layer_types",
            message=f"layer_types absent: {ctx.effective.through} derives {shown}; vLLM uses "
            "dflash_config.use_swa (every layer sliding) instead",
            severity=Severity.INFO,
        )
    else:
        yield Problem(
            pointer="/layer_types",
            message=f"layer_types absent: {ctx.effective.through} derives {shown} "
            f"(transformers {ctx.effective.transformers_version}), which vLLM and SGLang both run; writing the "
            "trained layout explicitly keeps it from depending on the config class",
        )


@rule("DF207", "dflash2-causality", Severity.ERROR, reads=(vllm.IS_CAUSAL, sglang.IS_CAUSAL))
def dflash2_causality(ctx: Context) -> Iterator[Problem]:
    """A DFlash2 drafter with every layer sliding does not set ``is_causal: false``.

    vLLM, SGLang (since PR #34524) and the later reference treat sliding layers as causal unless
    ``is_causal`` says otherwise; DFlash2 checkpoints are trained non-causal, so the engines draft with
    another attention than the trained one (every published DFlash2 drafter sets ``is_causal: false``).

    Fail: DFlash2, ``layer_types`` all ``sliding_attention``, no ``is_causal``
    Pass: the same with ``"is_causal": false``
    """
    types = ctx.layer_types()
    # 0 reads as false in both engines (their truthiness); DF010 warns about the type.
    causal = ctx.data.get("is_causal")
    if ctx.kind == "dflash2" and types and all(t == SLIDING for t in types) and causal is not False and causal != 0:
        state = "absent" if "is_causal" not in ctx.data else json.dumps(ctx.data.get("is_causal"))
        yield Problem(
            pointer="/is_causal",
            message=f"all {len(types)} layers slide and is_causal is {state}: vLLM, SGLang and the reference "
            "then run them causal, DFlash2 drafters are trained non-causal",
        )


@rule("DF208", "swa-without-window", Severity.ERROR, kinds=ENGINE_FORMAT, reads=(vllm.USE_SWA, vllm.SLIDING_WINDOW))
def swa_without_window(ctx: Context) -> Iterator[Problem]:
    """``dflash_config.use_swa`` turns sliding attention on for every layer but no window is given anywhere.

    vLLM resolves the window from ``dflash_config.swa_window_size``, then ``sliding_window``, and raises
    "DFlash sliding attention requires a window size" when both are missing.

    Fail: ``"dflash_config": {"use_swa": true}``, no ``swa_window_size``, no ``sliding_window``
    Pass: ``"dflash_config": {"use_swa": true, "swa_window_size": 1024}``
    """
    if ctx.dflash.get("use_swa") and _swa_window(ctx) is None and _window(ctx) is None:
        types = ctx.layer_types()
        if types is None or all(t == FULL for t in types) or SLIDING in types:
            yield Problem(
                pointer="/dflash_config/swa_window_size",
                message="dflash_config.use_swa is on but neither dflash_config.swa_window_size nor sliding_window "
                "gives a window: vLLM refuses the file",
            )


@rule(
    "DF209",
    "engines-disagree-attention",
    Severity.ERROR,
    kinds=ENGINE_FORMAT,
    reads=(vllm.SLIDING_WINDOW, sglang.SLIDING_WINDOW, vllm.USE_SWA, sglang.LAYER_TYPES),
    severities=(Severity.WARNING,),
)
def engines_disagree_attention(ctx: Context) -> Iterator[Problem]:
    """vLLM and SGLang read a different attention layout or window from the file.

    vLLM takes the window from ``dflash_config.swa_window_size`` first, SGLang only from ``sliding_window``:
    two different positive values mean two different windows (error). ``dflash_config.use_swa`` without
    ``layer_types`` slides every layer in vLLM, while SGLang (models/dflash.py @003b23d7) does not read
    ``use_swa`` and runs every layer as full attention: a warning about SGLang only (it fails a gate only
    where SGLang serves the drafter), because a published drafter (MiMo-V2.5-Pro-FP4-DFlash) is laid out this
    way for vLLM.

    Fail: ``"sliding_window": 2048`` and ``"dflash_config": {"swa_window_size": 1024}``
    Pass: both 1024, or only one of them
    """
    window, swa = _window(ctx), _swa_window(ctx)
    # use_swa without layer_types: SGLang runs every layer full and reads no window at all (the warning below).
    swa_only = ctx.dflash.get("use_swa") in (True, 1) and "layer_types" not in ctx.data
    if window is not None and swa is not None and window != swa and not swa_only:
        yield Problem(
            pointer="/dflash_config/swa_window_size",
            message=f"dflash_config.swa_window_size {swa} and sliding_window {window} differ: vLLM drafts with a "
            f"window of {swa}, SGLang with {window}",
        )
    elif window is not None and swa is not None and window != swa:
        yield Problem(
            pointer="/dflash_config/swa_window_size",
            message=f"dflash_config.swa_window_size {swa} and sliding_window {window} differ: vLLM drafts with a "
            f"window of {swa} and SGLang reads neither; make sure {swa} is the trained one",
            severity=Severity.WARNING,
        )
    if ctx.dflash.get("use_swa") is True and "layer_types" not in ctx.data:
        yield Problem(
            pointer="/dflash_config/use_swa",
            message="dflash_config.use_swa without layer_types: vLLM slides every layer, SGLang (which does not read "
            "use_swa) runs every layer as full attention; serve this drafter with vLLM",
            severity=Severity.WARNING,
            engines=(Requirement("sglang"),),
        )


@rule(
    "DF210",
    "attention-sink",
    Severity.ERROR,
    kinds=ENGINE_FORMAT,
    reads=(vllm.ATTENTION_SINK_BIAS, sglang.ATTENTION_SINK_BIAS),
    fix=True,
)
def attention_sink(ctx: Context) -> Iterator[Problem]:
    """The attention-sink switch is of the wrong type, or only vLLM finds it.

    SGLang reads ``dflash_config.attention_sink_bias`` and refuses the file unless it is a bool. vLLM reads
    it by truthiness, then falls back to the top-level ``add_swa_attention_sink_bias``, which SGLang does
    not read: a sink set only there is built by vLLM and left out by SGLang, which drafts without the
    trained sink.

    Fail: ``"dflash_config": {"attention_sink_bias": "true"}``; ``"add_swa_attention_sink_bias": true``
    alone
    Pass: ``"dflash_config": {"attention_sink_bias": true, ...}`` (MiMo-V2.5-Pro's drafter)
    """
    if "attention_sink_bias" in ctx.dflash:
        value = ctx.dflash["attention_sink_bias"]
        if not isinstance(value, bool):
            yield Problem(
                pointer="/dflash_config/attention_sink_bias",
                message=f"dflash_config.attention_sink_bias is {json.dumps(value)}, not true or false: SGLang refuses "
                "the file, vLLM reads it by truthiness",
            )
        return
    top = ctx.data.get("add_swa_attention_sink_bias")
    if top:
        yield Problem(
            pointer="/add_swa_attention_sink_bias",
            message=f"add_swa_attention_sink_bias is {json.dumps(top)} and dflash_config.attention_sink_bias is "
            "absent: vLLM builds attention sinks, SGLang reads only dflash_config.attention_sink_bias and drafts "
            "without them",
            fix=Fix(
                "copy the switch into dflash_config.attention_sink_bias",
                (PatchOp("add", "/dflash_config/attention_sink_bias", True),),
            )
            if top is True and isinstance(ctx.data.get("dflash_config"), dict)
            else None,
        )


NEOX_KEYS = ("rope_is_neox_style", "is_neox_style")


def _neox(data: dict[str, object], keys: tuple[str, ...]) -> bool:
    """The layout an engine rotates with: the first of `keys` present, by truthiness, else NeoX."""
    for key in keys:
        if key in data:
            return bool(data[key])
    return True


@rule(
    "DF211",
    "neox-style",
    Severity.ERROR,
    reads=(vllm.IS_NEOX_STYLE, sglang.IS_NEOX_STYLE),
    severities=(Severity.INFO,),
)
def neox_style(ctx: Context) -> Iterator[Problem]:
    """The file asks for a RoPE layout other than NeoX (``rope_is_neox_style`` or ``is_neox_style`` false).

    Each engine rotates the drafter's queries and keys as the file says, but they read different keys:
    {vLLM} only ``is_neox_style`` (default true), {SGLang} ``rope_is_neox_style``, then
    ``is_neox_style`` (default true). Error: the two keys say different layouts, or only
    ``rope_is_neox_style`` is false, so one engine rotates differently from training (checked by running
    both). Info: both engines rotate non-NeoX as the file says; Qwen-family drafters are trained NeoX, so
    compare with upstream.

    Fail: ``"rope_is_neox_style": false`` (vLLM rotates NeoX)
    Fail (info): ``"is_neox_style": false``
    Pass: absent, or true
    """
    present = [key for key in NEOX_KEYS if key in ctx.data]
    if not present:
        return
    on_vllm, on_sglang = _neox(ctx.data, ("is_neox_style",)), _neox(ctx.data, NEOX_KEYS)
    if on_vllm and on_sglang:
        return
    key = present[0]
    said = ", ".join(f"{k} {json.dumps(ctx.data[k])}" for k in present)
    if on_vllm != on_sglang:
        yield Problem(
            pointer=f"/{key}",
            message=f"{said}: SGLang rotates {'NeoX' if on_sglang else 'non-NeoX'} (it reads rope_is_neox_style "
            f"first), vLLM rotates {'NeoX' if on_vllm else 'non-NeoX'} (it reads only is_neox_style): one of them "
            "drafts with another RoPE layout than the one trained; give both keys the trained value",
        )
        return
    yield Problem(
        pointer=f"/{key}",
        message=f"{said}: vLLM and SGLang both rotate non-NeoX as the file says; Qwen-family drafters are trained "
        "NeoX, compare with upstream",
        severity=Severity.INFO,
    )


@rule("DF212", "attention-value-scale", Severity.ERROR, kinds=ENGINE_FORMAT, reads=(sglang.ATTENTION_VALUE_SCALE,))
def attention_value_scale(ctx: Context) -> Iterator[Problem]:
    """``dflash_config.attention_value_scale`` is not a number.

    SGLang refuses the file unless it is an int or a float (a bool is refused too).

    Fail: ``"dflash_config": {"attention_value_scale": "0.5"}``
    Pass: ``"dflash_config": {"attention_value_scale": 0.5}`` (or absent)
    """
    if "attention_value_scale" not in ctx.dflash:
        return
    value = ctx.dflash["attention_value_scale"]
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        yield Problem(
            pointer="/dflash_config/attention_value_scale",
            message=f"dflash_config.attention_value_scale is {json.dumps(value)}, not a number: SGLang refuses "
            "the file",
        )


# vLLM's patch_legacy_rope_type lets these legacy/modern pairs through; any other disagreement it refuses.
_ROPE_TYPE_ALIASES = (("su", "longrope"), ("mrope", "default"))


@rule(
    "DF213",
    "rope-type-conflict",
    Severity.ERROR,
    reads=(vllm.ROPE_SCALING, sglang.ROPE_SCALING),
)
def rope_type_conflict(ctx: Context) -> Iterator[Problem]:
    """``rope_scaling`` (or ``rope_parameters``) gives a modern ``rope_type`` and a legacy ``type`` that
    disagree.

    {vLLM}'s ``get_config`` refuses the file ("Found conflicts between 'rope_type=...' (modern
    field) and 'type=...' (legacy field)"); {SGLang} runs it with the modern field's scaling (YaRN
    when ``rope_type`` is ``yarn``), on every layer. Which of the two the drafter was trained with the file
    cannot show. vLLM lets ``type`` ``su`` with ``rope_type`` ``longrope`` and ``mrope`` with ``default``
    through.

    Fail: ``"rope_scaling": {"rope_type": "yarn", "type": "linear", "factor": 4.0}``
    Pass: ``"rope_scaling": {"rope_type": "yarn", "type": "yarn", "factor": 4.0}``
    """
    for key in ("rope_scaling", "rope_parameters"):
        block = ctx.data.get(key)
        if not isinstance(block, dict) or "rope_type" not in block or "type" not in block:
            continue
        modern, legacy = block["rope_type"], block["type"]
        if modern == legacy or (legacy, modern) in _ROPE_TYPE_ALIASES:
            continue
        yield Problem(
            pointer=f"/{key}/type",
            message=f"{key} has rope_type {show(modern)} and legacy type {show(legacy)}: vLLM refuses the file "
            f"(Found conflicts between 'rope_type' and 'type'), SGLang runs the rope_type {show(modern)} "
            "scaling; keep the trained one only",
        )


@rule(
    "DF214",
    "causal-override",
    Severity.ERROR,
    kinds=ENGINE_FORMAT,
    reads=(vllm.IS_CAUSAL, sglang.IS_CAUSAL),
)
def causal_override(ctx: Context) -> Iterator[Problem]:
    """``dflash_config.causal`` sets causality in vLLM only: SGLang reads another attention from the file.

    With no top-level ``is_causal``, vLLM applies ``dflash_config.causal`` to every draft layer; SGLang does
    not read it and keeps its layer defaults (sliding layers causal, full layers non-causal). Where the two
    differ, the engines draft with different attention masks from the same file, and one of them is not
    the trained one (checked by running both: tests/engines/test_branches.py, switches ``dflash-causal`` and
    ``dflash-non-causal``). A top-level ``is_causal``, which both read first, says it to both.

    Fail: ``"dflash_config": {"causal": true, ...}`` on full-attention layers, no ``is_causal``
    Pass: the same with ``"is_causal": true`` at the top level, or ``causal: true`` on sliding layers only
    (Laguna-XS-2.1-DFlash)
    """
    causal = ctx.dflash.get("causal")
    if causal is None or ctx.data.get("is_causal") is not None:
        return
    types = ctx.data.get("layer_types")
    if types is None and ctx.data.get("use_sliding_window") is not True:
        depth = ctx.int_field("num_hidden_layers")
        types = [FULL] * depth if depth is not None and depth > 0 else None
    if not isinstance(types, list) or not all(t in KNOWN for t in types):
        return  # DF202 and DF206 say what the engines make of such a list
    wanted = bool(causal)
    differ = [i for i, t in enumerate(types) if (t == SLIDING) != wanted]
    if not differ:
        return
    mode = "causal" if wanted else "non-causal"
    other = "non-causal" if wanted else "causal"
    shown = ", ".join(str(i) for i in differ[:8]) + (" ..." if len(differ) > 8 else "")
    yield Problem(
        pointer="/dflash_config/causal",
        message=f"dflash_config.causal {json.dumps(causal)} without a top-level is_causal: vLLM runs every layer "
        f"{mode}, SGLang does not read it and runs layer{'s' if len(differ) > 1 else ''} {shown} {other} "
        f"({strip(types)}); set is_causal: {json.dumps(wanted)} at the top level, which both read",
    )


@rule(
    "DF215",
    "nemotron-35-sink",
    Severity.ERROR,
    kinds=ENGINE_FORMAT,
    reads=(sglang.NEMOTRON_35_LAYOUT, vllm.ATTENTION_SINK_BIAS),
)
def nemotron_35_sink(ctx: Context) -> Iterator[Problem]:
    """An attention sink at the top level of SGLang's Nemotron 3.5 layout: SGLang builds it, vLLM does not.

    SGLang takes a file for its Nemotron 3.5 layout by its shape (a DFlash or Qwen3 DSpark class with
    ``has_embed_tokens`` and no ``has_lm_head``, ``quantization_config.quant_algo`` W4A16_NVFP4,
    ``eagle_aux_hidden_state_layer_ids`` one past the taps, ``sample_from_anchor`` false) and then reads the
    top-level ``attention_sink_bias``: it builds the sinks, and refuses to start unless the launch selects
    ``--speculative-draft-attention-backend trtllm_mha``. vLLM reads the sink only in ``dflash_config`` and
    drafts without it. Checked by running both (tests/engines/test_branches.py, switch ``nemotron-35-sink``).
    One finding for both engines: vLLM drafts with another attention than the trained one, and SGLang starts
    only with that backend.

    Fail: the Nemotron 3.5 layout with ``"attention_sink_bias": true`` at the top level only
    Pass: ``"dflash_config": {"attention_sink_bias": true, ...}`` too (vLLM's place)
    """
    sink = ctx.data.get("attention_sink_bias")
    if not sink or ctx.dflash.get("attention_sink_bias") or not nemotron_35(ctx.data):
        return
    yield Problem(
        pointer="/attention_sink_bias",
        message=f"attention_sink_bias {show(sink)} at the top level of SGLang's Nemotron 3.5 layout: SGLang builds "
        "the attention sinks (and starts only with --speculative-draft-attention-backend trtllm_mha), vLLM reads "
        "them only in dflash_config and drafts without; copy it into dflash_config for vLLM",
    )


@rule(
    "DF216",
    "nemotron-35-sink-backend",
    Severity.ERROR,
    "effective",
    kinds=ENGINE_FORMAT,
    reads=(sglang.NEMOTRON_35_SINK_BACKEND, sglang.NEMOTRON_35_LAYOUT),
)
def nemotron_35_sink_backend(ctx: Context) -> Iterator[Problem]:
    """Attention sinks on SGLang's Nemotron 3.5 layout with layers SGLang never runs on trtllm_mha.

    {SGLang} builds the Nemotron 3.5 layout's attention sinks (a true top-level ``attention_sink_bias``) only on
    the ``trtllm_mha`` draft attention backend, and refuses the drafter on any other ("Nemotron 3.5 DSpark
    attention sinks require --speculative-draft-attention-backend trtllm_mha", ``DFlashAttention.__init__``).
    But it keeps a DFLASH draft on ``trtllm_mha`` only when every layer is ``sliding_attention`` or the draft is
    explicitly causal (``is_causal`` true), and otherwise falls back to another backend whatever the launch asks
    (``_resolve_dflash_draft_attention_backend``, run by the engine suite). With other layers, no launch starts.
    A launch that does not select ``trtllm_mha`` for a drafter that could use it is DF815.

    Fail: the Nemotron 3.5 layout with ``"attention_sink_bias": true`` and a ``full_attention`` layer
    Pass: the same with every layer ``sliding_attention``, or ``"is_causal": true``
    """
    # A DFLASH draft (DFlashDraftModel): SGLang resolves a DSpark draft's backend elsewhere.
    if ctx.data.get("architectures") != ["DFlashDraftModel"] or not ctx.data.get("attention_sink_bias"):
        return
    if not nemotron_35(ctx.data) or trtllm_mha_enabled(ctx.data, ctx.view):
        return
    types = ctx.effective.values.get("layer_types") if ctx.effective.values else ctx.data.get("layer_types")
    yield Problem(
        pointer="/attention_sink_bias",
        message=f"attention sinks on SGLang's Nemotron 3.5 layout need the trtllm_mha draft attention backend, "
        f"which SGLang keeps only when every layer is sliding or is_causal is true; with layer_types {show(types)} "
        "it falls back to another backend and refuses the drafter, whatever the launch asks",
        engines=(Requirement("sglang"),),
    )


RULES = (
    layer_types_length,
    unknown_layer_type,
    sliding_without_window,
    window_dropped,
    window_without_sliding,
    layer_types_absent,
    dflash2_causality,
    swa_without_window,
    engines_disagree_attention,
    attention_sink,
    neox_style,
    attention_value_scale,
    rope_type_conflict,
    causal_override,
    nemotron_35_sink,
    nemotron_35_sink_backend,
)

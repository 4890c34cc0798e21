"""Attention rules: which draft layers use sliding-window attention, and with what window.

DFlash drafters are *trained* with a given layout (z-lab #126: Qwen3.6 drafters interleave sliding
layers on purpose); a layout or window that the engine does not see as written changes what the
drafter computes without any error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from dflash_cfg.lint.rules.base import Context, is_int, rule
from dflash_cfg.model import Fix, PatchOp, Problem, Severity

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
    value = ctx.raw.get("sliding_window")
    return value if is_int(value) and value > 0 else None


def _swa_window(ctx: Context) -> int | None:
    value = ctx.dflash.get("swa_window_size")
    return value if is_int(value) and value > 0 else None


@rule("DF201", "layer-types-length", Severity.ERROR)
def layer_types_length(ctx: Context) -> Iterator[Problem]:
    """``len(layer_types)`` differs from ``num_hidden_layers``.

    transformers ≥ 4.57 refuses the file; 4.53–4.56 accept it silently and engines index past the end
    or ignore layers. A common origin: a drafter config built from the target's config object.

    Fail: ``"num_hidden_layers": 5`` with 36 ``layer_types``
    Pass: five entries for five layers
    """
    types, depth = ctx.raw.get("layer_types"), ctx.int_field("num_hidden_layers")
    if isinstance(types, list) and depth is not None and len(types) != depth:
        yield Problem("/layer_types", f"{len(types)} layer_types for num_hidden_layers {depth}")


@rule("DF202", "unknown-layer-type", Severity.ERROR)
def unknown_layer_type(ctx: Context) -> Iterator[Problem]:
    """A ``layer_types`` entry is neither ``full_attention`` nor ``sliding_attention``.

    SGLang and vLLM's DFlash models only build those two; transformers v5 silently renames the legacy
    ``attention`` to ``full_attention`` while engines reading the raw file do not.

    Fail: ``["swa", "swa", "swa", "swa", "full_attention"]``
    Pass: ``["sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention"]``
    """
    types = ctx.raw.get("layer_types")
    if not isinstance(types, list):
        return
    for i, value in enumerate(types):
        if value not in KNOWN:
            yield Problem(
                f"/layer_types/{i}", f"layer_types[{i}] = {value!r}: DFlash engines know only {FULL!r} and {SLIDING!r}"
            )


@rule("DF203", "sliding-without-window", Severity.ERROR)
def sliding_without_window(ctx: Context) -> Iterator[Problem]:
    """Layers are ``sliding_attention`` but no positive ``sliding_window`` (nor
    ``dflash_config.swa_window_size``) gives their window.

    vLLM raises "DFlash sliding attention requires a window size"; SGLang raises; the HF reference
    silently runs those layers unwindowed.

    Fail: ``"layer_types": ["sliding_attention", ..., "full_attention"]``, ``"sliding_window": null``
    Pass: the same with ``"sliding_window": 2048``
    """
    types = ctx.layer_types()
    if types and SLIDING in types and _window(ctx) is None and _swa_window(ctx) is None:
        value = ctx.raw.get("sliding_window")
        yield Problem(
            "/sliding_window",
            f"{types.count(SLIDING)} sliding_attention layers but sliding_window is "
            f"{'absent' if 'sliding_window' not in ctx.raw else repr(value)}; the trained window must "
            "come from upstream",
        )


@rule("DF204", "window-dropped", Severity.ERROR)
def window_dropped(ctx: Context) -> Iterator[Problem]:
    """Layers are ``sliding_attention`` while ``use_sliding_window`` is false or absent.

    ``Qwen3Config`` then sets ``sliding_window`` to ``None`` (transformers ≥ 4.53), so engines see
    sliding layers without a window: vLLM and SGLang raise, the HF reference runs them as full
    attention. Safe fix (when a positive window is in the file): ``use_sliding_window: true``.

    Fail: four ``sliding_attention`` layers, ``"sliding_window": 2048``, no ``use_sliding_window``
    Pass: the same with ``"use_sliding_window": true``
    """
    types = ctx.layer_types()
    if not types or SLIDING not in types or ctx.raw.get("use_sliding_window") is True:
        return
    state = "absent" if "use_sliding_window" not in ctx.raw else json.dumps(ctx.raw.get("use_sliding_window"))
    window = _window(ctx)
    fix = None
    if window is not None:
        fix = Fix(
            "set use_sliding_window to true",
            (PatchOp("replace" if "use_sliding_window" in ctx.raw else "add", "/use_sliding_window", True),),
        )
    window_text = json.dumps(ctx.raw.get("sliding_window"))
    yield Problem(
        "/use_sliding_window",
        f"use_sliding_window is {state} while {types.count(SLIDING)} layers are "
        f"sliding_attention: Qwen3Config turns sliding_window {window_text} into null, so engines get "
        "sliding layers without a window",
        fix,
    )


@rule("DF205", "window-without-sliding", Severity.WARNING)
def window_without_sliding(ctx: Context) -> Iterator[Problem]:
    """A sliding window is configured and enabled but every layer is ``full_attention``.

    This is the signature of a stale file: the window was trained and kept, but ``layer_types`` came
    from somewhere else (a config object built from the target, a guessed rewrite). A drafter trained
    with sliding layers and run fully attended loses acceptance at long context (z-lab #126).

    Fail: ``"layer_types": ["full_attention", x5]``, ``"sliding_window": 2048``, ``"use_sliding_window": true``
    Pass: ``"layer_types": ["sliding_attention", x4, "full_attention"]`` with that window
    """
    types, window = ctx.layer_types(), _window(ctx)
    if types and all(t == FULL for t in types) and window is not None and ctx.raw.get("use_sliding_window") is True:
        yield Problem(
            "/layer_types",
            f"sliding_window {window} is configured and use_sliding_window is true, but "
            f"all {len(types)} layers are full_attention ({strip(types)}): the stale-file signature; "
            "compare layer_types with upstream",
        )


@rule("DF206", "layer-types-absent", Severity.WARNING, "data", "effective")
def layer_types_absent(ctx: Context) -> Iterator[Problem]:
    """``layer_types`` is absent, so ``Qwen3Config`` derives it (first ``max_window_layers`` full, the rest
    sliding, and all full unless ``use_sliding_window`` is true).

    Shows the derived layout. Information only when ``dflash_config.use_swa`` says every layer slides
    (MiMo-style drafters, which vLLM resolves from ``use_swa``/``swa_window_size``).

    Fail (warning): no ``layer_types``, ``"sliding_window": 2048``, ``"max_window_layers": 5``
    Pass: an explicit ``layer_types``
    """
    if "layer_types" in ctx.raw:
        return
    derived = ctx.effective.values.get("layer_types") if ctx.effective.values else None
    shown = strip(derived) if isinstance(derived, list) else "nothing"
    if ctx.dflash.get("use_swa") is True:
        yield Problem(
            "/layer_types",
            f"layer_types absent: Qwen3Config derives {shown}; vLLM uses "
            "dflash_config.use_swa (every layer sliding) instead",
            severity=Severity.INFO,
        )
    else:
        yield Problem(
            "/layer_types",
            f"layer_types absent: Qwen3Config derives {shown} "
            f"(transformers {ctx.effective.transformers_version}); write the trained layout explicitly",
        )


@rule("DF207", "dflash2-causality", Severity.WARNING)
def dflash2_causality(ctx: Context) -> Iterator[Problem]:
    """A DFlash2 drafter with every layer sliding does not set ``is_causal: false``.

    vLLM and the later reference treat sliding layers as causal unless ``is_causal`` says otherwise;
    DFlash2 checkpoints are trained non-causal.

    Fail: DFlash2, ``layer_types`` all ``sliding_attention``, no ``is_causal``
    Pass: the same with ``"is_causal": false``
    """
    types = ctx.layer_types()
    if ctx.kind == "dflash2" and types and all(t == SLIDING for t in types) and ctx.raw.get("is_causal") is not False:
        state = "absent" if "is_causal" not in ctx.raw else json.dumps(ctx.raw.get("is_causal"))
        yield Problem(
            "/is_causal",
            f"all {len(types)} layers slide and is_causal is {state}: vLLM and the reference "
            "then run them causal, DFlash2 drafters are trained non-causal",
        )


RULES = (
    layer_types_length,
    unknown_layer_type,
    sliding_without_window,
    window_dropped,
    window_without_sliding,
    layer_types_absent,
    dflash2_causality,
)

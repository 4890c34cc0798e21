"""Rules on the file as the engine's config class (the one AutoConfig registers for its model_type:
`Qwen3Config` for qwen3 drafters) delivers it to the engine.

The values come from running the installed transformers (see sources/views.py); these rules only
compare its answer with the raw file, and name the class.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dflash_cfg.lint.engines import sglang, transformers, vllm
from dflash_cfg.lint.rules.attention import SLIDING, strip
from dflash_cfg.lint.rules.base import Context, rule, show
from dflash_cfg.model import Fix, PatchOp, Problem, Severity

# The θ a loader that reads only a flat rope_theta falls back to (transformers 4.x's config classes, MLX and Swift
# ports), and the config classes' default.
FALLBACK_THETA = 10000


def _stated_theta(data: dict[str, Any]) -> tuple[Any, Any]:
    """RoPE θ as the file states it: flat, and in rope_parameters."""
    params = data.get("rope_parameters")
    nested = params.get("rope_theta") if isinstance(params, dict) else None
    return data.get("rope_theta"), nested


@rule(
    "DF301",
    "config-class-rejects",
    Severity.ERROR,
    "data",
    "effective",
    reads=(vllm.MODEL_TYPE, transformers.CONFIG_CLASS),
)
def config_class_rejects(ctx: Context) -> Iterator[Problem]:
    """The installed transformers' config class for the file (``Qwen3Config`` for qwen3) refuses it.

    Every engine loads the drafter config through it, so the engine will not start. A ``model_type``
    AutoConfig has no class for is DF135. The message is transformers' own, with its version: 5.24
    refuses a ``layer_types`` length mismatch and type-checks fields (``"128"`` where an int belongs).

    Fail: ``"head_dim": null`` (transformers v5)
    Pass: ``"head_dim": 128``
    """
    eff = ctx.effective
    # SGLang cannot load the speculators format at all (DF162); vLLM builds its translation through transformers.
    engines = "vLLM refuses" if ctx.kind == "speculators" else "vLLM and SGLang refuse"
    if eff.error is not None and eff.config_class is not None:
        yield Problem(
            pointer="",
            message=f"{eff.through} (transformers {eff.transformers_version}) "
            f"rejects the file, so {engines} it: {eff.error}",
        )
    elif eff.error is not None and "AutoConfig" not in eff.error:
        yield Problem(
            pointer="",
            message=f"transformers {eff.transformers_version} cannot load the file, so {engines} it: {eff.error}",
        )


# Fields where a silent raw -> effective change alters what the drafter computes, except the ones
# that have their own rule (sliding_window with sliding layers: DF204; absent layer_types: DF206;
# RoPE theta: DF304).
_COMPARED = ("layer_types", "sliding_window", "num_key_value_heads", "head_dim", "dtype")


@rule(
    "DF302",
    "effective-differs",
    Severity.ERROR,
    "data",
    "effective",
    reads=(transformers.CONFIG_CLASS,),
    severities=(Severity.INFO,),
)
def effective_differs(ctx: Context) -> Iterator[Problem]:
    """A DFlash-relevant value is not what the raw file says once the config class has loaded it.

    Engines draft with the loaded value, not the written one (an error; information when it changes
    nothing an engine computes).

    Covers ``layer_types`` (e.g. v5 renames legacy names), ``sliding_window`` dropped where no layer
    slides (information: harmless unless the window was meant to be used), ``num_key_value_heads``
    (``null`` becomes the number of attention heads), ``head_dim`` and ``dtype`` (``dtype`` wins over
    ``torch_dtype``). Sliding layers losing their window are DF204; RoPE θ is DF304.

    Fail: ``"num_key_value_heads": null`` with 32 heads (engines use 32 KV heads)
    Pass: ``"num_key_value_heads": 8``
    """
    eff, data = ctx.effective, ctx.data
    if eff.values is None:
        return
    sliding = SLIDING in (ctx.layer_types() or ())
    for name in _COMPARED:
        if name == "dtype":
            before = data.get("dtype", data.get("torch_dtype"))
        elif name not in data or name not in eff.values:  # not in the values: the class gives no one value
            continue
        else:
            before = data[name]
        after = eff.values.get(name)
        if (before is None and name != "num_key_value_heads") or before == after:
            continue
        if name == "sliding_window":
            if sliding:
                continue  # DF204 explains it
            use = show(data["use_sliding_window"]) if "use_sliding_window" in data else "absent"
            yield Problem(
                pointer="/sliding_window",
                message=f"sliding_window {show(before)} becomes {show(after)} through {eff.through} "
                f"(transformers {eff.transformers_version}, use_sliding_window "
                f"{use}); no layer slides, so only engines reading "
                "the raw file see a window",
                severity=Severity.INFO,
            )
            continue
        shown = (
            strip(before) if name == "layer_types" and isinstance(before, list) else show(before),
            strip(after) if name == "layer_types" and isinstance(after, list) else show(after),
        )
        where = "/torch_dtype" if name == "dtype" and "dtype" not in data else f"/{name}"
        # The legacy "attention" renamed to "full_attention": the layout the file means (DF202 warns).
        legacy = name == "layer_types" and isinstance(before, list) and after == [_modern(t) for t in before]
        yield Problem(
            pointer=where,
            message=f"{name} {shown[0]} in the file becomes {shown[1]} through {eff.through} "
            f"(transformers {eff.transformers_version}); engines see the latter",
            severity=Severity.INFO if legacy else None,
        )


def _modern(layer_type: object) -> object:
    return "full_attention" if layer_type == "attention" else layer_type


@rule("DF303", "transformers-warning", Severity.WARNING, "data", "effective", own_check=True)
def transformers_warning(ctx: Context) -> Iterator[Problem]:
    """transformers logged a warning while loading the file.

    For example v5's "mask_token_id must be None or an integer within the vocabulary" for a
    top-level id, or a RoPE scaling factor that disagrees with the context lengths.

    A check of dflash-cfg's own, not an engine read: it passes on whatever the installed transformers
    logs while loading the file (the engines load it through the same class and log the same), and
    says nothing about what an engine then does.

    Fail: top-level ``"mask_token_id": 248070`` with ``"vocab_size": 151936``
    Pass: a file transformers loads silently
    """
    for message in ctx.effective.warnings:
        yield Problem(pointer="", message=f"transformers {ctx.effective.transformers_version}: {message}")


@rule(
    "DF304",
    "rope-theta",
    Severity.ERROR,
    "data",
    "effective",
    reads=(vllm.ROPE_THETA, sglang.ROPE_THETA),
    severities=(Severity.INFO, Severity.WARNING),
    fix=True,
)
def rope_theta(ctx: Context) -> Iterator[Problem]:
    """RoPE θ is missing, ambiguous, or not what transformers reads.

    Qwen3.5/3.6 drafters use 1e7; a wrong θ silently rotates the drafter's queries and context keys.
    Errors: the installed transformers reads a different θ than the file states (4.x ignores
    ``rope_parameters`` and uses 10000; any version lets a ``rope_scaling`` dict replace
    ``rope_parameters``); no θ at all: the config class fills ``rope_parameters`` with its default 10000
    before {vLLM}'s ``set_default_rope_theta(1e6)`` could apply, so vLLM and {SGLang} both build
    RoPE with base 10000, silently replacing the trained θ (1e7 for the Qwen3.5/3.6 drafters).

    Not a finding: a Laguna drafter's flat ``rope_theta``. vLLM builds Laguna through transformers'
    ``LagunaConfig``, whose RoPE is per layer type by design (full-attention layers take the file's
    ``rope_theta``, sliding layers the config's own 10000, as the Laguna target does); SGLang's Laguna
    config uses the file's value for every layer of a drafter without full-attention layers. The
    published poolside/Laguna-XS-2.1-DFlash (all sliding, ``rope_theta`` 500000) runs with 10000 in vLLM
    and 500000 in SGLang; which one it was trained with the file cannot show, and it is what poolside
    publishes, so dflash-cfg does not flag it.

    Warning: flat ``rope_theta`` and ``rope_parameters.rope_theta`` disagree. {vLLM} and {SGLang}
    both read ``rope_parameters`` (checked by running them), as transformers v5 does; 4.x reads the flat
    one. Which copy was trained the file cannot show, as for the other duplicated values (DF112, DF121).

    Information: θ only in ``rope_parameters`` while the installed
    transformers reads it — 4.x, MLX and Swift ports would not, and fall back to 10000; the safe fix mirrors it
    to a flat ``rope_theta``. Not a finding when that θ is 10000 itself: the fallback is the file's value, so
    every loader builds the same RoPE (RedHatAI/DeepSeek-V4-Flash-speculator.dflash).

    Fail: no ``rope_theta`` and no ``rope_parameters``
    Fail (warning): ``"rope_theta": 1000000`` and ``"rope_parameters": {"rope_theta": 10000000}``
    Pass: ``"rope_theta": 10000000`` (and optionally the same in ``rope_parameters``)
    """
    eff = ctx.effective
    flat, nested = _stated_theta(ctx.data)
    if flat is not None and nested is not None and flat != nested:
        yield Problem(
            pointer="/rope_parameters/rope_theta",
            message=f"rope_theta {flat} disagrees with rope_parameters.rope_theta {nested}: vLLM and SGLang read "
            f"{nested} (as transformers v5 does), transformers 4.x reads {flat}; make sure {nested} is the trained one",
            severity=Severity.WARNING,
        )
        return
    stated = flat if flat is not None else nested
    if stated is None:
        yield Problem(
            pointer="/rope_theta",
            message="no RoPE theta: vLLM and SGLang build RoPE with base 10000 (the config class default), not the "
            "trained value; take it from upstream",
            severity=Severity.ERROR,
        )
        return
    seen = eff.values.get("rope_theta") if eff.values else None
    if seen is not None and seen != stated:
        yield Problem(
            pointer="/rope_theta" if flat is not None else "/rope_parameters/rope_theta",
            message=f"the file says RoPE theta {stated} but {eff.through} "
            f"(transformers {eff.transformers_version}) reads {seen}",
            severity=Severity.ERROR,
        )
    elif flat is None and nested != FALLBACK_THETA:
        yield Problem(
            pointer="/rope_theta",
            message=f"RoPE theta {nested} only in rope_parameters: transformers 4.x, MLX and Swift "
            "ports read flat rope_theta and fall back to 10000",
            fix=Fix("mirror rope_parameters.rope_theta to a flat rope_theta", (PatchOp("add", "/rope_theta", nested),)),
            severity=Severity.INFO,
        )


RULES = (config_class_rejects, effective_differs, transformers_warning, rope_theta)

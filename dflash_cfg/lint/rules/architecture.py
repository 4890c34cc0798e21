"""DF13x: the drafter class engines pick from ``architectures`` and the config class ``model_type`` names."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_cfg.lint.engines import REGISTERED_ARCHITECTURES
from dflash_cfg.lint.rules.base import Context, rule, show
from dflash_cfg.model import NAMES, Engine, Problem, Severity

# The DFlash2 convolution and selector sizes (0 or absent: off).
DFLASH2_KEYS = ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k")


@rule(
    "DF131",
    "architecture",
    Severity.ERROR,
    "data",
    "effective",
    reads=("vLLM:architectures", "SGLang:architectures", "vLLM:model_type", "SGLang:dflash2_keys"),
    severities=(Severity.WARNING,),
)
def architecture(ctx: Context) -> Iterator[Problem]:
    """No engine registers ``architectures`` (or only one engine does), or the installed transformers'
    ``AutoConfig`` cannot load ``model_type``.

    vLLM and SGLang pick the drafter class from ``architectures``: ``DFlashDraftModel``, ``DFlash2DraftModel``,
    ``DFlashLagunaForCausalLM`` and ``MuseGlimmerAssistantModel`` are registered in both; a trainer-specific name
    (e.g. ``Qwen3DFlashDraftModel``) in neither, an error. Some classes only one engine builds (checked by running
    both): ``DFlash2BeamDraftModel`` and ``MiniMaxDFlash2DraftModel`` only {SGLang} ({vLLM} refuses them),
    the XPress drafters ``Qwen3XPressModel`` and ``DFlashQwen3XPressModel`` (a DFlash drafter with a refiner head,
    served under method dflash) only {vLLM} ({SGLang} has no XPress model and refuses the file). Such a
    file is made for the engine that builds it, so ``check`` warns and names the engine that refuses it;
    ``preflight`` errs when the launch's engine is the one that refuses it, and says nothing when it builds it.
    An XPress label on a plain DFlash checkpoint builds too (the refiner's sizes have defaults), but its weights
    lack the refiner head, which vLLM's loader refuses ("XPress checkpoint is missing xpress_head.mix.L",
    ``qwen3_xpress.py``, ``load_weights``). Engines load the config through
    ``AutoConfig``, i.e. the class registered for ``model_type`` (``qwen3``, ``gpt_oss``, ``laguna``, ...); an
    exporter's invented type (``qwen3_dflash``) has none. A DFlash2 file must name ``DFlash2DraftModel``, or engines
    build the plain DFlash model without its convolution and selector: a DFlash2 checkpoint
    (``conv_*``/``selector_*`` keys in ``dflash_config``) labelled ``DFlashDraftModel`` makes {vLLM} build the
    v1 drafter and ignore those keys, and {SGLang} build the convolution but no selector.

    A drafter class followed by other entries is a warning: both engines build the first (checked by running
    them) and ignore the rest.

    Fail: ``"architectures": ["Qwen3DFlashDraftModel"]``, ``"model_type": "dflash"``
    Fail (warning): ``"architectures": ["DFlashDraftModel", "Qwen3ForCausalLM"]``;
    ``"architectures": ["DFlashQwen3XPressModel"]`` in ``check`` (an error in an SGLang launch)
    Pass: ``"architectures": ["DFlashDraftModel"]``, ``"model_type": "qwen3"``;
    ``"architectures": ["DFlashLagunaForCausalLM"]``, ``"model_type": "laguna"``
    """
    archs = ctx.data.get("architectures")
    names = ", ".join(sorted(REGISTERED_ARCHITECTURES))
    if archs is None:
        yield Problem(
            "/architectures",
            f"architectures missing: vLLM and SGLang pick the drafter class from it and refuse the file ({names})",
        )
    elif (
        isinstance(archs, list)
        and len(archs) > 1
        and isinstance(archs[0], str)
        and archs[0] in REGISTERED_ARCHITECTURES
    ):
        builders = REGISTERED_ARCHITECTURES[archs[0]]
        who = "vLLM and SGLang build" if len(builders) > 1 else f"{NAMES[builders[0]]} builds"
        yield Problem(
            "/architectures",
            f"architectures {show(archs)} should name one drafter class: {who} the first, "
            f"{archs[0]}, and ignore the rest",
            severity=Severity.WARNING,
        )
    elif not isinstance(archs, list) or len(archs) != 1 or not isinstance(archs[0], str):
        yield Problem("/architectures", f"architectures {show(archs)} should name one drafter class ({names})")
    elif archs[0] not in REGISTERED_ARCHITECTURES:
        yield Problem(
            "/architectures",
            f"architectures {show(archs)}: no engine registers {archs[0]} as a DFlash drafter, so vLLM and SGLang "
            f"refuse the file (they know {names})",
        )
    elif len(REGISTERED_ARCHITECTURES[archs[0]]) == 1:
        yield from _one_engine(ctx, archs, REGISTERED_ARCHITECTURES[archs[0]][0])
    elif ctx.kind == "dflash2" and archs[0] != "DFlash2DraftModel":
        yield Problem(
            "/architectures", f'architectures {show(archs)} on a DFlash2 drafter should be ["DFlash2DraftModel"]'
        )
    dflash2_keys = [k for k in DFLASH2_KEYS if ctx.dflash.get(k)]
    if isinstance(archs, list) and archs == ["DFlashDraftModel"] and dflash2_keys:
        yield Problem(
            "/architectures",
            f"dflash_config has the DFlash2 keys {', '.join(dflash2_keys)} but architectures is "
            '["DFlashDraftModel"]: vLLM builds the v1 drafter and ignores them, SGLang builds the convolution '
            'but no selector; a DFlash2 checkpoint needs ["DFlash2DraftModel"]',
        )
    if ctx.kind == "speculators":
        return  # vLLM builds a bare PretrainedConfig from the translated dict, whatever the model_type
    eff = ctx.effective
    if eff.config_class is None and eff.values is None and eff.error is not None and "AutoConfig" in eff.error:
        model_type = ctx.data.get("model_type")
        yield Problem(
            "/model_type",
            f"model_type {'missing' if model_type is None else show(model_type)}: {eff.error} "
            f"(transformers {eff.transformers_version}), so vLLM and SGLang refuse the file",
        )


def _one_engine(ctx: Context, archs: list[str], builder: Engine) -> Iterator[Problem]:
    """A class only `builder` builds: the file is that engine's on purpose, so `check` warns; a launch errs
    only when its engine is the one that refuses the file."""
    refuser: Engine = "sglang" if builder == "vllm" else "vllm"
    builds, refuses = NAMES[builder], NAMES[refuser]
    said = f"architectures {show(archs)}: only {builds} builds {archs[0]}; {refuses} refuses the file"
    if ctx.launch is None:
        yield Problem("/architectures", said, severity=Severity.WARNING)
    elif ctx.launch.engine == refuser:
        yield Problem("/architectures", f"{said}, and this launch is {refuses}'s: serve it with {builds}")


RULES = (architecture,)

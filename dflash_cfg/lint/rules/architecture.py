"""DF13x: the drafter class engines pick from ``architectures`` and the config class ``model_type`` names."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_cfg.lint.engines import REGISTERED_ARCHITECTURES, sglang, vllm
from dflash_cfg.lint.rules.base import ENGINE_FORMAT, Context, rule, show
from dflash_cfg.model import NAMES, Engine, Problem, Requirement, Severity

# The DFlash2 convolution and selector sizes (0 or absent: off).
DFLASH2_KEYS = ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k")


@rule(
    "DF131",
    "architecture",
    Severity.ERROR,
    reads=(vllm.ARCHITECTURES, sglang.ARCHITECTURES),
    severities=(Severity.WARNING,),
)
def architecture(ctx: Context) -> Iterator[Problem]:
    """``architectures`` does not name one drafter class an engine registers.

    vLLM and SGLang pick the drafter class from ``architectures``: ``DFlashDraftModel``, ``DFlash2DraftModel``,
    ``DFlashLagunaForCausalLM`` and ``MuseGlimmerAssistantModel`` are registered in both; a trainer-specific name
    (e.g. ``Qwen3DFlashDraftModel``) in neither, an error, as is a value that is not a list of one class name.
    Without ``architectures`` it is DF132; a class only one engine builds, DF133.

    A drafter class followed by other entries is a warning: both engines build the first (checked by running
    them) and ignore the rest.

    Fail: ``"architectures": ["Qwen3DFlashDraftModel"]``; ``"architectures": "DFlashDraftModel"``
    Fail (warning): ``"architectures": ["DFlashDraftModel", "Qwen3ForCausalLM"]``
    Pass: ``"architectures": ["DFlashDraftModel"]``; ``"architectures": ["DFlashLagunaForCausalLM"]``
    """
    archs = ctx.data.get("architectures")
    if archs is None:
        return  # DF132
    names = ", ".join(sorted(REGISTERED_ARCHITECTURES))
    if (
        isinstance(archs, list)
        and len(archs) > 1
        and isinstance(archs[0], str)
        and archs[0] in REGISTERED_ARCHITECTURES
    ):
        builders = REGISTERED_ARCHITECTURES[archs[0]]
        who = "vLLM and SGLang build" if len(builders) > 1 else f"{NAMES[builders[0]]} builds"
        yield Problem(
            pointer="/architectures",
            message=f"architectures {show(archs)} should name one drafter class: {who} the first, "
            f"{archs[0]}, and ignore the rest",
            severity=Severity.WARNING,
        )
    elif not isinstance(archs, list) or len(archs) != 1 or not isinstance(archs[0], str):
        yield Problem(
            pointer="/architectures", message=f"architectures {show(archs)} should name one drafter class ({names})"
        )
    elif archs[0] not in REGISTERED_ARCHITECTURES:
        yield Problem(
            pointer="/architectures",
            message=f"architectures {show(archs)}: no engine registers {archs[0]} as a DFlash drafter, "
            f"so vLLM and SGLang refuse the file (they know {names})",
        )


@rule("DF132", "architectures-missing", Severity.ERROR, reads=(vllm.ARCHITECTURES, sglang.ARCHITECTURES))
def architectures_missing(ctx: Context) -> Iterator[Problem]:
    """No ``architectures``: the engines have no drafter class to build.

    vLLM and SGLang pick the drafter class from ``architectures`` and refuse a file without it (or with
    ``null``): the model is not found.

    Fail: no ``architectures``; ``"architectures": null``
    Pass: ``"architectures": ["DFlashDraftModel"]``
    """
    if ctx.data.get("architectures") is None:
        names = ", ".join(sorted(REGISTERED_ARCHITECTURES))
        yield Problem(
            pointer="/architectures",
            message="architectures missing: vLLM and SGLang pick the drafter class from it and refuse the file "
            f"({names})",
        )


@rule(
    "DF133",
    "one-engine-architecture",
    Severity.ERROR,
    reads=(vllm.ARCHITECTURES, sglang.ARCHITECTURES),
    severities=(Severity.WARNING,),
)
def one_engine_architecture(ctx: Context) -> Iterator[Problem]:
    """Only one engine builds the drafter class ``architectures`` names.

    Some classes only one engine builds (checked by running both): ``DFlash2BeamDraftModel`` and
    ``MiniMaxDFlash2DraftModel`` only {SGLang} ({vLLM} refuses them), the XPress drafters ``Qwen3XPressModel`` and
    ``DFlashQwen3XPressModel`` (a DFlash drafter with a refiner head, served under method dflash) only {vLLM}
    ({SGLang} has no XPress model and refuses the file). Such a file is made for the engine that builds it, so
    ``check`` warns and names the engine that refuses it; ``preflight`` errs when the launch's engine is the one
    that refuses it, and says nothing when it builds it. The warning concerns the refusing engine only: a gate
    fails on it only where that engine serves the drafter (``engines`` in the project config, ``--engine``).
    An XPress label on a plain DFlash checkpoint builds too
    (the refiner's sizes have defaults), but its weights lack the refiner head, which vLLM's loader refuses
    ("XPress checkpoint is missing xpress_head.mix.L", ``qwen3_xpress.py``, ``load_weights``).

    Fail: ``"architectures": ["DFlashQwen3XPressModel"]`` in an SGLang launch
    Fail (warning): ``"architectures": ["DFlashQwen3XPressModel"]`` in ``check``
    Pass: ``"architectures": ["DFlashQwen3XPressModel"]`` in a vLLM launch; ``"architectures": ["DFlashDraftModel"]``
    """
    archs = ctx.data.get("architectures")
    # One class only: a list of several is DF131's, which names the engines that build its first entry.
    if isinstance(archs, list) and len(archs) == 1 and isinstance(archs[0], str):
        builders = REGISTERED_ARCHITECTURES.get(archs[0], ())
        if len(builders) == 1:
            yield from _one_engine(ctx, archs, builders[0])


@rule("DF134", "dflash2-labelled-dflash", Severity.ERROR, reads=(vllm.ARCHITECTURES, sglang.DFLASH2_KEYS))
def dflash2_labelled_dflash(ctx: Context) -> Iterator[Problem]:
    """A DFlash2 checkpoint labelled ``DFlashDraftModel``: the engines build the plain DFlash model.

    A DFlash2 file must name ``DFlash2DraftModel``, or engines build the plain DFlash model without its
    convolution and selector: a DFlash2 checkpoint (``conv_*``/``selector_*`` keys in ``dflash_config``)
    labelled ``DFlashDraftModel`` makes {vLLM} build the v1 drafter and ignore those keys, and {SGLang} build the
    convolution but no selector.

    Fail: ``"architectures": ["DFlashDraftModel"]`` with ``dflash_config.selector_rank`` 64
    Pass: ``"architectures": ["DFlash2DraftModel"]`` with ``dflash_config.selector_rank`` 64
    """
    dflash2_keys = [k for k in DFLASH2_KEYS if ctx.dflash.get(k)]
    if ctx.data.get("architectures") == ["DFlashDraftModel"] and dflash2_keys:
        yield Problem(
            pointer="/architectures",
            message=f"dflash_config has the DFlash2 keys {', '.join(dflash2_keys)} but architectures is "
            '["DFlashDraftModel"]: vLLM builds the v1 drafter and ignores them, SGLang builds the convolution '
            'but no selector; a DFlash2 checkpoint needs ["DFlash2DraftModel"]',
        )


@rule(
    "DF135",
    "model-type",
    Severity.ERROR,
    "data",
    "effective",
    kinds=ENGINE_FORMAT,  # vLLM builds a bare PretrainedConfig from a speculators file's translation
    reads=(vllm.MODEL_TYPE, sglang.MODEL_TYPE),
)
def model_type(ctx: Context) -> Iterator[Problem]:
    """The installed transformers' ``AutoConfig`` cannot load ``model_type``.

    Engines load the config through ``AutoConfig``, i.e. the class registered for ``model_type`` (``qwen3``,
    ``gpt_oss``, ``laguna``, ...); an exporter's invented type (``qwen3_dflash``) has none, nor has a file
    without ``model_type``, so {vLLM} and {SGLang} refuse the file. A speculators-format file is not asked: vLLM
    builds a bare ``PretrainedConfig`` from its translation, whatever the ``model_type``. A registered class that
    refuses the file's values is DF301.

    Fail: ``"model_type": "dflash"``
    Pass: ``"model_type": "qwen3"``; ``"model_type": "laguna"``
    """
    eff = ctx.effective
    if eff.config_class is None and eff.values is None and eff.error is not None and "AutoConfig" in eff.error:
        found = ctx.data.get("model_type")
        yield Problem(
            pointer="/model_type",
            message=f"model_type {'missing' if found is None else show(found)}: {eff.error} "
            f"(transformers {eff.transformers_version}), so vLLM and SGLang refuse the file",
        )


def _one_engine(ctx: Context, archs: list[str], builder: Engine) -> Iterator[Problem]:
    """A class only `builder` builds: the file is that engine's on purpose, so `check` warns; a launch errs
    only when its engine is the one that refuses the file."""
    refuser: Engine = "sglang" if builder == "vllm" else "vllm"
    builds, refuses = NAMES[builder], NAMES[refuser]
    said = f"architectures {show(archs)}: only {builds} builds {archs[0]}; {refuses} refuses the file"
    if ctx.launch is None:
        yield Problem(
            pointer="/architectures", message=said, severity=Severity.WARNING, engines=(Requirement(refuser),)
        )
    elif ctx.launch.engine == refuser:
        yield Problem(
            pointer="/architectures", message=f"{said}, and this launch is {refuses}'s: serve it with {builds}"
        )


RULES = (architecture, architectures_missing, one_engine_architecture, dflash2_labelled_dflash, model_type)

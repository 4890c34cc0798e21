"""DF13x: the drafter class engines pick from ``architectures`` and the config class ``model_type`` names."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_cfg.lint.engine_architectures import REGISTERED
from dflash_cfg.lint.engines import ENGINE_ORDER, REGISTERED_ARCHITECTURES, registrations, sglang, vllm
from dflash_cfg.lint.rules.base import ENGINE_FORMAT, Context, as_int, is_int, rule, show
from dflash_cfg.model import NAMES, Engine, Problem, Requirement, Severity

# The releases of each engine whose registries dflash-cfg holds (lint.engine_architectures): a class one of them
# lacks is one that release refuses.
_KNOWN_RELEASES: dict[Engine, tuple[str, ...]] = {e: tuple(REGISTERED[e]) for e in ENGINE_ORDER if e in REGISTERED}

# The DFlash2 convolution and selector sizes (0 or absent: off).
DFLASH2_KEYS = ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k")


@rule(
    "DF131",
    "architecture",
    Severity.ERROR,
    reads=(vllm.ARCHITECTURES, sglang.ARCHITECTURES),
    severities=(Severity.WARNING, Severity.INFO),
)
def architecture(ctx: Context) -> Iterator[Problem]:
    """``architectures`` does not name one drafter class an engine registers.

    vLLM and SGLang pick the drafter class from ``architectures``: ``DFlashDraftModel``, ``DFlash2DraftModel``,
    ``DFlashLagunaForCausalLM`` and ``MuseGlimmerAssistantModel`` are registered in both; a trainer-specific name
    (e.g. ``Qwen3DFlashDraftModel``) in neither, an error, as is a value that is not a list of one class name.
    Without ``architectures`` it is DF132; a class only one engine builds, DF133; a DSpark class both build
    (``Qwen3DSparkModel``), DF137.

    A drafter class followed by other entries is a warning: both engines build the first (checked by running
    them) and ignore the rest.

    A class an engine release registers that dflash-cfg has not built (the DSpark drafters ``DSparkDraftModel``,
    ``Gemma4DSparkModel`` and others, vLLM 0.34.0's ``DFlash2RicursiveDraftModel``) names the releases that
    register it and those that refuse it, and the file is checked as a DFlash drafter only: the registries come
    from the engines' source (``lint/engine_architectures.py``, ``./dev engines --keys``). An info; where only one
    engine registers it, the file is that engine's, as in DF133: a warning for the other engine, and an error in
    a launch of the other engine.

    Fail: ``"architectures": ["Qwen3DFlashDraftModel"]``; ``"architectures": "DFlashDraftModel"``
    Fail (warning): ``"architectures": ["DFlashDraftModel", "Qwen3ForCausalLM"]``
    Fail (warning): ``"architectures": ["Gemma4DSparkModel"]`` (SGLang does not register it)
    Fail (info): ``"architectures": ["DSparkDraftModel"]``
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
    elif archs[0] not in REGISTERED_ARCHITECTURES and archs[0] not in DSPARK_ARCHITECTURES:
        found = registrations(archs[0])
        if not found:
            yield Problem(
                pointer="/architectures",
                message=f"architectures {show(archs)}: no engine registers {archs[0]} as a DFlash drafter, "
                f"so vLLM and SGLang refuse the file (they know {names})",
            )
        else:
            yield _registered(ctx, archs, found)


def _registered(ctx: Context, archs: list[str], found: dict[Engine, tuple[str, ...]]) -> Problem:
    """A class engines register that dflash-cfg has not built. One that only one engine registers is that
    engine's file, as DF133 holds a class one engine builds: a warning for the other engine in `check`, an error
    in a launch of it; otherwise an info."""
    said = _unbuilt(archs, found)
    refusers = [e for e in ENGINE_ORDER if e not in found]
    if ctx.launch is not None and ctx.launch.engine in refusers:
        return Problem(pointer="/architectures", message=f"{said}; this launch is {NAMES[ctx.launch.engine]}'s")
    if ctx.launch is None and refusers:
        return Problem(
            pointer="/architectures",
            message=said,
            severity=Severity.WARNING,
            engines=tuple(Requirement(e) for e in refusers),
        )
    return Problem(pointer="/architectures", message=said, severity=Severity.INFO)


def _unbuilt(archs: list[str], found: dict[Engine, tuple[str, ...]]) -> str:
    """A class an engine registers that dflash-cfg has not built: who registers it, who refuses it."""
    name = archs[0]
    missing = {e: tuple(r for r in rs if r not in found.get(e, ())) for e, rs in _KNOWN_RELEASES.items()}
    missing = {e: rs for e, rs in missing.items() if rs}

    def said(releases: dict[Engine, tuple[str, ...]]) -> tuple[str, bool]:
        """ "vLLM 0.33.0 and 0.34.0 and SGLang 0.5.23", and whether that is more than one release."""
        text = " and ".join(f"{NAMES[e]} {' and '.join(rs)}" for e, rs in releases.items())
        return text, sum(len(rs) for rs in releases.values()) > 1

    who, many = said(found)
    refused = ""
    if missing:
        others, more = said(missing)
        refused = f"; {others} {'do' if more else 'does'} not (refusing the file)"
    kind = "a DSpark drafter (a speculative method of its own, not DFlash): " if "DSpark" in name else ""
    return (
        f"architectures {show(archs)}: {kind}{who} register{'' if many else 's'} {name}{refused}; "
        "dflash-cfg has not built it, so it checks the file as a DFlash drafter only"
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


# DSpark drafter classes both engines build (checked by running them: tests/engines/test_branches.py): another
# speculative method than DFlash, with a Markov head; DF137 holds them, DF131 does not call them unregistered.
DSPARK_ARCHITECTURES = ("Qwen3DSparkModel",)


@rule(
    "DF137",
    "dspark-markov-rank",
    Severity.ERROR,
    reads=(vllm.DSPARK_MARKOV_RANK, sglang.DSPARK_MARKOV_RANK),
    severities=(Severity.INFO,),
)
def dspark_markov_rank(ctx: Context) -> Iterator[Problem]:
    """A DSpark drafter (``Qwen3DSparkModel``) without a positive ``markov_rank``, which both engines refuse.

    vLLM (launched with ``--speculative-config`` method ``dspark``) and SGLang build ``Qwen3DSparkModel``, a
    DSpark drafter with a Markov head: without ``markov_rank`` vLLM stops on the missing attribute and SGLang
    raises "DSpark draft requires markov_rank > 0", as it does for a rank that is not a positive integer (a
    numeric string it reads as the integer; vLLM refuses that one), and SGLang needs ``markov_head_type`` with
    a rank. A DSpark drafter with its rank gets an info: vLLM builds it only under method ``dspark`` and
    refuses it under ``dflash``. Checked by running both (tests/engines/test_branches.py,
    switches ``dspark-qwen3``, ``dspark-qwen3-bare`` and ``dspark-qwen3-as-dflash``).

    Fail: ``"architectures": ["Qwen3DSparkModel"]`` without ``markov_rank``
    Fail (info): the same with ``"markov_rank": 64``
    Pass: ``"architectures": ["DFlashDraftModel"]``
    """
    archs = ctx.data.get("architectures")
    if not isinstance(archs, list) or len(archs) != 1 or archs[0] not in DSPARK_ARCHITECTURES:
        return
    top = ctx.data
    # Both engines' model classes read the top-level markov_rank (SGLang's parse also looks in dflash_config, but
    # its Markov head is built from the top level): as written in vLLM, int()ed in SGLang.
    block = {**_dict(top.get("dflash_config")), **_dict(top.get("dspark_config"))}
    rank = top.get("markov_rank")
    sglang_rank = as_int(rank) if rank is not None else None
    sglang_refuses = sglang_rank is None or sglang_rank <= 0
    if rank is None:
        yield Problem(
            pointer="/architectures",
            message=f"a DSpark drafter ({archs[0]}) without a top-level markov_rank: vLLM stops on the missing "
            "markov_rank and SGLang refuses it (DSpark draft requires markov_rank > 0)",
        )
        return
    if sglang_refuses:
        yield Problem(
            pointer="/markov_rank",
            message=f"markov_rank {show(rank)} on a DSpark drafter: SGLang refuses it (DSpark draft requires "
            "markov_rank > 0)",
            engines=(Requirement("sglang"),),
        )
    if not is_int(rank):
        yield Problem(
            pointer="/markov_rank",
            message=f"markov_rank {show(rank)} on a DSpark drafter, not an integer: vLLM refuses it (it sizes the "
            "Markov head with it as written)",
            engines=(Requirement("vllm"),),
        )
    prefixed = any(top.get(k) is not None for k in _DSPARK_PREFIXED)
    head = top.get("dspark_markov_head_type", block.get("markov_head_type", top.get("markov_head_type")))
    if not sglang_refuses and head is None and not prefixed:
        yield Problem(
            pointer="/markov_rank",
            message="markov_rank without markov_head_type on a DSpark drafter: SGLang refuses it (DSpark requires "
            "markov_head_type when markov_rank > 0)",
            engines=(Requirement("sglang"),),
        )
    if sglang_refuses or not is_int(rank) or (head is None and not prefixed):
        return
    yield Problem(
        pointer="/architectures",
        message=f"a DSpark drafter ({archs[0]}), not a DFlash one: vLLM builds it only with --speculative-config "
        "method dspark and refuses it under dflash; SGLang builds it",
        severity=Severity.INFO,
    )


# The dspark_-prefixed keys that spare SGLang's markov_head_type check (parse_dspark_draft_config's uses_prefixed).
_DSPARK_PREFIXED = ("dspark_block_size", "dspark_markov_rank", "dspark_noise_token_id", "dspark_target_layer_ids")


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


RULES = (
    architecture,
    architectures_missing,
    one_engine_architecture,
    dflash2_labelled_dflash,
    model_type,
    dspark_markov_rank,
)

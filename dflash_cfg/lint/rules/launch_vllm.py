"""Launch rules of the vLLM release changes (``dflash-cfg preflight``): how the method is chosen, the V1 model
runner 0.34 removed and what it refused, the speculative config's keys per release, and the draft's decode
context parallelism. Each declares the change it knows (`since`/`until`); the other launch rules are in `launch`."""

from __future__ import annotations

import json
from collections.abc import Iterator

from dflash_cfg.lint.engines import XPRESS_ARCHITECTURES, vllm
from dflash_cfg.lint.releases import (
    DRAFT_DCP_SLIDING,
    METHOD_FROM_CLASS,
    SPECULATIVE_KEYS,
    V1_RUNNER_GONE,
    VLLM_0_34,
    candidates,
    ordered,
    scope,
)
from dflash_cfg.lint.rules.base import Context, LaunchCheck, dspark, is_int, rule, show
from dflash_cfg.lint.rules.launch import launched, v1_forced
from dflash_cfg.lint.speculative_fields import FIELDS
from dflash_cfg.model import Problem, Severity


@rule(
    "DF803",
    "launch-method",
    Severity.ERROR,
    "data",
    "launch",
    reads=(vllm.METHOD,),
    since=METHOD_FROM_CLASS,
    until=METHOD_FROM_CLASS,
    checks=(
        LaunchCheck(
            engine="vllm",
            check='No `method` (vLLM 0.33): DFlash only if the drafter path contains "dflash" (or the '
            "architecture is `MuseGlimmerAssistantModel`), else `draft_model`; an explicit `draft_model` "
            'with "dflash" in the path becomes `dflash`',
            where="`vllm/config/speculative.py:SpeculativeConfig.__post_init__@0.33.0` (its method detection: "
            '`"dflash" in` the draft model path, else `draft_model`)',
            preflight="DF803, for vLLM before 0.34 (a plain draft model); engine test",
        ),
        LaunchCheck(
            engine="vllm",
            check="The method (vLLM 0.34): absent, the one the drafter's class declares (`dflash`, DFlash2 "
            "too); another explicit one is refused (\"... is a 'dflash' checkpoint ... Pass a matching "
            'method"); an unknown one is refused with the built-ins',
            where="`vllm/v1/worker/gpu/spec_decode/speculator_config.py:_resolve_checkpoint_config_class`, "
            "`vllm/config/speculative.py:SpeculativeConfig._validate_method`",
            preflight="DF803; engine test",
        ),
    ),
)
def method(ctx: Context) -> Iterator[Problem]:
    """The launch's speculative method does not build this DFlash drafter: the engine refuses the launch, or
    builds a drafter of another kind around these weights.

    vLLM 0.33 takes an explicit method as given; absent (or ``draft_model``), it chooses ``dflash`` only when
    "dflash" is in the drafter's path, and otherwise builds a plain draft model that runs the DFlash checkpoint
    as an autoregressive drafter, in silence
    (``vllm/config/speculative.py:SpeculativeConfig.__post_init__@0.33.0``). vLLM 0.34 takes the method the
    drafter's class declares (``dflash``, for DFlash2 too) when none is given, and refuses another explicit one:
    "... is a 'dflash' checkpoint ... Pass a matching method or a matching draft checkpoint"
    (``vllm/v1/worker/gpu/spec_decode/speculator_config.py:_resolve_checkpoint_config_class``). ``dflash2`` is a
    method of neither release (0.34: "Unknown speculative method",
    ``vllm/config/speculative.py:SpeculativeConfig._validate_method``), and both refuse EAGLE methods on these
    weights. SGLang: an algorithm other than DFLASH builds another drafter. A DSpark drafter (a class named
    ``*DSpark*``) is built by vLLM only under ``dspark`` (the branch suite's ``dspark-qwen3`` and
    ``dspark-qwen3-as-dflash`` switches), and by SGLang under DFLASH or DSPARK.

    Fail: vLLM ``"method": "eagle3"``; ``"method": "draft_model"`` (vLLM 0.34 refuses it; vLLM 0.33 serves a plain
    draft model unless the path says dflash); no method and a drafter path without "dflash" (vLLM 0.33)
    Pass: ``"method": "dflash"``, or no method and "dflash" in the drafter path; ``"method": "dspark"`` for
    ``Qwen3DSparkModel``
    """
    launch = launched(ctx)
    given = launch.method
    is_dspark = dspark(ctx.data)
    if launch.engine != "vllm":
        # SGLang builds a DSpark drafter under its DFLASH path and its own DSPARK one.
        known = ("dflash", "dflash2", "dspark") if is_dspark else ("dflash", "dflash2")
        if given is not None and given.lower() not in known:
            kind = "DSpark" if is_dspark else "DFlash"
            yield Problem(
                pointer="/architectures",
                message=f"the {launch.engine} launch uses speculative algorithm {show(given)} for a {kind} drafter",
            )
        return
    if is_dspark:
        # vLLM builds a DSpark class only under its own method, dspark (the branch suite's dspark-* switches); with
        # no method 0.34 takes the class's, and DF137 says the rest of it.
        if given not in (None, "dspark"):
            yield Problem(
                pointer="/architectures",
                message=f"vLLM refuses speculative method {show(given)} for a DSpark drafter (its method is 'dspark')",
            )
        return
    if given == "dflash":
        return
    old, new = VLLM_0_34.sides(launch)
    said_dflash = "dflash" in (launch.drafter or "").lower()
    if given not in (None, "draft_model"):
        yield Problem(
            pointer="/architectures",
            message=f"vLLM refuses speculative method {show(given)} for a DFlash drafter (its method is 'dflash')",
        )
        return
    plain = None if said_dflash else "vLLM 0.33 serves it as a plain draft model: its path does not say dflash"
    refused = "vLLM 0.34 refuses method 'draft_model' for a DFlash drafter" if given == "draft_model" else None
    sides = ((plain, VLLM_0_34.before, old), (refused, VLLM_0_34.on, new))
    found = [(said, scope) for said, scope, runs in sides if said is not None and runs]
    if not found:
        return
    how = f"speculative method {show(given)}" if given is not None else "no speculative method"
    message = f"the vLLM launch gives {how}: " + "; ".join(said for said, _ in found) + '; pass "method": "dflash"'
    # Said for each side of 0.34 it holds on; on both, it holds for every release (no scope).
    yield Problem(pointer="/architectures", message=message, engines=() if len(found) == 2 else (found[0][1],))


@rule(
    "DF806",
    "launch-v1-runner-mixed-attention",
    Severity.ERROR,
    "data",
    "launch",
    reads=(vllm.LAYER_TYPES,),
    until=V1_RUNNER_GONE,
    checks=(
        LaunchCheck(
            engine="vllm",
            check="V1 model runner (vLLM 0.33) refuses a drafter mixing sliding and full layers",
            where="`vllm/config/vllm.py:VllmConfig._dflash_needs_multi_kv_group@0.33.0`, "
            '`vllm/config/vllm.py:VllmConfig._get_v1_model_runner_unsupported_features@0.33.0` ("mixed '
            'sliding/full dflash drafts"); also '
            "`vllm/model_executor/models/qwen3_dflash.py:_resolve_layer_attention` (NotImplementedError "
            '"DFlash drafters with mixed sliding/full attention require the V2 model runner")',
            preflight="DF806 (`VLLM_USE_V2_MODEL_RUNNER=0`); engine test",
        ),
        LaunchCheck(
            engine="vllm",
            check="V1 (vLLM 0.33) is also chosen without the variable when Triton is missing or a "
            "V2-unsupported feature is on (PP with `external_launcher`, DBO)",
            where="`vllm/config/vllm.py:VllmConfig.use_v2_model_runner@0.33.0`, "
            "`vllm/config/vllm.py:VllmConfig._get_v2_model_runner_unsupported_features@0.33.0`",
            preflight="DF806/DF807 for pipeline parallelism with `--distributed-executor-backend "
            "external_launcher`; engine test. Not covered: a host without Triton (a GPU host has it) and "
            "dual-batch overlap (V1 only for some of its settings)",
        ),
    ),
)
def v1_runner_mixed_attention(ctx: Context) -> Iterator[Problem]:
    """A vLLM launch that runs the V1 model runner for a drafter that mixes sliding and full attention layers
    (vLLM before 0.34.0; 0.34.0 has no V1 runner and refuses such a launch whatever the drafter: DF811).

    vLLM 0.33's DFlash drafter needs one KV-cache group per attention kind, which only the V2 runner
    has: ``qwen3_dflash.py`` raises NotImplementedError "DFlash drafters with mixed sliding/full attention
    require the V2 model runner" at start-up. V1 runs when ``VLLM_USE_V2_MODEL_RUNNER`` is false, read as the
    engine will get it (``NAME=value`` and ``env`` before the command, ``docker run -e``/``--env-file``, or
    this environment); with the variable unset, when the launch asks for what V2 lacks: pipeline parallelism
    with ``--distributed-executor-backend external_launcher``
    (``vllm/config/vllm.py:VllmConfig._get_v2_model_runner_unsupported_features@0.33.0``).

    Fail: ``VLLM_USE_V2_MODEL_RUNNER=0 vllm serve ...`` with ``layer_types`` ``[sliding, full, ...]``;
    ``--distributed-executor-backend external_launcher -pp 2`` with the same drafter
    Pass: the same without the variable (or ``=1``), or a drafter whose layers are all of one kind
    """
    launch = launched(ctx)
    forced = v1_forced(launch)
    if forced is None or not VLLM_0_34.sides(launch)[0]:
        return
    types = ctx.data.get("layer_types")
    if not isinstance(types, list):
        return
    sliding = sum(t == "sliding_attention" for t in types)
    if 0 < sliding < len(types):
        yield Problem(
            pointer="/layer_types",
            message=f"{forced[0]} makes vLLM use its V1 model runner, which refuses a drafter mixing sliding and full"
            f" attention ({sliding} of {len(types)} layers sliding); {forced[1]}",
            engines=(VLLM_0_34.before,),
        )


# Drafters only vLLM's V2 model runner serves: vllm/config/vllm.py:VllmConfig._is_dflash_candidate_draft@0.33.0 and
# SpeculativeConfig.is_xpress (vllm/config/speculative.py:XPRESS_ARCHITECTURES@0.33.0).
V2_ONLY = {
    "DFlash2DraftModel": "candidate head",
    "DFlash2BeamDraftModel": "candidate head",
    "LiLiCorrDraftModel": "candidate head",
    **{name: "XPress refiner" for name in XPRESS_ARCHITECTURES},
}


@rule(
    "DF807",
    "launch-v1-runner-v2-only-drafter",
    Severity.ERROR,
    "data",
    "launch",
    reads=(vllm.ARCHITECTURES,),
    until=V1_RUNNER_GONE,
    checks=(
        LaunchCheck(
            engine="vllm",
            check="V1 model runner (vLLM 0.33) refuses a candidate-head drafter (DFlash2, DFlash2 beam, "
            "LiLiCorr) or an XPress one",
            where="`vllm/config/vllm.py:VllmConfig._is_dflash_candidate_draft@0.33.0`, "
            '`vllm/config/vllm.py:VllmConfig._get_v1_model_runner_unsupported_features@0.33.0` ("xpress '
            'speculative decoding", "DFlash candidate-head drafts"); '
            "`vllm/config/speculative.py:XPRESS_ARCHITECTURES@0.33.0`",
            preflight="DF807; engine test",
        ),
    ),
)
def v1_runner_v2_only_drafter(ctx: Context) -> Iterator[Problem]:
    """A vLLM launch that runs the V1 model runner (as DF806 tells) for a drafter only the V2 runner serves:
    one with a candidate head (DFlash2, its beam variant, LiLiCorr) or an XPress refiner (vLLM before 0.34.0;
    0.34.0 has no V1 runner and refuses such a launch whatever the drafter: DF811).

    Only the V2 runner's speculators call those parts; on V1 the same checkpoint would draft as a plain
    DFlash drafter, so vLLM 0.33.0 refuses the launch while it builds its configuration
    (``vllm/config/vllm.py:VllmConfig._validate_v1_model_runner@0.33.0``, with what
    ``vllm/config/vllm.py:VllmConfig._get_v1_model_runner_unsupported_features@0.33.0`` lists: "Model Runner V1 does
    not support: DFlash candidate-head drafts" / "xpress speculative decoding").

    Fail: ``VLLM_USE_V2_MODEL_RUNNER=0 vllm serve ...`` with ``"architectures": ["DFlash2DraftModel"]``
    Pass: the same without the variable (or ``=1``), or a ``DFlashDraftModel`` drafter
    """
    launch = launched(ctx)
    forced = v1_forced(launch)
    architectures = ctx.data.get("architectures")
    if forced is None or not VLLM_0_34.sides(launch)[0] or not isinstance(architectures, list):
        return
    found = [a for a in architectures if isinstance(a, str) and a in V2_ONLY]
    if found:
        yield Problem(
            pointer="/architectures",
            message=f"{forced[0]} makes vLLM use its V1 model runner, which refuses a {found[0]} drafter (its"
            f" {V2_ONLY[found[0]]} runs only in the V2 runner); {forced[1]}",
            engines=(VLLM_0_34.before,),
        )


@rule(
    "DF811",
    "launch-v1-runner-removed",
    Severity.ERROR,
    "data",
    "launch",
    reads=(vllm.VLLM_USE_V2_MODEL_RUNNER,),
    since=V1_RUNNER_GONE,
    checks=(
        LaunchCheck(
            engine="vllm",
            check="The V1 model runner is gone (vLLM 0.34): `VLLM_USE_V2_MODEL_RUNNER` other than 1 refuses "
            "every launch, and so does pipeline parallelism under `external_launcher`",
            where="`vllm/platforms/interface.py:Platform.validate_environ`, "
            "`vllm/config/vllm.py:VllmConfig._validate_model_runner`",
            preflight="DF811; engine test",
        ),
    ),
)
def v1_runner_removed(ctx: Context) -> Iterator[Problem]:
    """A vLLM 0.34 launch that asks for the V1 model runner, which 0.34.0 removed: the server does not start,
    whatever the drafter.

    ``VLLM_USE_V2_MODEL_RUNNER`` set to anything but ``1`` (read as DF806 reads it: before the command, ``env``,
    ``docker run -e``, or this environment) is refused at start-up with ValueError "... is no longer supported:
    Model Runner V1 has been removed. Unset this variable." (``vllm/platforms/interface.py:Platform.validate_environ``);
    pipeline parallelism under ``--distributed-executor-backend external_launcher``, which made vLLM 0.33 fall
    back to V1, is refused while vLLM builds its configuration: "The GPU model runner does not support:
    pipeline parallelism with external_launcher". For a launch whose vLLM release preflight cannot read, the
    finding holds for 0.34.0 and later, beside DF806/DF807's for the releases before.

    Fail: ``VLLM_USE_V2_MODEL_RUNNER=0 vllm serve ...`` run by vLLM 0.34.0, with any drafter
    Pass: the same without the variable (or ``=1``)
    """
    launch = launched(ctx)
    if launch.engine != "vllm" or not VLLM_0_34.sides(launch)[1]:
        return
    value = dict(launch.engine_env).get("VLLM_USE_V2_MODEL_RUNNER")
    if value is not None and value != "1":  # 0.34 compares the string: "true" and "01" are refused too
        said = f"vLLM 0.34 refuses to start with VLLM_USE_V2_MODEL_RUNNER={value}: its V1 model runner is removed;"
        said += " unset the variable"
    elif launch.distributed_executor_backend == "external_launcher" and launch.pipeline_parallel_size > 1:
        said = (
            f"vLLM 0.34 refuses --distributed-executor-backend external_launcher with pipeline parallel size"
            f" {launch.pipeline_parallel_size}: its only model runner does not run pipeline parallelism there"
        )
    else:
        return
    yield Problem(pointer="", message=said, engines=(VLLM_0_34.on,))


@rule(
    "DF812",
    "launch-speculative-config-key",
    Severity.ERROR,
    "data",
    "launch",
    reads=(vllm.SPECULATIVE_CONFIG_KEYS,),
    severities=(Severity.INFO,),
    since=SPECULATIVE_KEYS,
    until=SPECULATIVE_KEYS,
    checks=(
        LaunchCheck(
            engine="vllm",
            check="`--speculative-config` keys: each a keyword of the release's SpeculativeConfig (\"Unexpected "
            'keyword argument"); 0.34 dropped `disable_padded_drafter_batch` and '
            "`use_heterogeneous_vocab`, added `draft_decode_context_parallel_size`, deprecated "
            "`parallel_drafting`",
            where="`vllm/engine/arg_utils.py:EngineArgs.create_speculative_config`; the fields per release in "
            "`dflash_cfg/lint/speculative_fields.py`, read from each release by the engine suite",
            preflight="DF812; engine test",
        ),
    ),
)
def speculative_config_keys(ctx: Context) -> Iterator[Problem]:
    """A vLLM launch whose ``--speculative-config`` holds a key the vLLM release it runs does not accept: the
    server does not start.

    vLLM builds its SpeculativeConfig with every key of the dict as a keyword, so a key that is not one of the
    release's fields is refused: ValidationError "... Unexpected keyword argument". The fields of each checked
    release are read from its SpeculativeConfig by the engine suite (``dflash_cfg/lint/speculative_fields.py``):
    vLLM 0.34 dropped ``disable_padded_drafter_batch`` and ``use_heterogeneous_vocab`` and added
    ``draft_decode_context_parallel_size``, which 0.33 refuses. When preflight cannot read the release, the
    finding says which releases refuse the key. An info: ``parallel_drafting``, which vLLM 0.34 deprecates and
    ignores (DFlash always drafts in parallel: ``vllm/config/speculative.py:SpeculativeConfig.__post_init__``).

    Fail: ``{"method": "dflash", ..., "disable_padded_drafter_batch": true}`` run by vLLM 0.34.0
    Pass: the same without the key
    """
    launch = launched(ctx)
    if launch.engine != "vllm":
        return
    runs = candidates(launch, "vllm", FIELDS)
    for key, _ in launch.speculative_config:
        refused = {r: key not in fields for r, fields in FIELDS.items()}
        scoped = scope("vllm", refused)
        if scoped is not None and any(refused[r] for r in runs):
            names = [r for r in ordered(FIELDS) if refused[r]]
            yield Problem(
                pointer="",
                message=f"vLLM {' and '.join(names)} refuse{'s' if len(names) == 1 else ''} --speculative-config key"
                f" {show(key)} (not a field of its SpeculativeConfig: the server does not start); drop it",
                engines=scoped,
            )
        elif key == "parallel_drafting" and VLLM_0_34.sides(launch)[1]:
            yield Problem(
                pointer="",
                message='vLLM 0.34 ignores --speculative-config key "parallel_drafting" (deprecated: DFlash always '
                "drafts in parallel); drop it",
                severity=Severity.INFO,
                engines=(VLLM_0_34.on,),
            )


@rule(
    "DF813",
    "launch-draft-dcp-sliding",
    Severity.ERROR,
    "data",
    "launch",
    reads=(vllm.DRAFT_DECODE_CONTEXT_PARALLEL_SIZE,),
    since=DRAFT_DCP_SLIDING,
    checks=(
        LaunchCheck(
            engine="vllm",
            check="`draft_decode_context_parallel_size` > 1 with sliding draft layers (vLLM 0.34)",
            where="`vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:DFlashSpeculator.load_model`",
            preflight="DF813 (cited: the drafter loads on a GPU worker)",
        ),
    ),
)
def draft_dcp_sliding(ctx: Context) -> Iterator[Problem]:
    """A vLLM 0.34 launch that splits the drafter's decode context (``draft_decode_context_parallel_size`` > 1 in
    ``--speculative-config``) for a drafter with sliding-window layers: the server fails while it loads the
    drafter.

    The DFlash speculator refuses it once the layers are built, on the GPU worker: ValueError "DFlash draft
    layers [...] use sliding-window attention, which cannot run at decode_context_parallel_size=N. Set
    draft_decode_context_parallel_size=1."
    (``vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:DFlashSpeculator.load_model``). A layer is sliding as
    vLLM resolves it before the build (``vllm/model_executor/models/qwen3_dflash.py:dflash_has_any_sliding``):
    ``dflash_config.use_swa``, or ``sliding_attention`` in ``layer_types``. Without the key vLLM picks 1 for such
    a drafter. vLLM 0.33 has no such key (DF812).

    Fail: ``"draft_decode_context_parallel_size": 2`` with ``layer_types`` ``[sliding, ..., full]``
    Pass: the same with 1, or a drafter of full-attention layers only
    """
    launch = launched(ctx)
    value = json.loads(dict(launch.speculative_config).get("draft_decode_context_parallel_size", "null"))
    if launch.engine != "vllm" or not is_int(value) or value <= 1 or not VLLM_0_34.sides(launch)[1]:
        return
    types = ctx.data.get("layer_types")
    sliding = isinstance(types, list) and "sliding_attention" in types
    use_swa = bool(ctx.dflash.get("use_swa", False))
    if sliding or use_swa:
        why = "dflash_config.use_swa" if use_swa and not sliding else "sliding_attention layers in layer_types"
        yield Problem(
            pointer="/dflash_config/use_swa" if use_swa and not sliding else "/layer_types",
            message=f"vLLM 0.34 fails to load this drafter at draft_decode_context_parallel_size {value}: its {why} "
            "cannot run split over the decode context; set it to 1 (or leave it out)",
            engines=(VLLM_0_34.on,),
        )


RULES = (
    method,
    v1_runner_mixed_attention,
    v1_runner_v2_only_drafter,
    v1_runner_removed,
    speculative_config_keys,
    draft_dcp_sliding,
)

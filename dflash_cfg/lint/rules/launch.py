"""Launch rules (``dflash-cfg preflight``): the engine's command line against the drafter config."""

from __future__ import annotations

import json
from collections.abc import Iterator

from dflash_cfg.lint.engines import XPRESS_ARCHITECTURES
from dflash_cfg.lint.releases import VLLM_0_34, candidates, ordered, scope
from dflash_cfg.lint.rules.base import Context, is_int, rule, show
from dflash_cfg.lint.speculative_fields import FIELDS
from dflash_cfg.model import Launch, Problem, Severity

DEFAULT_BLOCK_SIZE = 16  # what newer loaders assume when the file has no block_size


def _launch(ctx: Context) -> Launch:
    assert ctx.launch is not None
    return ctx.launch


def _block_size(ctx: Context) -> tuple[int, str]:
    value = ctx.draft_value("block_size")
    if is_int(value) and value >= 2:
        where = "dflash_config.block_size" if "block_size" in ctx.dflash else "block_size"
        return value, f"{where} {value}"
    return DEFAULT_BLOCK_SIZE, f"no usable block_size, so the loaders' default {DEFAULT_BLOCK_SIZE}"


@rule(
    "DF801",
    "launch-draft-tokens",
    Severity.ERROR,
    "data",
    "launch",
    reads=("vLLM:num_speculative_tokens", "vLLM:block_size", "SGLang:block_size"),
)
def draft_tokens(ctx: Context) -> Iterator[Problem]:
    """The launch drafts a different number of tokens per step than the drafter's block was trained for.

    vLLM: ``num_speculative_tokens`` must be ``block_size - 1`` (the anchor is not drafted); SGLang:
    ``--speculative-num-draft-tokens`` must be ``block_size`` (anchor included). vLLM does not read the
    drafter's ``block_size`` at all and SGLang only logs a mismatch: both draft a block shape the drafter
    never saw.

    Fail: vLLM ``"num_speculative_tokens": 7`` with ``"block_size": 16``
    Pass: vLLM ``"num_speculative_tokens": 15`` with ``"block_size": 16``
    """
    launch = _launch(ctx)
    size, said = _block_size(ctx)
    where = ctx.draft_pointer("block_size")
    if (
        launch.engine == "vllm"
        and launch.num_speculative_tokens is not None
        and launch.num_speculative_tokens != size - 1
    ):
        yield Problem(
            pointer=where,
            message=f"the vLLM launch drafts num_speculative_tokens {launch.num_speculative_tokens} per "
            f"step, the drafter needs block_size - 1 = {size - 1} ({said})",
        )
    if launch.engine == "sglang" and launch.num_draft_tokens is not None and launch.num_draft_tokens != size:
        yield Problem(
            pointer=where,
            message=f"the SGLang launch sets --speculative-num-draft-tokens {launch.num_draft_tokens}, "
            f"the drafter needs block_size = {size} ({said})",
        )


@rule(
    "DF802",
    "launch-tensor-parallel",
    Severity.ERROR,
    "data",
    "launch",
    reads=("vLLM:num_attention_heads", "SGLang:num_attention_heads"),
)
def tensor_parallel(ctx: Context) -> Iterator[Problem]:
    """The drafter's attention heads cannot be split over the launch's tensor-parallel size.

    ``num_attention_heads`` must be a multiple of the TP size; ``num_key_value_heads`` a multiple of it,
    or a divisor of it (the engines then replicate KV heads). The DFlash attention layers of vLLM and
    SGLang assert this when they are built, so the server does not start.

    Fail: 32 heads, 8 KV heads, ``--tensor-parallel-size 3``
    Pass: 32 heads, 8 KV heads, ``--tensor-parallel-size 4``
    """
    tp = _launch(ctx).tensor_parallel_size
    heads, kv = ctx.int_field("num_attention_heads"), ctx.int_field("num_key_value_heads")
    if tp <= 1:
        return
    if heads is not None and heads % tp:
        yield Problem(
            pointer="/num_attention_heads",
            message=f"num_attention_heads {heads} is not a multiple of the tensor-parallel size {tp}",
        )
    if kv is not None and kv % tp and tp % kv:
        yield Problem(
            pointer="/num_key_value_heads",
            message=f"num_key_value_heads {kv} neither divides nor is a multiple of the tensor-parallel size {tp}",
        )


@rule("DF803", "launch-method", Severity.ERROR, "data", "launch", reads=("vLLM:method",))
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
    weights. SGLang: an algorithm other than DFLASH builds another drafter.

    Fail: vLLM ``"method": "eagle3"``; ``"method": "draft_model"`` (vLLM 0.34 refuses it; vLLM 0.33 serves a plain
    draft model unless the path says dflash); no method and a drafter path without "dflash" (vLLM 0.33)
    Pass: ``"method": "dflash"``, or no method and "dflash" in the drafter path
    """
    launch = _launch(ctx)
    given = launch.method
    if launch.engine != "vllm":
        if given is not None and given.lower() not in ("dflash", "dflash2"):
            yield Problem(
                pointer="/architectures",
                message=f"the {launch.engine} launch uses speculative algorithm {show(given)} for a DFlash drafter",
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
    "DF804",
    "launch-speculators-sglang",
    Severity.ERROR,
    "data",
    "launch",
    kinds=("speculators",),
    reads=("SGLang:model_type",),
)
def speculators_with_sglang(ctx: Context) -> Iterator[Problem]:
    """An SGLang launch of a speculators-format drafter: SGLang cannot load it.

    {SGLang} reads the drafter's config.json through transformers, which finds no top-level
    ``model_type`` in the speculators format and raises "Unrecognized model ... Should have a
    `model_type` key" (DF162, checked by running it). ``check`` warns; a launch that will not start is
    an error.

    Fail: ``--speculative-draft-model-path`` of a ``{"speculators_model_type": "dflash", ...}`` drafter
    Pass: the same drafter served with vLLM, or a z-lab-format drafter with SGLang
    """
    doc = ctx.written
    if _launch(ctx).engine == "sglang" and doc is not None and "model_type" not in doc:
        yield Problem(
            pointer="/speculators_model_type",
            message="the SGLang launch loads a speculators-format drafter, which SGLang refuses at start-up (no "
            "top-level model_type: 'Unrecognized model'); serve it with vLLM or convert it to the z-lab format",
        )


@rule(
    "DF805",
    "launch-speculators-tokens",
    Severity.ERROR,
    "data",
    "launch",
    kinds=("speculators",),
    reads=("speculators:speculators_config",),
)
def speculators_tokens(ctx: Context) -> Iterator[Problem]:
    """A vLLM launch that takes the drafts per step from a speculators-format file, whose
    ``speculative_tokens`` is not ``block_size - 1``.

    DFlash drafts ``block_size - 1`` tokens per block (the anchor is not drafted); the speculators
    converter writes that value into ``speculators_config.proposal_methods[0].speculative_tokens``, and
    vLLM passes the field unchecked as ``num_speculative_tokens`` when the launch does not set one
    (``vllm/transformers_utils/configs/speculators/base.py``, ``SpeculatorsConfig``). A hand-edited value
    drafts a block shape the drafter never saw. A launch that sets ``num_speculative_tokens`` is DF801's.

    Fail: ``"speculative_tokens": 8`` with ``"block_size": 8``
    Pass: ``"speculative_tokens": 7`` with ``"block_size": 8``
    """
    launch = _launch(ctx)
    doc = ctx.written
    if launch.engine != "vllm" or launch.num_speculative_tokens is not None or doc is None:
        return
    spec = doc.get("speculators_config")
    methods = spec.get("proposal_methods") if isinstance(spec, dict) else None
    first = methods[0] if isinstance(methods, list) and methods else None
    tokens = first.get("speculative_tokens") if isinstance(first, dict) else None
    if not is_int(tokens):
        return
    size, said = _block_size(ctx)
    if tokens != size - 1:
        yield Problem(
            pointer="/speculators_config/proposal_methods/0/speculative_tokens",
            message=f"the vLLM launch takes its drafts per step from speculative_tokens {tokens}, the drafter needs"
            f" block_size - 1 = {size - 1} ({said})",
        )


@rule("DF806", "launch-v1-runner-mixed-attention", Severity.ERROR, "data", "launch", reads=("vLLM:layer_types",))
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
    launch = _launch(ctx)
    forced = _v1_forced(launch)
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
    reads=("vLLM:architectures",),
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
    launch = _launch(ctx)
    forced = _v1_forced(launch)
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
    reads=("vLLM:VLLM_USE_V2_MODEL_RUNNER",),
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
    launch = _launch(ctx)
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


@rule("DF808", "launch-draft-window", Severity.ERROR, "data", "launch", reads=("SGLang:block_size",))
def draft_window(ctx: Context) -> Iterator[Problem]:
    """An SGLang launch whose ``--speculative-draft-window-size`` is smaller than the block it drafts.

    For DFLASH the draft worker keeps a window of recent target tokens in its own KV cache, and {SGLang}
    refuses a window smaller than ``--speculative-num-draft-tokens`` at start-up
    (``sglang/srt/arg_groups/speculative_hook.py:_handle_dflash``: "--speculative-draft-window-size must be >=
    --speculative-num-draft-tokens"). When the launch does not set
    the draft tokens, SGLang takes them from the drafter: ``dflash_config.block_size``, else the top-level
    ``block_size``, else 16; so the same launch starts with one drafter and not with another.

    Fail: ``--speculative-draft-window-size 8`` with ``"block_size": 16`` (and no draft tokens given)
    Pass: ``--speculative-draft-window-size 16`` with ``"block_size": 16``
    """
    launch = _launch(ctx)
    window = launch.draft_window_size
    if launch.engine != "sglang" or window is None or (launch.method or "").upper() != "DFLASH":
        return
    where = ctx.draft_pointer("block_size")
    if launch.num_draft_tokens is not None:
        tokens, said = launch.num_draft_tokens, "--speculative-num-draft-tokens"
    else:
        # dflash_utils.parse_dflash_draft_config: dflash_config's key wins even when null; a value it cannot
        # read makes _handle_dflash fall back to 16.
        value = ctx.draft_value("block_size")
        tokens = value if is_int(value) and value > 0 else DEFAULT_BLOCK_SIZE
        said = where[1:].replace("/", ".") if tokens == value else "no usable block_size: SGLang's default"
    if window < tokens:
        yield Problem(
            pointer=where,
            message=f"the SGLang launch sets --speculative-draft-window-size {window}, smaller than the {tokens} tokens"
            f" it drafts per step ({said} {tokens}); SGLang refuses it at start-up (the window holds a whole block)",
        )


@rule(
    "DF809",
    "launch-sglang-dflash-parallelism",
    Severity.ERROR,
    "data",
    "launch",
    reads=("SGLang:pp_size", "SGLang:attn_dp_size"),
)
def sglang_dflash_parallelism(ctx: Context) -> Iterator[Problem]:
    """An SGLang DFLASH launch with a parallel layout SGLang refuses for DFLASH.

    {SGLang} checks the layout when it sets DFLASH up
    (``sglang/srt/arg_groups/speculative_hook.py:_handle_dflash``), before it loads anything: pipeline parallelism
    (``--pp-size`` other than 1) is refused; so is attention data parallelism (``--attn-dp-size N``, or the
    deprecated ``--dp-size N --enable-dp-attention``) without ``--enable-dp-lm-head`` (the draft borrows the
    target's LM head), with attention context parallelism (``--attn-cp-size`` other than 1), or with
    ``SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION`` on. The launch is refused whatever the drafter; the finding
    sits on the drafter because preflight is where the launch meets it.

    Fail: ``--speculative-algorithm DFLASH --pp-size 2``; ``--dp-size 2 --enable-dp-attention``
    Pass: ``--speculative-algorithm DFLASH --tp-size 2``; ``--attn-dp-size 2 --enable-dp-lm-head``
    """
    launch = _launch(ctx)
    if launch.engine != "sglang" or (launch.method or "").upper() != "DFLASH":
        return
    refused = "SGLang refuses the launch at start-up"
    if launch.pipeline_parallel_size != 1:
        yield Problem(
            pointer="",
            message=f"--pp-size {launch.pipeline_parallel_size}: {refused} (DFLASH supports only pp_size 1)",
        )
    dp = launch.attention_dp_size
    if dp <= 1:
        return
    if not launch.dp_lm_head:
        yield Problem(
            pointer="",
            message=f"attention data parallel size {dp} without --enable-dp-lm-head: {refused} (DFLASH"
            " with dp attention requires --enable-dp-lm-head)",
        )
    elif launch.attention_cp_size != 1:
        yield Problem(
            pointer="",
            message=f"attention data parallel size {dp} with --attn-cp-size {launch.attention_cp_size}:"
            f" {refused} (DFLASH with dp attention does not support context parallel)",
        )
    elif _sglang_true(dict(launch.engine_env).get("SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION")):
        yield Problem(
            pointer="",
            message=f"attention data parallel size {dp} with SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION on:"
            f" {refused} (DFLASH with dp attention requires it off)",
        )


# vllm/config/speculative.py:_CACHE_ONLY_ROPE_TYPES: a drafter whose RoPE types are all of these has its
# max_position_embeddings raised to the target's length; any other type sizes more than a cache.
CACHE_ONLY_ROPE = frozenset({"default", "linear", "llama3", "ntk", "proportional"})
# vllm/config/model.py:_get_and_verify_max_len: these leave max_position_embeddings already scaled.
PRESCALED_ROPE = frozenset({"su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"})


@rule(
    "DF810",
    "launch-draft-context",
    Severity.WARNING,
    "data",
    "launch",
    reads=("vLLM:max_position_embeddings",),
)
def draft_context(ctx: Context) -> Iterator[Problem]:
    """A vLLM launch whose ``--max-model-len`` is longer than a drafter with scaled RoPE can serve: vLLM serves
    the drafter's length instead, with only a log line to say so.

    {vLLM} raises a drafter's ``max_position_embeddings`` to the target's length when its RoPE only sizes
    a cache (types default, linear, llama3, ntk, proportional). Any other type (``yarn``, ``dynamic``, ...)
    keeps the drafter's length (``max_position_embeddings``, times the RoPE ``factor`` for types that do not
    come pre-scaled), and the V2 model runner then lowers the whole server's ``max_model_len`` to it
    (``vllm/config/vllm.py:VllmConfig._limit_max_model_len_to_draft``): requests longer than that are
    refused, for the target too. Checked against ``--max-model-len``; without it vLLM takes the target's length,
    which only the engine derives: preflight's engine step (vLLM installed) reports that case as DF904.

    Fail (warning): ``--max-model-len 32768`` with ``"rope_scaling": {"rope_type": "yarn", ...}`` and
    ``"max_position_embeddings": 4096``
    Pass: the same with ``"rope_scaling": null`` (default RoPE: vLLM raises the drafter's length)
    """
    launch = _launch(ctx)
    wanted = launch.max_model_len
    if launch.engine != "vllm" or wanted is None or _v1_forced(launch) is not None:
        return
    types, factor = _rope(ctx.data)
    positions = ctx.data.get("max_position_embeddings")
    if not types or types <= CACHE_ONLY_ROPE or not is_int(positions) or positions <= 0:
        return
    served = int(positions * factor)
    if served < wanted:
        scaled = f" x factor {factor:g}" if factor != 1 else ""
        yield Problem(
            pointer="/max_position_embeddings",
            message=f"vLLM serves max_model_len {served}, not the launch's --max-model-len {wanted}: the drafter's RoPE"
            f" ({', '.join(sorted(types))}) is sized by max_position_embeddings {positions}{scaled}, and vLLM"
            " lowers the server's length to the drafter's",
        )


@rule(
    "DF812",
    "launch-speculative-config-key",
    Severity.ERROR,
    "data",
    "launch",
    reads=("vLLM:speculative_config keys",),
    severities=(Severity.INFO,),
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
    launch = _launch(ctx)
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
                message='vLLM 0.34 ignores --speculative-config key "parallel_drafting" '
                "(deprecated: DFlash always drafts in parallel); drop it",
                severity=Severity.INFO,
                engines=(VLLM_0_34.on,),
            )


@rule(
    "DF813",
    "launch-draft-dcp-sliding",
    Severity.ERROR,
    "data",
    "launch",
    reads=("vLLM:draft_decode_context_parallel_size",),
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
    launch = _launch(ctx)
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
            message=f"vLLM 0.34 fails to load this drafter at draft_decode_context_parallel_size {value}: its "
            f"{why} cannot run split over the decode context; set it to 1 (or leave it out)",
            engines=(VLLM_0_34.on,),
        )


def _rope(data: dict[str, object]) -> tuple[set[str], float]:
    """The drafter's RoPE types and the factor vLLM scales its length by (rope_parameters, else rope_scaling;
    flat, or one entry per layer type)."""
    block = data.get("rope_parameters")
    if not isinstance(block, dict):
        block = data.get("rope_scaling")
    if not isinstance(block, dict):
        return set(), 1.0
    entries = [v for v in block.values() if isinstance(v, dict)] or [block]
    types: set[str] = set()
    factor = 1.0
    for entry in entries:
        kind = entry.get("rope_type", entry.get("type", "default"))
        if not isinstance(kind, str):
            return set(), 1.0
        types.add(kind)
        value = entry.get("factor")
        if kind not in PRESCALED_ROPE and isinstance(value, (int, float)) and not isinstance(value, bool):
            factor = float(value)
    return types, factor


def _sglang_true(value: str | None) -> bool:
    # sglang.srt.environ.EnvBool; a value it cannot parse makes SGLang fail on its own.
    return value is not None and value.lower() in ("true", "1", "yes", "y")


def _v1_forced(launch: Launch) -> tuple[str, str] | None:
    """Why a vLLM launch runs the V1 model runner, and what would change it; None when it runs V2.
    vllm/config/vllm.py:VllmConfig.use_v2_model_runner@0.33.0: the variable decides when it is set; unset, V1 is
    chosen for what V2 lacks that a launch line shows (pipeline parallelism under external_launcher)."""
    if launch.engine != "vllm":
        return None
    value = dict(launch.engine_env).get("VLLM_USE_V2_MODEL_RUNNER")
    if value is not None:
        return (f"VLLM_USE_V2_MODEL_RUNNER={value}", "drop the variable or set it to 1") if _false(value) else None
    if launch.distributed_executor_backend == "external_launcher" and launch.pipeline_parallel_size > 1:
        pp = launch.pipeline_parallel_size
        why = f"--distributed-executor-backend external_launcher with pipeline parallel size {pp}"
        return why, "the V2 runner does not run pipeline parallelism under external_launcher"
    return None


def _false(value: str) -> bool:
    # vllm.envs.maybe_convert_bool: bool(int(value)); anything else makes vLLM fail to start on its own.
    try:
        return not int(value)
    except ValueError:
        return False


RULES = (
    draft_tokens,
    tensor_parallel,
    method,
    speculators_with_sglang,
    speculators_tokens,
    v1_runner_mixed_attention,
    v1_runner_v2_only_drafter,
    draft_window,
    sglang_dflash_parallelism,
    draft_context,
    v1_runner_removed,
    speculative_config_keys,
    draft_dcp_sliding,
)

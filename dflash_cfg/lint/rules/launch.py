"""Launch rules (``dflash-cfg preflight``): the engine's command line against the drafter config."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from dflash_cfg.jsondoc.pointer import pointer
from dflash_cfg.lint.engines import sglang, speculators, vllm
from dflash_cfg.lint.rules.base import (
    Context,
    LaunchCheck,
    as_int,
    dspark,
    is_int,
    nemotron_35,
    rule,
    show,
    trtllm_mha_enabled,
)
from dflash_cfg.model import Launch, Problem, Severity, sglang_context_length

# What SGLang drafts per step when neither the launch nor the drafter says: --speculative-num-draft-tokens defaults
# to the drafter's block_size, else to this (sglang/srt/arg_groups/speculative_hook.py:_handle_dflash). vLLM has no
# such default: a launch without num_speculative_tokens is refused, whatever the drafter's block_size.
SGLANG_DEFAULT_BLOCK = 16


def launched(ctx: Context) -> Launch:
    assert ctx.launch is not None
    return ctx.launch


def launch_block(launch: Launch, data: Mapping[str, Any]) -> tuple[int, str] | None:
    """The block the launch drafts per step when it sets one, and how it says it: vLLM queries the anchor plus
    num_speculative_tokens masks (vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:DFlashSpeculator.__init__),
    SGLang drafts --speculative-num-draft-tokens (or its DFLASH alias) and hands it to the drafter
    (sglang/srt/speculative/dflash_worker_v2.py:DFlashWorkerV2.__init__). None: the launch leaves it open.
    A DSpark drafter (`data`) under vLLM's method dspark drafts num_speculative_tokens queries, the anchor the first
    prediction, unless its top-level sample_from_anchor is false
    (vllm/v1/worker/gpu/spec_decode/dspark/config.py:DSparkSpeculatorConfig.num_lookahead_tokens)."""
    if launch.engine == "vllm" and launch.num_speculative_tokens is not None:
        tokens = launch.num_speculative_tokens
        if dspark_launch(launch, data) and data.get("sample_from_anchor", True):
            return tokens, f"num_speculative_tokens {tokens}, the anchor included (DSpark)"
        return tokens + 1, f"num_speculative_tokens {tokens} + 1"
    if launch.engine == "sglang" and launch.num_draft_tokens is not None:
        return launch.num_draft_tokens, f"--speculative-num-draft-tokens {launch.num_draft_tokens}"
    return None


def dspark_launch(launch: Launch, data: Mapping[str, Any]) -> bool:
    """A vLLM launch of a DSpark drafter under its own method, dspark."""
    return launch.engine == "vllm" and launch.method == "dspark" and dspark(data)


def file_block(ctx: Context) -> tuple[int, str] | None:
    """The drafter's own block size as SGLang reads it (dflash_config first, int() of a numeric string or an
    integral float), and where it is; None when the file has none it could have been trained with."""
    value = as_int(ctx.draft_value("block_size"))
    if value is None or value < 2:
        return None
    return value, f"{ctx.draft_pointer('block_size')[1:].replace('/', '.')} {value}"


def _vllm_needs_tokens(ctx: Context) -> bool:
    """Whether vLLM refuses this drafter when the launch gives no num_speculative_tokens: it takes them from the
    drafter only from a speculators file's speculative_tokens (DF805), an ``n_predict``, or a DSpark block
    (vllm/v1/worker/gpu/spec_decode/speculator_config.py:DraftModelSpeculatorConfig.configure,
    vllm/config/speculative.py:SpeculativeConfig.__post_init__@0.33.0), never from a DFlash block_size."""
    names = ctx.data.get("architectures")
    dspark = isinstance(names, list) and any(isinstance(n, str) and "dspark" in n.lower() for n in names)
    return ctx.kind != "speculators" and "n_predict" not in ctx.data and not dspark


@rule(
    "DF801",
    "launch-draft-tokens",
    Severity.ERROR,
    "data",
    "launch",
    reads=(vllm.NUM_SPECULATIVE_TOKENS, vllm.BLOCK_SIZE, sglang.BLOCK_SIZE),
    checks=(
        LaunchCheck(
            engine="vllm",
            check="Drafts per step: the launch's `num_speculative_tokens` (a block of the anchor and that many "
            "masks), never the drafter's `block_size`, which vLLM neither reads nor compares; a launch without "
            'it is refused ("`num_speculative_tokens` was not provided"), whatever the drafter\'s '
            "`block_size`",
            where="`vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:DFlashSpeculator.__init__` (1 + "
            "`num_speculative_tokens` queries a request), "
            "`vllm/v1/worker/gpu/spec_decode/speculator_config.py:DraftModelSpeculatorConfig.configure`, "
            "`vllm/config/speculative.py:SpeculativeConfig.__post_init__@0.33.0` (the refusal)",
            preflight="DF801 (the launch's value against the drafter's `block_size`; none given: an error), DF805 "
            "(a speculators file's `speculative_tokens`); engine test",
        ),
        LaunchCheck(
            engine="sglang",
            check="Draft tokens: the launch's `--speculative-num-draft-tokens` (or "
            "`--speculative-dflash-block-size`), else the drafter's `dflash_config.block_size`, else its "
            "`block_size`, else 16; the worker drafts the launch's value, and one that differs from the "
            "drafter's is only logged",
            where="`sglang/srt/arg_groups/speculative_hook.py:_handle_dflash` (when "
            "`speculative_num_draft_tokens` is unset), "
            '`sglang/srt/speculative/dflash_worker_v2.py:DFlashWorkerV2.__init__` ("DFLASH block size '
            'mismatch")',
            preflight="DF801; engine test (`_handle_dflash`; the worker's log is cited: it runs on a GPU worker)",
        ),
    ),
)
def draft_tokens(ctx: Context) -> Iterator[Problem]:
    """The launch drafts a different number of tokens per step than the drafter's block was trained for, or
    (vLLM) gives none at all.

    vLLM: ``num_speculative_tokens`` must be ``block_size - 1`` (the anchor is not drafted); SGLang:
    ``--speculative-num-draft-tokens`` must be ``block_size`` (anchor included). The block is chosen at launch:
    vLLM does not read the drafter's ``block_size`` at all (a launch without ``num_speculative_tokens`` is
    refused at start-up, whatever the file says) and SGLang drafts the launch's value, only logging a
    mismatch: both draft a block shape the drafter never saw. A drafter without ``block_size`` is served with
    the launch's block (DF121 says the file lacks the trained one); nothing here assumes 16.

    Fail: vLLM ``"num_speculative_tokens": 7`` with ``"block_size": 16``; vLLM without ``num_speculative_tokens``
    Pass: vLLM ``"num_speculative_tokens": 15`` with ``"block_size": 16``, or with no ``block_size``
    """
    launch = launched(ctx)
    trained = file_block(ctx)
    where = ctx.draft_pointer("block_size")
    if launch.engine == "vllm" and launch.num_speculative_tokens is None:
        if dspark_launch(launch, ctx.data) and not ctx.data.get("sample_from_anchor", True) and trained is not None:
            # DSparkSpeculatorConfig.resolve_num_speculative_tokens takes the block_size as the tokens, and without
            # the anchor the block is 1 + N queries.
            yield Problem(
                pointer=where,
                message=f"the vLLM launch gives no num_speculative_tokens, so vLLM takes the DSpark drafter's "
                f"{trained[1]} as them and, with sample_from_anchor false, drafts {trained[0] + 1} queries per step; "
                f"give num_speculative_tokens {trained[0] - 1}",
            )
            return
        if _vllm_needs_tokens(ctx):
            give = "" if trained is None else f"; give block_size - 1 = {trained[0] - 1} ({trained[1]})"
            yield Problem(
                pointer=where,
                message="the vLLM launch gives no num_speculative_tokens, which vLLM refuses at start-up (it never "
                f"takes them from the drafter's block_size){give}",
            )
        return
    served = launch_block(launch, ctx.data)
    if served is None or trained is None or served[0] == trained[0]:
        return
    size, said = trained
    if launch.engine == "vllm" and served[0] == launch.num_speculative_tokens:  # a DSpark block, anchor included
        yield Problem(
            pointer=where,
            message=f"the vLLM launch drafts a DSpark block of num_speculative_tokens {served[0]} (the anchor "
            f"included), the drafter's block is {size} ({said})",
        )
    elif launch.engine == "vllm":
        yield Problem(
            pointer=where,
            message=f"the vLLM launch drafts num_speculative_tokens {launch.num_speculative_tokens} per "
            f"step, the drafter needs block_size - 1 = {size - 1} ({said})",
        )
    else:
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
    reads=(vllm.NUM_ATTENTION_HEADS, sglang.NUM_ATTENTION_HEADS),
    checks=(
        LaunchCheck(
            engine="vllm",
            check="Draft heads divisible by the draft's TP size",
            where='`vllm/config/model.py:ModelConfig.verify_with_parallel_config` ("Total number of attention '
            'heads ... must be divisible"), called from '
            "`vllm/config/speculative.py:SpeculativeConfig._verify_args`",
            preflight="DF802; engine test",
        ),
        LaunchCheck(
            engine="vllm",
            check="DFlash attention: heads and KV heads against the TP world size (the drafter is built in the "
            "target's TP group, whatever the draft TP size)",
            where="`vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3Attention.__init__` (its head asserts)",
            preflight="DF802 (cited: building a TP > 1 model needs GPUs)",
        ),
        LaunchCheck(
            engine="sglang",
            check="DFlash attention heads and KV heads against `--tp-size`",
            where="`sglang/srt/models/dflash.py:DFlashAttention.__init__` (its head asserts)",
            preflight="DF802 (cited)",
        ),
    ),
)
def tensor_parallel(ctx: Context) -> Iterator[Problem]:
    """The drafter's attention heads cannot be split over the launch's tensor-parallel size.

    ``num_attention_heads`` must be a multiple of the TP size; ``num_key_value_heads`` a multiple of it,
    or a divisor of it (the engines then replicate KV heads). The DFlash attention layers of vLLM and
    SGLang assert this when they are built, so the server does not start.

    Fail: 32 heads, 8 KV heads, ``--tensor-parallel-size 3``
    Pass: 32 heads, 8 KV heads, ``--tensor-parallel-size 4``
    """
    tp = launched(ctx).tensor_parallel_size
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


@rule(
    "DF804",
    "launch-speculators-sglang",
    Severity.ERROR,
    "data",
    "launch",
    kinds=("speculators",),
    reads=(sglang.MODEL_TYPE,),
    checks=(
        LaunchCheck(
            engine="sglang",
            check="A speculators-format drafter is refused (no top-level `model_type`)",
            where="transformers `AutoConfig`",
            preflight="DF804",
        ),
    ),
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
    if launched(ctx).engine == "sglang" and doc is not None and "model_type" not in doc:
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
    reads=(speculators.SPECULATORS_CONFIG,),
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
    launch = launched(ctx)
    doc = ctx.written
    if launch.engine != "vllm" or launch.num_speculative_tokens is not None or doc is None:
        return
    spec = doc.get("speculators_config")
    methods = spec.get("proposal_methods") if isinstance(spec, dict) else None
    first = methods[0] if isinstance(methods, list) and methods else None
    tokens = first.get("speculative_tokens") if isinstance(first, dict) else None
    trained = file_block(ctx)
    # No block_size: the file's speculative_tokens is the only block it states, and vLLM serves it.
    if not is_int(tokens) or trained is None:
        return
    size, said = trained
    if tokens != size - 1:
        yield Problem(
            pointer="/speculators_config/proposal_methods/0/speculative_tokens",
            message=f"the vLLM launch takes its drafts per step from speculative_tokens {tokens}, the drafter needs"
            f" block_size - 1 = {size - 1} ({said})",
        )


@rule(
    "DF808",
    "launch-draft-window",
    Severity.ERROR,
    "data",
    "launch",
    reads=(sglang.BLOCK_SIZE,),
    checks=(
        LaunchCheck(
            engine="sglang",
            check="`--speculative-draft-window-size` at least the draft tokens (the drafter's block when the "
            "launch gives none)",
            where="`sglang/srt/arg_groups/speculative_hook.py:_handle_dflash` "
            '("--speculative-draft-window-size must be >= --speculative-num-draft-tokens")',
            preflight="DF808; engine test (`_handle_dflash` run with the device said to be CUDA)",
        ),
    ),
)
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
    launch = launched(ctx)
    window = launch.draft_window_size
    if launch.engine != "sglang" or window is None or (launch.method or "").upper() != "DFLASH":
        return
    where = ctx.draft_pointer("block_size")
    if launch.num_draft_tokens is not None:
        tokens, said = launch.num_draft_tokens, "--speculative-num-draft-tokens"
    else:
        # dflash_utils.parse_dflash_draft_config: dflash_config's key wins even when null, int()ed ("8" is 8); a
        # value it cannot read makes _handle_dflash fall back to 16.
        value = as_int(ctx.draft_value("block_size"))
        tokens = value if value is not None and value > 0 else SGLANG_DEFAULT_BLOCK
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
    reads=(sglang.PP_SIZE, sglang.ATTN_DP_SIZE),
    checks=(
        LaunchCheck(
            engine="sglang",
            check="Attention DP (`--attn-dp-size N`, or `--dp-size N --enable-dp-attention`) needs "
            "`--enable-dp-lm-head`, no attention context parallel and "
            "`SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION` off",
            where='`sglang/srt/arg_groups/speculative_hook.py:_handle_dflash` ("DFLASH with dp attention '
            'requires ...")',
            preflight="DF809; engine test",
        ),
        LaunchCheck(
            engine="sglang",
            check="`--pp-size` must be 1",
            where='`sglang/srt/arg_groups/speculative_hook.py:_handle_dflash` ("only supports pp_size == 1")',
            preflight="DF809; engine test",
        ),
    ),
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
    launch = launched(ctx)
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
    reads=(vllm.MAX_POSITION_EMBEDDINGS,),
    checks=(
        LaunchCheck(
            engine="vllm",
            check="Drafter `max_position_embeddings` below the target's `max_model_len`: raised to it when "
            "RoPE only sizes a cache; otherwise the V2 runner lowers the served `max_model_len` to the "
            "drafter's (a warning)",
            where="`vllm/config/speculative.py:SpeculativeConfig._maybe_override_draft_max_position_embeddings`, "
            "`vllm/config/vllm.py:VllmConfig._limit_max_model_len_to_draft`",
            preflight="DF810 (a warning) against `--max-model-len`; engine test. Without `--max-model-len` (the "
            "target's own length, which only the engine derives): DF904, the engine step building the "
            "launch's configuration with and without the drafter; engine test",
        ),
    ),
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
    launch = launched(ctx)
    wanted = launch.max_model_len
    if launch.engine != "vllm" or wanted is None or v1_forced(launch) is not None:
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


def v1_forced(launch: Launch) -> tuple[str, str] | None:
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


# get_config merges these into the file's dict instead of replacing it (v5's rope setter would drop rope_theta).
_MERGED = ("rope_scaling", "rope_parameters")
_BLOCK = ("block_size", "dflash_config")  # where SGLang's parse_dflash_draft_config finds the block


def _overridden(key: str, given: str, current: Any) -> Any:
    """What get_config sets for one key of --json-model-override-args (its value as JSON): rope_scaling and
    rope_parameters merged into the config's, anything else replaced."""
    value = json.loads(given)
    if key in _MERGED and isinstance(value, dict) and isinstance(current, dict):
        return {**current, **value}
    return value


@rule(
    "DF814",
    "launch-model-overrides",
    Severity.WARNING,
    "data",
    "launch",
    reads=(sglang.MODEL_OVERRIDES,),
    checks=(
        LaunchCheck(
            engine="sglang",
            check="`--json-model-override-args` leaves the drafter's values as its config.json has them (SGLang "
            "sets it on the drafter's config too)",
            where="`sglang/srt/configs/model_config.py:ModelConfig.from_server_args`, "
            "`sglang/srt/utils/hf_transformers/config.py:get_config`",
            preflight="DF814",
        ),
    ),
)
def launch_model_overrides(ctx: Context) -> Iterator[Problem]:
    """An SGLang launch whose ``--json-model-override-args`` changes a value of the drafter's config.

    {SGLang} builds the draft worker's model config from the same server arguments as the target's
    (``ModelConfig.from_server_args`` passes ``json_model_override_args`` for the draft model too), and
    ``get_config`` sets each key of the override on the config it read: ``rope_scaling`` / ``rope_parameters``
    merged into the file's, anything else (``dflash_config`` included) replaced. An override meant for the target
    (a longer context, YaRN RoPE) so reaches the drafter: it serves with values it was not trained with, and
    acceptance drops without an error. When the launch gives no draft tokens, SGLang also takes the drafter's
    block size through the override. {vLLM}'s ``--hf-overrides`` stays the target's: a dict of overrides is not
    applied to the draft model (``vllm/config/speculative.py:SpeculativeConfig.compose_draft_hf_overrides``).

    Fail: ``--json-model-override-args '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}'`` with a drafter
    without YaRN
    Pass: ``--json-model-override-args '{"max_position_embeddings": 262144}'`` with the drafter's own 262144
    """
    launch = launched(ctx)
    if launch.engine != "sglang":
        return
    for key, given in launch.model_overrides:
        has = key in ctx.data
        current = ctx.data.get(key)
        value = _overridden(key, given, current)
        if has and current == value and type(current) is type(value):
            continue
        block = " (and the block size SGLang drafts when the launch gives no draft tokens)" if key in _BLOCK else ""
        yield Problem(
            pointer=pointer(key),
            message=f"--json-model-override-args sets {key} to {show(value)} on the drafter too{block}: SGLang builds "
            f"the draft model's config from the same arguments, and config.json has "
            f"{show(current) if has else 'no ' + key}; the drafter serves with a value it was not trained with",
        )


TRTLLM_MHA = "trtllm_mha"


@rule(
    "DF815",
    "launch-nemotron-sink-backend",
    Severity.ERROR,
    "data",
    "launch",
    severities=(Severity.WARNING,),
    reads=(sglang.NEMOTRON_35_SINK_BACKEND,),
    checks=(
        LaunchCheck(
            engine="sglang",
            check="the draft attention backend `trtllm_mha` for the Nemotron 3.5 layout's attention sinks",
            where='`sglang/srt/models/dflash.py:DFlashAttention.__init__` ("Nemotron 3.5 DSpark attention sinks '
            'require --speculative-draft-attention-backend trtllm_mha"), after '
            "`sglang/srt/arg_groups/speculative_hook.py:_resolve_dflash_draft_attention_backend`",
            preflight="DF815; engine test of the backend's resolution (the refusal is on a GPU worker)",
        ),
    ),
)
def launch_sink_backend(ctx: Context) -> Iterator[Problem]:
    """An SGLang launch of a Nemotron 3.5 drafter with attention sinks that does not run its draft on
    ``trtllm_mha``.

    {SGLang} builds the Nemotron 3.5 layout's attention sinks (a true top-level ``attention_sink_bias``) only on
    the ``trtllm_mha`` draft attention backend and refuses the drafter on any other (``DFlashAttention.__init__``,
    on the GPU worker). The draft backend is ``--speculative-draft-attention-backend``, else the server's prefill
    backend (``--prefill-attention-backend``, else ``--attention-backend``), else flashinfer
    (``_resolve_dflash_draft_attention_backend``, run by the engine suite). A launch that names another backend is
    an error; one that names none, a warning (the server may pick its attention backend for the target and the
    GPU: name it). A drafter whose layers SGLang never runs on ``trtllm_mha`` is DF216, whatever the launch.

    Fail: ``--speculative-draft-attention-backend fa3`` with the sinks on an all-sliding Nemotron 3.5 drafter
    Pass: ``--speculative-draft-attention-backend trtllm_mha`` with the same drafter
    """
    launch = launched(ctx)
    # _handle_dflash resolves the draft's backend: a DFLASH launch (a DSpark one resolves it elsewhere).
    if launch.engine != "sglang" or (launch.method or "").upper() != "DFLASH":
        return
    if not ctx.data.get("attention_sink_bias") or not nemotron_35(ctx.data):
        return
    if not trtllm_mha_enabled(ctx.data, ctx.view):
        return  # DF216: no launch starts it
    named = launch.draft_attention_backend
    if named is None:
        yield Problem(
            pointer="/attention_sink_bias",
            message="the launch names no draft attention backend, and SGLang builds this drafter's Nemotron 3.5 "
            "attention sinks only on trtllm_mha: without it the draft takes the server's attention backend, else "
            "flashinfer, and SGLang refuses the drafter; add --speculative-draft-attention-backend trtllm_mha",
            severity=Severity.WARNING,
        )
    elif named[1] != TRTLLM_MHA:
        yield Problem(
            pointer="/attention_sink_bias",
            message=f"{named[0]} {named[1]}: SGLang builds this drafter's Nemotron 3.5 attention sinks only on "
            "trtllm_mha and refuses the drafter on another draft backend; use --speculative-draft-attention-backend "
            "trtllm_mha",
        )


ALLOW_LONGER = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"


def drafter_context(ctx: Context, launch: Launch) -> tuple[int, str] | None:
    """The context length SGLang derives for the drafter: from its config as the config class holds it, with the
    launch's --json-model-override-args set on it (get_config)."""
    text = ctx.data.get("text_config")
    values = {**ctx.data, **text} if isinstance(text, dict) else dict(ctx.data)  # SGLang reads the text config
    seen = ctx.view.values if ctx.view is not None and ctx.view.values is not None else None
    if seen is not None and "rope_scaling" in seen:
        # The config class fills a length the file lacks, and moves RoPE between its spellings; a value it holds
        # no one of (per layer) is left as the file has it.
        if seen.get("max_position_embeddings") is not None:
            values["max_position_embeddings"] = seen["max_position_embeddings"]
        values["rope_scaling"] = seen["rope_scaling"]
    for key, given in launch.model_overrides:
        values[key] = _overridden(key, given, values.get(key))
    return sglang_context_length(values, values.get("rope_scaling") or values.get("rope_parameters"))


@rule(
    "DF816",
    "launch-draft-context-sglang",
    Severity.ERROR,
    "data",
    "launch",
    severities=(Severity.WARNING,),
    reads=(sglang.DRAFT_CONTEXT,),
    checks=(
        LaunchCheck(
            engine="sglang",
            check="The drafter's context length at least the target's (the launch's `--context-length`, else the "
            f"target's own), unless `{ALLOW_LONGER}` is set",
            where="`sglang/srt/configs/model_config.py:ModelConfig._derive_context_length` (\"Target model's "
            'context_length ... is greater than the derived context_length"), the draft worker built with the '
            "target's context length (`sglang/srt/speculative/draft_worker_common.py`)",
            preflight="DF816; engine test (ModelConfig of the drafter, built on CPU)",
        ),
    ),
)
def sglang_draft_context(ctx: Context) -> Iterator[Problem]:
    """An SGLang launch whose context length is longer than the drafter's.

    {SGLang} builds the DFLASH draft worker with the target's context length, and the drafter's model config then
    refuses a length longer than its own (``ModelConfig._derive_context_length``: "Target model's context_length
    (N) is greater than the derived context_length (M) ... set the env var
    SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"): the server does not start. The lengths are SGLang's: the first
    of ``max_sequence_length``, ``seq_length``, ``max_seq_len``, ``model_max_length``, ``max_position_embeddings``,
    times the RoPE scaling factor unless the scaling names its original length or is llama3; the target's from its
    text config, or the launch's ``--context-length``; the drafter's with the launch's
    ``--json-model-override-args``. With the variable set SGLang raises the drafter's ``max_position_embeddings``
    to the target's length and starts: a warning, since the drafter then serves positions it was not trained at.

    Fail: a drafter with ``"max_position_embeddings": 262144`` for a target of 1048576 (XiaomiMiMo/MiMo-V2.5-Pro's
    own DFlash drafter), no ``--context-length``
    Pass: the same with ``--context-length 262144``
    """
    launch = launched(ctx)
    if launch.engine != "sglang" or (launch.method or "").upper() != "DFLASH":
        return
    if launch.context_length is not None:
        wanted, whose = launch.context_length, f"--context-length {launch.context_length}"
    elif ctx.target is not None and ctx.target.context_length is not None:
        length, key = ctx.target.context_length
        wanted, whose = length, f"the target's context length {length} ({key})"
    else:
        return
    derived = drafter_context(ctx, launch)
    if derived is None or derived[0] >= wanted:
        return
    own, key = derived
    pointer = f"/{key}" if key in ctx.data else "/max_position_embeddings"
    if _sglang_true(dict(launch.engine_env).get(ALLOW_LONGER)):
        yield Problem(
            pointer=pointer,
            message=f"SGLang serves the drafter at {whose}, longer than its own {own} ({key}): {ALLOW_LONGER} "
            "lets SGLang raise the drafter's max_position_embeddings, and the drafter drafts at positions it was "
            "not trained at",
            severity=Severity.WARNING,
        )
        return
    yield Problem(
        pointer=pointer,
        message=f"SGLang refuses to start: it builds the draft worker with {whose}, longer than the drafter's own "
        f"{own} ({key}); pass --context-length {own}, or set {ALLOW_LONGER}=1 to serve the drafter past its length",
    )


RULES = (
    draft_tokens,
    tensor_parallel,
    speculators_with_sglang,
    speculators_tokens,
    draft_window,
    sglang_dflash_parallelism,
    draft_context,
    launch_model_overrides,
    launch_sink_backend,
    sglang_draft_context,
)

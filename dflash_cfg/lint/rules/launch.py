"""Launch rules (``dflash-cfg preflight``): the engine's command line against the drafter config."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_cfg.lint.rules.base import Context, is_int, rule, show
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
            where,
            f"the vLLM launch drafts num_speculative_tokens {launch.num_speculative_tokens} per "
            f"step, the drafter needs block_size - 1 = {size - 1} ({said})",
        )
    if launch.engine == "sglang" and launch.num_draft_tokens is not None and launch.num_draft_tokens != size:
        yield Problem(
            where,
            f"the SGLang launch sets --speculative-num-draft-tokens {launch.num_draft_tokens}, "
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
            "/num_attention_heads", f"num_attention_heads {heads} is not a multiple of the tensor-parallel size {tp}"
        )
    if kv is not None and kv % tp and tp % kv:
        yield Problem(
            "/num_key_value_heads",
            f"num_key_value_heads {kv} neither divides nor is a multiple of the tensor-parallel size {tp}",
        )


@rule("DF803", "launch-method", Severity.ERROR, "data", "launch", reads=("vLLM:method",))
def method(ctx: Context) -> Iterator[Problem]:
    """The launch names a speculative method other than DFlash for a DFlash drafter.

    The engine would build a different drafter (e.g. EAGLE-3) around these weights. vLLM takes an explicit
    method as given and chooses ``dflash`` by itself only when the method is absent.

    Fail: vLLM ``"method": "eagle3"`` with a ``DFlashDraftModel`` drafter
    Pass: ``"method": "dflash"`` (or no method and "dflash" in the drafter path, which vLLM detects)
    """
    launch = _launch(ctx)
    if launch.method is not None and launch.method.lower() not in ("dflash", "dflash2"):
        yield Problem(
            "/architectures",
            f"the {launch.engine} launch uses speculative method {show(launch.method)} for a DFlash drafter",
        )


RULES = (draft_tokens, tensor_parallel, method)

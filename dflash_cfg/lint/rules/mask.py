"""DF11x: the mask token the drafter fills its block with.

These values are trained facts. No rule here ever proposes a different value for them; fixes only
copy an existing value to where another loader generation reads it.
"""

from __future__ import annotations

from collections.abc import Iterator

from dflash_cfg.lint.engines import sglang, vllm
from dflash_cfg.lint.rules.base import Context, is_int, rule, show
from dflash_cfg.model import Fix, PatchOp, Problem, Severity


@rule(
    "DF111",
    "mask-token-id-missing",
    Severity.ERROR,
    reads=(vllm.MASK_TOKEN_ID, sglang.MASK_TOKEN_ID),
    severities=(Severity.INFO,),
    fix=True,
)
def mask_token_id_missing(ctx: Context) -> Iterator[Problem]:
    """``dflash_config.mask_token_id`` is missing.

    Missing everywhere (error): vLLM refuses the file ("Model config must specify
    ``dflash_config.mask_token_id``"), and SGLang would add a new, untrained ``<|MASK|>`` token. Only at
    the top level (information): {vLLM} (``get_parallel_drafting_token_id``, the proposer and
    ``DFlashQwen3Model``) and {SGLang} (``parse_dflash_draft_config``) both fall back to it and draft
    with the trained id; loaders that read only ``dflash_config`` would not, so the safe fix mirrors the same
    id into ``dflash_config``.

    Fail: ``"dflash_config": {...}`` without ``mask_token_id`` anywhere
    Fail (info): ``"mask_token_id": 151669`` at the top level only
    Pass: ``"dflash_config": {"mask_token_id": 151669, ...}``
    """
    if "mask_token_id" in ctx.dflash or not isinstance(ctx.data.get("dflash_config"), dict):
        return
    top = ctx.data.get("mask_token_id")
    where = "/dflash_config/mask_token_id"
    if top is None:
        yield Problem(
            pointer=where,
            message="mask_token_id missing: vLLM refuses the file (it needs the id for parallel drafting) and "
            "SGLang adds a new, untrained mask token; take the trained id from the upstream repo",
        )
    else:
        yield Problem(
            pointer=where,
            message=f"mask_token_id {show(top)} only at the top level: vLLM and SGLang fall back to it there; "
            "loaders that read only dflash_config.mask_token_id would not",
            fix=Fix("copy mask_token_id into dflash_config", (PatchOp("add", where, top),)),
            severity=Severity.INFO,
        )


@rule(
    "DF112",
    "mask-token-id-range",
    Severity.ERROR,
    reads=(sglang.MASK_TOKEN_ID, vllm.MASK_TOKEN_ID),
    severities=(Severity.WARNING,),
)
def mask_token_id_range(ctx: Context) -> Iterator[Problem]:
    """``mask_token_id`` is outside ``[0, vocab_size)``, or top level and ``dflash_config`` disagree.

    The id indexes the target embedding table: SGLang refuses an id that is not a non-negative integer or
    is at or past the target's vocabulary (the drafter's ``vocab_size`` is the target's, DF402).
    Disagreeing copies are a warning: vLLM and SGLang both take ``dflash_config``'s, and which of the
    two was trained the file cannot show.

    Fail: ``"vocab_size": 151936``, ``"mask_token_id": 248070``
    Pass: ``"vocab_size": 248320``, ``"mask_token_id": 248070``
    """
    vocab = ctx.int_field("vocab_size")
    for where in ("/dflash_config/mask_token_id", "/mask_token_id"):
        block = ctx.dflash if where.startswith("/dflash_config") else ctx.data
        value = block.get("mask_token_id")
        if value is None:
            continue
        if not is_int(value) or value < 0:
            yield Problem(
                pointer=where,
                message=f"mask_token_id {show(value)} is not a non-negative integer: SGLang refuses the file",
            )
        elif vocab is not None and value >= vocab:
            yield Problem(
                pointer=where,
                message=f"mask_token_id {value} is outside the vocabulary [0, {vocab}): SGLang refuses the file",
            )
    inner, top = ctx.dflash.get("mask_token_id"), ctx.data.get("mask_token_id")
    if inner is not None and top is not None and inner != top:
        yield Problem(
            pointer="/mask_token_id",
            message=f"top-level mask_token_id {show(top)} disagrees with dflash_config.mask_token_id "
            f"{show(inner)}: vLLM and SGLang use the latter; make sure it is the trained one",
            severity=Severity.WARNING,
        )


RULES = (mask_token_id_missing, mask_token_id_range)

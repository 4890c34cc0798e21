"""DF12x: the sizes the drafter was trained with: its block of draft tokens (and the block's layout) and its
target's depth.

These values are trained facts. No rule here ever proposes a different value for them; fixes only
copy an existing value to where another loader generation reads it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dflash_cfg.lint.engines import XPRESS_ARCHITECTURES, sglang, speculators, vllm
from dflash_cfg.lint.rules.base import ENGINE_FORMAT, Context, as_int, is_int, rule, show
from dflash_cfg.lint.rules.launch import launch_block
from dflash_cfg.model import Fix, PatchOp, Problem, Requirement, Severity


def _read_int(value: Any) -> Any:
    """The value as SGLang reads an integer field: a coercible one as its int, anything else as written."""
    coerced = as_int(value)
    return value if coerced is None else coerced


@rule(
    "DF121",
    "block-size",
    Severity.ERROR,
    reads=(sglang.BLOCK_SIZE, vllm.BLOCK_SIZE, speculators.BLOCK_SIZE),
    severities=(Severity.WARNING, Severity.INFO),
    fix=True,
)
def block_size(ctx: Context) -> Iterator[Problem]:
    """``block_size`` is missing, below 2, or the top level and ``dflash_config`` disagree.

    SGLang reads ``dflash_config`` first and makes it the default number of tokens drafted per step
    (16 when absent); vLLM does not read it (the launch's ``num_speculative_tokens`` decides, DF801); the
    April reference and MLX read the top level. Missing: a warning (SGLang assumes 16; the trained value
    the file cannot show); under a launch that sets the block (preflight), the warning names the launch's
    block, which is what the engine drafts. Disagreeing copies: a warning too, since SGLang takes
    ``dflash_config``'s and which one was trained the file cannot show. Present in only one place:
    information, with a safe fix that mirrors the same value to the other so both loader generations read it.

    Fail: ``"block_size": 16`` and ``"dflash_config": {"block_size": 8}``
    Pass: ``"block_size": 16`` (and optionally the same in dflash_config)
    """
    # SGLang int()s it: "16" and 16.0 are 16 to it (DF010 warns about the type), and vLLM does not read it.
    top, inner = _read_int(ctx.data.get("block_size")), _read_int(ctx.dflash.get("block_size"))
    if top is None and inner is None:
        served = None if ctx.launch is None else launch_block(ctx.launch, ctx.data)
        # Under a launch that sets the block (preflight), that block is what the engine drafts: no default.
        said = "loaders assume 16" if served is None else f"the engine drafts the launch's {served[0]} ({served[1]})"
        yield Problem(
            pointer="/block_size",
            message=f"block_size missing: {said}, the April reference crashes; take "
            "the trained value from the upstream repo",
            severity=Severity.WARNING,
        )
        return
    for where, value in (("/block_size", top), ("/dflash_config/block_size", inner)):
        if value is not None and (not is_int(value) or value < 2):
            yield Problem(
                pointer=where, message=f"block_size {show(value)} must be an integer ≥ 2 (one anchor plus masks)"
            )
    if top is not None and inner is not None and top != inner:
        yield Problem(
            pointer="/dflash_config/block_size",
            message=f"block_size {show(top)} at the top level but {show(inner)} in "
            "dflash_config: SGLang drafts the latter, the April reference and MLX the former; make sure the "
            "one in dflash_config is the trained one",
            severity=Severity.WARNING,
        )
    elif is_int(top) and top >= 2 and inner is None and isinstance(ctx.data.get("dflash_config"), dict):
        yield Problem(
            pointer="/dflash_config/block_size",
            message="block_size only at the top level; newer loaders read dflash_config first (and default to 16)",
            fix=Fix("mirror block_size into dflash_config", (PatchOp("add", "/dflash_config/block_size", top),)),
            severity=Severity.INFO,
        )
    elif is_int(inner) and inner >= 2 and top is None:
        yield Problem(
            pointer="/block_size",
            message="block_size only in dflash_config; the April reference and MLX read the top level",
            fix=Fix("mirror block_size to the top level", (PatchOp("add", "/block_size", inner),)),
            severity=Severity.INFO,
        )


@rule(
    "DF122",
    "num-target-layers",
    Severity.ERROR,
    kinds=ENGINE_FORMAT,
    reads=(sglang.NUM_TARGET_LAYERS,),
    severities=(Severity.WARNING,),
)
def num_target_layers(ctx: Context) -> Iterator[Problem]:
    """``num_target_layers`` is missing or the top level and ``dflash_config`` disagree (warnings), or it
    is too small to hold the taps (error).

    vLLM does not read it. SGLang's ``DFlashDraftModel`` bounds the taps with it (``dflash_config``
    first) and refuses a tap at or past it; when it is absent, {SGLang} bounds them by
    ``max(taps) + 1`` and builds the model (the runner then captures with the running target's depth).
    The April reference and MLX require it at the top level, so a missing value is a warning about those two
    ports only (it fails a gate only where one of them serves the drafter; none of
    the three third-party copies of z-lab/gpt-oss-20b-DFlash shows the key: all partial, so whether the
    published file has it is not known); ``--target`` (DF403) offers the target's depth as a safe fix.
    Disagreeing copies are a warning: it is a fact of the target, which the file cannot show (DF403
    checks it against the target).

    Fail: ``"num_target_layers": 4`` with five taps; 32 at the top level and 36 in dflash_config
    Pass: ``"num_target_layers": 36``
    """
    value = _read_int(ctx.draft_value("num_target_layers"))  # "36" and 36.0 are 36 to SGLang (DF010 warns)
    where = ctx.draft_pointer("num_target_layers")
    taps = ctx.taps()
    if value is None:
        yield Problem(
            pointer=where,
            message="num_target_layers missing: SGLang bounds the taps by max(taps) + 1 and runs, the April reference "
            "and MLX require it; take it from the target",
            severity=Severity.WARNING,
            engines=(Requirement("mlx"), Requirement("reference")),
        )
    elif not is_int(value) or value < 1:
        yield Problem(pointer=where, message=f"num_target_layers {show(value)} must be a positive integer")
    elif taps is not None and value < len(taps):
        yield Problem(pointer=where, message=f"num_target_layers {value} cannot hold {len(taps)} distinct taps")
    top, inner = _read_int(ctx.data.get("num_target_layers")), _read_int(ctx.dflash.get("num_target_layers"))
    if top is not None and inner is not None and top != inner:
        yield Problem(
            pointer="/num_target_layers",
            message=f"num_target_layers {show(top)} at the top level but {show(inner)} in dflash_config: "
            "the April reference and MLX read the first, SGLang the second",
            severity=Severity.WARNING,
        )


@rule(
    "DF123",
    "sample-from-anchor",
    Severity.ERROR,
    reads=(vllm.SAMPLE_FROM_ANCHOR, sglang.SAMPLE_FROM_ANCHOR, speculators.SAMPLE_FROM_ANCHOR),
)
def sample_from_anchor(ctx: Context) -> Iterator[Problem]:
    """``dflash_config.sample_from_anchor`` is true: the block's DSpark layout, which no DFlash engine drafts.

    A DFlash block is the anchor (the last verified token, the bonus) followed by masks, and only the masks
    are predicted; ``sample_from_anchor`` true is the DSpark layout, where the anchor position is itself a
    prediction, so a drafter carrying it was trained for other queries. {vLLM}'s DFlash speculator (the
    V2 model runner's, which DFlash2 and XPress inherit) refuses any truthy value at start-up
    ("sample_from_anchor=True is not supported for DFlash"); XPress's refuses a top-level one too, and the
    speculators format's top-level key is what vLLM writes into ``dflash_config``. {SGLang}'s DFlash
    path does not read the key (only its DSpark drafters do) and drafts in the DFlash layout, not the trained
    one. The key is the layout the drafter was trained in: serve it as the DSpark drafter it is, or take the
    file from upstream; never just delete the key.

    Fail: ``"dflash_config": {"sample_from_anchor": true, ...}``
    Pass: ``sample_from_anchor`` absent or false
    """
    value = ctx.dflash.get("sample_from_anchor")
    if value:  # the speculator's own test: truthiness (1, "no" and [0] are refused too)
        yield Problem(
            pointer="/dflash_config/sample_from_anchor",
            message=f"dflash_config.sample_from_anchor is {show(value)}: "
            "vLLM refuses the file at start-up (a DFlash block "
            "predicts only its masks; this is the DSpark layout), and SGLang ignores the key and drafts in the "
            "DFlash layout, not the trained one",
        )
    archs = ctx.data.get("architectures")
    top = ctx.data.get("sample_from_anchor")
    if (
        not value
        and top
        and isinstance(archs, list)
        and any(a in XPRESS_ARCHITECTURES for a in archs if isinstance(a, str))
    ):
        yield Problem(
            pointer="/sample_from_anchor",
            message=f"sample_from_anchor is {show(top)} on an XPress drafter: vLLM refuses the file at start-up (its "
            "refiner is trained and served with the anchor at slot 0, only the slots after it predicted)",
        )


RULES = (block_size, num_target_layers, sample_from_anchor)

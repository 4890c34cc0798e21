"""DF14x: the keys only DFlash2 drafters have (the convolution and the selector)."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_cfg.jsondoc.pointer import pointer
from dflash_cfg.lint.rules.base import Context, is_int, rule
from dflash_cfg.model import Problem, Severity

DFLASH2_PAIRS = (("conv_kernel_size", "conv_group_size"), ("selector_rank", "selector_top_k"))


@rule("DF141", "dflash2-keys", Severity.ERROR, reads=("SGLang:dflash2_keys",))
def dflash2_keys(ctx: Context) -> Iterator[Problem]:
    """A DFlash2 drafter lacks one of ``conv_kernel_size``, ``conv_group_size``, ``selector_rank``,
    ``selector_top_k``, or ``hidden_size`` is not a multiple of ``conv_group_size``.

    The reference ``DFlash2DraftModel`` requires all four; SGLang requires each pair set together.
    Wrong types and non-positive values are reported by the DFlash2 schema (DF010).

    Fail: ``"dflash_config": {"conv_kernel_size": 4, ...}`` without ``conv_group_size``
    Pass: all four present and positive, ``hidden_size % conv_group_size == 0``
    """
    if ctx.kind != "dflash2":
        return
    # Presence only: types and the "0 switches it off" range are the DFlash2 schema's (DF010).
    for pair in DFLASH2_PAIRS:
        for key in pair:
            if ctx.dflash.get(key) is None:
                yield Problem(
                    pointer("dflash_config", key),
                    f"DFlash2 needs dflash_config.{key} (missing; {' and '.join(pair)} are set together): "
                    "vLLM and SGLang refuse the file",
                )
    group, hidden = ctx.dflash.get("conv_group_size"), ctx.int_field("hidden_size")
    if is_int(group) and group > 0 and hidden is not None and hidden % group:
        yield Problem(
            "/dflash_config/conv_group_size", f"hidden_size {hidden} is not a multiple of conv_group_size {group}"
        )


RULES = (dflash2_keys,)

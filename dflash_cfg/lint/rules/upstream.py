"""Rules that compare the file with its upstream copy on the Hugging Face Hub (``--from-hub``).

Checks of dflash-cfg's own: no engine compares a drafter with its upstream repo, so these rules name no
engine read. Their severity follows from the fields they compare: a DFlash-critical field is one an engine
drafts with (see the rules that own each field).
"""

from __future__ import annotations

from collections.abc import Iterator

from dflash_cfg.jsondoc.document import git_blob_sha1
from dflash_cfg.lint.compare import MISSING, NOT_READ, Row, compare, fields
from dflash_cfg.lint.rules.attention import strip
from dflash_cfg.lint.rules.base import Context, rule, show
from dflash_cfg.model import Problem, Severity


def rows(ctx: Context) -> tuple[Row, ...]:
    upstream = ctx.upstream_data
    if upstream is None:
        return ()
    mine = ctx.view.values if ctx.view is not None else None
    theirs = ctx.upstream_view.values if ctx.upstream_view is not None else None
    return compare(ctx.data, upstream, mine, theirs)


def show_compared(value: object) -> str:
    """One side of a comparison row (lint.compare.Row): its absent and not-read markers, a layout as a
    strip (`S S S S F`); any other value as `show` gives it."""
    if value is MISSING:
        return "(absent)"
    if value is NOT_READ:
        return ""
    if isinstance(value, list) and value and all(v in ("sliding_attention", "full_attention") for v in value):
        return strip(value)
    # As JSON, the language of the file: `null`, `["a"]`, and a string that says "None" stays as it is.
    return show(value)


# Fields that loader generations read from different places; the safe fixes copy a value between them.
MIRRORS = {
    "/block_size": "/dflash_config/block_size",
    "/dflash_config/block_size": "/block_size",
    "/mask_token_id": "/dflash_config/mask_token_id",
    "/dflash_config/mask_token_id": "/mask_token_id",
    "/target_layer_ids": "/dflash_config/target_layer_ids",
    "/dflash_config/target_layer_ids": "/target_layer_ids",
    "/rope_theta": "/rope_parameters/rope_theta",
    "/rope_parameters/rope_theta": "/rope_theta",
}


def _mirrors_upstream(ctx: Context, row: Row) -> bool:
    """A field upstream lacks, holding exactly the value upstream has at its twin: a portability copy
    (what `fix` adds), not a difference in what the drafter computes."""
    twin = MIRRORS.get(row.pointer)
    if twin is None or row.upstream is not MISSING or row.local is MISSING or ctx.upstream_data is None:
        return False
    theirs = fields(ctx.upstream_data)
    return twin in theirs and theirs[twin] == row.local and fields(ctx.data).get(twin) == row.local


def _through(ctx: Context) -> str:
    return ctx.view.through if ctx.view is not None else "the config class"


def _where(ctx: Context) -> str:
    assert ctx.upstream is not None
    return f"{ctx.upstream.repo}@{ctx.upstream.commit[:12]}"


@rule("DF601", "upstream-critical-differs", Severity.ERROR, "data", "upstream", own_check=True)
def critical_differs(ctx: Context) -> Iterator[Problem]:
    """A DFlash-critical field differs from the upstream repo's config.json.

    Critical: ``dflash_config.mask_token_id``, ``dflash_config.target_layer_ids``, ``layer_types``,
    ``sliding_window``, ``use_sliding_window``, ``block_size``, ``num_target_layers``,
    ``num_hidden_layers``, ``hidden_size``, ``vocab_size``, RoPE θ/scaling, ``is_causal``,
    ``architectures``. Compared raw and through the config class registered for the file's
    ``model_type`` (``Qwen3Config`` for qwen3), so a difference that only appears once transformers has
    loaded the file (a dropped window, a derived layout) is reported too. The fix is
    ``dflash-cfg fix --from-hub``, which writes the upstream bytes.

    A field upstream lacks that only mirrors upstream's value from its twin place (``block_size`` in
    ``dflash_config`` when upstream has it at the top level, a flat ``rope_theta``) is DF602 information.

    A check of dflash-cfg's own: no engine compares the file with upstream; a critical field is one the
    engines draft with (the rules that own each field say how).

    Fail: local ``"mask_token_id": 248064``, upstream 248070
    Pass: the same values as upstream
    """
    if ctx.upstream_data is None:
        yield Problem(pointer="", message=f"upstream config.json at {_where(ctx)} is not a JSON object; cannot compare")
        return
    for row in rows(ctx):
        if not row.critical or _mirrors_upstream(ctx, row):
            continue
        if row.differs:
            yield Problem(
                pointer=row.pointer,
                message=f"{row.pointer[1:]} is {show_compared(row.local)} here but {show_compared(row.upstream)} "
                f"upstream ({_where(ctx)})",
            )
        elif row.differs_effective:
            yield Problem(
                pointer=row.pointer,
                message=f"{row.pointer[1:]}: same in both files, but through {_through(ctx)} this file "
                f"gives {show_compared(row.local_effective)} and upstream {show_compared(row.upstream_effective)} "
                f"({_where(ctx)})",
            )


@rule("DF602", "upstream-differs", Severity.INFO, "data", "upstream", own_check=True)
def other_differs(ctx: Context) -> Iterator[Problem]:
    """A field that is not DFlash-critical differs from upstream (information: local edits are allowed).

    A check of dflash-cfg's own: no engine compares the file with upstream.

    Fail (info): local ``"max_position_embeddings": 40960``, upstream 262144
    Pass: the same value as upstream
    """
    if ctx.upstream_data is None:
        return
    for row in rows(ctx):
        if _mirrors_upstream(ctx, row):
            yield Problem(
                pointer=row.pointer,
                message=f"{row.pointer[1:]} {show_compared(row.local)} is not in upstream's file, but mirrors "
                f"upstream's {MIRRORS[row.pointer][1:]} (same value, read by another loader generation)",
            )
        elif not row.critical and row.differs:
            yield Problem(
                pointer=row.pointer,
                message=f"{row.pointer[1:]} is {show_compared(row.local)} here, {show_compared(row.upstream)} upstream",
            )


@rule("DF603", "upstream-identical", Severity.INFO, "data", "upstream", own_check=True)
def identical(ctx: Context) -> Iterator[Problem]:
    """The file is byte-identical to upstream (its git blob sha1 equals the Hub's blob id).

    Information: says which commit it was compared with, so the report can be checked later. A check of
    dflash-cfg's own: no engine compares the file with upstream.

    Fail (info): a file with the same bytes as upstream's config.json
    Pass (no finding): a file that differs from upstream
    """
    assert ctx.upstream is not None
    if git_blob_sha1(ctx.doc.raw) == ctx.upstream.blob_id:
        yield Problem(
            pointer="",
            message=f"identical to upstream at {ctx.upstream.repo}@{ctx.upstream.commit} "
            f"(git blob {ctx.upstream.blob_id[:12]})",
        )


RULES = (critical_differs, other_differs, identical)

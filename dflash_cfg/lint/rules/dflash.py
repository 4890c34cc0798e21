"""DFlash block rules: which target layers the drafter reads, its mask token, its block size.

These values are trained facts. No rule here ever proposes a different value for them; fixes only
copy an existing value to where another loader generation reads it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from dflash_cfg.jsondoc.pointer import pointer
from dflash_cfg.lint.engines import REGISTERED_ARCHITECTURES
from dflash_cfg.lint.rules.base import ENGINE_FORMAT, Context, is_int, rule, show
from dflash_cfg.model import Fix, PatchOp, Problem, Severity

# The architectures whose engine model is the Qwen3-style DFlash stack (vLLM qwen3_dflash, SGLang DFlashDraftModel).
QWEN_STACK = ("DFlashDraftModel", "DFlash2DraftModel")
TAPS = "/dflash_config/target_layer_ids"


MAX_STANDARD_DEPTH = 1_000_000


def standard_taps(num_target_layers: int, num_taps: int) -> list[int]:
    """The reference `build_target_layer_ids`, exactly: Python's round() is round-half-even."""
    if num_taps == 1:
        return [num_target_layers // 2]
    start, end = 1, num_target_layers - 3
    span = end - start
    return [int(round(start + (i * span) / (num_taps - 1))) for i in range(num_taps)]


def _where_taps(ctx: Context) -> str:
    return ctx.draft_pointer("target_layer_ids")


@rule(
    "DF101",
    "dflash-config-missing",
    Severity.ERROR,
    kinds=ENGINE_FORMAT,
    reads=("vLLM:mask_token_id", "vLLM:target_layer_ids", "SGLang:target_layer_ids"),
)
def dflash_config_missing(ctx: Context) -> Iterator[Problem]:
    """The file has no ``dflash_config`` object.

    vLLM's proposer reads the mask token only from ``dflash_config`` and refuses the file; the z-lab April
    reference crashes (``config.dflash_config.get``); the taps then come from top-level keys or from a
    guess. Every published drafter carries one.

    Fail: ``{"architectures": ["DFlashDraftModel"], "target_layer_ids": [1, 9, 17, 25, 33], ...}``
    Pass: ``{"dflash_config": {"mask_token_id": 151669, "target_layer_ids": [1, 9, 17, 25, 33]}, ...}``
    """
    if "dflash_config" not in ctx.raw:
        yield Problem(
            "/dflash_config",
            "dflash_config is missing: vLLM's proposer refuses the file (no dflash_config.mask_token_id), "
            "the April z-lab reference crashes, and without top-level taps the engines guess them",
        )


@rule("DF102", "target-layer-ids-missing", Severity.ERROR, reads=("vLLM:target_layer_ids", "SGLang:target_layer_ids"))
def target_layer_ids_missing(ctx: Context) -> Iterator[Problem]:
    """``dflash_config.target_layer_ids`` is missing.

    vLLM then falls back to the target's EAGLE-3 default layers (with a log warning), SGLang to the
    ``build_target_layer_ids`` formula, which is wrong for most published drafters (z-lab #156: 14 of 20):
    both draft with taps the drafter was not trained on. Only at the top level: a warning, with a safe fix
    that copies the same list into ``dflash_config``. vLLM and SGLang fall back to the top-level list, but
    the April z-lab reference and SGLang before ``parse_dflash_draft_config`` (models/dflash.py @7f151c5e,
    which then sizes ``fc`` by the draft depth) read only ``dflash_config.target_layer_ids``.

    Fail: ``"dflash_config": {"mask_token_id": 151669}``
    Pass: ``"dflash_config": {"mask_token_id": 151669, "target_layer_ids": [1, 9, 17, 25, 33]}``
    """
    if not isinstance(ctx.raw.get("dflash_config"), dict) or "target_layer_ids" in ctx.dflash:
        return
    top = ctx.raw.get("target_layer_ids")
    if top is None:
        yield Problem(
            TAPS,
            "target_layer_ids missing: vLLM falls back to the target's EAGLE-3 layers and SGLang to a formula, "
            "so both draft with guessed taps; take the trained list from the upstream repo",
        )
    else:
        yield Problem(
            TAPS,
            "target_layer_ids only at the top level: current vLLM and SGLang fall back to it, but the April "
            "reference and older SGLang read only dflash_config.target_layer_ids",
            Fix("copy target_layer_ids into dflash_config", (PatchOp("add", TAPS, top),)),
            Severity.WARNING,
        )


@rule(
    "DF103",
    "taps-invalid",
    Severity.ERROR,
    reads=("vLLM:target_layer_ids", "vLLM:target_layer_ids capture", "SGLang:target_layer_ids"),
)
def taps_invalid(ctx: Context) -> Iterator[Problem]:
    """``target_layer_ids`` is not a non-empty list of unique, increasing, non-negative integers.

    SGLang refuses a non-list, an empty list and a negative id, and truncates a float with ``int()``;
    vLLM adds 1 to each id and captures each target layer once, in layer order: a repeated or non-integer
    id leaves ``fc`` short of features (it raises at the first step), a negative -1 reads the embeddings,
    and a list out of order reaches ``fc`` in layer order, not in the order of the list. Every published
    drafter lists unique taps in increasing order.

    Fail: ``[1, 16, 16, 46, 61]``, ``[61, 1]``, ``[]``, ``[-1, 5]``
    Pass: ``[1, 16, 31, 46, 61]``
    """
    value = ctx.draft_value("target_layer_ids")
    if value is None:
        return
    where = _where_taps(ctx)
    if not isinstance(value, list) or not value:
        yield Problem(where, f"target_layer_ids must be a non-empty list of layer indices, got {show(value)}")
        return
    for i, tap in enumerate(value):
        if not is_int(tap) or tap < 0:
            yield Problem(f"{where}/{i}", f"target_layer_ids[{i}] = {show(tap)} is not a non-negative integer")
    ints = [t for t in value if is_int(t)]
    if len(set(ints)) != len(ints):
        dups = sorted(t for t, n in Counter(ints).items() if n > 1)  # linear: a hostile list may be huge
        yield Problem(where, f"target_layer_ids repeats {dups}: each target layer can be read once")
    elif ints != sorted(ints):
        yield Problem(
            where,
            f"target_layer_ids {show(value)} is not increasing: the fc input columns are laid out "
            "in the trained order, and every published drafter lists taps in increasing order",
        )


@rule(
    "DF104",
    "tap-out-of-range",
    Severity.ERROR,
    reads=("SGLang:target_layer_ids", "SGLang:num_target_layers", "vLLM:target_layer_ids capture"),
)
def tap_out_of_range(ctx: Context) -> Iterator[Problem]:
    """A tap is ≥ ``num_target_layers``: it names a target layer that does not exist.

    SGLang refuses the file; vLLM fails with "target_layer_ids reference layers that do not exist".

    Fail: ``"num_target_layers": 36``, ``"target_layer_ids": [1, 9, 17, 25, 36]``
    Pass: ``"num_target_layers": 36``, ``"target_layer_ids": [1, 9, 17, 25, 33]``
    """
    taps, depth = ctx.taps(), ctx.num_target_layers()
    if taps is None or depth is None:
        return
    for i, tap in enumerate(taps):
        if tap >= depth:
            yield Problem(
                f"{_where_taps(ctx)}/{i}",
                f"tap {tap} is past the last target layer (num_target_layers {depth}, valid 0..{depth - 1})",
            )


@rule(
    "DF105",
    "tap-on-last-layer",
    Severity.WARNING,
    reads=("vLLM:target_layer_ids capture", "SGLang:target_layer_ids capture"),
)
def tap_on_last_layer(ctx: Context) -> Iterator[Problem]:
    """A tap reads the target's last layer (``num_target_layers - 1``).

    Engines capture the state *entering* layer t+1, and after the last layer that depends on the target's
    model code: SGLang's Qwen3.5 target raises IndexError at start-up (#32204; the fix, PR #32206, is not
    merged), vLLM captures it on Qwen3-Next/Qwen3.5 targets but not on Llama-style ones, where ``fc`` then
    gets too few features and vLLM raises. A warning, not an error, because a published drafter does it
    on purpose (MiMo-V2.5-Pro's, for its own target); the standard selection ends at N-3, so in a Qwen
    drafter it is often the sign of a guessed or shifted list — compare with upstream.

    Fail: ``"num_target_layers": 64``, ``"target_layer_ids": [1, 17, 33, 49, 63]``
    Pass: ``"num_target_layers": 64``, ``"target_layer_ids": [1, 16, 31, 46, 61]``
    """
    taps, depth = ctx.taps(), ctx.num_target_layers()
    if taps is None or depth is None:
        return
    for i, tap in enumerate(taps):
        if tap == depth - 1:
            yield Problem(
                f"{_where_taps(ctx)}/{i}",
                f"tap {tap} is the last of {depth} target layers: SGLang's Qwen3.5 target cannot capture it "
                "(IndexError) and vLLM captures it only on some targets; a guessed or shifted list often ends here",
            )


@rule("DF106", "taps-not-standard", Severity.INFO)
def taps_not_standard(ctx: Context) -> Iterator[Problem]:
    """The taps differ from the standard DFlash selection for (N target layers, K taps).

    Information only: trained taps are facts (DFlash2 and MiMo drafters use other lists on purpose).
    The standard list is shown as evidence when the file's taps are in doubt — compare with upstream.
    The formula is the reference ``build_target_layer_ids``: ids evenly spaced from 1 to N-3 with
    Python's round-half-even.

    A check of dflash-cfg's own, not an engine read: no engine compares a file's taps with the formula
    (SGLang computes it only when ``target_layer_ids`` is absent, which is DF102).

    Fail (info): N=64, ``[1, 17, 33, 49, 63]`` (standard ``[1, 16, 31, 46, 61]``)
    Pass: N=36, ``[1, 9, 17, 25, 33]``
    """
    taps, depth = ctx.taps(), ctx.num_target_layers()
    # The formula divides as floats; no model comes near a million layers, and a hostile 10**400 would overflow.
    if taps is None or depth is None or not 5 <= depth <= MAX_STANDARD_DEPTH:
        return
    standard = standard_taps(depth, len(taps))
    if taps != standard:
        yield Problem(
            _where_taps(ctx),
            f"taps {taps} differ from the standard selection for {depth} target "
            f"layers and {len(taps)} taps, {standard}; fine if trained that way, check against upstream",
        )


@rule("DF107", "eagle-aux-mismatch", Severity.ERROR, reads=("vLLM:target_layer_ids",))
def eagle_aux_mismatch(ctx: Context) -> Iterator[Problem]:
    """``eagle_aux_hidden_state_layer_ids`` is present and is not ``target_layer_ids`` + 1.

    vLLM reads ``eagle_aux_hidden_state_layer_ids`` *first* (EAGLE semantics: the residual entering
    layer t+1), so a stale or unshifted copy silently overrides the DFlash taps.

    Fail: taps ``[1, 9, 17, 25, 33]``, eagle ids ``[1, 9, 17, 25, 33]``
    Pass: taps ``[1, 9, 17, 25, 33]``, eagle ids ``[2, 10, 18, 26, 34]`` (or absent)
    """
    eagle, taps = ctx.raw.get("eagle_aux_hidden_state_layer_ids"), ctx.taps()
    if eagle is None or taps is None:
        return
    expected = [t + 1 for t in taps]
    if eagle != expected:
        yield Problem(
            "/eagle_aux_hidden_state_layer_ids",
            f"eagle_aux_hidden_state_layer_ids {eagle} should be "
            f"target_layer_ids + 1 = {expected}: vLLM reads it before dflash_config",
        )


@rule("DF111", "mask-token-id-missing", Severity.ERROR, reads=("vLLM:mask_token_id", "SGLang:mask_token_id"))
def mask_token_id_missing(ctx: Context) -> Iterator[Problem]:
    """``dflash_config.mask_token_id`` is missing.

    vLLM's proposer reads only ``dflash_config["mask_token_id"]`` and refuses the file without it. Missing
    everywhere: SGLang would also add a new, untrained ``<|MASK|>`` token. Only at the top level: SGLang
    finds it, vLLM does not (the engines disagree on the file); the safe fix mirrors the same id into
    ``dflash_config``.

    Fail: ``"mask_token_id": 151669`` at the top level only
    Pass: ``"dflash_config": {"mask_token_id": 151669, ...}``
    """
    if "mask_token_id" in ctx.dflash or not isinstance(ctx.raw.get("dflash_config"), dict):
        return
    top = ctx.raw.get("mask_token_id")
    where = "/dflash_config/mask_token_id"
    if top is None:
        yield Problem(
            where,
            "mask_token_id missing: the drafter fills its block with this token's embedding; "
            "take the trained id from the upstream repo",
        )
    else:
        yield Problem(
            where,
            f"mask_token_id {show(top)} only at the top level: SGLang finds it there, vLLM's proposer reads only "
            "dflash_config.mask_token_id and refuses the file",
            Fix("copy mask_token_id into dflash_config", (PatchOp("add", where, top),)),
        )


@rule("DF112", "mask-token-id-range", Severity.ERROR, reads=("SGLang:mask_token_id", "vLLM:mask_token_id"))
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
        block = ctx.dflash if where.startswith("/dflash_config") else ctx.raw
        value = block.get("mask_token_id")
        if value is None:
            continue
        if not is_int(value) or value < 0:
            yield Problem(where, f"mask_token_id {show(value)} is not a non-negative integer")
        elif vocab is not None and value >= vocab:
            yield Problem(where, f"mask_token_id {value} is outside the vocabulary [0, {vocab})")
    inner, top = ctx.dflash.get("mask_token_id"), ctx.raw.get("mask_token_id")
    if inner is not None and top is not None and inner != top:
        yield Problem(
            "/mask_token_id",
            f"top-level mask_token_id {show(top)} disagrees with dflash_config.mask_token_id "
            f"{show(inner)}: vLLM and SGLang use the latter; make sure it is the trained one",
            severity=Severity.WARNING,
        )


@rule("DF121", "block-size", Severity.ERROR, reads=("SGLang:block_size", "vLLM:block_size", "speculators:block_size"))
def block_size(ctx: Context) -> Iterator[Problem]:
    """``block_size`` is missing, below 2, or the top level and ``dflash_config`` disagree.

    SGLang reads ``dflash_config`` first and makes it the default number of tokens drafted per step
    (16 when absent); vLLM does not read it (the launch's ``num_speculative_tokens`` decides, DF801); the
    April reference and MLX read the top level. Missing: a warning (SGLang assumes 16; the trained value
    the file cannot show). Disagreeing copies: a warning too, since SGLang takes ``dflash_config``'s and
    which one was trained the file cannot show. Present in only one place: information, with a safe fix
    that mirrors the same value to the other so both loader generations read it.

    Fail: ``"block_size": 16`` and ``"dflash_config": {"block_size": 8}``
    Pass: ``"block_size": 16`` (and optionally the same in dflash_config)
    """
    top, inner = ctx.raw.get("block_size"), ctx.dflash.get("block_size")
    if top is None and inner is None:
        yield Problem(
            "/block_size",
            "block_size missing: loaders assume 16, the April reference crashes; take "
            "the trained value from the upstream repo",
            severity=Severity.WARNING,
        )
        return
    for where, value in (("/block_size", top), ("/dflash_config/block_size", inner)):
        if value is not None and (not is_int(value) or value < 2):
            yield Problem(where, f"block_size {show(value)} must be an integer ≥ 2 (one anchor plus masks)")
    if top is not None and inner is not None and top != inner:
        yield Problem(
            "/dflash_config/block_size",
            f"block_size {show(top)} at the top level but {show(inner)} in "
            "dflash_config: SGLang drafts the latter, the April reference and MLX the former; make sure the "
            "one in dflash_config is the trained one",
            severity=Severity.WARNING,
        )
    elif is_int(top) and top >= 2 and inner is None and isinstance(ctx.raw.get("dflash_config"), dict):
        yield Problem(
            "/dflash_config/block_size",
            "block_size only at the top level; newer loaders read dflash_config first (and default to 16)",
            Fix("mirror block_size into dflash_config", (PatchOp("add", "/dflash_config/block_size", top),)),
            Severity.INFO,
        )
    elif is_int(inner) and inner >= 2 and top is None:
        yield Problem(
            "/block_size",
            "block_size only in dflash_config; the April reference and MLX read the top level",
            Fix("mirror block_size to the top level", (PatchOp("add", "/block_size", inner),)),
            Severity.INFO,
        )


@rule("DF122", "num-target-layers", Severity.ERROR, kinds=ENGINE_FORMAT, reads=("SGLang:num_target_layers",))
def num_target_layers(ctx: Context) -> Iterator[Problem]:
    """``num_target_layers`` is missing or the top level and ``dflash_config`` disagree (warnings), or it
    is too small to hold the taps (error).

    vLLM does not read it. SGLang's ``DFlashDraftModel`` bounds the taps with it (``dflash_config``
    first) and refuses a tap at or past it; when it is absent, models/dflash.py @003b23d7 bounds them
    with the draft's own depth instead, which refuses nearly every tap list. The runner then captures
    with the running target's depth. The April reference and MLX require it at the top level. A missing
    value is still a warning: later SGLang copies bound the taps by ``max(taps) + 1`` instead, and none of
    the three third-party copies of z-lab/gpt-oss-20b-DFlash shows the key (all partial, so whether the
    published file has it is not known); ``--target`` (DF403) offers the target's depth as a safe fix.
    Disagreeing copies are a warning: it is a fact of the target, which the file cannot show (DF403
    checks it against the target).

    Fail: ``"num_target_layers": 4`` with five taps; 32 at the top level and 36 in dflash_config
    Pass: ``"num_target_layers": 36``
    """
    value = ctx.draft_value("num_target_layers")
    where = ctx.draft_pointer("num_target_layers")
    taps = ctx.taps()
    if value is None:
        yield Problem(
            where,
            "num_target_layers missing: SGLang's DFlashDraftModel (@003b23d7) then bounds the taps by the "
            "draft depth and refuses them, the April reference and MLX require it; take it from the target",
            severity=Severity.WARNING,
        )
    elif not is_int(value) or value < 1:
        yield Problem(where, f"num_target_layers {show(value)} must be a positive integer")
    elif taps is not None and value < len(taps):
        yield Problem(where, f"num_target_layers {value} cannot hold {len(taps)} distinct taps")
    top, inner = ctx.raw.get("num_target_layers"), ctx.dflash.get("num_target_layers")
    if top is not None and inner is not None and top != inner:
        yield Problem(
            "/num_target_layers",
            f"num_target_layers {show(top)} at the top level but {show(inner)} in dflash_config: "
            "the April reference and MLX read the first, SGLang the second",
            severity=Severity.WARNING,
        )


@rule(
    "DF131",
    "architecture",
    Severity.ERROR,
    "data",
    "effective",
    reads=("vLLM:architectures", "SGLang:architectures", "vLLM:model_type"),
)
def architecture(ctx: Context) -> Iterator[Problem]:
    """No engine registers ``architectures``, or the installed transformers' ``AutoConfig`` cannot load
    ``model_type``.

    vLLM and SGLang pick the drafter class from ``architectures``: ``DFlashDraftModel``,
    ``DFlash2DraftModel``, ``DFlashLagunaForCausalLM`` (and SGLang's ``MuseGlimmerAssistantModel``) are
    registered; a trainer-specific name (e.g. ``Qwen3DFlashDraftModel``) is not. Engines load the config
    through ``AutoConfig``, i.e. the class registered for ``model_type`` (``qwen3``, ``gpt_oss``,
    ``laguna``, ...); an exporter's invented type (``qwen3_dflash``) has none. A DFlash2 file must name
    ``DFlash2DraftModel``, or engines build the plain DFlash model without its convolution and selector.

    Fail: ``"architectures": ["Qwen3DFlashDraftModel"]``, ``"model_type": "dflash"``
    Pass: ``"architectures": ["DFlashDraftModel"]``, ``"model_type": "qwen3"``;
    ``"architectures": ["DFlashLagunaForCausalLM"]``, ``"model_type": "laguna"``
    """
    archs = ctx.raw.get("architectures")
    names = ", ".join(sorted(REGISTERED_ARCHITECTURES))
    if archs is None:
        yield Problem("/architectures", f"architectures missing: engines pick the drafter class from it ({names})")
    elif not isinstance(archs, list) or len(archs) != 1 or not isinstance(archs[0], str):
        yield Problem("/architectures", f"architectures {show(archs)} should name one drafter class ({names})")
    elif archs[0] not in REGISTERED_ARCHITECTURES:
        yield Problem(
            "/architectures",
            f"architectures {show(archs)}: no engine registers {archs[0]} (vLLM and SGLang know {names})",
        )
    elif ctx.kind == "dflash2" and archs[0] != "DFlash2DraftModel":
        yield Problem(
            "/architectures", f'architectures {show(archs)} on a DFlash2 drafter should be ["DFlash2DraftModel"]'
        )
    if ctx.kind == "speculators":
        return  # vLLM builds a bare PretrainedConfig from the translated dict, whatever the model_type
    eff = ctx.effective
    if eff.config_class is None and eff.values is None and eff.error is not None and "AutoConfig" in eff.error:
        model_type = ctx.raw.get("model_type")
        yield Problem(
            "/model_type",
            f"model_type {'missing' if model_type is None else show(model_type)}: {eff.error} "
            f"(transformers {eff.transformers_version}), so engines cannot load the file",
        )


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
                    f"DFlash2 needs dflash_config.{key} (missing; {' and '.join(pair)} are set together)",
                )
    group, hidden = ctx.dflash.get("conv_group_size"), ctx.int_field("hidden_size")
    if is_int(group) and group > 0 and hidden is not None and hidden % group:
        yield Problem(
            "/dflash_config/conv_group_size", f"hidden_size {hidden} is not a multiple of conv_group_size {group}"
        )


@rule("DF151", "hidden-act", Severity.ERROR, reads=("SGLang:hidden_act", "vLLM:hidden_act"))
def hidden_act(ctx: Context) -> Iterator[Problem]:
    """``hidden_act`` is not ``silu`` on a Qwen-stack drafter (``DFlashDraftModel``/``DFlash2DraftModel``).

    SGLang's ``DFlashMLP`` raises "Unsupported DFlash activation ... Only silu is supported"; vLLM builds the
    MLP as ``Qwen2MLP``, which refuses other activations too. Drafters of other families (Laguna) have their
    own engine model and are not checked here.

    Fail: ``"hidden_act": "gelu"``
    Pass: ``"hidden_act": "silu"`` (or absent: the config class default is silu)
    """
    archs = ctx.raw.get("architectures")
    if not isinstance(archs, list) or not any(a in QWEN_STACK for a in archs):
        return
    act = ctx.raw.get("hidden_act")
    if act is not None and act != "silu":
        yield Problem(
            "/hidden_act",
            f"hidden_act {show(act)}: SGLang's DFlash MLP and vLLM's Qwen2MLP only build silu and refuse the file",
        )


@rule("DF152", "laguna-draft-vocab", Severity.ERROR, reads=("vLLM:draft_vocab_size",))
def laguna_draft_vocab(ctx: Context) -> Iterator[Problem]:
    """A ``DFlashLagunaForCausalLM`` drafter has no ``draft_vocab_size``.

    vLLM's Laguna DFlash model raises "Laguna DFlash config requires `draft_vocab_size`" and the server does
    not start. The published Laguna drafters set it to the target vocabulary (100352).

    Fail: ``"architectures": ["DFlashLagunaForCausalLM"]`` without ``draft_vocab_size``
    Pass: the same with ``"draft_vocab_size": 100352``
    """
    archs = ctx.raw.get("architectures")
    if isinstance(archs, list) and "DFlashLagunaForCausalLM" in archs and ctx.raw.get("draft_vocab_size") is None:
        yield Problem(
            "/draft_vocab_size",
            "draft_vocab_size missing on a DFlashLagunaForCausalLM drafter: vLLM refuses the file "
            "(Laguna DFlash config requires draft_vocab_size)",
        )


@rule("DF153", "aux-hidden-state-off", Severity.ERROR, reads=("vLLM:use_aux_hidden_state",))
def aux_hidden_state_off(ctx: Context) -> Iterator[Problem]:
    """``use_aux_hidden_state`` is false (in ``eagle_config`` or ``dflash_config``).

    vLLM reads ``eagle_config`` then ``dflash_config`` ``.use_aux_hidden_state`` (default true); a false
    value builds no ``fc`` layer, so the drafter drafts without the target's hidden states it was trained
    on (its ``fc`` weights are dropped). SGLang always feeds them. Every DFlash drafter reads target
    features: the switch belongs to EAGLE configs.

    Fail: ``"dflash_config": {"use_aux_hidden_state": false, ...}``
    Pass: ``use_aux_hidden_state`` absent or true
    """
    for block in ("eagle_config", "dflash_config"):
        node = ctx.raw.get(block)
        if isinstance(node, dict) and "use_aux_hidden_state" in node:
            value = node["use_aux_hidden_state"]
            if value is not None and not value:
                yield Problem(
                    pointer(block, "use_aux_hidden_state"),
                    f"{block}.use_aux_hidden_state is {value!r}: vLLM then builds no fc layer and drafts "
                    "without the target's hidden states (SGLang feeds them); remove the key",
                )
            break  # vLLM takes the first block that has the key


@rule(
    "DF154",
    "target-hidden-size-differs",
    Severity.ERROR,
    kinds=ENGINE_FORMAT,
    reads=("vLLM:target_hidden_size", "SGLang:hidden_size", "SGLang:checkpoint tensors"),
)
def target_hidden_size_differs(ctx: Context) -> Iterator[Problem]:
    """``target_hidden_size`` is set and differs from ``hidden_size`` on a ``DFlashDraftModel`` drafter.

    vLLM sizes the ``fc`` input as K × ``target_hidden_size`` (K = number of taps); SGLang's
    ``DFlashDraftModel`` does not read ``target_hidden_size`` and builds ``fc`` as K × ``hidden_size``, so
    the trained ``fc`` weights do not fit and SGLang refuses the checkpoint ("DFLASH fc.weight shape
    mismatch"). No published drafter sets the key; one that needs it serves only on vLLM.

    Fail: ``"hidden_size": 2560``, ``"target_hidden_size": 4096``
    Pass: no ``target_hidden_size``, or the same value as ``hidden_size``
    """
    archs = ctx.raw.get("architectures")
    if not isinstance(archs, list) or "DFlashDraftModel" not in archs:
        return  # the SGLang model read is DFlashDraftModel's; other classes have their own
    declared, hidden = ctx.int_field("target_hidden_size"), ctx.int_field("hidden_size")
    if declared is not None and hidden is not None and declared != hidden:
        yield Problem(
            "/target_hidden_size",
            f"target_hidden_size {declared} differs from hidden_size {hidden}: vLLM builds fc for "
            f"{declared}-wide target states, SGLang for {hidden}-wide ones and refuses the trained fc weights",
        )


SPECULATORS_REQUIRED = (
    ("/aux_hidden_state_layer_ids", "aux_hidden_state_layer_ids"),
    ("/mask_token_id", "mask_token_id"),
)


@rule(
    "DF161",
    "speculators-structure",
    Severity.ERROR,
    kinds=("speculators",),
    reads=(
        "speculators:aux_hidden_state_layer_ids",
        "speculators:mask_token_id",
        "speculators:transformer_layer_config",
        "speculators:speculators_config",
    ),
)
def speculators_structure(ctx: Context) -> Iterator[Problem]:
    """A speculators-format file lacks what vLLM's translator needs, so vLLM refuses it.

    ``SpeculatorsConfig`` requires ``transformer_layer_config`` (an object) and
    ``speculators_config.proposal_methods[0].speculative_tokens`` and ``verifier.name_or_path``;
    ``update_dflash`` indexes ``aux_hidden_state_layer_ids`` and ``mask_token_id`` (KeyError when absent).

    Fail: ``{"speculators_model_type": "dflash", "transformer_layer_config": {...}}`` without
    ``aux_hidden_state_layer_ids``
    Pass: the same with ``"aux_hidden_state_layer_ids": [2, 10, 18, 26, 34]`` and ``"mask_token_id": 151669``
    """
    doc = ctx.written  # ctx.raw is vLLM's translation; the structure is checked on the file as written
    if doc is None:
        return
    layer = doc.get("transformer_layer_config")
    if not isinstance(layer, dict):
        state = "missing" if layer is None else f"a {type(layer).__name__}, not an object"
        yield Problem("/transformer_layer_config", f"transformer_layer_config is {state}: vLLM refuses the file")
    for where, key in SPECULATORS_REQUIRED:
        if key not in doc:
            yield Problem(where, f"{key} missing: vLLM's speculators translator raises KeyError")
    spec = doc.get("speculators_config")
    methods = spec.get("proposal_methods") if isinstance(spec, dict) else None
    first = methods[0] if isinstance(methods, list) and methods else None
    verifier = spec.get("verifier") if isinstance(spec, dict) else None
    if not isinstance(first, dict) or "speculative_tokens" not in first:
        yield Problem(
            "/speculators_config/proposal_methods",
            "speculators_config.proposal_methods[0].speculative_tokens missing: vLLM refuses the file "
            "(Invalid speculators config structure)",
        )
    if not isinstance(verifier, dict) or "name_or_path" not in verifier:
        yield Problem(
            "/speculators_config/verifier",
            "speculators_config.verifier.name_or_path missing: vLLM refuses the file "
            "(Invalid speculators config structure)",
        )


RULES = (
    dflash_config_missing,
    target_layer_ids_missing,
    taps_invalid,
    tap_out_of_range,
    tap_on_last_layer,
    taps_not_standard,
    eagle_aux_mismatch,
    mask_token_id_missing,
    mask_token_id_range,
    block_size,
    num_target_layers,
    architecture,
    dflash2_keys,
    hidden_act,
    laguna_draft_vocab,
    aux_hidden_state_off,
    target_hidden_size_differs,
    speculators_structure,
)

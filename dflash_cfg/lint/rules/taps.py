"""DF10x: the ``dflash_config`` block and the target layers the drafter reads (its taps).

These values are trained facts. No rule here ever proposes a different value for them; fixes only
copy an existing value to where another loader generation reads it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from dflash_cfg.lint.engines import sglang, vllm
from dflash_cfg.lint.rules.base import ENGINE_FORMAT, Context, is_int, nemotron_35, rule, show
from dflash_cfg.model import Fix, PatchOp, Problem, Requirement, Severity

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
    reads=(vllm.MASK_TOKEN_ID, vllm.TARGET_LAYER_IDS, sglang.TARGET_LAYER_IDS),
)
def dflash_config_missing(ctx: Context) -> Iterator[Problem]:
    """The file has no ``dflash_config`` object.

    vLLM's proposer reads the mask token only from ``dflash_config`` and refuses the file; the z-lab April
    reference crashes (``config.dflash_config.get``); the taps then come from top-level keys or from a
    guess. Every published drafter carries one.

    Fail: ``{"architectures": ["DFlashDraftModel"], "target_layer_ids": [1, 9, 17, 25, 33], ...}``
    Pass: ``{"dflash_config": {"mask_token_id": 151669, "target_layer_ids": [1, 9, 17, 25, 33]}, ...}``
    """
    if "dflash_config" not in ctx.data:
        yield Problem(
            pointer="/dflash_config",
            message="dflash_config is missing: vLLM's proposer refuses the file (no dflash_config.mask_token_id), "
            "the April z-lab reference crashes, and without top-level taps the engines guess them",
        )


@rule(
    "DF102",
    "target-layer-ids-missing",
    Severity.ERROR,
    reads=(vllm.TARGET_LAYER_IDS, sglang.TARGET_LAYER_IDS),
    severities=(Severity.WARNING,),
    fix=True,
)
def target_layer_ids_missing(ctx: Context) -> Iterator[Problem]:
    """``dflash_config.target_layer_ids`` is missing.

    vLLM then falls back to the target's EAGLE-3 default layers (with a log warning), SGLang to the
    ``build_target_layer_ids`` formula, which is wrong for most published drafters (z-lab #156: 14 of 20):
    both draft with taps the drafter was not trained on. Only at the top level: a warning, with a safe fix
    that copies the same list into ``dflash_config``. vLLM and SGLang fall back to the top-level list, but
    the April z-lab reference and SGLang before ``parse_dflash_draft_config`` (models/dflash.py @7f151c5e,
    which then sizes ``fc`` by the draft depth) read only ``dflash_config.target_layer_ids``. vLLM's Laguna
    drafter (``DFlashLagunaForCausalLM``) reads only ``dflash_config.target_layer_ids`` and refuses the file
    without it (KeyError, checked by running {vLLM}): there the top-level list is an error, same fix.

    Fail: ``"dflash_config": {"mask_token_id": 151669}``
    Pass: ``"dflash_config": {"mask_token_id": 151669, "target_layer_ids": [1, 9, 17, 25, 33]}``
    """
    if not isinstance(ctx.data.get("dflash_config"), dict) or "target_layer_ids" in ctx.dflash:
        return
    top = ctx.data.get("target_layer_ids")
    archs = ctx.data.get("architectures")
    laguna = isinstance(archs, list) and "DFlashLagunaForCausalLM" in archs
    if top is None:
        yield Problem(
            pointer=TAPS,
            message="target_layer_ids missing: vLLM's Laguna drafter refuses the file (it reads only "
            "dflash_config.target_layer_ids) and SGLang falls back to a formula; take the trained list from the "
            "upstream repo"
            if laguna
            else "target_layer_ids missing: vLLM falls back to the target's EAGLE-3 layers and SGLang to a formula, "
            "so both draft with guessed taps; take the trained list from the upstream repo",
        )
    elif laguna:
        yield Problem(
            pointer=TAPS,
            message="target_layer_ids only at the top level: vLLM's Laguna drafter reads only "
            "dflash_config.target_layer_ids and refuses the file (SGLang falls back to the top-level list)",
            fix=Fix("copy target_layer_ids into dflash_config", (PatchOp("add", TAPS, top),)),
        )
    else:
        yield Problem(
            pointer=TAPS,
            message="target_layer_ids only at the top level: current vLLM and SGLang fall back to it, but the April "
            "reference and older SGLang read only dflash_config.target_layer_ids",
            fix=Fix("copy target_layer_ids into dflash_config", (PatchOp("add", TAPS, top),)),
            severity=Severity.WARNING,
        )


@rule(
    "DF103",
    "taps-invalid",
    Severity.ERROR,
    reads=(vllm.TARGET_LAYER_IDS, vllm.TARGET_LAYER_IDS_CAPTURE, sglang.TARGET_LAYER_IDS),
    severities=(Severity.WARNING,),
    fix=True,
)
def taps_invalid(ctx: Context) -> Iterator[Problem]:
    """``target_layer_ids`` is not a non-empty list of unique, increasing, non-negative integers.

    SGLang refuses a non-list, an empty list and a negative id, and truncates a float with ``int()``;
    vLLM adds 1 to each id and captures each target layer once, in layer order: a repeated or non-integer
    id leaves ``fc`` short of features (it raises at the first step), a negative -1 reads the embeddings,
    and a list out of order reaches ``fc`` in layer order, not in the order of the list. Every published
    drafter lists unique taps in increasing order. An integral float (``16.0``) is a warning about
    portability: {vLLM} and {SGLang} both read it as the integer (checked by running them).

    Fail: ``[1, 16, 16, 46, 61]``, ``[61, 1]``, ``[]``, ``[-1, 5]``
    Warn: ``[1.0, 16.0, 31.0, 46.0, 61.0]``
    Pass: ``[1, 16, 31, 46, 61]``
    """
    value = ctx.draft_value("target_layer_ids")
    if value is None:
        return
    where = _where_taps(ctx)
    if not isinstance(value, list) or not value:
        # vLLM reads eagle_aux_hidden_state_layer_ids first (DF107): only without it does it fail on these taps.
        aux = isinstance(ctx.data.get("eagle_aux_hidden_state_layer_ids"), list)
        refuse = "SGLang refuses" if aux or isinstance(value, list) else "vLLM and SGLang refuse"
        yield Problem(
            pointer=where,
            message=f"target_layer_ids must be a non-empty list of layer indices, got {show(value)}: {refuse} the file",
        )
        return
    for i, tap in enumerate(value):
        if isinstance(tap, float) and tap.is_integer() and tap >= 0:
            yield Problem(
                pointer=f"{where}/{i}",
                message=f"target_layer_ids[{i}] = {show(tap)} is a float: vLLM and SGLang read it as {int(tap)}, "
                "other loaders may not",
                fix=Fix(f"write it as {int(tap)}", (PatchOp("replace", f"{where}/{i}", int(tap)),)),
                severity=Severity.WARNING,
            )
        elif not is_int(tap) or tap < 0:
            # Checked by running them: SGLang refuses a negative id; a string one fails both (vLLM adds 1 to it).
            refuses = (
                ": SGLang refuses the file"
                if is_int(tap)
                else ": vLLM and SGLang refuse the file"
                if isinstance(tap, str)
                else ""
            )
            yield Problem(
                pointer=f"{where}/{i}",
                message=f"target_layer_ids[{i}] = {show(tap)} is not a non-negative integer{refuses}",
            )
    ints = [t for t in value if is_int(t)]
    if len(set(ints)) != len(ints):
        dups = sorted(t for t, n in Counter(ints).items() if n > 1)  # linear: a hostile list may be huge
        yield Problem(pointer=where, message=f"target_layer_ids repeats {dups}: each target layer can be read once")
    elif ints != sorted(ints):
        yield Problem(
            pointer=where,
            message=f"target_layer_ids {show(value)} is not increasing: the fc input columns are laid out "
            "in the trained order, and every published drafter lists taps in increasing order",
        )


@rule(
    "DF104",
    "tap-out-of-range",
    Severity.ERROR,
    reads=(sglang.TARGET_LAYER_IDS, sglang.NUM_TARGET_LAYERS, vllm.TARGET_LAYER_IDS_CAPTURE),
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
                pointer=f"{_where_taps(ctx)}/{i}",
                message=f"tap {tap} is past the last target layer (num_target_layers {depth}, valid 0..{depth - 1}): "
                "SGLang refuses the file",
            )


# Target families whose published drafters tap the last layer by design (their own engine code captures it):
# poolside's Laguna-XS-2.1-DFlash ([.., 33, 39] of 40) and XiaomiMiMo's MiMo-V2.5-Pro DFlash ([.., 47, 69] of 70).
LAST_TAP_BY_DESIGN = ("laguna", "mimo")
# SGLang's target models that cannot capture after their last layer (IndexError, #32204: run on the incident's
# drafter): DF406 errs there, for SGLang.
SGLANG_NO_LAST_LAYER_CAPTURE = ("qwen3_5_text", "qwen3_5_moe_text", "qwen3_5", "qwen3_5_moe")


@rule(
    "DF105",
    "tap-on-last-layer",
    Severity.WARNING,
    reads=(vllm.TARGET_LAYER_IDS_CAPTURE, sglang.TARGET_LAYER_IDS_CAPTURE),
    severities=(Severity.INFO,),
)
def tap_on_last_layer(ctx: Context) -> Iterator[Problem]:
    """A tap reads the target's last layer (``num_target_layers - 1``).

    Engines capture the state *entering* layer t+1; for the last layer that is the state after it, and
    whether a target can capture it depends on the target's model code: {SGLang}'s Qwen3.5 target raises
    IndexError at start-up (#32204; checked by running it on the incident's drafter); {vLLM}'s Llama-style
    and Qwen3-Next/Qwen3.5 loops both capture after the last layer (read in the installed code: a target
    forward pass cannot run in the engine suite). So the finding concerns SGLang only (it fails a gate only
    where SGLang serves the drafter): a warning with a Qwen3.5 target (``--target``; DF406 is the error there),
    or without a target, which the file cannot show (the message then names no family); information with
    another target, whose SGLang capture is not checked. Nothing for a family whose published drafters tap the
    last layer by design (Laguna's, MiMo's: the drafter's or the target's ``model_type``). The standard
    selection ends at N-3, so in a Qwen drafter it is often the sign of a guessed or shifted list — compare
    with upstream.

    Fail: ``"num_target_layers": 64``, ``"target_layer_ids": [1, 17, 33, 49, 63]``
    Fail (info): the same with a target whose SGLang model is not Qwen3.5's
    Pass: ``"num_target_layers": 64``, ``"target_layer_ids": [1, 16, 31, 46, 61]``; ``"model_type": "laguna"``
    with ``[1, 13, 25, 33, 39]`` of 40
    """
    taps, depth = ctx.taps(), ctx.num_target_layers()
    if taps is None or depth is None or depth - 1 not in taps:
        return
    family = ctx.target.model_type if ctx.target is not None else None
    drafter_family = ctx.data.get("model_type")
    if any(str(f or "").startswith(LAST_TAP_BY_DESIGN) for f in (family, drafter_family)):
        return
    tap, i = depth - 1, taps.index(depth - 1)
    where = f"{_where_taps(ctx)}/{i}"
    head = f"tap {tap} is the last of {depth} target layers"
    if family is None:
        yield Problem(
            pointer=where,
            message=f"{head}: whether SGLang captures it depends on the target's model code (Qwen3.5's cannot: "
            "IndexError; give --target to know), vLLM does; a guessed or shifted list often ends here",
            engines=(Requirement("sglang"),),
        )
    elif family in SGLANG_NO_LAST_LAYER_CAPTURE:
        yield Problem(
            pointer=where,
            message=f"{head}: SGLang's Qwen3.5 target cannot capture it (IndexError), vLLM does; "
            "a guessed or shifted list often ends here",
            engines=(Requirement("sglang"),),
        )
    else:
        yield Problem(
            pointer=where,
            message=f"{head}: vLLM captures it; whether SGLang's {family} target does is not checked",
            severity=Severity.INFO,
            engines=(Requirement("sglang"),),
        )


@rule("DF106", "taps-not-standard", Severity.INFO, own_check=True)
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
            pointer=_where_taps(ctx),
            message=f"taps {taps} differ from the standard selection for {depth} target "
            f"layers and {len(taps)} taps, {standard}; fine if trained that way, check against upstream",
        )


@rule("DF107", "eagle-aux-mismatch", Severity.ERROR, reads=(vllm.TARGET_LAYER_IDS,))
def eagle_aux_mismatch(ctx: Context) -> Iterator[Problem]:
    """``eagle_aux_hidden_state_layer_ids`` is present and is not ``target_layer_ids`` + 1.

    vLLM reads ``eagle_aux_hidden_state_layer_ids`` *first* (EAGLE semantics: the residual entering
    layer t+1), so a stale or unshifted copy silently overrides the DFlash taps.

    Fail: taps ``[1, 9, 17, 25, 33]``, eagle ids ``[1, 9, 17, 25, 33]``
    Pass: taps ``[1, 9, 17, 25, 33]``, eagle ids ``[2, 10, 18, 26, 34]`` (or absent)
    """
    eagle, taps = ctx.data.get("eagle_aux_hidden_state_layer_ids"), ctx.taps()
    if eagle is None or taps is None:
        return
    expected = [t + 1 for t in taps]
    if eagle != expected:
        yield Problem(
            pointer="/eagle_aux_hidden_state_layer_ids",
            message=f"eagle_aux_hidden_state_layer_ids {eagle} should be "
            f"target_layer_ids + 1 = {expected}: vLLM reads it before dflash_config",
        )


# Keys both engines read only inside dflash_config (vLLM:
# vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3DecoderLayer.__init__,
# vllm/model_executor/models/qwen3_dflash2.py:DFlash2Qwen3ForCausalLM.__init__; SGLang:
# sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config). vLLM's top-level add_swa_attention_sink_bias
# is DF210's. The logit
# scalars only for DFlash2, the only drafter that reads them: a top-level final_logit_softcapping is also
# Gemma's own config key (the gemma-4 drafters have it), which no DFlash v1 model reads.
DFLASH_ONLY = ("attention_sink_bias", "attention_value_scale", "use_swa", "swa_window_size")
DFLASH2_ONLY = ("output_multiplier", "final_logit_softcapping")


@rule(
    "DF108",
    "dflash-key-top-level",
    Severity.ERROR,
    kinds=ENGINE_FORMAT,
    reads=(vllm.DFLASH_CONFIG_ONLY_KEYS, sglang.DFLASH_CONFIG_ONLY_KEYS),
    fix=True,
)
def dflash_key_top_level(ctx: Context) -> Iterator[Problem]:
    """A key engines read only inside ``dflash_config`` is only at the top level.

    {vLLM} and {SGLang} read ``attention_sink_bias``, ``attention_value_scale`` and DFlash2's
    ``output_multiplier`` and ``final_logit_softcapping`` from ``dflash_config`` alone, and vLLM its
    ``use_swa`` and ``swa_window_size`` (MiMo-style sliding attention): at the top level the engines
    silently draft with their defaults (no sink, no value scale, multiplier 1, no soft cap, no sliding
    layers), not the trained value, and a ``swa_window_size`` vLLM needs (``use_swa`` on, no other window)
    leaves it without a window, so it refuses the file. Checked by running both engines. The safe fix
    copies the same value into ``dflash_config``.

    A top-level ``attention_sink_bias`` on SGLang's Nemotron 3.5 layout is DF215's: SGLang reads it there.

    A top-level ``final_logit_softcapping`` on a DFlash (v1) drafter is not flagged: it is Gemma's own config
    key (the published gemma-4 drafters carry it) and no v1 drafter reads the logit scalars.

    Fail: ``"output_multiplier": 2.0`` at the top level of a DFlash2 drafter, none in dflash_config
    Pass: ``"dflash_config": {"output_multiplier": 2.0, ...}``
    """
    if not isinstance(ctx.data.get("dflash_config"), dict):
        return
    for key in DFLASH_ONLY + (DFLASH2_ONLY if ctx.kind == "dflash2" else ()):
        # On SGLang's Nemotron 3.5 layout SGLang reads the top-level sink itself: DF215 says what vLLM does.
        if key == "attention_sink_bias" and nemotron_35(ctx.data):
            continue
        if key in ctx.data and key not in ctx.dflash:
            value = ctx.data[key]
            window = ctx.effective.values.get("sliding_window") if ctx.effective.values else None
            if key == "swa_window_size" and ctx.dflash.get("use_swa") in (True, 1) and window is None:
                effect = "vLLM reads it only in dflash_config, finds no window and refuses the file"
            elif key in ("use_swa", "swa_window_size"):
                effect = "vLLM reads it only in dflash_config and silently uses its default"
            else:
                effect = "vLLM and SGLang read it only in dflash_config and silently use their default"
            yield Problem(
                pointer=f"/{key}",
                message=f"{key} {show(value)} only at the top level: {effect}",
                fix=Fix(f"copy {key} into dflash_config", (PatchOp("add", f"/dflash_config/{key}", value),)),
            )


RULES = (
    dflash_config_missing,
    target_layer_ids_missing,
    taps_invalid,
    tap_out_of_range,
    tap_on_last_layer,
    taps_not_standard,
    eagle_aux_mismatch,
    dflash_key_top_level,
)

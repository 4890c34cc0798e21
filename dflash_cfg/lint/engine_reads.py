"""What a drafter file says about the fields that change drafting (`FileSays`), and where an engine's reading of it
(an adapter record's `Reads`) differs (`Difference`): the model's values, made here. Pure: `engines` and preflight's
engine step share it.

The file's values are taken as the engines' DFlash code takes them: the taps and the mask from
`dflash_config` (else the top level, where both engines fall back to), a speculators-format file through
vLLM's translation (its taps are the file's numbering minus one, as the adapters report them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dflash_cfg.lint.speculators import is_speculators, translate
from dflash_cfg.model import Difference, FileSays, Reads, show_layers

# The fields an engine must read as the file says for the drafter to draft what it was trained on: a
# difference in one of these fails `engines` and is an error in preflight (DF902).
CRITICAL = ("target_layer_ids", "mask_token_id", "layer_types", "sliding_window")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    """`value` as a float, None when it is no number or one past a float (an integer of hundreds of digits)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def file_says(data: Mapping[str, Any]) -> FileSays:
    """The drafting fields as the file states them (None: the file does not say, or says it unreadably)."""
    raw = dict(data)
    if is_speculators(raw):
        raw = translate(raw).data
    nested = raw.get("dflash_config")
    block: dict[str, Any] = nested if isinstance(nested, dict) else {}

    def draft(key: str) -> Any:
        return block[key] if key in block else raw.get(key)

    taps = draft("target_layer_ids")
    kinds = raw.get("layer_types")
    rope = raw.get("rope_parameters")
    theta = raw.get("rope_theta")
    if theta is None and isinstance(rope, dict):
        theta = rope.get("rope_theta")
    return FileSays(
        target_layer_ids=tuple(taps) if isinstance(taps, list) and all(_int(t) is not None for t in taps) else None,
        mask_token_id=_int(draft("mask_token_id")),
        layer_types=tuple(kinds) if isinstance(kinds, list) and all(isinstance(k, str) for k in kinds) else None,
        sliding_window=_int(raw.get("sliding_window")),
        rope_theta=_number(theta),
        block_size=_int(draft("block_size")),
    )


def differences(says: FileSays, reads: Reads) -> tuple[Difference, ...]:
    """Where an engine's `reads` differ from what the file says. A field the file does not state is not compared
    (the engine's default is what the static rules judge); RoPE θ is shown, not critical."""
    found: list[Difference] = []
    taps = reads.target_layer_ids
    if says.target_layer_ids is not None and taps is not None and tuple(taps) != says.target_layer_ids:
        found.append(Difference("target_layer_ids", _list(says.target_layer_ids), _list(taps), True))
    mask = reads.mask_token_id
    if says.mask_token_id is not None and mask != says.mask_token_id:
        found.append(Difference("mask_token_id", str(says.mask_token_id), str(mask), True))
    kinds = reads.layer_types
    if says.layer_types is not None and kinds is not None and tuple(kinds) != says.layer_types:
        found.append(Difference("layer_types", show_layers(says.layer_types), show_layers(kinds), True))
    used = reads.windows
    if says.sliding_window is not None and used and used != (says.sliding_window,):
        shown = ", ".join(str(w) for w in used)
        found.append(Difference("sliding_window", str(says.sliding_window), shown, True))
    theta = _number(reads.rope_theta)
    if says.rope_theta is not None and theta is not None and theta != says.rope_theta:
        found.append(Difference("rope_theta", _theta(says.rope_theta), _theta(theta), False))
    return tuple(found)


def _list(values: Sequence[int | float]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _theta(value: float) -> str:
    return f"{value:g}"

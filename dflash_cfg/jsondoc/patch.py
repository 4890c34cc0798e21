"""JSON Patch (RFC 6902 add/replace/remove) on data: what a patched document must be.

The format-preserving edit of a file's text (textpatch.py) is checked against this.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from dflash_cfg.errors import PatchError
from dflash_cfg.jsondoc.document import json_type
from dflash_cfg.jsondoc.pointer import from_tokens, index, split
from dflash_cfg.model import PatchOp

_OPS = ("add", "replace", "remove")


def apply_to_data(data: Any, ops: Sequence[PatchOp]) -> Any:
    """Apply `ops` in order to a deep copy of `data` (the input and the ops' values are never shared).

    Errors, as RFC 6902 has them: replace or remove of a missing member or element, add into a
    parent that does not exist or is not a container, an array index that is not a plain decimal in
    range (`-`, the end, only for add), removing the whole document, an op other than
    add/replace/remove. Each raises PatchError naming the op's position, op and pointer. An add of
    a member that exists replaces it, in place.
    """
    try:
        doc = copy.deepcopy(data)
        for i, op in enumerate(ops):
            doc = _apply(doc, op, i)
    except RecursionError:  # deepcopy recurses per level: a hostile depth must not crash the caller
        raise PatchError("the document or a value nests too deeply to patch") from None
    return doc


def fail(i: int, op: PatchOp, why: str) -> PatchError:
    return PatchError(f"op {i} ({op.op} {op.path!r}): {why}")


def _apply(doc: Any, op: PatchOp, i: int) -> Any:
    if op.op not in _OPS:
        raise fail(i, op, f"unsupported op {op.op!r} (only add, replace and remove)")
    try:
        tokens = split(op.path)
    except ValueError as exc:
        raise fail(i, op, str(exc)) from None
    value = copy.deepcopy(op.value)
    if not tokens:
        if op.op == "remove":
            raise fail(i, op, "cannot remove the whole document")
        return value
    target = doc
    for depth, token in enumerate(tokens[:-1]):
        where = from_tokens(tokens[: depth + 1])
        if isinstance(target, dict):
            if token not in target:
                raise fail(i, op, f"parent {where!r} does not exist")
            target = target[token]
        elif isinstance(target, list):
            n = index(token, len(target))
            if n is None:
                raise fail(i, op, f"parent {where!r} does not exist (array of {len(target)})")
            target = target[n]
        else:
            raise fail(i, op, f"parent {from_tokens(tokens[:depth])!r} is {json_type(target)}, not a container")
    last = tokens[-1]
    if isinstance(target, dict):
        if op.op == "add":
            target[last] = value  # an existing key keeps its place, as the text edit keeps it
        elif last not in target:
            raise fail(i, op, f"no member {last!r} to {op.op}")
        elif op.op == "replace":
            target[last] = value
        else:
            del target[last]
    elif isinstance(target, list):
        if op.op == "add" and last == "-":
            target.append(value)
            return doc
        size = len(target) + (op.op == "add")  # add may name the position just past the end
        n = index(last, size)
        if n is None:
            raise fail(
                i,
                op,
                f"array index {last!r} not in 0..{size - 1}" if size else f"array index {last!r}: the array is empty",
            )
        if op.op == "add":
            target.insert(n, value)
        elif op.op == "replace":
            target[n] = value
        else:
            del target[n]
    else:
        raise fail(i, op, f"parent {from_tokens(tokens[:-1])!r} is {json_type(target)}, not a container")
    return doc

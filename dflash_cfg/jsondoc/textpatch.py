"""JSON Patch (RFC 6902 add/replace/remove) on a config's text, keeping its format.

`patch.apply_to_data` is the reference: what the patched document must be. `apply_to_text` makes the
same change on the text, so a repaired config.json differs from the original only where the patch
says and a reviewer's diff shows just that (transformers' standard form, `json.dumps(d, indent=2,
sort_keys=True) + "\\n"`, stays in that form, line for line).
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dflash_cfg.errors import PatchError
from dflash_cfg.jsondoc.encode import dumps
from dflash_cfg.jsondoc.patch import apply_to_data, fail
from dflash_cfg.jsondoc.pointer import index, split
from dflash_cfg.jsondoc.spans import Item, Node, Unexpected, tree
from dflash_cfg.model import ByteEdit, PatchOp


def apply_to_text(text: str, ops: Sequence[PatchOp]) -> str:
    """Apply `ops` to a JSON text, keeping its format; the result parses to `apply_to_data`'s answer.

    Kept: indentation unit and style, key order, separators, line endings, whatever surrounds the
    top-level value (so a trailing newline, or its absence), one-line containers. Only the spans
    the ops touch change: a replaced value is spliced in rendered like what it replaces (one-line
    stays one-line, multi-line is indented with the file's unit under the member's line); an added
    member goes where sort order puts it if the object's keys are sorted, else last, indented like
    its siblings (an empty container opens up with its line's indent plus one unit when the
    container holding it is multi-line; an empty top level opens up too); a removed member takes its
    lines and the comma it no longer needs with it. New containers have their keys sorted when
    every object in the file already is. New text is written with `ensure_ascii=False`.

    Self-check and fallback: the edited text is parsed and compared with `apply_to_data(json.loads(
    text), ops)`. When they differ, which takes a layout the editor does not foresee (or duplicate
    keys, where json keeps the last and removing it uncovers an earlier one), the whole document is
    re-serialised instead: the file's indent unit (or one line, if it was one line), separators,
    key order (sorted when it was sorted), line ending, and leading/trailing whitespace. That result
    is checked the same way.

    PatchError: the text is not JSON, an op fails (see `apply_to_data`), a value is not JSON
    (not serialisable, non-string keys of mixed types), or the nesting is too deep to handle.
    """
    try:
        return _apply_to_text(text, ops)
    except RecursionError:  # json and deepcopy recurse per level; a hostile depth must not crash the caller
        raise PatchError("the document or a value nests too deeply to patch") from None


def _apply_to_text(text: str, ops: Sequence[PatchOp]) -> str:
    try:
        before = json.loads(text)
    except ValueError as exc:
        raise PatchError(f"the text is not valid JSON: {str(exc).splitlines()[0]}") from None
    after = apply_to_data(before, ops)
    for i, op in enumerate(ops):
        if op.op != "remove":
            try:
                json.dumps(op.value, sort_keys=True)
            except (TypeError, ValueError) as exc:
                raise fail(i, op, f"value is not JSON: {exc}") from None
    want = _canonical(after)

    try:
        root = tree(text)
    except Unexpected:
        root = None
    style = _detect(text, root)
    if root is not None:
        try:
            edited = text
            for op in ops:
                edited = _edit(edited, op, style)
            if _canonical(json.loads(edited)) == want:
                return edited
        except (Unexpected, ValueError):
            pass

    core = text.strip(_WS)
    lead, trail = text[: len(text) - len(text.lstrip(_WS))], text[len(text.rstrip(_WS)) :]
    rebuilt = lead + _render(after, style, "\n" in core or not core.startswith(("{", "[")), "") + trail
    try:
        ok = _canonical(json.loads(rebuilt)) == want
    except ValueError:
        ok = False
    if not ok:  # only a value json cannot round-trip gets here
        raise PatchError("the patched document does not survive re-serialisation")
    return rebuilt


_WS = " \t\r\n"


def _canonical(data: Any) -> str:
    # Stricter than ==: 1, 1.0 and true differ, and NaN equals itself.
    return dumps(data, sort_keys=True)


@dataclass(frozen=True, kw_only=True)
class _Style:
    unit: str = "  "  # transformers' indent when the file shows none
    newline: str = "\n"
    key_sep: str = ": "
    item_sep: str = ", "  # in one-line containers
    sort_keys: bool = True


def _line_indent(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def _multiline(text: str, node: Node) -> bool:
    return "\n" in text[node.start : node.end]  # strings cannot hold a raw newline


def _detect(text: str, root: Node | None) -> _Style:
    nl_at = text.find("\n")
    newline = "\r\n" if nl_at > 0 and text[nl_at - 1] == "\r" else "\n"
    if root is None:
        return _Style(newline=newline)
    unit = key_sep = item_sep = None
    sort_keys = True
    todo = [root]
    while todo:  # preorder, so the outermost evidence wins
        node = todo.pop()
        if not node.items:
            continue
        items = node.items
        todo.extend(item.value for item in reversed(items))
        if node.is_object:
            keys = [item.key or "" for item in items]
            sort_keys = sort_keys and keys == sorted(keys)
            gap = text[items[0].key_end : items[0].value.start]
            if key_sep is None and "\n" not in gap:
                key_sep = gap
        lead = text[node.start + 1 : items[0].start]
        if unit is None and "\n" in lead:
            inner, outer = lead.rsplit("\n", 1)[1], _line_indent(text, node.start)
            if inner.startswith(outer) and len(inner) > len(outer):
                unit = inner[len(outer) :]
        if item_sep is None and len(items) >= 2 and not _multiline(text, node):
            item_sep = text[items[0].value.end : items[1].start]
    return _Style(
        unit=unit or "  ", newline=newline, key_sep=key_sep or ": ", item_sep=item_sep or ", ", sort_keys=sort_keys
    )


def _render(value: Any, style: _Style, multi: bool, base: str, item_sep: str | None = None) -> str:
    """`value` as JSON text; multi-line continuation lines start with `base`."""
    if not isinstance(value, (dict, list, tuple)):
        return dumps(value)
    if multi:
        out = dumps(value, indent=style.unit, separators=(",", style.key_sep), sort_keys=style.sort_keys)
        return out.replace("\n", style.newline + base)
    return dumps(value, separators=(item_sep or style.item_sep, style.key_sep), sort_keys=style.sort_keys)


def _edit(text: str, op: PatchOp, style: _Style) -> str:
    """One op on the text (already validated against the data, so every pointer resolves)."""
    root = tree(text)
    tokens = split(op.path)
    if not tokens:
        # Nothing holds the top level; a config is multi-line, so that is the guess without evidence.
        return _replace(text, root, op.value, style, True, root.start)
    node, holder_multi = root, True
    for token in tokens[:-1]:
        holder_multi = _multiline(text, node)
        node = _find(node, token)[1].value
    items, last = node.items, tokens[-1]
    if items is None:
        raise Unexpected
    multi = _multiline(text, node)
    if node.is_object:
        found = [(k, item) for k, item in enumerate(items) if item.key == last]
        if found:  # json keeps the last of duplicated keys, so that is the one to edit
            k, item = found[-1]
            if op.op == "remove":
                return _remove(text, node, k)
            return _replace(text, item.value, op.value, style, multi, item.start)
        if op.op != "add":
            raise Unexpected
        keys = [item.key or "" for item in items]
        at = bisect.bisect_left(keys, last) if keys == sorted(keys) else len(keys)
        member = dumps(last) + style.key_sep

        def make(indent: str, multi_value: bool, sep: str | None) -> str:
            return member + _render(op.value, style, multi_value, indent, sep)

        return _insert(text, node, at, make, holder_multi, style)
    if op.op == "add":
        at = len(items) if last == "-" else int(last)
        return _insert(
            text, node, at, lambda indent, mv, sep: _render(op.value, style, mv, indent, sep), holder_multi, style
        )
    k, item = _find(node, last)
    if op.op == "remove":
        return _remove(text, node, k)
    return _replace(text, item.value, op.value, style, multi, item.start)


def _find(node: Node, token: str) -> tuple[int, Item]:
    items = node.items or ()
    if node.is_object:
        found = [(k, item) for k, item in enumerate(items) if item.key == token]
        if found:
            return found[-1]
    else:
        n = index(token, len(items))
        if n is not None:
            return n, items[n]
    raise Unexpected


def _replace(text: str, old: Node, value: Any, style: _Style, holder_multi: bool, anchor: int) -> str:
    """Splice `value` over `old`; `anchor` starts the line whose indentation continuation lines take."""
    sep = None
    if old.items:  # a non-empty container shows how it is laid out
        multi = _multiline(text, old)
        if not multi and len(old.items) >= 2:
            sep = text[old.items[0].value.end : old.items[1].start]
    else:  # a scalar or an empty container shows nothing: follow what holds it
        multi = holder_multi
    new = _render(value, style, multi, _line_indent(text, anchor), sep)
    return text[: old.start] + new + text[old.end :]


def _insert(
    text: str, node: Node, at: int, make: Callable[[str, bool, str | None], str], holder_multi: bool, style: _Style
) -> str:
    """Put the entry `make(indent, multi, one-line separator)` at position `at` of a container."""
    items = node.items or ()
    opening, closing = text[node.start], text[node.end - 1]
    if not items:
        if holder_multi:
            base = _line_indent(text, node.start)
            inner = base + style.unit
            new = opening + style.newline + inner + make(inner, True, None) + style.newline + base + closing
        else:
            new = opening + make("", False, None) + closing
        return text[: node.start] + new + text[node.end :]
    multi = _multiline(text, node)
    n = len(items)
    if n >= 2:
        j = min(max(at, 1), n - 1)  # the gap between two neighbours, nearest the new entry
        between = text[items[j - 1].value.end : items[j].start]
        gap = between[between.index(",") + 1 :]
    elif multi:
        gap = text[node.start + 1 : items[0].start]
    else:
        gap = style.item_sep[style.item_sep.index(",") + 1 :] if "," in style.item_sep else " "
    if "\n" in gap:
        indent = gap.rsplit("\n", 1)[1]
        gap = style.newline + indent  # one line break, never a blank line
    else:
        indent = _line_indent(text, items[min(at, n - 1)].start)
    entry = make(indent, multi, None if multi else "," + gap)
    if at < n:
        pos = items[at].start
        return text[:pos] + entry + "," + gap + text[pos:]
    pos = items[-1].value.end
    return text[:pos] + "," + gap + entry + text[pos:]


def _remove(text: str, node: Node, k: int) -> str:
    items = node.items or ()
    if len(items) == 1:  # what json.dumps writes for an empty container, whatever the indent
        return text[: node.start] + text[node.start] + text[node.end - 1] + text[node.end :]
    if k < len(items) - 1:  # from the key to the next key: its lines and its comma
        a, b = items[k].start, items[k + 1].start
    else:  # the last: from the end of the previous value, taking that value's comma
        a, b = items[k - 1].value.end, items[k].value.end
    return text[:a] + text[b:]


def apply_byte_edits(data: bytes, edits: Sequence[ByteEdit]) -> bytes:
    """Apply non-overlapping byte edits (what JSON Patch cannot say, e.g. dropping a byte-order mark),
    last first so earlier offsets stay valid."""
    out = data
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        if not 0 <= edit.start <= edit.end <= len(out):
            raise PatchError(f"byte edit {edit.start}..{edit.end} is outside the file ({len(out)} bytes)")
        out = out[: edit.start] + edit.replacement + out[edit.end :]
    return out

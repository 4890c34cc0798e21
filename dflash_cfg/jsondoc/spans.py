"""Where each value of a JSON text is: one tokenizer and one walk, for locating findings and for
editing text in place.

`tree(text)` returns the spans (start and end offsets) of every value, key and member of a text that
`json.loads` accepted; `scan(text)` derives from it the line and column of every member and element,
the duplicated keys and the non-finite numbers.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from dflash_cfg.jsondoc.pointer import INDEX as _INDEX
from dflash_cfg.jsondoc.pointer import escape, index

# One token per match, with the whitespace before it: a text is mostly whitespace and short tokens, and
# one match per token (not one per token and one per run of spaces) halves the work of the walk below.
TOKEN = re.compile(
    r"""
    [ \t\r\n]*
    (?:
      (?P<str>"(?:[^"\\]|\\.)*")
    | (?P<punct>[{}\[\]:,])
    | (?P<atom>-?Infinity|NaN|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null)
    )
""",
    re.VERBOSE,
)
_TRAILING = re.compile(r"[ \t\r\n]*")


class Unexpected(Exception):
    """The text is not laid out the way the editor assumes: re-serialise instead."""


# Named tuples, not dataclasses: a config has a node and an item per value, built for every file linted,
# and a named tuple is built several times faster while being just as immutable.
class Node(NamedTuple):
    start: int
    end: int  # exclusive
    items: tuple[Item, ...] | None  # None for a scalar
    is_object: bool = False


class Item(NamedTuple):
    key: str | None  # None in an array
    start: int  # the key's opening quote in an object, the element's first character in an array
    key_end: int
    value: Node


@dataclass(kw_only=True)
class _Open:
    """A container still being read; mutable because its members arrive one at a time."""

    start: int
    is_object: bool
    items: list[Item] = field(default_factory=list)
    key: str | None = None
    key_start: int = 0
    key_end: int = 0
    expect_key: bool = False


def _key(token: str) -> str:
    if "\\" not in token:
        # json.loads accepted the text, so a key without escapes holds no raw control character either
        return token[1:-1]
    try:
        key: str = json.loads(token)
    except ValueError:  # a raw control character: a text json refused, laid out as no tree can be
        raise Unexpected from None
    return key


def tree(text: str) -> Node:
    """Spans of every value in a text json.loads accepted. Iterative, so nesting depth is no risk."""
    stack: list[_Open] = []
    roots: list[Node] = []
    pos = 0
    top: _Open | None = None

    def attach(node: Node) -> None:
        if top is None:
            roots.append(node)
        elif not top.is_object:
            top.items.append(Item(None, node.start, node.start, node))
        elif top.key is None:
            raise Unexpected
        else:
            top.items.append(Item(top.key, top.key_start, top.key_end, node))
            top.key = None

    for match in TOKEN.finditer(text):
        if match.start() != pos:  # finditer skips what no group matches; nothing may be skipped
            raise Unexpected
        pos = match.end()
        kind = match.lastgroup
        if kind == "punct":
            token = text[pos - 1]
            if token == ",":
                if top is not None:
                    top.expect_key = top.is_object
            elif token == "{" or token == "[":
                top = _Open(start=pos - 1, is_object=token == "{", expect_key=token == "{")
                stack.append(top)
            elif token != ":":  # } or ]
                if top is None:
                    raise Unexpected
                done = stack.pop()
                top = stack[-1] if stack else None
                attach(Node(done.start, pos, tuple(done.items), done.is_object))
        else:
            start = match.start(kind or 0)  # every alternative is a named group: kind is never None here
            if top is not None and top.expect_key and kind == "str":
                top.key, top.key_start, top.key_end = _key(text[start:pos]), start, pos
                top.expect_key = False
            else:
                attach(Node(start, pos, None))
    trailing = _TRAILING.match(text, pos)
    if trailing is None or trailing.end() != len(text) or stack or len(roots) != 1:
        raise Unexpected
    return roots[0]


def _non_finite(token: str) -> bool:
    if token in ("NaN", "Infinity", "-Infinity"):
        return True
    # Only a float literal can overflow (json reads 1e400 as inf); an integer of any length stays an int.
    is_float = any(c in token for c in ".eE")
    return is_float and token[0] in "-0123456789" and not math.isfinite(float(token))


@dataclass(frozen=True)
class Scan:
    duplicates: tuple[tuple[str, tuple[int, int]], ...]  # (pointer of the repeated key, position of the first)
    constants: tuple[tuple[str, str], ...]  # (pointer, token) of each non-finite number


# The C decoder's pieces: a value skipped by `find` is read at C speed, never tokenised in Python.
# (value, end) of the value at an offset, and (string, end) of a string's body; typeshed omits both.
_SCAN_ONCE: Callable[[str, int], tuple[Any, int]] = json.decoder.JSONDecoder().scan_once  # type: ignore[attr-defined]
_SCANSTRING: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


def _ws(text: str, pos: int) -> int:
    """The offset of the first non-whitespace character from `pos` on."""
    return _TRAILING.match(text, pos).end()  # type: ignore[union-attr]  # `*` matches everywhere


def find(text: str, tokens: list[str]) -> tuple[int, int] | None:
    """`Positions(text).of(tokens)` without building the tree: walks down the pointer, reading each value it
    steps over with the C decoder, so a lookup costs a fraction of a tree (a file's findings are a handful of
    lookups). Raises Unexpected where the text is not laid out as assumed: use `Positions` then."""
    try:
        start = _find(text, tokens)
    except (ValueError, IndexError, StopIteration, RecursionError):  # json accepted the text: should not happen
        raise Unexpected from None
    if start is None:
        return None
    if start < 0:
        return (1, 1)
    line = text.count("\n", 0, start) + 1
    return line, start - text.rfind("\n", 0, start)


def _find(text: str, tokens: list[str]) -> int | None:
    """The offset `Positions.of` reports for `tokens` (-1: the whole document), None where there is none."""
    pos = _ws(text, 0)
    start = -1
    for token in tokens:
        opening = text[pos]
        if opening == "{":
            found = None
            pos = _ws(text, pos + 1)
            if text[pos] == "}":
                return None
            while True:
                if text[pos] != '"':
                    raise Unexpected
                key_start = pos
                key, pos = _SCANSTRING(text, pos + 1)
                pos = _ws(text, pos)
                if text[pos] != ":":
                    raise Unexpected
                value_start = pos = _ws(text, pos + 1)
                _, pos = _SCAN_ONCE(text, pos)
                if key == token:
                    found = (key_start, value_start)  # the last copy of a duplicated key, as json.load keeps
                pos = _ws(text, pos)
                if text[pos] == "}":
                    break
                if text[pos] != ",":
                    raise Unexpected
                pos = _ws(text, pos + 1)
            if found is None:
                return None
            start, pos = found
        elif opening == "[":
            # An index as RFC 6901 spells it; one longer than the text has characters names no element.
            if not _INDEX.fullmatch(token) or len(token) > len(text):
                return None
            wanted = int(token)
            pos = _ws(text, pos + 1)
            if text[pos] == "]":
                return None
            n = 0
            while n < wanted:
                _, pos = _SCAN_ONCE(text, pos)
                pos = _ws(text, pos)
                if text[pos] == "]":
                    return None
                if text[pos] != ",":
                    raise Unexpected
                pos = _ws(text, pos + 1)
                n += 1
            start = pos
        else:
            return None  # a scalar has no members
    return start


class Positions:
    """Line and column of any member key or array element of an already-valid JSON text.

    The tree is built once; each lookup walks down its pointer, so a file with a few findings costs one
    pass however deep it nests (no pointer is built for nodes nobody asks about)."""

    def __init__(self, text: str) -> None:
        self.root = tree(text)
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def pos(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def of(self, tokens: list[str]) -> tuple[int, int] | None:
        """Where the value at these (unescaped) reference tokens starts: its key in an object. json.load
        keeps the last copy of a duplicated key, so that is the one followed."""
        node, start = self.root, None
        for token in tokens:
            item = _child(node, token)
            if item is None:
                return None
            node, start = item.value, item.start
        return (1, 1) if start is None else self.pos(start)


def _child(node: Node, token: str) -> Item | None:
    items = node.items
    if not items:
        return None
    if node.is_object:
        for item in reversed(items):
            if item.key == token:
                return item
        return None
    n = index(token, len(items))
    return None if n is None else items[n]


# A path is a chain of (parent chain, token): pointers are spelled out only for what is reported.
_Path = tuple[Any, str] | None


def _spell(path: _Path) -> str:
    tokens: list[str] = []
    while path is not None:
        path, token = path
        tokens.append(token)
    return "".join("/" + escape(t) for t in reversed(tokens))


def scan(text: str) -> Scan:
    """The duplicated keys and the non-finite numbers of an already-valid JSON text, in file order.
    Linear in the text: nesting depth costs nothing extra."""
    positions = Positions(text)
    duplicates: list[tuple[str, tuple[int, int]]] = []
    constants: list[tuple[str, str]] = []
    todo: list[tuple[_Path, Node]] = [(None, positions.root)]
    while todo:  # preorder, children in document order
        path, node = todo.pop()
        if node.items is None:
            token = text[node.start : node.end]
            if _non_finite(token):
                constants.append((_spell(path), token))
            continue
        seen: dict[str, int] = {}
        children: list[tuple[_Path, Node]] = []
        for position, item in enumerate(node.items):
            child: _Path = (path, item.key if item.key is not None else str(position))
            if item.key is not None:
                if item.key in seen:
                    duplicates.append((_spell(child), positions.pos(seen[item.key])))
                else:
                    seen[item.key] = item.start
            children.append((child, item.value))
        todo.extend(reversed(children))
    return Scan(tuple(duplicates), tuple(constants))

"""bytes -> Document: the data plus what `json.load` hides, and pointer -> (line, column).

Parsing is done by the C json decoder (fast); positions are only computed when something has to be
located, by walking down the pointer with the same decoder, so a clean file never pays for them.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from dflash_cfg.jsondoc.pointer import last, parent, split
from dflash_cfg.jsondoc.spans import Positions, Unexpected, find, scan
from dflash_cfg.model import ByteEdit

# A real drafter config is ~2 KB; anything this large is not one, and reading it whole would be
# the only way a hostile file could make the tool slow or exhaust memory.
MAX_BYTES = 16 * 1024 * 1024

_UTF8_BOM = b"\xef\xbb\xbf"
_OTHER_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32-LE",
    b"\x00\x00\xfe\xff": "UTF-32-BE",
    b"\xff\xfe": "UTF-16-LE",
    b"\xfe\xff": "UTF-16-BE",
}


Problem = Literal[
    "too-large",  # over MAX_BYTES: not parsed
    "utf8-bom",  # a UTF-8 byte-order mark (stripped before parsing)
    "other-bom",  # UTF-16/32: detail is the encoding
    "not-utf8",  # detail: "byte 0x.. at offset N (reason)"
    "empty",
    "whitespace",  # only whitespace
    "truncated",  # detail: the decoder's message with its line and column
    "syntax",  # detail: likewise
    "too-deep",
    "bad-literal",  # detail: why Python refuses it (e.g. an integer over the digit limit)
    "duplicate-key",  # detail: the key; first: where its first copy is
    "non-finite",  # detail: the token (NaN, Infinity, 1e400)
    "not-an-object",  # detail: the JSON type of the top level
]


@dataclass(frozen=True, kw_only=True)
class ParseProblem:
    """Something `json.load` hides or refuses, found while parsing: what, and where (a pointer, and a
    line/column when the decoder knows one the pointer cannot give)."""

    what: Problem
    pointer: str = ""
    at: tuple[int, int] | None = None
    detail: str = ""
    first: tuple[int, int] | None = None  # duplicate-key: the position of the first copy
    edits: tuple[ByteEdit, ...] = ()  # a mechanical repair below JSON (strip the BOM)


def git_blob_sha1(data: bytes) -> str:
    """`git hash-object --no-filters`: the Hub's blob id of a non-LFS file, so identity with upstream
    is provable without downloading (huggingface_hub.utils.sha.git_hash computes the same)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


_WALKS = 16  # lookups of one document that walk down their pointer before the tree is built
_WALK_CHARS = 1 << 16  # a larger text builds the tree at once


@dataclass(frozen=True, kw_only=True)
class Document:
    raw: bytes
    text: str | None
    data: Any  # None when the file could not be parsed (and also for a literal `null`)
    parsed: bool
    problems: tuple[ParseProblem, ...] = ()

    def locate(self, ptr: str) -> tuple[int, int] | None:
        """Line and column of the member key (or array element) at `ptr`.

        A pointer to something the file lacks resolves to its nearest existing ancestor, so a
        finding about a missing field still lands on a real line.
        """
        if self.text is None:
            return None
        while ptr:
            try:
                tokens = split(ptr)
            except ValueError:  # not a pointer this file can have
                tokens = None
            if tokens is not None:
                try:
                    found = find(self.text, tokens) if self._walk() else self._tree(tokens)
                except Unexpected:  # laid out as the walk does not assume: the tree says it, or nothing does
                    positions = self._positions
                    if positions is None:  # a text json refused: only the whole document has a place
                        break
                    found = positions.of(tokens)
                if found is not None:
                    return found
            ptr = parent(ptr)
        return (1, 1)

    def _walk(self) -> bool:
        """Whether this lookup walks down its pointer: a walk reads up to the whole text, so it pays only for a
        handful of lookups in a small file; past that, the tree is built once and every lookup follows it."""
        if "_positions" in self.__dict__ or self.text is None or len(self.text) > _WALK_CHARS:
            return False
        walks = self.__dict__.get("_walks", 0)
        self.__dict__["_walks"] = walks + 1  # a count, not a value of the document: frozen stays frozen
        return walks < _WALKS

    def _tree(self, tokens: list[str]) -> tuple[int, int] | None:
        positions = self._positions
        if positions is None:
            raise Unexpected
        return positions.of(tokens)

    @cached_property
    def _positions(self) -> Positions | None:
        assert self.text is not None
        try:
            return Positions(self.text)
        except Unexpected:
            return None


def parse(raw: bytes) -> Document:
    if len(raw) > MAX_BYTES:
        return _fail(raw, None, ParseProblem(what="too-large", at=(1, 1)))
    problems: list[ParseProblem] = []
    body = raw
    if raw.startswith(_UTF8_BOM):
        body = raw[len(_UTF8_BOM) :]
        problems.append(ParseProblem(what="utf8-bom", edits=(ByteEdit(0, len(_UTF8_BOM)),)))
    else:
        for bom, name in _OTHER_BOMS.items():
            if raw.startswith(bom):
                return _fail(raw, None, ParseProblem(what="other-bom", at=(1, 1), detail=name))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = body.rfind(b"\n", 0, exc.start) + 1
        line = body.count(b"\n", 0, exc.start) + 1
        # Columns count characters everywhere else, so decode the line's valid prefix to count them.
        col = len(body[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        offset = exc.start + len(raw) - len(body)  # in the file, BOM included
        detail = f"byte 0x{body[exc.start]:02x} at offset {offset} ({exc.reason})"
        return _fail(raw, None, ParseProblem(what="not-utf8", at=(line, col), detail=detail))
    if not text.strip():
        return _fail(raw, text, ParseProblem(what="empty" if not text else "whitespace", at=(1, 1)), problems)

    flags = _Flags()
    try:
        data = json.loads(text, object_pairs_hook=flags.pairs, parse_constant=flags.constant, parse_float=flags.float_)
    except json.JSONDecodeError as exc:
        # A string still open at the end of the file is a cut-off file too (strings cannot span lines).
        open_string = exc.msg.startswith("Unterminated string") and "\n" not in text[exc.pos :].rstrip()
        what: Problem = "truncated" if exc.pos >= len(text.rstrip()) or open_string else "syntax"
        detail = f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
        return _fail(raw, text, ParseProblem(what=what, at=(exc.lineno, exc.colno), detail=detail), problems)
    except RecursionError:
        return _fail(raw, text, ParseProblem(what="too-deep", at=(1, 1)), problems)
    except ValueError as exc:  # e.g. an integer literal longer than Python's int max str digits
        return _fail(raw, text, ParseProblem(what="bad-literal", at=(1, 1), detail=str(exc).splitlines()[0]), problems)

    if flags.duplicates or flags.non_finite:
        found = scan(text)
        for ptr, first in found.duplicates:
            problems.append(ParseProblem(what="duplicate-key", pointer=ptr, detail=last(ptr), first=first))
        for ptr, token in found.constants:
            problems.append(ParseProblem(what="non-finite", pointer=ptr, detail=token))
    if not isinstance(data, dict):
        problems.append(ParseProblem(what="not-an-object", detail=json_type(data)))
    return Document(raw=raw, text=text, data=data, parsed=True, problems=tuple(problems))


def _fail(raw: bytes, text: str | None, problem: ParseProblem, before: list[ParseProblem] | None = None) -> Document:
    return Document(raw=raw, text=text, data=None, parsed=False, problems=(*(before or ()), problem))


def json_type(value: Any) -> str:
    """JSON type name with its article, so messages speak the language of the file, not of Python."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


class _Flags:
    """Decoder hooks that only note that the slow scanner is needed."""

    def __init__(self) -> None:
        self.duplicates = False
        self.non_finite = False

    def pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            self.duplicates = True
        return out

    def constant(self, token: str) -> float:
        self.non_finite = True
        return float(token)

    def float_(self, token: str) -> float:
        value = float(token)
        if not math.isfinite(value):  # 1e400 overflows to inf: as unusable as a literal Infinity
            self.non_finite = True
        return value

"""bytes -> Document: the data plus what `json.load` hides, and pointer -> (line, column).

Parsing is done by the C json decoder (fast); positions are only computed, by a small regex
scanner, when something has to be located, so a clean file never pays for them.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from dflash_cfg.model import Fix, Problem

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


@dataclass(frozen=True)
class Issue:
    """A file-level problem found while parsing; `rule` is the catalogue id that reports it."""

    rule: str
    problem: Problem
    # Known position (from the decoder) for problems whose pointer cannot locate them.
    line: int | None = None
    column: int | None = None


def git_blob_sha1(data: bytes) -> str:
    """`git hash-object --no-filters`: the Hub's blob id of a non-LFS file, so identity with upstream
    is provable without downloading (huggingface_hub.utils.sha.git_hash computes the same)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def pointer(*parts: str | int) -> str:
    return "".join("/" + escape(str(p)) for p in parts)


def parent(ptr: str) -> str:
    return ptr[: ptr.rfind("/")] if ptr else ""


@dataclass(frozen=True)
class Document:
    raw: bytes
    text: str | None
    data: Any  # None when the file could not be parsed (and also for a literal `null`)
    parsed: bool
    issues: tuple[Issue, ...] = ()

    def locate(self, ptr: str) -> tuple[int, int] | None:
        """Line and column of the member key (or array element) at `ptr`.

        A pointer to something the file lacks resolves to its nearest existing ancestor, so a
        finding about a missing field still lands on a real line.
        """
        if self.text is None:
            return None
        positions = self._positions
        while True:
            if ptr in positions:
                return positions[ptr]
            if not ptr:
                return (1, 1)
            ptr = parent(ptr)

    @cached_property
    def _positions(self) -> dict[str, tuple[int, int]]:
        assert self.text is not None
        return scan(self.text).positions


def parse(raw: bytes) -> Document:
    if len(raw) > MAX_BYTES:
        return _fail(
            raw, None, "DF001", f"file is over {MAX_BYTES} bytes; a drafter config.json is a few KB (not parsed)", 1, 1
        )
    issues: list[Issue] = []
    body = raw
    if raw.startswith(_UTF8_BOM):
        body = raw[len(_UTF8_BOM) :]
        issues.append(
            Issue(
                "DF003",
                Problem(
                    "",
                    "file starts with a UTF-8 byte-order mark: Python's json.loads and transformers reject it "
                    "('Unexpected UTF-8 BOM'), so engines fail to load the config",
                    Fix("strip the UTF-8 byte-order mark"),
                ),
            )
        )
    else:
        for bom, name in _OTHER_BOMS.items():
            if raw.startswith(bom):
                return _fail(
                    raw,
                    None,
                    "DF003",
                    f"file is {name} (byte-order mark found); config.json must be "
                    "UTF-8, re-save it as UTF-8 without a BOM",
                    1,
                    1,
                )
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = body.rfind(b"\n", 0, exc.start) + 1
        line = body.count(b"\n", 0, exc.start) + 1
        # Columns count characters everywhere else, so decode the line's valid prefix to count them.
        col = len(body[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        offset = exc.start + len(raw) - len(body)  # in the file, BOM included
        return _fail(
            raw,
            None,
            "DF003",
            f"not valid UTF-8: byte 0x{body[exc.start]:02x} at offset {offset} "
            f"({exc.reason}); re-save the file as UTF-8",
            line,
            col,
        )
    if not text.strip():
        return _fail(raw, text, "DF001", "file is empty" if not text else "file holds only whitespace", 1, 1, issues)

    flags = _Flags()
    try:
        data = json.loads(text, object_pairs_hook=flags.pairs, parse_constant=flags.constant, parse_float=flags.float_)
    except json.JSONDecodeError as exc:
        # A string still open at the end of the file is a cut-off file too (strings cannot span lines).
        open_string = exc.msg.startswith("Unterminated string") and "\n" not in text[exc.pos :].rstrip()
        what = "file is truncated" if exc.pos >= len(text.rstrip()) or open_string else "invalid JSON"
        return _fail(
            raw,
            text,
            "DF001",
            f"{what}: {exc.msg} (line {exc.lineno}, column {exc.colno})",
            exc.lineno,
            exc.colno,
            issues,
        )
    except RecursionError:
        return _fail(raw, text, "DF001", "invalid JSON: nesting too deep to parse", 1, 1, issues)
    except ValueError as exc:  # e.g. an integer literal longer than Python's int max str digits
        return _fail(raw, text, "DF001", f"invalid JSON: {exc}".splitlines()[0], 1, 1, issues)

    if flags.duplicates or flags.non_finite:
        found = scan(text)
        for ptr, first in found.duplicates:
            key = ptr.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
            issues.append(
                Issue(
                    "DF002",
                    Problem(
                        ptr,
                        f"duplicate key {key!r} (first at line {first[0]}): json.load and transformers silently "
                        "keep this last value",
                    ),
                )
            )
        for ptr, token in found.constants:
            issues.append(
                Issue(
                    "DF004",
                    Problem(
                        ptr,
                        f"non-finite number {token}: not JSON; Python reads it as a float, other parsers reject "
                        "the file",
                    ),
                )
            )
    if not isinstance(data, dict):
        issues.append(Issue("DF005", Problem("", f"top level is {json_type(data)}, not an object")))
    return Document(raw, text, data, True, tuple(issues))


def _fail(
    raw: bytes,
    text: str | None,
    rule: str,
    message: str,
    line: int | None = None,
    column: int | None = None,
    issues: list[Issue] | None = None,
) -> Document:
    found = [*(issues or ()), Issue(rule, Problem("", message), line, column)]
    return Document(raw, text, None, False, tuple(found))


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


TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<punct>[{}\[\]:,])
  | (?P<atom>-?Infinity|NaN|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null)
""",
    re.VERBOSE,
)


def _non_finite(token: str) -> bool:
    if token in ("NaN", "Infinity", "-Infinity"):
        return True
    # Only a float literal can overflow (json reads 1e400 as inf); an integer of any length stays an int.
    is_float = any(c in token for c in ".eE")
    return is_float and token[0] in "-0123456789" and not math.isfinite(float(token))


@dataclass(frozen=True)
class Scan:
    positions: dict[str, tuple[int, int]]
    duplicates: tuple[tuple[str, tuple[int, int]], ...]  # (pointer of the repeated key, position of the first)
    constants: tuple[tuple[str, str], ...]


def scan(text: str) -> Scan:
    """Walk an already-valid JSON text and record where every member and element starts."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def pos(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    positions: dict[str, tuple[int, int]] = {"": (1, 1)}
    duplicates: list[tuple[str, tuple[int, int]]] = []
    constants: list[tuple[str, str]] = []
    # Each frame: [pointer of the container, is_object, next array index, pending key, seen keys]
    stack: list[list[Any]] = []
    current = ""  # pointer of the value about to be read

    def value_started(offset: int) -> None:
        nonlocal current
        if stack and not stack[-1][1]:
            frame = stack[-1]
            current = frame[0] + "/" + str(frame[2])
            frame[2] += 1
            positions[current] = pos(offset)  # the last copy of a duplicated member is the one kept

    expecting_key = False
    for match in TOKEN.finditer(text):
        kind = match.lastgroup
        token = match.group()
        if kind == "ws":
            continue
        if kind == "str" and expecting_key:
            key = json.loads(token)
            frame = stack[-1]
            current = frame[0] + "/" + escape(key)
            where = pos(match.start())
            if key in frame[4]:
                duplicates.append((current, frame[4][key]))
            else:
                frame[4][key] = where
            positions[current] = where  # json.load keeps the last value, so that is where it is
            expecting_key = False
            continue
        if kind == "punct":
            if token in "{[":
                value_started(match.start())
                stack.append([current, token == "{", 0, None, {}])
                expecting_key = token == "{"
            elif token in "}]":
                stack.pop()
                expecting_key = False
            elif token == ",":
                expecting_key = bool(stack and stack[-1][1])
            continue
        value_started(match.start())
        if kind == "atom" and _non_finite(token):
            constants.append((current, token))
    return Scan(positions, tuple(duplicates), tuple(constants))

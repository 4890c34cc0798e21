"""RFC 6901 JSON Pointers: the one place that escapes and unescapes reference tokens."""

from __future__ import annotations

import re
from collections.abc import Sequence

_BAD_ESCAPE = re.compile(r"~(?![01])")
INDEX = re.compile(r"0|[1-9][0-9]*")  # RFC 6901: no sign, no leading zeros


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    # ~1 first: "~01" is the token "~1", not "/".
    return token.replace("~1", "/").replace("~0", "~")


def pointer(*parts: str | int) -> str:
    """The pointer to the value reached through `parts` (keys and array indices)."""
    return "".join("/" + escape(str(p)) for p in parts)


def from_tokens(tokens: Sequence[str]) -> str:
    return pointer(*tokens)


def parent(ptr: str) -> str:
    return ptr[: ptr.rfind("/")] if ptr else ""


def last(ptr: str) -> str:
    """The unescaped last reference token ("" for the whole document)."""
    return unescape(ptr.rsplit("/", 1)[-1]) if ptr else ""


def split(ptr: str) -> list[str]:
    """Pointer -> unescaped reference tokens; ValueError says what is wrong with it."""
    if not ptr:
        return []
    if not ptr.startswith("/"):
        raise ValueError("a JSON pointer must be empty or start with '/'")
    if _BAD_ESCAPE.search(ptr):
        raise ValueError("'~' must be followed by 0 or 1 in a JSON pointer")
    return [unescape(t) for t in ptr[1:].split("/")]


def index(token: str, size: int) -> int | None:
    """The array index `token` names if it is below `size`; long digit strings never convert."""
    if not INDEX.fullmatch(token) or len(token) > len(str(size)):
        return None
    n = int(token)
    return n if n < size else None

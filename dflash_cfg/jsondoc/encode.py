"""JSON text out: `json.dumps` with non-ASCII kept, and what must not travel raw escaped.

JSON lets a string hold `"\\ud800"`, which Python decodes to a lone surrogate that no UTF-8 encoder
accepts; written back raw, it would fail the write or the output. As a `\\uXXXX` escape it stays the
same JSON value (an escape can only occur inside a string, where it means the same character).

`dumps` is for files (a config's edited text, the lock): only lone surrogates are escaped, so an edit
writes a value the way the file already spells its neighbours. `dumps_printable` is for reports printed
to a terminal or a CI log: json.dumps escapes C0 controls but writes C1 controls (U+0080-U+009F) raw, and
a terminal acts on some of them (U+009B is CSI), so those are escaped too, with U+2028/U+2029, which end
a JavaScript string literal. A report is strict JSON too: a float JSON cannot hold (NaN, Infinity, which
json.dumps writes as bare words that strict parsers refuse; a config.json may hold them, Python reads them)
is written as its name in a string; `dumps` keeps them, as the file it edits spells them.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_UNPRINTABLE = re.compile("[\x80-\x9f\u2028\u2029\ud800-\udfff]")


def dumps(value: Any, **options: Any) -> str:
    return _escaped(_SURROGATE, json.dumps(value, ensure_ascii=False, **options))


def dumps_printable(value: Any, **options: Any) -> str:
    return _escaped(_UNPRINTABLE, json.dumps(strict(value), ensure_ascii=False, allow_nan=False, **options))


def strict(value: Any) -> Any:
    """`value` with each non-finite float as a string ("NaN", "Infinity", "-Infinity"): what a strict JSON
    document can hold."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    return value


def _escaped(pattern: re.Pattern[str], text: str) -> str:
    return pattern.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if pattern.search(text) else text

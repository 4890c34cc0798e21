"""JSON text out: `json.dumps` with non-ASCII kept, and lone surrogates escaped.

JSON lets a string hold `"\\ud800"`, which Python decodes to a lone surrogate that no UTF-8 encoder
accepts; written back raw, it would fail the write or the output. As a `\\uXXXX` escape it stays
the same JSON value.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: Any, **options: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, **options)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _SURROGATE.search(text) else text

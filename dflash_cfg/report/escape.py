"""Text that is safe to print: a config's keys and values, file names and command lines are untrusted.

`printable` escapes what a terminal would act on (C0 and C1 control characters, DEL: an OSC sequence
in a JSON key can retitle a terminal or worse) and what cannot be encoded (lone surrogates, which JSON
allows as `\\ud800`). JSON outputs use jsondoc.encode.dumps_printable, which escapes C0 and C1 controls and lone
surrogates as `\\uXXXX`.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str, keep: str = "") -> str:
    """`text` with every control character except those in `keep` (e.g. "\\n\\t") shown as an escape."""
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else _escape(m), text)

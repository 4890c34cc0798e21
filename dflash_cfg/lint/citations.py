"""Citations of engine code that a machine resolves: `PACKAGE/PATH.py:QUALNAME`. Pure.

A rule, a `lint.engines` row, a comment or a docs page cites engine code by the file (relative to the
site-packages it is installed in) and the qualified name of a function, class, method or module-level (or
class-level) name in it, e.g. `vllm/config/speculative.py:SpeculativeConfig._verify_args`. Never by line: lines
move with every release, names rarely, and a name that is gone is an error someone must look at.

The engine suite resolves every citation of the repository in the pinned venv (tests/engines/citations.py) and
fails on one that names nothing; it also writes the line span of each in the pinned release to
`cited_lines.LINES`, from which the docs render line numbers (`with_lines`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

# The packages whose code is cited: the engines and the library they load config.json through.
PACKAGES = ("vllm", "sglang", "speculators", "transformers")

# A path under one of them, not the tail of a longer path or name.
_PACKAGE = r"(?<![\w/.])(?:" + "|".join(PACKAGES) + r")/"
CITATION = re.compile(
    r"(?P<path>" + _PACKAGE + r"(?:[A-Za-z_][\w]*/)*[A-Za-z_]\w*\.py):(?P<qualname>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)"
)
# A citation by line (`PACKAGE/PATH.py:LINE`): what this module replaces; a test finds any left.
BY_LINE = re.compile(_PACKAGE + r"(?:[\w]+/)*\w+\.py:[0-9]+")


def citations(text: str) -> Iterator[str]:
    """Every citation in `text`, as written (`path:qualname`), in order."""
    for m in CITATION.finditer(text):
        yield f"{m.group('path')}:{m.group('qualname')}"


def with_lines(text: str, lines: Mapping[str, tuple[int, int]], version: Mapping[str, str]) -> str:
    """`text` with each resolved citation followed by its lines in the pinned release, as a reader of the docs
    wants them: `PACKAGE/PATH.py:QUALNAME` (lines 10-42 in VERSION), VERSION the release of PACKAGE the lines
    were read in. An unresolved citation is left as written (the engine suite fails on it)."""

    def render(m: re.Match[str]) -> str:
        cited = f"{m.group('path')}:{m.group('qualname')}"
        span = lines.get(cited)
        if span is None:
            return m.group(0)
        start, end = span
        where = f"line {start}" if start == end else f"lines {start}-{end}"
        release = version.get(m.group("path").split("/", 1)[0])
        # After a closing backtick, so that Markdown shows the citation as code and the lines as prose.
        return f"{m.group(0)} ({where}{f' in {release}' if release else ''})"

    return _CITED_IN_TEXT.sub(render, text)


_CITED_IN_TEXT = re.compile(CITATION.pattern + "`?")

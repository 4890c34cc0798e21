"""Citations of engine code that a machine resolves: `PACKAGE/PATH.py:QUALNAME[@RELEASE]`. Pure.

A rule, a `lint.engines` row, a comment or a docs page cites engine code by the file (relative to the
site-packages it is installed in) and the qualified name of a function, class, method or module-level (or
class-level) name in it, e.g. `vllm/config/speculative.py:SpeculativeConfig._verify_args`. Never by line: lines
move with every release, names rarely, and a name that is gone is an error someone must look at.

A citation names the pinned release of its package (pinned.PINNED). One tagged with a release,
`vllm/config/vllm.py:VllmConfig.use_v2_model_runner@0.33.0`, names that release's code: for text about a release
the suite also runs (pinned.ALSO_CHECKED) whose code the pinned one no longer has.

The engine suite resolves every citation of the repository in the venv that holds its release
(tools/engines/citations.py: the untagged ones in the pinned venv, the tagged ones in their release's) and fails
on one that names nothing or is tagged with a release the suite does not run; it also writes the line span of each
to `cited_lines.LINES`, from which the docs render line numbers (`with_lines`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from dflash_cfg.model.engines import Engine, is_engine

# The packages whose code is cited: the engines and the library they load config.json through.
PACKAGES: tuple[Engine, ...] = ("vllm", "sglang", "speculators", "transformers")

# A path under one of them, not the tail of a longer path or name.
_PACKAGE = r"(?<![\w/.])(?:" + "|".join(PACKAGES) + r")/"
CITATION = re.compile(
    r"(?P<path>" + _PACKAGE + r"(?:[A-Za-z_][\w]*/)*[A-Za-z_]\w*\.py):(?P<qualname>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)"
    # A release tag, digits and dots only, so that a sentence's closing period is not taken for part of it.
    r"(?:@(?P<release>[0-9]+(?:\.[0-9]+)*))?"
)
# A citation by line (`PACKAGE/PATH.py:LINE`): what this module replaces; a test finds any left.
BY_LINE = re.compile(_PACKAGE + r"(?:[\w]+/)*\w+\.py:[0-9]+")


def citations(text: str) -> Iterator[str]:
    """Every citation in `text`, as written (`path:qualname` or `path:qualname@release`), in order."""
    for m in CITATION.finditer(text):
        yield m.group(0)


@dataclass(frozen=True)
class Cited:
    """A citation taken apart: `package` is the distribution whose release it names (`release`, or the pinned one
    when None)."""

    path: str
    qualname: str
    release: str | None

    @property
    def package(self) -> Engine:
        # CITATION admits a path under PACKAGES only.
        package = self.path.split("/", 1)[0]
        assert is_engine(package), package
        return package


def parse(cited: str) -> Cited:
    """`PACKAGE/x.py:A.b@0.33.0` -> Cited("PACKAGE/x.py", "A.b", "0.33.0"). Raises ValueError for no citation."""
    m = CITATION.fullmatch(cited)
    if m is None:
        raise ValueError(f"not a citation: {cited!r}")
    return Cited(m.group("path"), m.group("qualname"), m.group("release"))


def with_lines(text: str, lines: Mapping[str, tuple[int, int]], version: Mapping[str, str]) -> str:
    """`text` with each resolved citation followed by its lines, as a reader of the docs wants them:
    `PACKAGE/PATH.py:QUALNAME` (lines 10-42 in VERSION), VERSION the release of PACKAGE the lines were read in (the
    pinned one, `version`), or the citation's own tag (`...@0.33.0` (lines 10-42 in 0.33.0)). An unresolved
    citation is left as written (the engine suite fails on it)."""

    def render(m: re.Match[str]) -> str:
        cited = m.group(0).removesuffix("`")
        span = lines.get(cited)
        if span is None:
            return m.group(0)
        start, end = span
        where = f"line {start}" if start == end else f"lines {start}-{end}"
        release = m.group("release") or version.get(m.group("path").split("/", 1)[0])
        # After a closing backtick, so that Markdown shows the citation as code and the lines as prose.
        return f"{m.group(0)} ({where}{f' in {release}' if release else ''})"

    return _CITED_IN_TEXT.sub(render, text)


_CITED_IN_TEXT = re.compile(CITATION.pattern + "`?")

"""The engine releases the engine suite runs as its oracle: written once, here, and nowhere else.

`tests/engines/requirements.lock.txt` is what gets installed; a fast test holds this table to it, and
`./dev engines --upgrade NAME==VERSION` rewrites both. Everything that names a pinned version derives from `PINNED`:
the adapters' "checked" verdict, the `lint.engines` sources, the rules' texts and the generated docs (through the
placeholders `expand` fills in), and the tests' expectations. `ALSO_CHECKED` names the releases before it that the
suite still runs on demand (`./dev test --lock NAME-VERSION`, each with its lock under tests/engines/releases/).

The standard library and the model only (the engines' names in prose, model.NAMES): every part of the package that
may import the model may read it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from dflash_cfg.model import Engine, display, is_engine

# Distribution name -> the release the suite runs. transformers is the one pinned beside the engines (the
# library they load config.json through inside their venv), not the one dflash-cfg's own DF3xx view uses.
PINNED: Mapping[Engine, str] = MappingProxyType(
    {"vllm": "0.34.0", "sglang": "0.5.23", "speculators": "0.9.0", "transformers": "5.19.0"}
)

# Distribution name -> the other releases the engine suite holds the tool to: users run them for months after the
# pin moves on. Each has its lock, tests/engines/releases/NAME-VERSION.lock.txt, which differs from the default lock
# only in that distribution (a fast test holds it), and `./dev test --lock NAME-VERSION` runs the suite on it. An
# adapter's reading of one is as checked as one of the pinned release, and a citation of code that exists only there
# says so (`PATH.py:QUALNAME@VERSION`, lint/citations.py).
ALSO_CHECKED: Mapping[Engine, tuple[str, ...]] = MappingProxyType({"vllm": ("0.33.0",)})


def is_checked(dist: Engine, version: str | None) -> bool:
    """Whether the engine suite runs `version` of `dist`: the pinned release or one of `ALSO_CHECKED`."""
    return version is not None and (version == PINNED.get(dist) or version in ALSO_CHECKED.get(dist, ()))


def release(dist: str) -> str | None:
    """The pinned release of a distribution named from outside (a dist-info, a lock line): None for one not pinned."""
    return PINNED.get(dist) if is_engine(dist) else None


def named(dist: Engine) -> str:
    """`vLLM 0.34.0`: the pinned release as prose names it."""
    return display(dist, PINNED[dist])


# The placeholders a rule's docstring, a `lint.engines` row or a docs template writes for a pinned release:
# `{vLLM}` -> "vLLM 0.34.0". transformers has its own spelling, because `{transformers}` in the rule cases
# already means the transformers installed beside dflash-cfg.
PLACEHOLDERS: Mapping[str, Engine] = MappingProxyType(
    {"{vLLM}": "vllm", "{SGLang}": "sglang", "{speculators}": "speculators", "{engine-transformers}": "transformers"}
)
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS))


def expand(text: str) -> str:
    """`text` with every placeholder replaced by the pinned release it names; other braces are left alone."""
    return _PLACEHOLDER.sub(lambda m: named(PLACEHOLDERS[m.group(0)]), text)

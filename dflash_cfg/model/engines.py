"""Which engine: the one identity of an engine (`Engine`, with the subsets a launch starts and an adapter answers
for), its name in prose (`NAMES`), and the form of the releases a finding holds for (`requirement`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal, TypeGuard

# Every engine, port or library the tool speaks of, by its distribution (or program) name: the engines it runs
# (vLLM, SGLang), vLLM's speculators translator, transformers (which both engines load config.json through), and
# the ports the rules hold them against (MLX, the April z-lab reference).
Engine = Literal["vllm", "sglang", "speculators", "transformers", "mlx", "reference"]
# The engines a launch command starts (model.Launch.engine), as their programs are named.
Launched = Literal["vllm", "sglang"]
# The engines an adapter answers for (dflash_cfg/adapters/adapter_NAME.py).
Adapted = Literal["vllm", "sglang", "speculators"]

# How each is written in prose: the one table of display names (rules, reports, docs, lint.engines, pinned.named).
NAMES: Mapping[Engine, str] = MappingProxyType(
    {
        "vllm": "vLLM",
        "sglang": "SGLang",
        "speculators": "speculators",
        "transformers": "transformers",
        "mlx": "MLX",
        "reference": "the April z-lab reference",
    }
)


def is_engine(name: str) -> TypeGuard[Engine]:
    return name in NAMES


def display(engine: str, version: str | None = None) -> str:
    """How prose names an engine (`vllm` -> `vLLM`), with a release when one is given (`vLLM 0.34.0`). A name
    from outside (a metrics label, a requirement) that is no `Engine` is shown as it is."""
    name = NAMES[engine] if is_engine(engine) else engine
    return f"{name} {version}" if version else name


_REQUIREMENT = re.compile(r"([a-z0-9_.-]+)\s*(>=|<|==)?\s*(\S*)")


def requirement(text: str) -> tuple[str, str, str] | None:
    """`vllm>=0.34.0` -> ("vllm", ">=", "0.34.0"); `sglang` -> ("sglang", "", ""); None: not one. The form of
    `Problem.engines` (the releases a finding holds for): lint.releases writes and compares them, reports say them."""
    found = _REQUIREMENT.fullmatch(text)
    return (found.group(1), found.group(2) or "", found.group(3)) if found else None

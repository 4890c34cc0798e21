"""Which engine, and what the engines answered.

The one identity of an engine (`Engine`, with the subsets a launch starts and an adapter answers for) and its name
in prose (`NAMES`); the records an adapter answers (dflash_cfg/adapters/, run by sources.adapters, which parses
them); and what `engines` and preflight's engine step make of them (lint.engine_reads: what the file says, and
where an engine reads otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, TypeGuard

from dflash_cfg.model.findings import JSON

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


_RELEASE = re.compile(r"\s*v?(\d+(?:\.\d+)*)")


def release(version: str) -> tuple[int, ...] | None:
    """`0.34.0` -> (0, 34, 0); a pre-release or local build counts as its release (`0.34.0rc1`, `0.34.0+cpu`:
    the changes of a release land before its final tag). None: not a version."""
    found = _RELEASE.match(version)
    return tuple(int(p) for p in found.group(1).split(".")) if found else None


def release_order(version: str) -> tuple[int, ...]:
    """What releases compare by: the numbers without trailing zeros, so that 0.34 and 0.34.0 are one release
    and plain tuple order is release order (0.34 < 0.34.1, 0.9 < 0.10)."""
    parts = list(release(version) or ())
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


# How a requirement compares a release with its bound ("" : any release).
Operator = Literal["", ">=", "<", "=="]
_OPERATORS: tuple[Operator, ...] = (">=", "<", "==")
_SAID: Mapping[Operator, str] = MappingProxyType({">=": "{} {} and later", "<": "{} before {}", "==": "{} {}"})
_REQUIREMENT = re.compile(r"([a-z0-9_.-]+)\s*(>=|<|==)?\s*(\S*)")


@dataclass(frozen=True)
class Requirement:
    """The releases of one engine something holds for (`Problem.engines`): `vllm>=0.34.0`, `vllm<0.34.0`,
    `vllm==0.33.0`, or `sglang` (any release). Written in JSON reports as that text; parsed back only by `parse`,
    and refused when it is not one, so a malformed scope cannot silently apply to no engine."""

    engine: Engine
    op: Operator = ""
    version: str = ""

    def __post_init__(self) -> None:
        if not is_engine(self.engine):
            raise ValueError(f"not an engine: {self.engine!r} (one of {', '.join(NAMES)})")
        if bool(self.op) != bool(self.version) or (self.op and self.op not in _OPERATORS):
            raise ValueError(f"an engine requirement needs an operator and a release together: {self}")
        if self.version and release(self.version) is None:
            raise ValueError(f"not a release: {self.version!r} in {self}")

    def __str__(self) -> str:
        return f"{self.engine}{self.op}{self.version}"

    @classmethod
    def parse(cls, text: str) -> Requirement:
        """`vllm>=0.34.0` -> Requirement("vllm", ">=", "0.34.0"); ValueError, with the cause, for anything else."""
        found = _REQUIREMENT.fullmatch(text.strip())
        if found is None:
            raise ValueError(f"not an engine requirement: {text!r} (ENGINE, or ENGINE>=, < or == a release)")
        op = found.group(2) or ""
        return cls(found.group(1), op, found.group(3))  # type: ignore[arg-type]  # __post_init__ checks both

    def admits(self, engine: str, version: str | None) -> bool:
        """Whether `engine` at release `version` is one of these (None, or not a release: any may be the one)."""
        if engine != self.engine:
            return False
        if not self.op or version is None or release(version) is None:
            return True
        running, edge = release_order(version), release_order(self.version)
        return running >= edge if self.op == ">=" else running < edge if self.op == "<" else running == edge

    @property
    def said(self) -> str:
        """As prose says it: "vLLM 0.34.0 and later", "vLLM before 0.34.0", "SGLang"."""
        name = NAMES[self.engine]
        return _SAID[self.op].format(name, self.version) if self.op else name


# --- What an adapter answers (sources.adapters parses it) ------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """The engine's own code raised: the exception's class and message, and its frame ("PACKAGE/PATH.py:LINE")."""

    type: str
    message: str
    where: str | None


@dataclass(frozen=True, kw_only=True)
class Reads:
    """The values an engine runs the drafter with. Taps in the file's numbering, and in the engine's own where it
    differs; per-layer lists have one entry per draft layer. None: the engine does not read it, or the adapter
    could not tell (the record's stand_ins say which)."""

    target_layer_ids: tuple[int | float, ...] | None  # as the engine holds them: float taps stay floats
    engine_layer_ids: tuple[int | float, ...] | None
    mask_token_id: int | None
    num_draft_tokens: int | None
    block_size: int | None
    layer_types: tuple[str, ...] | None
    sliding_window: tuple[int | None, ...] | None
    causal: tuple[bool, ...] | bool | None
    rope: tuple[Mapping[str, JSON], ...] | None
    rope_theta: float | None
    attention_sink: bool | None
    logit_scalars: Mapping[str, JSON]
    fc_in_features: int | None
    vocab_size: int | None
    lm_head_size: int | None
    architecture: str | None
    extra: Mapping[str, JSON] = field(default_factory=dict)  # engine-specific values, e.g. SGLang's window_left

    def named(self) -> dict[str, object]:
        """Every read but `extra` by its name, in the order above: the keys an adapter writes them under."""
        return {
            "target_layer_ids": self.target_layer_ids,
            "engine_layer_ids": self.engine_layer_ids,
            "mask_token_id": self.mask_token_id,
            "num_draft_tokens": self.num_draft_tokens,
            "block_size": self.block_size,
            "layer_types": self.layer_types,
            "sliding_window": self.sliding_window,
            "causal": self.causal,
            "rope": self.rope,
            "rope_theta": self.rope_theta,
            "attention_sink": self.attention_sink,
            "logit_scalars": self.logit_scalars,
            "fc_in_features": self.fc_in_features,
            "vocab_size": self.vocab_size,
            "lm_head_size": self.lm_head_size,
            "architecture": self.architecture,
        }

    @property
    def windows(self) -> tuple[int, ...]:
        """The distinct windows the engine gives its sliding layers, in layer order."""
        seen: list[int] = []
        for window in self.sliding_window or ():
            if window is not None and window not in seen:
                seen.append(window)
        return tuple(seen)


@dataclass(frozen=True, kw_only=True)
class EngineRecord:
    engine: Adapted
    version: str | None
    python: str
    checked: bool
    refused: Refusal | None
    reads: Reads | None
    stand_ins: tuple[str, ...]
    failed: str | None  # the adapter could not answer: not the engine's verdict

    @property
    def label(self) -> str:
        """The engine as prose names it, with the release it reported (`vLLM 0.34.0`)."""
        return display(self.engine, self.version)

    @property
    def shortened_context(self) -> tuple[int, int] | None:
        """(served, without the drafter) when the engine serves a shorter max_model_len with the drafter than
        without it (the vLLM adapter's "max_model_len" read), else None."""
        lengths = self.reads.extra.get("max_model_len") if self.reads is not None else None
        if not isinstance(lengths, Mapping):
            return None
        served, alone = lengths.get("served"), lengths.get("target")
        if isinstance(served, int) and isinstance(alone, int) and served < alone:
            return served, alone
        return None


# --- What the file says and where an engine reads otherwise (lint.engine_reads makes them) --------------


def show_layers(kinds: Sequence[str] | None) -> str:
    """`S S S S F`: one letter a draft layer (S sliding, F full, else the kind's own name)."""
    if kinds is None:
        return "-"
    letters = {"sliding_attention": "S", "full_attention": "F"}
    return " ".join(letters.get(k, k) for k in kinds)


@dataclass(frozen=True, kw_only=True)
class FileSays:
    target_layer_ids: tuple[int, ...] | None
    mask_token_id: int | None
    layer_types: tuple[str, ...] | None
    sliding_window: int | None
    rope_theta: float | None
    block_size: int | None


@dataclass(frozen=True)
class Difference:
    field: str
    file: str  # as shown
    engine: str
    critical: bool


@dataclass(frozen=True)
class EngineCheck:
    """What preflight's engine step brings the rules (DF90x): the records of the launch's own engine, and the
    reasons the engine was not asked or could not answer."""

    records: tuple[EngineRecord, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Answer:
    record: EngineRecord
    differences: tuple[Difference, ...]

    @property
    def refused(self) -> bool:
        return self.record.refused is not None

    @property
    def critical(self) -> tuple[Difference, ...]:
        return tuple(d for d in self.differences if d.critical)


@dataclass(frozen=True, kw_only=True)
class EnginesResult:
    drafter: str  # the config.json
    target: str | None  # the target's model dir
    says: FileSays
    answers: tuple[Answer, ...]
    notes: tuple[str, ...]  # interpreters asked for that have no engine

    @property
    def failing(self) -> bool:
        """An engine refuses, or reads a DFlash-critical field other than the file says."""
        return any(a.refused or a.critical for a in self.answers)

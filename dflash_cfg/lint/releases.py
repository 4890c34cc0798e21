"""Engine releases as the rules compare them: which side of a change a launch's engine is on.

A behaviour that starts with a release (vLLM 0.34.0 removed its V1 model runner) is a `Since`. A rule asks
whether the launch's engine has it: yes, no, or not known (preflight could not read the release; `check` has no
launch). When it is not known, the rule says what each side does, and each finding carries the releases it
holds for (`Problem.engines`), so the user running one of them reads which one applies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dflash_cfg.model import Launch, requirement

_RELEASE = re.compile(r"\s*v?(\d+(?:\.\d+)*)")


def release(version: str) -> tuple[int, ...] | None:
    """`0.34.0` -> (0, 34, 0); a pre-release or local build counts as its release (`0.34.0rc1`, `0.34.0+cpu`:
    the changes of a release land before its final tag). None: not a version."""
    found = _RELEASE.match(version)
    return tuple(int(p) for p in found.group(1).split(".")) if found else None


def _key(version: str) -> tuple[int, ...]:
    """What releases compare by: the numbers without trailing zeros, so that 0.34 and 0.34.0 are one release
    and plain tuple order is release order (0.34 < 0.34.1, 0.9 < 0.10)."""
    parts = list(release(version) or ())
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def ordered(releases: Iterable[str]) -> list[str]:
    """Oldest first, as releases compare (0.9 before 0.10)."""
    return sorted(releases, key=_key)


def candidates(launch: Launch, engine: str, known: Iterable[str]) -> tuple[str, ...]:
    """Of the releases a table `known` has entries for, those whose behaviour the launch may get: the one the
    launch runs (else the newest before it, else the oldest: a release between two behaves as the one before
    it until a table says otherwise), or every one when its release is not known."""
    known = ordered(known)
    if launch.engine != engine or launch.engine_version is None or release(launch.engine_version) is None:
        return tuple(known)
    running = _key(launch.engine_version)
    before = [r for r in known if _key(r) <= running]
    return (before[-1],) if before else tuple(known[:1])


def scope(engine: str, holds: Mapping[str, bool]) -> tuple[str, ...] | None:
    """The releases of a table for which something holds, as `Problem.engines`: () when it holds for each,
    None when for none; `engine>=R` when from R on, `engine<R` when before R, else `engine==R` for each."""
    every = ordered(holds)
    yes = [r for r in every if holds[r]]
    if not yes:
        return None
    if len(yes) == len(every):
        return ()
    if yes == every[len(every) - len(yes) :]:
        return (f"{engine}>={yes[0]}",)
    if yes == every[: len(yes)]:
        return (f"{engine}<{every[len(yes)]}",)
    return tuple(f"{engine}=={r}" for r in yes)


def applies(engines: Iterable[str], engine: str, version: str | None) -> bool:
    """Whether a finding that holds for `engines` (`Problem.engines`; empty: for every engine) holds for `engine`
    at release `version` (None: not known, so any release of it may be the one)."""
    requirements = list(engines)
    if not requirements:
        return True
    for text in requirements:
        found = requirement(text)
        if found is None or found[0] != engine:
            continue
        _, op, bound = found
        if not op or version is None or release(version) is None or release(bound) is None:
            return True
        running, edge = _key(version), _key(bound)
        if (op == ">=" and running >= edge) or (op == "<" and running < edge) or (op == "==" and running == edge):
            return True
    return False


@dataclass(frozen=True)
class Since:
    """A behaviour of `engine` from release `version` on."""

    engine: str
    version: str

    @property
    def on(self) -> str:
        """The requirement for the releases that have it (`Problem.engines`)."""
        return f"{self.engine}>={self.version}"

    @property
    def before(self) -> str:
        """The requirement for the releases that do not."""
        return f"{self.engine}<{self.version}"

    def includes(self, version: str) -> bool | None:
        """Whether release `version` of the engine has the behaviour; None when `version` is not a release."""
        if release(version) is None or release(self.version) is None:
            return None
        return _key(version) >= _key(self.version)

    def holds(self, launch: Launch) -> bool | None:
        """Whether the launch's engine has the behaviour; None when its release is not known (or the launch runs
        another engine, for which the question does not arise: the rules ask only about their own engine)."""
        if launch.engine != self.engine or launch.engine_version is None:
            return None
        return self.includes(launch.engine_version)

    def sides(self, launch: Launch) -> tuple[bool, bool]:
        """(the launch may run a release before the change, it may run one with it)."""
        holds = self.holds(launch)
        return holds is not True, holds is not False


# vLLM 0.34.0: the V1 model runner is removed (vllm/platforms/interface.py:Platform.validate_environ), the
# drafter's class declares its method, and SpeculativeConfig refuses the keys it dropped.
VLLM_0_34 = Since("vllm", "0.34.0")


@dataclass(frozen=True)
class Change:
    """What a release changed that a drafter or its launch depends on, and the rules that say it (the release
    report, docs/releases/, lists them)."""

    since: Since
    what: str
    rules: tuple[str, ...]


CHANGES: tuple[Change, ...] = (
    Change(
        VLLM_0_34,
        "The V1 model runner is removed: VLLM_USE_V2_MODEL_RUNNER set to anything but 1 refuses every launch, and "
        "so does pipeline parallelism under --distributed-executor-backend external_launcher (0.33 ran V1 for it). "
        "The V1 refusals of mixed sliding/full and candidate-head drafters are 0.33's only.",
        ("DF811", "DF806", "DF807"),
    ),
    Change(
        VLLM_0_34,
        "The method comes from the drafter's class: with none given, a DFlash drafter in a folder whose name does "
        "not say dflash is served as DFlash (0.33: a plain draft model); an explicit method other than 'dflash' "
        "('draft_model' included, which 0.33 turned into dflash for a path saying dflash) is refused; an unknown "
        "method is refused with the list of built-ins.",
        ("DF803",),
    ),
    Change(
        VLLM_0_34,
        "SpeculativeConfig's keys: disable_padded_drafter_batch and use_heterogeneous_vocab are gone (refused), "
        "draft_decode_context_parallel_size is new (0.33 refuses it), parallel_drafting is deprecated and ignored.",
        ("DF812",),
    ),
    Change(
        VLLM_0_34,
        "draft_decode_context_parallel_size > 1 with a drafter that has sliding layers fails when the drafter loads.",
        ("DF813",),
    ),
    Change(
        VLLM_0_34,
        "no_rope_layers on a DFlash2DraftModel (a list of layer indices) makes those layers run without RoPE "
        "(RicursiveDFlash2ForCausalLM); 0.33 and SGLang ignore it.",
        ("DF142",),
    ),
    Change(
        VLLM_0_34,
        "A DFlash2 drafter's candidate vocabulary is min(target vocabulary, vocab_size) (0.33: the target's).",
        ("DF402",),
    ),
)

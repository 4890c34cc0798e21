"""Engine releases as the rules compare them: which side of a change a launch's engine is on.

A behaviour that starts with a release (vLLM 0.34.0 removed its V1 model runner) is a `Since`. A rule asks
whether the launch's engine has it: yes, no, or not known (preflight could not read the release; `check` has no
launch). When it is not known, the rule says what each side does, and each finding carries the releases it
holds for (`Problem.engines`), so the user running one of them reads which one applies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dflash_cfg.model import Engine, Launch, Requirement, release, release_order


def ordered(releases: Iterable[str]) -> list[str]:
    """Oldest first, as releases compare (0.9 before 0.10)."""
    return sorted(releases, key=release_order)


def candidates(launch: Launch, engine: str, known: Iterable[str]) -> tuple[str, ...]:
    """Of the releases a table `known` has entries for, those whose behaviour the launch may get: the one the
    launch runs (else the newest before it, else the oldest: a release between two behaves as the one before
    it until a table says otherwise), or every one when its release is not known."""
    known = ordered(known)
    if launch.engine != engine or launch.engine_version is None or release(launch.engine_version) is None:
        return tuple(known)
    running = release_order(launch.engine_version)
    before = [r for r in known if release_order(r) <= running]
    return (before[-1],) if before else tuple(known[:1])


def scope(engine: Engine, holds: Mapping[str, bool]) -> tuple[Requirement, ...] | None:
    """The releases of a table for which something holds, as `Problem.engines`: () when it holds for each,
    None when for none; `engine>=R` when from R on, `engine<R` when before R, else `engine==R` for each."""
    every = ordered(holds)
    yes = [r for r in every if holds[r]]
    if not yes:
        return None
    if len(yes) == len(every):
        return ()
    if yes == every[len(every) - len(yes) :]:
        return (Requirement(engine, ">=", yes[0]),)
    if yes == every[: len(yes)]:
        return (Requirement(engine, "<", every[len(yes)]),)
    return tuple(Requirement(engine, "==", r) for r in yes)


def applies(engines: Iterable[Requirement], engine: str, version: str | None) -> bool:
    """Whether a finding that holds for `engines` (`Problem.engines`; empty: for every engine) holds for `engine`
    at release `version` (None: not known, so any release of it may be the one)."""
    requirements = tuple(engines)
    return not requirements or any(r.admits(engine, version) for r in requirements)


@dataclass(frozen=True)
class Since:
    """A behaviour of `engine` from release `version` on."""

    engine: Engine
    version: str

    @property
    def on(self) -> Requirement:
        """The requirement for the releases that have it (`Problem.engines`)."""
        return Requirement(self.engine, ">=", self.version)

    @property
    def before(self) -> Requirement:
        """The requirement for the releases that do not."""
        return Requirement(self.engine, "<", self.version)

    def includes(self, version: str) -> bool | None:
        """Whether release `version` of the engine has the behaviour; None when `version` is not a release."""
        if release(version) is None or release(self.version) is None:
            return None
        return release_order(version) >= release_order(self.version)

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
    """What a release changed that a drafter or its launch depends on. A rule declares the changes it knows
    (`@rule(since=..., until=...)`); the release report (docs/releases/) lists each with the rules that declare it
    (lint.rules.CHANGES), so the list cannot miss a rule."""

    since: Since
    what: str


V1_RUNNER_GONE = Change(
    VLLM_0_34,
    "The V1 model runner is removed: VLLM_USE_V2_MODEL_RUNNER set to anything but 1 refuses every launch, and "
    "so does pipeline parallelism under --distributed-executor-backend external_launcher (0.33 ran V1 for it). "
    "The V1 refusals of mixed sliding/full and candidate-head drafters are 0.33's only.",
)
METHOD_FROM_CLASS = Change(
    VLLM_0_34,
    "The method comes from the drafter's class: with none given, a DFlash drafter in a folder whose name does "
    "not say dflash is served as DFlash (0.33: a plain draft model); an explicit method other than 'dflash' "
    "('draft_model' included, which 0.33 turned into dflash for a path saying dflash) is refused; an unknown "
    "method is refused with the list of built-ins.",
)
SPECULATIVE_KEYS = Change(
    VLLM_0_34,
    "SpeculativeConfig's keys: disable_padded_drafter_batch and use_heterogeneous_vocab are gone (refused), "
    "draft_decode_context_parallel_size is new (0.33 refuses it), parallel_drafting is deprecated and ignored.",
)
DRAFT_DCP_SLIDING = Change(
    VLLM_0_34,
    "draft_decode_context_parallel_size > 1 with a drafter that has sliding layers fails when the drafter loads.",
)
NO_ROPE_LAYERS = Change(
    VLLM_0_34,
    "no_rope_layers on a DFlash2DraftModel (a list of layer indices) makes those layers run without RoPE "
    "(RicursiveDFlash2ForCausalLM); 0.33 and SGLang ignore it.",
)
CANDIDATE_VOCABULARY = Change(
    VLLM_0_34,
    "A DFlash2 drafter's candidate vocabulary is min(target vocabulary, vocab_size) (0.33: the target's).",
)

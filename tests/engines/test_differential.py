"""The differential suite: every fixture drafter and the seeded mutants of tests/engines/mutants.py, run through
the pinned engines' own config code (the adapters) and through `dflash_cfg.check`, held against each other:

a. an engine refuses -> dflash-cfg reports an error whose message names that engine (a disagreement is "a" when
   there is no error at all, "a-unnamed" when there are errors but none names the engine);
b. an engine runs with a drafting-critical value that differs from what it read for the unmutated base ->
   dflash-cfg reports a new error;
c. every engine runs exactly as for the base -> dflash-cfg reports no new error (by rule id);
d. every dflash-cfg error that says an engine refuses is matched by an engine that does.

A disagreement is either by design or a known rule bug not fixed yet: both are listed, with their
reasons, in by_design.toml. Anything else fails the test, and so does an entry that matches nothing."""

from __future__ import annotations

import fnmatch
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES

import dflash_cfg
from dflash_cfg.lint.engine_reads import differences, file_says
from dflash_cfg.lint.releases import applies
from dflash_cfg.model import Adapted, EngineRecord, Reads, Requirement, Severity
from dflash_cfg.sources import adapters
from dflash_cfg.sources.adapters import Request
from engines import build, key_mutants
from engines.cases import TARGETS, fixture_requests, write_drafter
from engines.mutants import BASES, LIMIT, Base, Mutant, generate

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the project's own fallback for 3.10
    import tomli as tomllib

BY_DESIGN = Path(__file__).with_name("by_design.toml")
# The values that change what the drafter proposes: a difference in one of them is condition b.
CRITICAL = (
    "target_layer_ids",
    "engine_layer_ids",
    "mask_token_id",
    "num_draft_tokens",
    "layer_types",
    "sliding_window",
    "causal",
    "rope",
    "rope_theta",
    "attention_sink",
    "logit_scalars",
    "fc_in_features",
)
# How the rules' messages say an engine will not load the file (read off the messages of lint/rules/).
REFUSAL_PHRASES = ("refuse", "stops", "cannot load", "fails with", "fails to load", "raises")
ENGINE_NAMES: dict[str, tuple[str, ...]] = {"vllm": ("vllm",), "sglang": ("sglang",), "speculators": ("speculators",)}


@dataclass(frozen=True)
class Case:
    """One file the suite holds: a fixture (its own base) or a mutant of a base."""

    id: str
    request: Request
    target: str | None
    engines: tuple[Adapted, ...]
    base_id: str | None  # the unmutated case, None for a fixture
    description: str


@dataclass(frozen=True)
class Disagreement:
    case: str
    condition: str  # "a", "a-unnamed", "b", "c", "d", or "failed" (an adapter could not answer)
    engine: str  # the engine concerned; "all" for c
    detail: str

    def line(self) -> str:
        return f"{self.case}  [{self.condition}/{self.engine}]  {self.detail}"


def _engines(base: Base) -> tuple[Adapted, ...]:
    return ("vllm", "sglang", "speculators") if base.speculators else ("vllm", "sglang")


def _cases(root: Path, mutants: Sequence[Mutant]) -> list[Case]:
    cases = []
    for rel, request in fixture_requests(root).items():
        spec = "speculator" in rel
        engines: tuple[Adapted, ...] = ("vllm", "sglang", "speculators") if spec else ("vllm", "sglang")
        cases.append(Case(f"fixture/{rel}", request, request.target, engines, None, "the fixture as shipped"))
    by_rel = {c.id.removeprefix("fixture/"): c for c in cases}
    for base in BASES:
        assert base.rel in by_rel, base
    for index, mutant in enumerate(mutants):
        folder = write_drafter(root / f"mutant-{index}", mutant.data)
        target = str(TARGETS / mutant.base.target) if mutant.base.target else None
        cases.append(
            Case(
                mutant.id,
                Request(drafter=folder, target=target),
                target,
                _engines(mutant.base),
                f"fixture/{mutant.base.rel}",
                mutant.description,
            )
        )
    return cases


def _run_engines(python: Path, cases: Sequence[Case]) -> dict[tuple[str, str], EngineRecord]:
    """One adapter process per engine for all its cases, side by side (the 2 cores run vLLM and SGLang).
    Offline: a relabelled mutant (another model_type, a verifier name) must not send an engine to the Hub,
    where it would wait out its retries; without the network it refuses at once, as on an offline host."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    batches = {e: [c for c in cases if e in c.engines] for e in adapters.ENGINES}
    with ThreadPoolExecutor(len(batches)) as pool:
        futures = {
            # Per record: a shared CI machine under load has taken minutes for an engine's first import.
            e: pool.submit(adapters.run, python, e, [c.request for c in batch], env=env, timeout=1500.0)
            for e, batch in batches.items()
        }
        return {(e, c.id): r for e, f in futures.items() for c, r in zip(batches[e], f.result(), strict=True)}


@dataclass(frozen=True)
class Lint:
    errors: tuple[tuple[str, str, tuple[Requirement, ...]], ...]  # (rule, message, the releases it holds for)
    summary: str

    def held(self, engine: str, version: str | None) -> list[tuple[str, str]]:
        """The errors that hold for `engine` at `version`: a finding scoped to other releases says nothing
        about this one."""
        return [(rule, message) for rule, message, engines in self.errors if applies(engines, engine, version)]


def _lint(case: Case) -> Lint:
    report = dflash_cfg.check([case.request.drafter], target=case.target, isolated=True, use_cache=False)
    findings = [f for file in report.files for f in file.findings]
    errors = tuple((f.rule, f.message, f.engines) for f in findings if f.severity is Severity.ERROR)
    summary = ",".join(f"{f.rule}:{f.severity.label[0]}" for f in findings) or "-"
    return Lint(errors, summary)


def _values(reads: Reads | None, fields: Sequence[str]) -> dict[str, Any]:
    if reads is None:
        return {}
    data = asdict(reads)
    return {f: data[f] for f in fields}


def _all_fields(reads: Reads) -> dict[str, Any]:
    return asdict(reads)


def _same(mutant: EngineRecord, base: EngineRecord) -> bool:
    if mutant.refused is not None or base.refused is not None:
        return mutant.refused is not None and base.refused is not None and mutant.refused.type == base.refused.type
    return mutant.reads is not None and base.reads is not None and _all_fields(mutant.reads) == _all_fields(base.reads)


def _names(message: str, engine: str) -> bool:
    lowered = message.lower()
    return any(name in lowered for name in ENGINE_NAMES[engine])


def _hold(
    case: Case, lint: Lint, base_lint: Lint | None, records: Mapping[tuple[str, str], EngineRecord]
) -> list[Disagreement]:
    out = []
    same_everywhere = case.base_id is not None
    new_anywhere: set[str] = set()
    for engine in case.engines:
        record = records[(engine, case.id)]
        base = records[(engine, case.base_id)] if case.base_id else None
        # Each engine is held to the errors that hold for its release (Problem.engines).
        errors = lint.held(engine, record.version)
        base_rules = {rule for rule, _ in base_lint.held(engine, record.version)} if base_lint else set()
        new_errors = {rule for rule, _ in errors} - base_rules
        new_anywhere |= new_errors
        if record.failed is not None:
            out.append(Disagreement(case.id, "failed", engine, record.failed[:200]))
            same_everywhere = False
            continue
        if base is None or not _same(record, base):
            same_everywhere = False
        if record.refused is not None:
            if not any(_names(message, engine) for _, message in errors):
                # a: no error at all; a-unnamed: an error, but none says this engine is the one that refuses.
                condition = "a-unnamed" if errors else "a"
                refusal = f"{record.refused.type}: {record.refused.message.splitlines()[0][:160]}"
                out.append(Disagreement(case.id, condition, engine, f"refused ({refusal}); dflash-cfg: {lint.summary}"))
            continue
        if base is not None and base.reads is not None and record.reads is not None:
            before, after = _values(base.reads, CRITICAL), _values(record.reads, CRITICAL)
            changed = {f: (before[f], after[f]) for f in CRITICAL if before[f] != after[f]}
            if changed and not new_errors:
                shown = "; ".join(f"{f}: {json.dumps(b)} -> {json.dumps(a)}" for f, (b, a) in changed.items())
                out.append(Disagreement(case.id, "b", engine, f"{shown[:400]}; dflash-cfg: {lint.summary}"))
    if same_everywhere and new_anywhere:
        out.append(Disagreement(case.id, "c", "all", f"new errors {sorted(new_anywhere)}; dflash-cfg: {lint.summary}"))
    for rule, message, engines in lint.errors:
        if not any(p in message.lower() for p in REFUSAL_PHRASES):
            continue
        named = [e for e in case.engines if _names(message, e)] or list(case.engines)
        named_anywhere = [e for e in adapters.ENGINES if _names(message, e)]
        if named_anywhere and not named:
            continue  # names only an engine this case does not run
        named = [e for e in named if applies(engines, e, records[(e, case.id)].version)]
        if named and not any(records[(e, case.id)].refused is not None for e in named):
            out.append(Disagreement(case.id, "d", "+".join(named), f"{rule}: {message[:240]}"))
    return out


@dataclass(frozen=True)
class Entry:
    section: str
    name: str
    reason: str
    ids: tuple[str, ...]
    conditions: tuple[str, ...]
    engines: tuple[str, ...]  # empty: any
    # The engine releases it is about (vllm>=0.34.0; empty: every one): with another release installed, it
    # neither matches nor goes stale.
    releases: tuple[Requirement, ...] = ()

    @property
    def active(self) -> bool:
        running = build.locked()
        return all(r.admits(r.engine, running.get(r.engine)) for r in self.releases)

    def matches(self, d: Disagreement) -> bool:
        return (
            self.active
            and any(fnmatch.fnmatchcase(d.case, glob) for glob in self.ids)
            and d.condition in self.conditions
            and (not self.engines or d.engine in self.engines)
        )


def entries(path: Path = BY_DESIGN) -> list[Entry]:
    """The reviewed disagreements of a by-design file (this suite's, or the branch suite's)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for section in ("by_design", "pending"):
        for name, entry in data.get(section, {}).items():
            conditions = entry["condition"]
            out.append(
                Entry(
                    section,
                    name,
                    entry["reason"],
                    tuple(entry["ids"]),
                    tuple([conditions] if isinstance(conditions, str) else conditions),
                    tuple(entry.get("engines", ())),
                    tuple(Requirement.parse(r) for r in entry.get("releases", ())),
                )
            )
    return out


@dataclass(frozen=True)
class Outcome:
    cases: int
    mutants: int
    disagreements: tuple[Disagreement, ...]
    report: Path
    seconds: float
    # Each fixture as shipped, with what each engine that answered reads from it.
    fixtures: tuple[tuple[str, str, str, Reads], ...] = ()


@pytest.fixture(scope="session")
def differential(engine_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    start = time.monotonic()
    root = tmp_path_factory.mktemp("differential")
    mutants = generate()
    cases = _cases(root, mutants)
    with ThreadPoolExecutor(1) as pool:  # the lint runs in process while the engines run in theirs
        lints_future = pool.submit(lambda: {c.id: _lint(c) for c in cases})
        records = _run_engines(engine_python, cases)
        lints = lints_future.result()
    disagreements = []
    lines = []
    for case in cases:
        found = _hold(case, lints[case.id], lints[case.base_id] if case.base_id else None, records)
        disagreements += found
        values = {
            e: (
                "FAILED"
                if records[(e, case.id)].failed
                else f"refused {records[(e, case.id)].refused.type}"  # type: ignore[union-attr]
                if records[(e, case.id)].refused
                else json.dumps(_values(records[(e, case.id)].reads, CRITICAL))
            )
            for e in case.engines
        }
        lines.append(f"{case.id}  ({case.description})  dflash-cfg: {lints[case.id].summary}")
        lines += [f"    {e}: {v}" for e, v in values.items()]
        lines += [f"    DISAGREES {d.condition}/{d.engine}: {d.detail}" for d in found]
    report = root / "differential-report.txt"
    report.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fixtures = tuple(
        (case.id, engine, case.request.drafter, reads)
        for case in cases
        if case.base_id is None
        for engine in case.engines
        if (reads := records[(engine, case.id)].reads) is not None
    )
    seconds = time.monotonic() - start
    return Outcome(len(cases), len(mutants), tuple(disagreements), report, seconds, fixtures)


def test_the_engines_and_dflash_cfg_agree_on_every_fixture_and_mutant(differential: Outcome) -> None:
    reviewed = entries()
    unlisted = [d for d in differential.disagreements if not any(e.matches(d) for e in reviewed)]
    stale = [e for e in reviewed if e.active and not any(e.matches(d) for d in differential.disagreements)]
    print(
        f"differential: {differential.cases} cases ({differential.mutants} mutants), "
        f"{len(differential.disagreements)} disagreements, {differential.seconds:.0f} s; "
        f"full report: {differential.report}"
    )
    problems = [f"unlisted: {d.line()}" for d in unlisted] + [f"stale entry: [{e.section}] {e.name}" for e in stale]
    assert not problems, f"full report: {differential.report}\n" + "\n".join(problems)


def test_no_published_drafter_is_read_other_than_its_file_says(differential: Outcome) -> None:
    """preflight's DF902 errs when the launch's engine reads a DFlash-critical field other than the file says:
    on every fixture as published, with its target, the pinned engines read what the file says."""
    assert differential.fixtures
    misread = []
    for case, engine, drafter, reads in differential.fixtures:
        path = Path(drafter)
        data = json.loads((path / "config.json" if path.is_dir() else path).read_text(encoding="utf-8"))
        misread += [f"{case} {engine}: {d}" for d in differences(file_says(data), reads) if d.critical]
    assert misread == []


def test_the_generator_is_deterministic_and_yields_enough_mutants() -> None:
    first, second = generate(), generate()
    sampled = [m for m in first if m.family not in ("release", "keys")]
    assert len(sampled) >= 500 and len(sampled) == LIMIT
    assert {m.kind for m in first if m.family == "release"} >= {"nope-layers", "nope-flags", "nope-true"}
    assert [(m.id, m.to_json()) for m in first] == [(m.id, m.to_json()) for m in second]
    assert len({m.id for m in first}) == len(first)
    families = {m.family for m in first}
    expected = {"move", "rename", "drop", "type", "taps", "rope", "layers", "window", "label", "layout", "speculators"}
    expected |= {"release", "keys"}
    # The key mutants are bounded, and every key only one release reads is planted (engines.key_mutants).
    keyed = [m for m in first if m.family == "keys"]
    assert 0 < len(keyed) <= key_mutants.KEY_LIMIT
    assert {f"plant-{p.strip('/').replace('/', '.')}" for p in key_mutants.one_release()} <= {m.kind for m in keyed}
    assert families == expected
    for base in BASES:
        assert (FIXTURES / base.rel).is_file()

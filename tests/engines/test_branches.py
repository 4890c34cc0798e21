"""The branch mutants (tests/engines/branches.py) through the pinned engines, with the key recording on: every
branch a switch turns on is reached (tools/engines/branches.py matches the recorded read sites against the source's
reads), and the engines and dflash-cfg agree on every switched drafter and key edit as the differential suite holds
them (tests/engines/test_differential.py: conditions a to d), with the reviewed disagreements in
branches_by_design.toml. A switched drafter is held against its unswitched fixture, a key edit against the switched
drafter."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from dflash_cfg.model import Adapted, EngineRecord, is_engine
from dflash_cfg.pinned import PINNED
from dflash_cfg.sources import adapters
from dflash_cfg.sources.adapters import Request
from engines import branches as catalogue
from engines.cases import TARGETS, fixture_requests, write_drafter
from engines.test_differential import Case, Disagreement, _hold, _lint
from engines.test_differential import entries as differential_entries
from tools.engines import branches as tool
from tools.engines import source_keys

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover - the project's own fallback for 3.10
    pass

BY_DESIGN = Path(__file__).with_name("branches_by_design.toml")


@dataclass(frozen=True)
class Runs:
    cases: tuple[Case, ...]
    records: Mapping[tuple[str, str], EngineRecord]
    sites: Mapping[str, tool.Sites]  # engine -> every read site the runs recorded
    versions: Mapping[str, str]


def _cases(root: Path) -> list[Case]:
    cases = []
    for rel, request in fixture_requests(root).items():
        engines: tuple[Adapted, ...] = ("vllm", "sglang", "speculators") if "speculator" in rel else ("vllm", "sglang")
        cases.append(Case(f"fixture/{rel}", request, request.target, engines, None, "the fixture as shipped"))
    for index, mutant in enumerate(catalogue.generate()):
        target = str(TARGETS / mutant.base.target) if mutant.base.target else None
        request = Request(
            drafter=write_drafter(root / f"branch-{index}", mutant.data),
            target=target,
            speculative_config={"method": mutant.switch.method},
        )
        engines = ("vllm", "sglang", "speculators") if mutant.base.speculators else ("vllm", "sglang")
        cases.append(Case(mutant.id, request, target, engines, mutant.base_id, mutant.description))
    return cases


def _run(python: Path, engine: Adapted, cases: list[Case]) -> tuple[list[EngineRecord], tool.Sites, str]:
    asked = [
        {
            "drafter": c.request.drafter,
            "target": c.request.target,
            "speculative_config": dict(c.request.speculative_config or {}),
        }
        for c in cases
    ]
    raw = tool.run_raw(str(python), engine, asked)
    records = [_record(engine, str(python), r) for r in raw]
    sites = {(p, s) for r in raw for p, s in r.get("sites") or ()}
    return records, sites, str(raw[0]["version"])


def _record(engine: Adapted, python: str, raw: dict[str, object]) -> EngineRecord:
    """The record as dflash_cfg.sources.adapters reads it: one of another shape is a failed one, as there."""
    try:
        return adapters.from_json(engine, python, raw)
    except (ValueError, KeyError, TypeError) as error:
        return EngineRecord(
            engine=engine,
            version=None,
            python=python,
            checked=False,
            refused=None,
            reads=None,
            stand_ins=(),
            failed=f"the adapter answered something that is not a record ({error})",
        )


@pytest.fixture(scope="session")
def branch_runs(engine_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    cases = _cases(tmp_path_factory.mktemp("branches"))
    batches = {e: [c for c in cases if e in c.engines] for e in adapters.ENGINES}
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with ThreadPoolExecutor(2) as pool:
        futures = {e: pool.submit(_run, engine_python, e, batch) for e, batch in batches.items()}
        done = {e: f.result() for e, f in futures.items()}
    records: dict[tuple[str, str], EngineRecord] = {
        (e, c.id): r for e, (rs, _, _) in done.items() for c, r in zip(batches[e], rs, strict=True)
    }
    return Runs(tuple(cases), records, {e: s for e, (_, s, _) in done.items()}, {e: v for e, (_, _, v) in done.items()})


def test_every_branch_a_switch_turns_on_is_reached(branch_runs: Runs, engine_python: Path) -> None:
    site, _ = source_keys.installed(engine_python)
    missed, reached = [], 0
    for engine, release in branch_runs.versions.items():
        assert is_engine(engine), engine
        tag = "" if PINNED.get(engine) == release else f"@{release}"
        lines = source_keys.lines(site, engine, tag)
        for branch in catalogue.found(engine, release):
            switched = any(t in branch.condition for s in catalogue.SWITCHES for t in s.turns_on)
            if not switched or catalogue.label(branch) is not None:
                continue
            if tool.reached(branch, lines, branch_runs.sites[engine]):
                reached += 1
            else:
                missed.append(f"{engine} {release} {branch.citation} when {branch.condition[:160]}")
    assert reached > 0
    assert not missed, "\n".join(missed)


def test_the_engines_and_dflash_cfg_agree_on_every_branch_mutant(branch_runs: Runs) -> None:
    lints = {c.id: _lint(c) for c in branch_runs.cases}
    found: list[Disagreement] = []
    for case in branch_runs.cases:
        if case.base_id is not None:
            found += _hold(case, lints[case.id], lints[case.base_id], branch_runs.records)
    entries = differential_entries(BY_DESIGN)
    unlisted = [d for d in found if not any(e.matches(d) for e in entries)]
    stale = [e for e in entries if not any(e.matches(d) for d in found)]
    problems = [f"unlisted: {d.line()}" for d in unlisted] + [f"stale entry: [{e.section}] {e.name}" for e in stale]
    assert not problems, "\n".join(problems)

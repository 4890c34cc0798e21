"""Which branches of the engines' DFlash-family code the CPU runs reach, per engine release.

    .venv/bin/python tools/engines/branches.py [--python PY] [--json PATH]   (./dev engines --branches)

runs, in PY (an engine venv's python; default: the venv of $DFLASH_CFG_ENGINES_LOCK's lock, else the pinned one),
every fixture drafter of the differential suite and every branch mutant of tests/engines/branches.py (a switched
drafter and its key edits) through the adapters with key recording on (DFLASH_ADAPTER_KEYS=1), which gives each
engine read's code site (`PATH:LINE`, dflash_adapter_keys.sites). A branch (a function and the condition it reads
keys under, from dflash_cfg/lint/engine_source_keys.py) is reached when a run read one of its keys at one of the
source lines tools/engines/source_keys.py finds for it. The report prints, per engine and release: the branches
found, reached on CPU, labelled unreachable on CPU ("gpu": a GPU worker's code, a forward pass or weight loading;
"other": not a DFlash drafter's path, or unreachable from any file), each with the engine code it cites, and any
other not reached, each listed.
--json writes the same as data (the engine suite's test_branches.py reads it from its own run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT / "tests") not in sys.path:
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from engines import branches as catalogue  # noqa: E402 - after the path set-up above, as the other tools do
from engines.cases import TARGETS, fixture_requests, write_drafter  # noqa: E402

from tools.engines import source_keys  # noqa: E402

if TYPE_CHECKING:
    from engines.branches import Branch, Label

Lines = Mapping[tuple[str, str, str], frozenset[str]]  # (pointer, citation, condition) -> PATH:LINE
Sites = set[tuple[str, str]]  # (pointer, PATH:LINE) a run recorded


@dataclass(frozen=True)
class Outcome:
    branch: Branch
    state: str  # "reached", "gpu", "other" or "not reached"
    label: Label | None


def reached(branch: Branch, lines: Lines, sites: Sites) -> bool:
    """Whether a recorded read is one of the branch's: its key at one of its source lines."""
    wanted: set[tuple[str, str]] = set()
    for pointer in branch.pointers:
        key = pointer.rsplit("/", 1)[1]
        for line in lines.get((pointer, branch.citation, branch.condition), frozenset()):
            wanted.add((key, line))
    return any((pointer.rsplit("/", 1)[1], line) in wanted for pointer, line in sites)


def outcomes(found: Sequence[Branch], lines: Lines, sites: Sites) -> list[Outcome]:
    out = []
    for branch in found:
        label = catalogue.label(branch)
        if reached(branch, lines, sites):
            out.append(Outcome(branch, "reached", None))
        else:
            out.append(Outcome(branch, label.kind if label else "not reached", label))
    return out


def render(results: Mapping[tuple[str, str], Sequence[Outcome]]) -> str:
    """The report: a summary line per engine release, then the branches not reached, each with its reason."""
    lines = []
    for (engine, release), found in sorted(results.items()):
        count = {s: sum(o.state == s for o in found) for s in ("reached", "gpu", "other", "not reached")}
        lines.append(
            f"{engine} {release}: {len(found)} branches, {count['reached']} reached on CPU, {count['gpu']} GPU-only, "
            f"{count['other']} unreachable from a drafter file, {count['not reached']} not reached"
        )
    for (engine, release), found in sorted(results.items()):
        for state in ("gpu", "other", "not reached"):
            for o in (o for o in found if o.state == state):
                why = f"{o.label.reason} [{o.label.cites}]" if o.label else "no switch reaches it"
                cond = o.branch.condition if len(o.branch.condition) <= 100 else o.branch.condition[:97] + "..."
                lines.append(f"  {engine} {release} {state}: {o.branch.citation} when {cond}: {why}")
    return "\n".join(lines) + "\n"


def as_json(results: Mapping[tuple[str, str], Sequence[Outcome]]) -> dict[str, Any]:
    return {
        f"{engine} {release}": [
            {
                "citation": o.branch.citation,
                "condition": o.branch.condition,
                "pointers": list(o.branch.pointers),
                "state": o.state,
                "reason": o.label.reason if o.label else None,
                "cites": o.label.cites if o.label else None,
            }
            for o in found
        ]
        for (engine, release), found in sorted(results.items())
    }


def requests(root: Path) -> dict[str, list[dict[str, Any]]]:
    """Per engine, every fixture drafter and branch mutant as its adapter is asked for it."""
    out: dict[str, list[dict[str, Any]]] = {"vllm": [], "sglang": [], "speculators": []}
    for rel, request in fixture_requests(root).items():
        fixture: dict[str, Any] = {"drafter": request.drafter, "target": request.target}
        for engine in ("vllm", "sglang", *(("speculators",) if "speculator" in rel else ())):
            out[engine].append(fixture)
    for index, mutant in enumerate(catalogue.generate()):
        folder = write_drafter(root / f"branch-{index}", mutant.data)
        target = str(TARGETS / mutant.base.target) if mutant.base.target else None
        asked: dict[str, Any] = {
            "drafter": folder,
            "target": target,
            "speculative_config": {"method": mutant.switch.method},
        }
        for engine in ("vllm", "sglang", "speculators") if mutant.base.speculators else ("vllm", "sglang"):
            out[engine].append(asked)
    return out


def run(python: str, engine: str, asked: Sequence[Mapping[str, Any]]) -> tuple[str, Sites]:
    """The engine's release and the sites of every read its adapter recorded over the requests."""
    records = run_raw(python, engine, asked)
    sites = {(pointer, site) for record in records for pointer, site in record.get("sites") or ()}
    return str(records[0]["version"]), sites


def run_raw(python: str, engine: str, asked: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The adapter's records of the requests, as it writes them, with the key recording on (their "sites")."""
    from dflash_cfg.sources.adapters import adapter_env, adapter_path

    env = {**adapter_env(), "DFLASH_ADAPTER_KEYS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.setdefault("VLLM_CACHE_ROOT", str(_cache() / "vllm-cache"))
    lines = "".join(json.dumps(r) + "\n" for r in asked)
    done = subprocess.run(
        [python, str(adapter_path(engine))],  # type: ignore[arg-type]
        input=lines,
        capture_output=True,
        text=True,
        env=env,
        timeout=7200,
    )
    records = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if len(records) != len(asked):
        raise RuntimeError(f"{engine}: {len(records)} records for {len(asked)} requests: {done.stderr[-2000:]}")
    return records


def _cache() -> Path:
    from engines import build

    return build.cache_dir()


def report(python: str) -> dict[tuple[str, str], list[Outcome]]:
    """Every engine of the venv: its release's branches and whether the runs reached them."""
    from dflash_cfg.model import is_engine
    from dflash_cfg.pinned import PINNED

    site, versions = source_keys.installed(python)
    with tempfile.TemporaryDirectory() as root:
        asked = requests(Path(root))
        with ThreadPoolExecutor(2) as pool:  # two cores: vLLM and SGLang side by side, speculators after
            futures = {e: pool.submit(run, python, e, asked[e]) for e in asked if e in versions}
            recorded = {e: f.result() for e, f in futures.items()}
    results: dict[tuple[str, str], list[Outcome]] = {}
    for engine, (release, sites) in sorted(recorded.items()):
        assert is_engine(engine), engine
        tag = "" if PINNED.get(engine) == release else f"@{release}"
        found = catalogue.found(engine, release)
        results[(engine, release)] = outcomes(found, source_keys.lines(site, engine, tag), sites)
    return results


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", help="the engine venv's python (default: the lock's venv, built if needed)")
    parser.add_argument("--json", type=Path, help="also write the report as JSON to this path")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.python is None:
        from engines import build

        args.python = str(build.engine_python())
    results = report(args.python)
    sys.stdout.write(render(results))
    if args.json is not None:
        args.json.write_text(json.dumps(as_json(results), indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    raise SystemExit(main())

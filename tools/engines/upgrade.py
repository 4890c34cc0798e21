"""An engine release in one command: `./dev engines --upgrade NAME==VERSION [--lock-out PATH]`.

    python tools/engines/upgrade.py NAME==VERSION [--lock-out PATH] [--report PATH]   (repository root, .venv)

1. Re-freezes the lock: the release's Requires-Dist (its wheel's METADATA, `pip download --no-deps`; markers
   evaluated for this interpreter, extras left out) against the lock's pins. A pin the release wants other than
   locked moves to the newest release that also fits the other locked engines' own requirements (their
   dist-info in the current venv), unless the release before broke it the same way (another engine pins it:
   the lock keeps it, as the suite proved it works) or no release fits every engine. A requirement of a module
   the lock lacks is only named: the adapters install just what the engines' DFlash paths import.
   Writes the new lock (in place, with `PINNED` in dflash_cfg/pinned.py, dflash_cfg/lint/cited_lines.py and the
   new release's entries of dflash_cfg/lint/engine_keys.py re-derived; or only the lock, to `--lock-out`, leaving
   the repository on the current release).
2. Builds the new venv (build.engine_python on the new lock).
3. Runs every fixture and mutant of the differential suite through the upgraded engine in the current and the
   new venv, side by side, and the launch checks of test_launch_checks.py / test_launch_differential.py that
   concern it, and compares: reads field by field, refusals by type, message and the qualname that raised
   (a frame's line mapped to the function holding it, so code that only moved is no change), failed adapters.
4. Resolves every engine citation of the repository in both venvs: gone, or its code changed (its source,
   normalized), with the reads (lint/engines/) and rules that cite it.
5. Writes the release report, docs/releases/NAME-VERSION.md: sorted and grouped, the same on a re-run.

The engine runs are kept under the test cache (keyed by both venvs and the cases), so a re-run with nothing
changed writes the report again without running the engines.

The pure parts, which tests/engines/test_upgrade.py runs without an engine, live beside it and are re-exported
here: upgrade_lock.py (step 1's lock and requirements), upgrade_compare.py (steps 3 and 4's comparisons) and
upgrade_report.py (step 5's report). This module holds the effects (the index, the venvs, the engine runs) and
main.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from dflash_cfg.sources.adapters import ENGINES

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT / "tests") not in sys.path:  # run as a script: the engine suite's modules, as pytest finds them
    sys.path.insert(0, str(ROOT / "tests"))
if str(ROOT) not in sys.path:  # and this tooling's own package
    sys.path.insert(0, str(ROOT))

from engines import build  # noqa: E402
from engines.launches import OracleRun, oracle_runs  # noqa: E402

from tools.engines import citations, engine_keys  # noqa: E402
from tools.engines.upgrade_compare import (  # noqa: E402
    Cited,
    answer_changes,
    cited_changes,
    frame_qualname,
    normalized_source,
    one_line,
    record_changes,
)
from tools.engines.upgrade_lock import (  # noqa: E402
    TO_UPDATE,
    Lock,
    Pin,
    compare,
    engine_requirement_notes,
    move_spec,
    parse_lock,
    requirements,
    rewrite_lock,
    rewrite_pinned,
    settle,
)
from tools.engines.upgrade_report import Case, Report, render, rules_section  # noqa: E402

__all__ = [
    "PINNED_FILE",
    "RELEASES",
    "TO_UPDATE",
    "Case",
    "Cited",
    "Lock",
    "Pin",
    "Report",
    "answer_changes",
    "build",
    "citations",
    "cited_changes",
    "compare",
    "engine_requirement_notes",
    "frame_qualname",
    "main",
    "move_spec",
    "normalized_source",
    "one_line",
    "parse_lock",
    "record_changes",
    "render",
    "requirements",
    "rewrite_lock",
    "rewrite_pinned",
    "rules_section",
    "settle",
]

PINNED_FILE = ROOT / "dflash_cfg" / "pinned.py"
RELEASES = ROOT / "docs" / "releases"


# ---------------------------------------------------------------------------------------------------------------
# Effects: the index, the venvs, the engines


def release_metadata(name: str, version: str) -> str:
    """The METADATA of the release's wheel for this platform (`pip download --no-deps`; pip's cache and
    PIP_FIND_LINKS make a second call cheap)."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--quiet", "--dest",
             tmp, f"{name}=={version}"],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as z:
            member = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
            return z.read(member).decode("utf-8", "replace")


def installed_metadata(site: Path, name: str) -> tuple[str, str] | None:
    """(version, METADATA text) of a distribution installed under `site`, None if it is not."""
    for info in sorted(site.glob("*.dist-info")):
        dist, _, version = info.name.removesuffix(".dist-info").partition("-")
        if canonicalize_name(dist) == canonicalize_name(name) and (info / "METADATA").is_file():
            return version, (info / "METADATA").read_text(encoding="utf-8", errors="replace")
    return None


def newest(requirement: str) -> tuple[str, list[Requirement]] | None:
    """The newest release the index offers for `requirement` and its own requirements (pip's resolver, dry run)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed", "--quiet",
             "--report", str(report), requirement],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0 or not report.exists():
            return None
        items = json.loads(report.read_text(encoding="utf-8")).get("install") or []
        if not items:
            return None
        meta = items[0]["metadata"]
        text = "\n".join(f"Requires-Dist: {r}" for r in meta.get("requires_dist") or ())
        return str(meta["version"]), requirements(text)


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _adapters_digest() -> str:
    files = sorted((ROOT / "dflash_cfg" / "adapters").glob("*.py"))
    return _digest(*[(p.name, p.read_text(encoding="utf-8")) for p in files])


def drafter_cases(root: Path, engine: str) -> tuple[dict[str, Case], dict[str, Any]]:
    """The differential suite's drafters that `engine` runs (as test_differential.py builds them), as cases and
    their adapter requests."""
    from engines.cases import TARGETS, fixture_requests, write_drafter
    from engines.mutants import generate

    from dflash_cfg.sources.adapters import Request

    cases: dict[str, Case] = {}
    requests: dict[str, Request] = {}
    for rel, request in fixture_requests(root).items():
        engines = ENGINES if "speculator" in rel else ("vllm", "sglang")
        if engine in engines:
            cases[f"fixture/{rel}"] = Case(f"fixture/{rel}", "fixture", "the fixture as shipped")
            requests[f"fixture/{rel}"] = request
    for index, mutant in enumerate(generate()):
        engines = ENGINES if mutant.base.speculators else ("vllm", "sglang")
        if engine not in engines:
            continue
        folder = write_drafter(root / f"mutant-{index}", mutant.data)
        target = str(TARGETS / mutant.base.target) if mutant.base.target else None
        cases[mutant.id] = Case(mutant.id, mutant.base.name, mutant.description)
        requests[mutant.id] = Request(drafter=folder, target=target)
    return cases, requests


def run_drafters(engine: str, pythons: Sequence[Path], requests: Mapping[str, Any]) -> list[dict[str, dict[str, Any]]]:
    """Every request through `engine` in each interpreter, side by side (one adapter process each), offline as
    the differential suite runs them."""
    from dflash_cfg.sources import adapters

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    names = sorted(requests)
    batch = [requests[n] for n in names]
    with ThreadPoolExecutor(len(pythons)) as pool:
        futures = [
            pool.submit(adapters.run, python, engine, batch, env=env, timeout=1500.0)  # type: ignore[arg-type]
            for python in pythons
        ]
        return [{n: asdict(r) for n, r in zip(names, f.result(), strict=True)} for f in futures]


ORACLE_ENGINE = {"vllm": "vllm", "vllm-config": "vllm", "sglang": "sglang", "sglang-dflash": "sglang"}


def run_launches(python: Path, runs: Sequence[OracleRun]) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for run in runs:
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1"}
        for key, value in run.env.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        done = subprocess.run(
            [str(python), str(ROOT / "tests" / "engines" / "launch_oracle.py")],
            input=json.dumps(run.request), capture_output=True, text=True, cwd=run.cwd, env=env, timeout=1500,
            check=False,
        )  # fmt: skip
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
            items = run.request.get("cases") or run.request.get("lines") or []
            out[run.name] = [{"refused": f"the oracle failed: {tail}"}] * len(items)
        else:
            out[run.name] = json.loads(done.stdout)
    return out


def launch_item(run: OracleRun, index: int, folder: Path) -> str:
    """One launch of a run, readable and the same on every machine (the temporary folder left out)."""
    items = run.request.get("cases") or run.request.get("lines") or []
    shown = json.dumps(items[index], sort_keys=True) if index < len(items) else "?"
    shown = shown.replace(str(folder) + "/", "").replace(str(ROOT) + "/", "")
    if len(shown) > 240:
        shown = shown[:237] + "..."
    return f"{run.name} #{index}: {shown}"


def _cached(path: Path, key: str, compute: Callable[[], Any]) -> Any:
    """`compute()`'s JSON result kept in `path` under `key`: an unchanged re-run reads it instead."""
    if path.exists():
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept.get("key") == key:
            return kept["value"]
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, "value": value}, sort_keys=True), encoding="utf-8")
    return value


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _phase(label: str, start: float, timings: list[tuple[str, float]]) -> float:
    now = time.monotonic()
    timings.append((label, now - start))
    print(f"upgrade: {label}: {now - start:.0f} s", file=sys.stderr)
    return now


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("release", help="NAME==VERSION: the engine release to move the lock to")
    parser.add_argument(
        "--lock-out",
        type=Path,
        help="write the new lock here and leave the repository's lock, PINNED and cited_lines.py as they are "
        "(the suite runs it with DFLASH_CFG_ENGINES_LOCK=PATH); default: rewrite them in place",
    )
    parser.add_argument("--report", type=Path, help="default: docs/releases/NAME-VERSION.md")
    args = parser.parse_args(argv)
    m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9_.-]*)==([^\s]+)", args.release)
    if m is None:
        parser.error("the release is NAME==VERSION, e.g. vllm==0.34.0")
    name, version = canonicalize_name(m.group(1)), m.group(2)
    if name not in ENGINES:
        parser.error(f"{name} is not one of the locked engines ({', '.join(ENGINES)})")
    timings: list[tuple[str, float]] = []
    started = clock = time.monotonic()

    current = build.default_lock()
    lock_text = current.read_text(encoding="utf-8")
    lock = parse_lock(lock_text)
    if name not in lock.pins:
        parser.error(f"{name} is not pinned in {_rel(current)}")
    old_version = lock.pins[name][1]
    old_python = build.engine_python(lock=current)
    old_site = citations.site_packages(old_python)
    clock = _phase(f"the current venv ({name} {old_version})", clock, timings)

    wants = requirements(release_metadata(name, version))
    before_meta = installed_metadata(old_site, name)
    before = requirements(before_meta[1]) if before_meta else []
    others = {}
    for engine in ENGINES:
        if engine == name or engine not in lock.pins:
            continue
        found = installed_metadata(old_site, engine)
        if found is not None:
            others[f"{engine} {found[0]}"] = requirements(found[1])
    pins = compare(lock, (name, old_version, version), wants, before, others)
    pins = [settle(p, newest(move_spec(p)), lock) if p.verdict == "move" else p for p in pins]
    moves = {name: version, **{p.name: p.to for p in pins if p.verdict == "move" and p.to}}
    new_text = rewrite_lock(lock_text, moves)
    adopted = args.lock_out is None
    new_lock = current if adopted else args.lock_out.resolve()
    new_lock.parent.mkdir(parents=True, exist_ok=True)
    new_lock.write_text(new_text, encoding="utf-8")
    if adopted:
        PINNED_FILE.write_text(rewrite_pinned(PINNED_FILE.read_text(encoding="utf-8"), moves), encoding="utf-8")
    print(f"upgrade: wrote {_rel(new_lock)}" + (" and dflash_cfg/pinned.py" if adopted else ""), file=sys.stderr)
    clock = _phase("the lock re-frozen", clock, timings)

    new_python = build.engine_python(lock=new_lock)
    new_site = citations.site_packages(new_python)
    clock = _phase(f"the new venv ({name} {version})", clock, timings)

    work = build.cache_dir() / f"upgrade-{name}"
    if True:  # the same folders on every run, so that paths in messages do not differ between runs
        root = work / "drafters"
        root.mkdir(parents=True, exist_ok=True)
        cases, requests = drafter_cases(root, name)
        key = _digest(str(old_python), str(new_python), build.lock_hash(current), build.lock_hash(new_lock),
                      _adapters_digest(), {k: r.to_json() for k, r in requests.items()})  # fmt: skip
        old_records, new_records = _cached(
            work / f"records-{old_version}-{version}.json",
            key,
            lambda: run_drafters(name, [old_python, new_python], requests),
        )
        clock = _phase(f"{len(requests)} drafters through both releases", clock, timings)

        folder = work / "launches"
        folder.mkdir(parents=True, exist_ok=True)
        runs = [r for r in oracle_runs(folder) if ORACLE_ENGINE[str(r.request["engine"])] == name]
        launch_key = _digest(key, [(r.name, r.request, r.env) for r in runs],
                             (ROOT / "tests" / "engines" / "launch_oracle.py").read_text(encoding="utf-8"))  # fmt: skip

        def both() -> list[dict[str, list[dict[str, Any]]]]:
            with ThreadPoolExecutor(2) as pool:
                futures = [pool.submit(run_launches, p, runs) for p in (old_python, new_python)]
                return [f.result() for f in futures]

        old_answers, new_answers = _cached(work / f"launches-{old_version}-{version}.json", launch_key, both)
        clock = _phase(f"{len(runs)} launch runs through both releases", clock, timings)

    def where_old(where: str | None) -> str | None:
        return frame_qualname(old_site, where)

    def where_new(where: str | None) -> str | None:
        return frame_qualname(new_site, where)

    changes = {c: tuple(record_changes(old_records[c], new_records[c], where_old, where_new)) for c in sorted(cases)}
    launches: dict[str, tuple[str, ...]] = {}
    launch_count = 0
    for run in runs:
        for i, (a, b) in enumerate(zip(old_answers[run.name], new_answers[run.name], strict=False)):
            launch_count += 1
            if differ := answer_changes(a, b):
                launches[launch_item(run, i, folder)] = tuple(differ)

    from dflash_cfg.lint.engines import READS
    from dflash_cfg.lint.rules import ALL

    cited = citations.collect()
    spans_old = {c: (citations.resolve(old_site, c), normalized_source(old_site, c)) for c in cited}
    spans_new = {c: (citations.resolve(new_site, c), normalized_source(new_site, c)) for c in cited}
    changed_code = cited_changes(
        cited,
        spans_old,
        spans_new,
        {k: r.source for k, r in READS.items()},
        {r.id: (tuple(read.name for read in r.reads), r.doc) for r in ALL},
    )
    if adopted:
        # Untagged citations now name the new release: PINNED as just written, not as this process imported it.
        from dflash_cfg.model import Engine, is_engine
        from dflash_cfg.pinned import PINNED

        pinned: dict[Engine, str] = {**PINNED, **{k: v for k, v in moves.items() if is_engine(k) and k in PINNED}}
        result = citations.resolve_all(new_site, pinned=pinned)
        table = citations.merged(result, citations.table_lines())
        citations.TABLE.write_text(citations.render(table, pinned), encoding="utf-8")
    clock = _phase("citations resolved in both", clock, timings)
    if adopted:
        # The keys each engine reads, recorded again by running the new release (the other releases' entries kept).
        recorded = engine_keys.table()
        for reader, (release, read) in engine_keys.installed(new_python).items():
            recorded.setdefault(reader, {})[release] = read
        engine_keys.write(recorded)
        clock = _phase("engine keys recorded", clock, timings)

    notes = []
    if any(p.verdict == "stuck" for p in pins):
        notes.append("A pin that cannot move is kept; the new venv is built with it (see the coexistence above).")
    report = Report(
        name=name,
        old=old_version,
        new=version,
        lock_path=_rel(new_lock),
        pins=tuple(pins),
        engine_notes=tuple(engine_requirement_notes(name, version, others)),
        cases=cases,
        changes=changes,
        launches=launches,
        launch_count=launch_count,
        cited=tuple(changed_code),
        cited_count=len(cited),
        adopted=adopted,
        notes=tuple(notes),
    )
    out = args.report or RELEASES / f"{name}-{version}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(report), encoding="utf-8")
    _phase("report written", clock, timings)
    print(f"upgrade: wrote {_rel(out)} ({time.monotonic() - started:.0f} s in all)", file=sys.stderr)
    suite = ("" if adopted else f"DFLASH_CFG_ENGINES_LOCK={_rel(new_lock)} ") + "./dev test tests/engines"
    print(f"upgrade: now run the engine suite on the new lock:\n    {suite}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

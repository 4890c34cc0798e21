"""Benchmark of `dflash-cfg catalog update`: repos per second against a Hub with the latency of a real one.

Run from the repository root:  .venv/bin/python bench/bench_catalog.py   (--runs N, --latency S, --jobs N)

The Hub is tests/publisherhub.py's, on loopback in this process: `populate` publishes 200 repos of five authors
(drafters of every format, plain models, gated repos, the targets the drafters name), and every answer waits
`--latency` seconds first (50 ms by default, about a request to the real Hub from a data centre in another region).
Each run is a whole `dflash-cfg catalog update AUTHOR... --format json` process with HF_TOKEN set (the gated repos
are read too) and a catalog of its own (a fresh XDG_CACHE_HOME), so every run reads every repo:

  [1] a first update: every author listed, every drafter's model_info and config.json, every base model;
  [2] the same update again on the catalog [1] wrote: every commit is known, so only the listings are read.

Printed per run: the process's wall time, the run's own time (the JSON's `seconds`: no interpreter start or
imports), the Hub requests it made; then the medians, as repos listed per second of each. Timings depend on the
machine and its load: a script, never a test.

Exit: 0 measured, 2 the benchmark could not run (a run exited non-zero, its JSON did not account for every repo).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from runs import BenchError

if TYPE_CHECKING:
    from publisherhub import PublisherHub

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Run:
    wall: float  # seconds, the whole process
    own: float  # seconds, as the run reports them
    repos: int  # repos listed
    requests: int


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--runs", type=int, default=5, help="runs of [1] and of [2] (default 5); the median is reported")
    p.add_argument("--latency", type=float, default=0.05, help="seconds every answer of the Hub waits (default 0.05)")
    p.add_argument("--count", type=int, default=200, help="repos the authors publish (default 200)")
    p.add_argument("--jobs", type=int, default=None, help="catalog update --jobs (default: its own default)")
    p.add_argument("--seed", type=int, default=0, help="seed of the population")
    p.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter; dflash-cfg is the console script beside it (default: this interpreter)",
    )
    args = p.parse_args(argv)
    if args.runs < 1 or args.count < 1 or args.latency < 0:
        p.error("--runs and --count must be at least 1, --latency at least 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return bench(args)
    except BenchError as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        return 2


def bench(args: argparse.Namespace) -> int:
    python = str(Path(args.python).absolute())
    script = Path(python).parent / "dflash-cfg"
    if not script.is_file():
        raise BenchError(f"no dflash-cfg console script beside {python}")
    sys.path.insert(0, str(ROOT / "tests"))
    from publisherhub import PublisherHub, populate

    work = Path(tempfile.mkdtemp(prefix="dflash-cfg-bench-catalog-"))
    try:
        with PublisherHub() as hub:
            population = populate(hub, seed=args.seed, count=args.count)
            hub.faults.latency = args.latency
            base_env = dict(os.environ, NO_COLOR="1", HF_ENDPOINT=hub.endpoint, HF_TOKEN=hub.token)
            base_env.pop("HF_HUB_OFFLINE", None)
            argv = [python, str(script), "catalog", "update", *population.authors, "--format", "json"]
            if args.jobs is not None:
                argv += ["--jobs", str(args.jobs)]
            print(
                f"hub    {hub.endpoint}: {len(population.repos)} repos of {len(population.authors)} authors "
                f"({len(population.drafters)} drafters), {args.latency * 1000:g} ms a request"
            )
            print(f"run    {' '.join(argv[1:])}")
            first: list[Run] = []
            again: list[Run] = []
            for i in range(args.runs):
                env = dict(base_env, XDG_CACHE_HOME=str(work / f"run-{i}"), HF_HUB_CACHE=str(work / f"hf-{i}"))
                first.append(timed(argv, env, hub, len(population.repos)))
                again.append(timed(argv, env, hub, len(population.repos)))
                print(f"  {i + 1}/{args.runs}  [1] {line(first[-1])}   [2] {line(again[-1])}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(summary("[1] first update", first))
    print(summary("[2] again, nothing new", again))
    return 0


def timed(argv: list[str], env: dict[str, str], hub: PublisherHub, expected: int) -> Run:
    before = len(hub.requests)
    start = time.perf_counter()
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise BenchError(f"catalog update exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    doc = json.loads(proc.stdout)
    repos = sum(author["listed"] or 0 for author in doc["authors"])
    if repos != expected:
        raise BenchError(f"the run listed {repos} repos, the hub has {expected}")
    return Run(wall=wall, own=float(doc["seconds"]), repos=repos, requests=len(hub.requests) - before)


def line(run: Run) -> str:
    return f"{run.wall:6.2f} s ({run.own:5.2f} s own, {run.requests:4d} requests)"


def summary(name: str, runs: list[Run]) -> str:
    wall = statistics.median(r.wall for r in runs)
    own = statistics.median(r.own for r in runs)
    repos = runs[0].repos
    return (
        f"{name:<24} median {wall:6.2f} s: {repos / wall:6.1f} repos/s "
        f"(the run's own {own:5.2f} s: {repos / own:6.1f} repos/s; n={len(runs)})"
    )


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark of `dflash-cfg audit` against the loopback Hub of the tests (tests/publisherhub.py), served from this
process while each audit runs as a process of its own.

Run from the repository root:  .venv/bin/python bench/bench_audit.py   (--quick: fewer rounds)

  1. throughput: repos per second of `audit AUTHOR...` over the 200-repo population with 50 ms of latency on every
     request (a Hub across a network), at the default --jobs, with HF_TOKEN (the gated repos and bases are read too);
     median of the rounds. Target: >= 10 repos/s.
  2. peak memory of `audit AUTHOR... --format json` over 1,000 generated repos (populate(count=1000)), no latency:
     the process tree's summed Pss (and RSS), median of the runs; the same over 200 repos, so the growth per repo
     shows that rows are all the run keeps. Targets: <= 150 MiB (as check's 10,000-file tree), and <= 32 KiB more
     per repo.
Every run gets a cache directory (XDG_CACHE_HOME) no run has used: no journal to reuse, no transformers view cached,
as a first audit. The floor (`python -c "from transformers import Qwen3Config"`, what any check pays) is shown for
scale.

Exit: 0 targets met, 1 a target missed (0 with --no-fail), 2 the benchmark itself could not run.
This is a script, not a test: timings never belong in the test suite.
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
from pathlib import Path

from runs import BenchError, FreshCaches, Memory, peak_memory

ROOT = Path(__file__).resolve().parent.parent
LATENCY = 0.05  # seconds added to every request of [1]
THROUGHPUT_TARGET = 10.0  # repos per second, [1]
MEMORY_TARGET_MIB = 150.0  # peak Pss of the 1,000-repo audit, [2]
GROWTH_TARGET_KIB = 32.0  # peak Pss per repo more, from 200 to 1,000 repos, [2]
FINDINGS_OK = frozenset({0, 1})  # the populations hold deliberately broken drafters: exit 1
FLOOR_CODE = "from transformers import Qwen3Config"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="3 rounds of [1] and one memory run of each size")
    p.add_argument("--rounds", type=int, default=None, help="rounds of [1] (default 5; --quick 3)")
    p.add_argument("--memory-rounds", type=int, default=None, help="runs of each size of [2] (default 3; --quick 1)")
    p.add_argument("--repos", type=int, default=200, help="repos of the population of [1] (default 200)")
    p.add_argument("--memory-repos", type=int, default=1000, help="repos of the large population of [2]")
    p.add_argument("--jobs", type=int, default=None, help="--jobs of the audits (default: audit's own)")
    p.add_argument("--python", default=sys.executable, help="interpreter running dflash-cfg (default: this one)")
    p.add_argument("--no-fail", action="store_true", help="report only: exit 0 even if a target is missed")
    args = p.parse_args(argv)
    args.rounds = args.rounds if args.rounds is not None else (3 if args.quick else 5)
    args.memory_rounds = args.memory_rounds if args.memory_rounds is not None else (1 if args.quick else 3)
    if min(args.rounds, args.memory_rounds, args.repos, args.memory_repos) < 1:
        p.error("rounds and sizes must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        return bench(args)
    except BenchError as exc:
        print(f"bench_audit: error: {exc}", file=sys.stderr)
        return 2


def bench(args: argparse.Namespace) -> int:
    try:
        from publisherhub import PublisherHub, populate
    except ImportError as exc:
        raise BenchError(f"needs the test dependencies (pip install -e . --group test): {exc}") from None
    python = str(Path(args.python).absolute())
    work = Path(tempfile.mkdtemp(prefix="dflash-cfg-bench-audit-"))
    fresh = FreshCaches(work / "caches")
    results: list[tuple[str, str, bool]] = []
    try:
        print(f"python {python}")
        print(f"host   {os.cpu_count()} CPUs, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        floor = peak_memory([python, "-c", FLOOR_CODE], dict(os.environ), frozenset({0}))
        print(f"floor  {FLOOR_CODE!r}: peak Pss {floor.pss_mib:.1f} MiB, RSS {floor.rss_mib:.1f} MiB")

        with PublisherHub() as hub:
            pop = populate(hub, seed=0, count=args.repos)
            env = _env(hub.endpoint, hub.token, work)
            audit = _command(python, pop.authors, args.jobs)
            expected = len(pop.drafters)
            print(
                f"\n[1] {' '.join(audit[2:])}: {expected} drafter repos of {len(pop.repos)}, "
                f"{LATENCY * 1000:.0f} ms per request"
            )
            _check_run(audit, fresh.env(env), expected)  # warm-up (bytecode, page cache) and a check of the report
            hub.faults.latency = LATENCY
            rates: list[float] = []
            requests: list[int] = []
            for i in range(args.rounds):
                before = len(hub.requests)
                seconds = _timed(audit, fresh.env(env))
                rates.append(expected / seconds)
                requests.append(len(hub.requests) - before)
                print(f"  round {i + 1}: {seconds:.2f} s, {expected / seconds:.1f} repos/s, {requests[-1]} requests")
            rate = statistics.median(rates)
            ok = rate >= THROUGHPUT_TARGET
            print(
                f"  median {rate:.1f} repos/s ({statistics.median(requests) / expected:.1f} requests a repo)"
                f"   target >= {THROUGHPUT_TARGET:g}: {'MET' if ok else 'MISSED'}"
            )
            results.append((f"audit repos/s at {LATENCY * 1000:.0f} ms", f"{rate:.1f} (>= {THROUGHPUT_TARGET:g})", ok))

        peaks: dict[int, Memory] = {}
        for size in (args.repos, args.memory_repos):
            with PublisherHub() as hub:
                pop = populate(hub, seed=0, count=size)
                env = _env(hub.endpoint, hub.token, work)
                audit = _command(python, pop.authors, args.jobs)
                print(f"\n[2] {' '.join(audit[2:])}: {len(pop.drafters)} drafter repos of {len(pop.repos)}, no latency")
                _check_run(audit, fresh.env(env), len(pop.drafters))
                runs = [peak_memory(audit, fresh.env(env), FINDINGS_OK) for _ in range(args.memory_rounds)]
                for run in runs:
                    print(f"  peak Pss {run.pss_mib:.1f} MiB, RSS {run.rss_mib:.1f} MiB, {run.seconds:.1f} s")
                peaks[size] = Memory(
                    statistics.median(r.pss_mib for r in runs),
                    statistics.median(r.rss_mib for r in runs),
                    max(r.processes for r in runs),
                    statistics.median(r.seconds for r in runs),
                )
                print(
                    f"  median peak Pss {peaks[size].pss_mib:.1f} MiB, RSS {peaks[size].rss_mib:.1f} MiB "
                    f"({len(pop.drafters) / peaks[size].seconds:.0f} repos/s without latency)"
                )
        big = peaks[args.memory_repos]
        ok = big.pss_mib <= MEMORY_TARGET_MIB
        print(f"  {args.memory_repos} repos: target <= {MEMORY_TARGET_MIB:g} MiB: {'MET' if ok else 'MISSED'}")
        results.append(
            (f"peak Pss, {args.memory_repos} repos", f"{big.pss_mib:.1f} MiB (<= {MEMORY_TARGET_MIB:g})", ok)
        )
        if args.memory_repos > args.repos:
            growth = (big.pss_mib - peaks[args.repos].pss_mib) * 1024 / (args.memory_repos - args.repos)
            ok = growth <= GROWTH_TARGET_KIB
            print(f"  growth {growth:.1f} KiB a repo   target <= {GROWTH_TARGET_KIB:g}: {'MET' if ok else 'MISSED'}")
            results.append(("peak Pss per repo more", f"{growth:.1f} KiB (<= {GROWTH_TARGET_KIB:g})", ok))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\nsummary")
    for what, figure, met in results:
        print(f"  {'MET   ' if met else 'MISSED'} {what}: {figure}")
    return 0 if args.no_fail or all(met for _, _, met in results) else 1


def _env(endpoint: str, token: str, work: Path) -> dict[str, str]:
    env = dict(os.environ, NO_COLOR="1", HF_ENDPOINT=endpoint, HF_TOKEN=token)
    env.update(HF_HOME=str(work / "hf-home"), HF_HUB_CACHE=str(work / "hf-cache"), HF_HUB_DISABLE_TELEMETRY="1")
    env.pop("HF_HUB_OFFLINE", None)
    return env


def _command(python: str, authors: Sequence[str], jobs: int | None) -> list[str]:
    script = Path(python).parent / "dflash-cfg"
    if not script.is_file():
        raise BenchError(f"no dflash-cfg console script beside {python}")
    return [python, str(script), "audit", *authors, "--format", "json", *(["--jobs", str(jobs)] if jobs else [])]


def _timed(argv: Sequence[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    if done.returncode not in FINDINGS_OK:
        raise BenchError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return time.perf_counter() - started


def _check_run(argv: Sequence[str], env: dict[str, str], expected: int) -> None:
    """One untimed run whose report must judge every drafter: a benchmark of an audit that read nothing would
    measure nothing."""
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env)
    if done.returncode not in FINDINGS_OK:
        raise BenchError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    summary = json.loads(done.stdout)["summary"]
    if summary["judged"] != expected or summary["repos"] != expected:
        raise BenchError(f"the audit judged {summary['judged']} of {expected} drafter repos: {summary}")


if __name__ == "__main__":
    raise SystemExit(main())

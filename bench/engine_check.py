"""What preflight's engine step costs: `preflight` of the same launch with `--no-engine-check`, with the engine
step asked (its cache emptied first), and repeated with the step's answer cached.

Run from the repository root:  .venv/bin/python bench/engine_check.py [--rounds N] [--engine-python PY]

The launch is the repaired upstream drafter with its target, once as `PY -m sglang.launch_server` and once as
`PY -m vllm.entrypoints.openai.api_server`, PY the pinned engine venv's python (`./dev engines`). First the step
asked (its cache emptied) against no step, interleaved, --rounds times; then the step cached against no step,
interleaved, --repeat-rounds times (a run right after an engine's seconds of work would be a slower baseline).
Compared by their medians. Targets: the asked step adds <= 20 s; a repeated preflight, its answer cached, costs
<= 1.2 times one without the step.

Exit: 0 targets met, 1 missed (0 with --no-fail), 2 the benchmark itself could not run (a preflight exited 2,
or a run's engine_check was not what the benchmark means to measure: asked, or cached).
A script, not a test: timings never belong in the test suite.
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
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parent.parent
DRAFTER = ROOT / "fixtures" / "upstream" / "z-lab__Qwen3.6-27B-DFlash"
TARGET = ROOT / "fixtures" / "targets" / "Qwen__Qwen3.6-27B"
BUDGET = 20.0  # seconds the asked engine step may add
RATIO = 1.2  # a cached repeat / a preflight without the step


def launches(python: str) -> dict[str, list[str]]:
    spec = json.dumps({"method": "dflash", "model": str(DRAFTER), "num_speculative_tokens": 15})
    return {
        "sglang": [python, "-m", "sglang.launch_server", "--model-path", str(TARGET), "--speculative-algorithm",
                   "DFLASH", "--speculative-draft-model-path", str(DRAFTER), "--speculative-num-draft-tokens", "16"],
        "vllm": [python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(TARGET), "--speculative-config",
                 spec],
    }  # fmt: skip


def timed(argv: list[str], cache: str, cached: bool | None) -> tuple[float, float | None]:
    """Seconds of one preflight (JSON output), and of its engine step as engine_check reports it; `cached`:
    what its engine_check.cached must say (None: the step is off)."""
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env={**_env(), "XDG_CACHE_HOME": cache})
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):
        unmeasurable(f"{' '.join(argv[:4])} ... exited {done.returncode}: {done.stderr.strip()[-300:]}")
    step = json.loads(done.stdout)["engine_check"]
    want = "not-run" if cached is None else "read"
    if step["status"] != want or (cached is not None and step["cached"] is not cached):
        unmeasurable(f"expected engine_check {want}, cached {cached}; got {step}")
    return took, step["seconds"]


def unmeasurable(reason: str) -> NoReturn:
    """The benchmark cannot measure what it means to: exit 2, not a missed target."""
    print(f"bench: {reason}", file=sys.stderr)
    raise SystemExit(2)


def _env() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="pairs without / asked (default 3)")
    parser.add_argument("--repeat-rounds", type=int, default=15, help="pairs without / cached (default 15)")
    parser.add_argument("--engine-python", help="the engine venv's python (default: ./dev engines builds or finds it)")
    parser.add_argument("--no-fail", action="store_true")
    args = parser.parse_args()
    if args.rounds < 1 or args.repeat_rounds < 1:
        parser.error("--rounds and --repeat-rounds take at least 1")
    python = args.engine_python
    if python is None:
        found = subprocess.run([sys.executable, str(ROOT / "tests" / "engines" / "build.py")], capture_output=True,
                               text=True)  # fmt: skip
        if found.returncode != 0:
            print(f"bench: no engine venv: {found.stderr.strip()[-300:]}", file=sys.stderr)
            return 2
        python = found.stdout.strip()
    tool = str(Path(sys.executable).with_name("dflash-cfg"))
    missed = False
    with tempfile.TemporaryDirectory() as cache:
        answers = Path(cache) / "dflash-cfg" / "engine"  # the engine step's cache (sources/engine_cache.py)
        for engine, launch in launches(python).items():
            without_argv = [tool, "preflight", "--format", "json", "--no-engine-check", "--", *launch]
            with_argv = [tool, "preflight", "--format", "json", "--", *launch]
            timed(without_argv, cache, None)  # untimed: the transformers views cached, the files in the page cache
            without, asked = [], []
            for _ in range(args.rounds):
                without.append(timed(without_argv, cache, None)[0])
                shutil.rmtree(answers, ignore_errors=True)  # untimed: the engine is asked
                asked.append(timed(with_argv, cache, False)[0])
            baseline, cached, steps = [], [], []
            for _ in range(args.repeat_rounds):  # the last asked run left its answer in the cache
                baseline.append(timed(without_argv, cache, None)[0])
                took, step = timed(with_argv, cache, True)
                cached.append(took)
                steps.append(step or 0.0)
            a, b = statistics.median(without), statistics.median(asked)
            base, c = statistics.median(baseline), statistics.median(cached)
            step_ok, repeat_ok = b - a <= BUDGET, c / base <= RATIO
            missed |= not (step_ok and repeat_ok)
            print(
                f"{engine:7} preflight median {a:6.2f} s without the engine step, {b:6.2f} s with it asked: "
                f"+{b - a:.2f} s (x{b / a:.1f}); target <= +{BUDGET:.0f} s: {'met' if step_ok else 'MISSED'}"
                f"  [{args.rounds} rounds; without {', '.join(f'{t:.2f}' for t in without)};"
                f" asked {', '.join(f'{t:.1f}' for t in asked)}]\n"
                f"{'':7} repeated, its answer cached: median {c:6.2f} s against {base:.2f} s without the step:"
                f" x{c / base:.3f}; target <= x{RATIO}: {'met' if repeat_ok else 'MISSED'} (the cached step"
                f" itself: median {1000 * statistics.median(steps):.0f} ms)"
                f"  [{args.repeat_rounds} rounds; without {', '.join(f'{t:.2f}' for t in baseline)};"
                f" cached {', '.join(f'{t:.2f}' for t in cached)}]"
            )
    return 1 if missed and not args.no_fail else 0


if __name__ == "__main__":
    sys.exit(main())

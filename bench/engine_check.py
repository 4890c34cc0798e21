"""What preflight's engine step costs: `preflight` of the same launch with and without `--no-engine-check`.

Run from the repository root:  .venv/bin/python bench/engine_check.py [--rounds N] [--engine-python PY]

The launch is the repaired upstream drafter with its target, once as `PY -m sglang.launch_server` and once as
`PY -m vllm.entrypoints.openai.api_server`, PY the pinned engine venv's python (`./dev engines`). Pairs are
interleaved (without, with, without, ...) and compared by their medians. Target: the step adds <= 20 s.

Exit: 0 target met, 1 missed (0 with --no-fail), 2 the benchmark itself could not run.
A script, not a test: timings never belong in the test suite.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRAFTER = ROOT / "fixtures" / "upstream" / "z-lab__Qwen3.6-27B-DFlash"
TARGET = ROOT / "fixtures" / "targets" / "Qwen__Qwen3.6-27B"
BUDGET = 20.0


def launches(python: str) -> dict[str, list[str]]:
    spec = json.dumps({"method": "dflash", "model": str(DRAFTER), "num_speculative_tokens": 15})
    return {
        "sglang": [python, "-m", "sglang.launch_server", "--model-path", str(TARGET), "--speculative-algorithm",
                   "DFLASH", "--speculative-draft-model-path", str(DRAFTER), "--speculative-num-draft-tokens", "16"],
        "vllm": [python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(TARGET), "--speculative-config",
                 spec],
    }  # fmt: skip


def timed(argv: list[str], cache: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env={**_env(), "XDG_CACHE_HOME": cache})
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"bench: {' '.join(argv[:4])} ... exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return took


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engine-python", help="the engine venv's python (default: ./dev engines builds or finds it)")
    parser.add_argument("--no-fail", action="store_true")
    args = parser.parse_args()
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
        for engine, launch in launches(python).items():
            without, with_ = [], []
            for _ in range(args.rounds):
                without.append(timed([tool, "preflight", "--no-engine-check", "--", *launch], cache))
                with_.append(timed([tool, "preflight", "--", *launch], cache))
            a, b = statistics.median(without), statistics.median(with_)
            ok = b - a <= BUDGET
            missed |= not ok
            print(
                f"{engine:7} preflight median {a:6.2f} s without the engine step, {b:6.2f} s with it: "
                f"+{b - a:.2f} s (x{b / a:.1f}); target <= +{BUDGET:.0f} s: {'met' if ok else 'MISSED'}"
                f"  [{args.rounds} rounds; without {', '.join(f'{t:.1f}' for t in without)};"
                f" with {', '.join(f'{t:.1f}' for t in with_)}]"
            )
    return 1 if missed and not args.no_fail else 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark of dflash-cfg: every target of the speed issue, each against a baseline run in the same run.

Run from the repository root:  ./dev bench   or   .venv/bin/python bench/bench.py   (see bench/README.md)

  1. cold check of one drafter, empty cache: median check / median floor <= 1.15.
  2. warm re-check (content cache filled): median check / median `check-jsonschema --schemafile TRIVIAL` <= 0.9,
     and no transformers import.
  3. check of a tree of 1000 distinct drafters, empty cache: median tree / median floor <= 1.5.
  4. the pre-commit fix hook (`fix --yes --no-backup --no-lock --exit-non-zero-on-fix --min-severity warning`)
     on an unchanged clean file: median fix hook / median check hook (`check FILE`), same file, same cache, <= 1.3.
  5. peak memory of a check of a tree of 10,000 drafters, empty cache: the whole process tree (pool workers
     included), pages counted once (sum of Pss), <= 150 MiB.
  6. a model dir on a loopback S3 server (moto, started here as the tests start it): a warm check of
     s3://bucket/model / a warm check of the same dir on local disk, both in one process, <= 1.3; and the bytes
     it receives, counted in dflash-cfg's remote reader, <= config.json + one header range (8 + n) per shard.
     The same pair as whole processes, and one bare GET's latency, are reported beside it.
The floor is `python -c "from transformers import Qwen3Config"` with the same interpreter: every check that
reads a file the way engines do pays that import, so it is the part dflash-cfg cannot remove.
Timed pairs are interleaved (baseline, measured, baseline, ...) and compared by their medians.
Every run uses a cache directory of the benchmark's own (XDG_CACHE_HOME), never the user's.

The parts beside this script: runs.py (a command timed, its process tree's peak memory, its imports),
drafter_tree.py (the generated tree of [3] and [5]) and remote_check.py ([6]).

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

from drafter_tree import build_tree, validate_tree_run, view_cost
from remote_check import measure_remote, remote_child
from runs import (
    BenchError,
    FreshCaches,
    importtime,
    interleave,
    peak_memory,
    ratio_line,
    report_imports,
    report_warm_imports,
    run_timed,
)

ROOT = Path(__file__).resolve().parent.parent
BASE_NAME = "z-lab__Qwen3.5-4B-DFlash"
BASE_CANDIDATES = (ROOT / "fixtures" / "upstream" / BASE_NAME / "config.json",)

COLD_TARGET = 1.15  # ratio of medians, check / floor
WARM_TARGET = 0.9  # ratio of medians, warm check / check-jsonschema
TREE_TARGET = 1.5  # ratio of medians, tree check / floor
FIX_TARGET = 1.3  # ratio of medians, fix hook / check hook
MEMORY_TARGET_MIB = 150.0  # peak of the process tree's summed Pss, 10,000-drafter tree
FIX_HOOK = ("fix", "--yes", "--no-backup", "--no-lock", "--exit-non-zero-on-fix", "--min-severity", "warning")
TRIVIAL_SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
FLOOR_CODE = "from transformers import Qwen3Config"


def find_base() -> Path:
    for path in BASE_CANDIDATES:
        if path.is_file():
            return path
    raise BenchError("no base drafter config: looked for " + ", ".join(map(str, BASE_CANDIDATES)))


# --------------------------------------------------------------------------------------------------
# Main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="5 rounds of everything and one memory run (about 2 min)")
    p.add_argument("--rounds", type=int, default=None, help="rounds of [1], [2] and [4] (default 15; --quick 5)")
    p.add_argument("--tree-rounds", type=int, default=None, help="rounds of [3] (default 7; --quick 5)")
    p.add_argument("--memory-rounds", type=int, default=None, help="runs of [5] (default 3; --quick 1)")
    p.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter for the floor and the check; dflash-cfg is the console script beside it "
        "(default: this interpreter)",
    )
    p.add_argument(
        "--config",
        type=Path,
        default=None,
        help=f"the real drafter config for the single-file runs (default: {BASE_NAME}/config.json)",
    )
    p.add_argument(
        "--keep-tree",
        metavar="DIR",
        type=Path,
        default=None,
        help="generate the tree of [3] in DIR (must be absent or empty) and keep it",
    )
    p.add_argument("--tree-size", type=int, default=1000, help="drafter configs in the tree of [3] (default 1000)")
    p.add_argument(
        "--memory-tree-size", type=int, default=10000, help="drafter configs in the tree of [5] (default 10000)"
    )
    p.add_argument("--seed", type=int, default=20260806, help="seed of the tree generator")
    p.add_argument("--no-fail", action="store_true", help="report only: exit 0 even if a target is missed")
    p.add_argument("--remote-only", action="store_true", help="run only [6], the model dir on a loopback S3 server")
    p.add_argument("--remote-child", nargs=3, metavar=("DIR", "URL", "ROUNDS"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    quick = args.quick
    args.rounds = args.rounds if args.rounds is not None else (5 if quick else 15)
    args.tree_rounds = args.tree_rounds if args.tree_rounds is not None else (5 if quick else 7)
    args.memory_rounds = args.memory_rounds if args.memory_rounds is not None else (1 if quick else 3)
    if min(args.rounds, args.tree_rounds, args.memory_rounds, args.tree_size, args.memory_tree_size) < 1:
        p.error("rounds and tree sizes must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.remote_child:
        return remote_child(Path(args.remote_child[0]), args.remote_child[1], int(args.remote_child[2]))
    try:
        return bench(args)
    except BenchError as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        return 2


def bench(args: argparse.Namespace) -> int:
    python = str(Path(args.python).absolute())  # not resolved: a venv's python is a symlink that must stay one
    script = Path(python).parent / "dflash-cfg"
    if not script.is_file():
        raise BenchError(f"no dflash-cfg console script beside {python}")
    config = args.config or find_base()
    keep = None if args.keep_tree is None else args.keep_tree.absolute()
    if keep is not None and keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
        raise BenchError(f"--keep-tree {keep}: must be absent or an empty directory")
    schema_tool = Path(python).parent / "check-jsonschema"
    if not schema_tool.is_file():
        raise BenchError(
            f"no check-jsonschema beside {python} (the reference of [3]): pip install -e . --group dev installs it"
        )
    # Everything the runs write (caches, the trivial schema, the tree) lives here and goes afterwards.
    work = Path(tempfile.mkdtemp(prefix="dflash-cfg-bench-"))
    try:
        if args.remote_only:
            results = measure_remote(args, python, script, work)
            return summarise(results, args.no_fail)
        return measure(args, python, script, schema_tool, config, keep, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(
    args: argparse.Namespace, python: str, script: Path, schema_tool: Path, config: Path, keep: Path | None, work: Path
) -> int:
    base_env = dict(os.environ, NO_COLOR="1")
    base_env.pop("DFLASH_CFG_JOBS", None)  # the default: a pool for a tree, one process otherwise
    # [1], [3] and [5] are cold: each timed run starts with an empty cache of its own, so it computes every
    # transformers view and pays writing the entries too, as a first run does. [2] and [4] read a filled one.
    cold, warm_cache = FreshCaches(work / "cache-cold"), work / "cache-warm"
    env = cold.env(base_env)  # for the runs whose cache does not matter
    warm_env = dict(base_env, XDG_CACHE_HOME=str(warm_cache))
    floor = [python, "-c", FLOOR_CODE]
    # The console script through the same interpreter the floor uses (its shebang names the same one).
    check = [python, str(script), "check", str(config)]
    findings_ok = frozenset({0, 1})

    probe = "import sys; from importlib.metadata import version; print(version('transformers'), sys.version.split()[0])"
    version = subprocess.run([python, "-c", probe], capture_output=True, text=True, env=env, check=False)
    print(
        f"python {python}  (python {version.stdout.split()[-1] if version.stdout else '?'}, "
        f"transformers {version.stdout.split()[0] if version.stdout else '?'})"
    )
    print(f"host   {os.cpu_count()} CPUs, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"floor  {' '.join(floor)}")
    print(f"rounds {args.rounds} ([1], [2], [4]), {args.tree_rounds} ([3]), {args.memory_rounds} ([5])")
    print(f"cache  XDG_CACHE_HOME under {work}: a fresh one for every cold run ([1], [3], [5]), filled for [2], [4]")

    # Warm-up (untimed): byte-compiles anything stale and fills the page cache for every command. With
    # PYTHONDONTWRITEBYTECODE set nothing would ever be cached and every timed run would compile transformers
    # (about 0.5 s): the warm-up alone writes bytecode, where the timed runs (same environment) will read it.
    compile_env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if "PYTHONDONTWRITEBYTECODE" in env:
        print("note   PYTHONDONTWRITEBYTECODE is set: the untimed warm-up runs without it, to cache bytecode")
    run_timed(floor, compile_env, frozenset({0}))
    run_timed(check, cold.env(compile_env), findings_ok)

    results: list[tuple[str, str, bool]] = []  # (what, figure, met)

    print(f"\n[1] cold check of one drafter: {' '.join(check)}  (empty cache each run)")
    f1, c1 = interleave(args.rounds, floor, check, env, findings_ok, "check", fresh=cold)
    print(f1.line())
    print(c1.line())
    ratio, ok = ratio_line("check/floor", f1, c1, COLD_TARGET)
    results.append(("cold check / floor", f"{ratio:.3f} (<= {COLD_TARGET})", ok))

    check_imports = importtime(check, cold.env(env), findings_ok)
    floor_imports = importtime(floor, env, frozenset({0}))
    torch_ok = report_imports(check_imports, floor_imports)
    results.append(("no torch in a cold check", "yes" if torch_ok else "torch imported", torch_ok))

    schema = work / "trivial-schema.json"
    schema.write_text(json.dumps(TRIVIAL_SCHEMA) + "\n")
    reference = [python, str(schema_tool), "--schemafile", str(schema), str(config)]
    print(f"\n[2] warm re-check: {' '.join(check)}  (cache filled by one untimed run)")
    print(f"  reference: {' '.join(reference)}")
    run_timed(reference, compile_env, frozenset({0}))  # warm-up, and the schema must accept the file
    run_timed(check, warm_env, findings_ok)  # fills the cache
    f2, w2 = interleave(args.rounds, reference, check, warm_env, findings_ok, "warm", floor_label="schema")
    print(f2.line())
    print(w2.line())
    ratio, ok = ratio_line("warm/check-jsonschema", f2, w2, WARM_TARGET)
    results.append(("warm re-check / check-jsonschema", f"{ratio:.3f} (<= {WARM_TARGET})", ok))
    no_transformers = report_warm_imports(
        importtime(check, warm_env, findings_ok), importtime(reference, warm_env, frozenset({0}))
    )
    results.append(("warm re-check without transformers", "yes" if no_transformers else "imported", no_transformers))

    if keep is not None:
        root = keep
        root.mkdir(parents=True, exist_ok=True)
    else:
        root = work / "tree"
        root.mkdir()
    started = time.perf_counter()
    tree = build_tree(root, config, args.tree_size, args.seed)
    defects = ", ".join(f"{k} {v}" for k, v in sorted(tree.defects.items()))
    print(
        f"\n[3] tree: {tree.drafters} distinct drafter configs + {tree.skipped} non-DFlash targets in {root}"
        f"  (generated in {time.perf_counter() - started:.1f} s; seed {args.seed})"
    )
    print(f"  defects: {sum(tree.defects.values())} files ({defects})")
    tree_cmd = [python, str(script), "check", str(root), "--format", "json"]
    print(f"  command: {' '.join(tree_cmd)}  (empty cache each run)")
    summary = validate_tree_run(tree_cmd, cold.env(base_env), tree)  # doubles as the warm-up
    print(
        f"  JSON summary: {summary['files']} files, {summary['errors']} errors, {summary['warnings']} warnings, "
        f"{summary['infos']} infos (exit {summary['exit_code']})"
    )
    f3, t3 = interleave(args.tree_rounds, floor, tree_cmd, base_env, findings_ok, "tree", fresh=cold)
    print(f3.line())
    print(t3.line())
    ratio, ok = ratio_line("tree/floor", f3, t3, TREE_TARGET)
    print(f"  per config beyond the floor: {(t3.median - f3.median) / tree.drafters * 1000:.3f} ms")
    # What no reading or linting code can save: each distinct drafter is built by the engines' config class.
    per_view = view_cost(python, root, base_env)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    least = f3.median + tree.drafters * per_view / cores
    print(
        f"  the view through the config class alone: {per_view * 1000:.3f} ms per config in one process; the floor "
        f"plus that on {cores} cores = {least / f3.median:.3f} x floor, before any reading or linting"
    )
    results.append((f"tree of {tree.drafters} / floor", f"{ratio:.3f} (<= {TREE_TARGET})", ok))
    if keep is not None:
        print(f"  tree kept in {root}")

    clean = work / "clean" / "config.json"
    clean.parent.mkdir()
    clean.write_bytes(config.read_bytes())
    hook_check = [python, str(script), "check", str(clean)]
    hook_fix = [python, str(script), *FIX_HOOK, str(clean)]
    print("\n[4] the fix hook on an unchanged clean file, against the check hook on the same file (cache filled)")
    print(f"  check hook: {' '.join(hook_check)}")
    print(f"  fix hook:   {' '.join(hook_fix)}")
    run_timed(hook_check, warm_env, frozenset({0}))  # fills the cache; the file must be clean
    run_timed(hook_fix, warm_env, frozenset({0}))  # nothing to change: exit 0
    before = clean.read_bytes()
    f4, x4 = interleave(args.rounds, hook_check, hook_fix, warm_env, frozenset({0}), "fix", floor_label="check")
    if clean.read_bytes() != before:
        raise BenchError("the fix hook changed the clean file")
    print(f4.line())
    print(x4.line())
    ratio, ok = ratio_line("fix hook/check hook", f4, x4, FIX_TARGET)
    results.append(("fix hook / check hook", f"{ratio:.3f} (<= {FIX_TARGET})", ok))
    fix_imports = importtime(hook_fix, warm_env, frozenset({0}))
    loaded = sorted(
        {i.name for i in fix_imports if i.name in ("transformers", "deepdiff", "dflash_cfg.write.verified")}
    )
    print(
        f"  the fix hook imported: {', '.join(loaded) if loaded else 'neither transformers, deepdiff nor the writer'}"
    )

    big = work / "tree-memory"
    big.mkdir()
    started = time.perf_counter()
    big_tree = build_tree(big, config, args.memory_tree_size, args.seed + 1)
    big_cmd = [python, str(script), "check", str(big), "--format", "json"]
    print(
        f"\n[5] peak memory: {' '.join(big_cmd)}  ({big_tree.drafters} drafters + {big_tree.skipped} targets, "
        f"generated in {time.perf_counter() - started:.1f} s; empty cache each run)"
    )
    runs = []
    for _ in range(args.memory_rounds):
        runs.append(peak_memory(big_cmd, cold.env(base_env), findings_ok))
    shutil.rmtree(big, ignore_errors=True)
    for m in runs:
        print(
            f"  peak Pss (sum over the tree) {m.pss_mib:7.1f} MiB   peak RSS sum {m.rss_mib:7.1f} MiB   "
            f"processes {m.processes}   {m.seconds:.1f} s"
        )
    pss = statistics.median(m.pss_mib for m in runs)
    ok = pss <= MEMORY_TARGET_MIB
    print(
        f"  median peak Pss {pss:.1f} MiB   target <= {MEMORY_TARGET_MIB:.0f} MiB: {'MET' if ok else 'MISSED'}"
        "  (RSS sums count the pages forked workers share with the main process once per process)"
    )
    results.append((f"peak memory, tree of {big_tree.drafters}", f"{pss:.1f} MiB Pss (<= {MEMORY_TARGET_MIB:.0f})", ok))

    results += measure_remote(args, python, script, work)
    return summarise(results, args.no_fail)


def summarise(results: list[tuple[str, str, bool]], no_fail: bool) -> int:
    print("\nsummary")
    for what, figure, met in results:
        print(f"  {what:<40} {figure:<28} {'MET' if met else 'MISSED'}")
    missed = [what for what, _, met in results if not met]
    print(f"\nresult: {'all targets met' if not missed else 'MISSED: ' + ', '.join(missed)}")
    return 1 if missed and not no_fail else 0


if __name__ == "__main__":
    sys.exit(main())

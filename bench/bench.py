"""Benchmark of dflash-cfg: every target of the speed issue, each against a baseline run in the same run.

Run from the repository root:  ./dev bench   or   .venv/bin/python bench/bench.py   (see bench/README.md)

  1. cold check of one drafter, empty cache: median check / median floor <= 1.15.
  2. warm re-check (content cache filled): median check / median `check-jsonschema --schemafile TRIVIAL` <= 0.9,
     and no transformers import.
  3. check of a tree of 1000 distinct drafters, empty cache: median tree / median floor <= 2.0.
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

Exit: 0 targets met, 1 a target missed (0 with --no-fail), 2 the benchmark itself could not run.
This is a script, not a test: timings never belong in the test suite.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BASE_NAME = "z-lab__Qwen3.5-4B-DFlash"
BASE_CANDIDATES = (ROOT / "fixtures" / "upstream" / BASE_NAME / "config.json",)
TARGETS_DIR = ROOT / "fixtures" / "targets"

COLD_TARGET = 1.15  # ratio of medians, check / floor
WARM_TARGET = 0.9  # ratio of medians, warm check / check-jsonschema
TREE_TARGET = 2.0  # ratio of medians, tree check / floor
FIX_TARGET = 1.3  # ratio of medians, fix hook / check hook
REMOTE_TARGET = 1.3  # ratio of medians, warm check of s3://... / warm check of the same local dir
MEMORY_TARGET_MIB = 150.0  # peak of the process tree's summed Pss, 10,000-drafter tree
FIX_HOOK = ("fix", "--yes", "--no-backup", "--no-lock", "--exit-non-zero-on-fix", "--min-severity", "warning")
TRIVIAL_SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
FLOOR_CODE = "from transformers import Qwen3Config"
# Reported (never a failure) except torch, which a check must never import.
WATCHED = ("torch", "safetensors", "numpy", "deepdiff", "huggingface_hub")


class BenchError(Exception):
    """The benchmark cannot measure what it means to measure: exit 2."""


# --------------------------------------------------------------------------------------------------
# Timing


def run_timed(argv: Sequence[str], env: dict[str, str], ok: frozenset[int]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        raise BenchError(f"{' '.join(argv)} exited {proc.returncode} (expected {sorted(ok)})")
    return elapsed


@dataclass(frozen=True)
class Series:
    name: str
    times: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def line(self) -> str:
        return (
            f"  {self.name:<7} median {ms(self.median):>9}   min {ms(min(self.times)):>9}"
            f"   max {ms(max(self.times)):>9}   (n={len(self.times)})"
        )


def interleave(
    rounds: int,
    floor: Sequence[str],
    measured: Sequence[str],
    env: dict[str, str],
    measured_ok: frozenset[int],
    label: str,
    fresh: FreshCaches | None = None,
    floor_label: str = "floor",
) -> tuple[Series, Series]:
    """floor, measured, floor, measured, ...: both see the same machine load, round by round.

    With `fresh`, each measured run gets a cache directory no run has used (a cold run)."""
    floor_times: list[float] = []
    measured_times: list[float] = []
    progress = sys.stderr.isatty()
    sys.stdout.flush()
    for i in range(rounds):
        floor_times.append(run_timed(floor, env, frozenset({0})))
        measured_times.append(run_timed(measured, fresh.env(env) if fresh is not None else env, measured_ok))
        if progress:
            print(f"\r  round {i + 1}/{rounds}", end="", file=sys.stderr, flush=True)
    if progress:
        print("\r" + " " * 30 + "\r", end="", file=sys.stderr, flush=True)
    return Series(floor_label, tuple(floor_times)), Series(label, tuple(measured_times))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def ratio_line(name: str, base: Series, measured: Series, target: float) -> tuple[float, bool]:
    ratio = measured.median / base.median
    paired = statistics.median(m / b for m, b in zip(measured.times, base.times, strict=True))
    ok = ratio <= target
    print(
        f"  ratio of medians {name} = {ratio:.3f}  (median of per-round ratios {paired:.3f})"
        f"   target <= {target}: {'MET' if ok else 'MISSED'}"
    )
    return ratio, ok


# --------------------------------------------------------------------------------------------------
# Peak memory of a process tree (Linux /proc)


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def _kib(pid: int, file: str, key: str) -> int:
    try:
        with open(f"/proc/{pid}/{file}") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclass(frozen=True)
class Memory:
    pss_mib: float  # peak of the sum of Pss over the tree: shared pages counted once
    rss_mib: float  # peak of the sum of RSS: pages shared by forked workers counted in each
    processes: int  # most processes seen at once
    seconds: float


def peak_memory(argv: Sequence[str], env: dict[str, str], ok: frozenset[int], interval: float = 0.02) -> Memory:
    """Run `argv`, sampling the memory of it and all its descendants until it exits."""
    if not os.path.isdir("/proc/self"):
        raise BenchError("peak memory needs Linux /proc")
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    pss = rss = 0
    most = 0
    while proc.poll() is None:
        kids = _children()
        tree, i = [proc.pid], 0
        while i < len(tree):
            tree += kids.get(tree[i], [])
            i += 1
        pss = max(pss, sum(_kib(p, "smaps_rollup", "Pss:") for p in tree))
        rss = max(rss, sum(_kib(p, "status", "VmRSS:") for p in tree))
        most = max(most, len(tree))
        time.sleep(interval)
    if proc.returncode not in ok:
        raise BenchError(f"{' '.join(argv)} exited {proc.returncode}")
    return Memory(pss / 1024, rss / 1024, most, time.perf_counter() - started)


# --------------------------------------------------------------------------------------------------
# -X importtime


@dataclass(frozen=True)
class Import:
    name: str
    depth: int
    self_us: int
    cumulative_us: int


def importtime(argv: Sequence[str], env: dict[str, str], ok: frozenset[int]) -> list[Import]:
    proc = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        check=False,
        text=True,
    )
    if proc.returncode not in ok:
        raise BenchError(f"importtime run of {' '.join(argv)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return parse_importtime(proc.stderr)


def parse_importtime(stderr: str) -> list[Import]:
    """Lines look like `import time:       412 |      15339 |   transformers.utils`; depth = indent / 2."""
    out = []
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        fields = line[len("import time:") :].split("|")
        if len(fields) != 3 or not fields[0].strip().isdigit():
            continue  # the header line
        name = fields[2].rstrip()
        stripped = name.lstrip(" ")
        out.append(Import(stripped, (len(name) - len(stripped) - 1) // 2, int(fields[0]), int(fields[1])))
    return out


def top_level(imports: list[Import]) -> set[str]:
    return {i.name.split(".")[0] for i in imports}


def print_top(imports: list[Import]) -> None:
    for i in sorted(imports, key=lambda i: i.cumulative_us, reverse=True)[:10]:
        print(f"  {i.cumulative_us / 1000:>8.1f} ms cumulative {i.self_us / 1000:>7.1f} ms self   {i.name}")


def report_imports(check: list[Import], floor: list[Import]) -> bool:
    """Print the top-10 and the watched packages; False if torch was imported."""
    print("\n-X importtime of one cold check (top 10 by cumulative time; nested entries are included in their parents)")
    print_top(check)
    total = sum(i.self_us for i in check) / 1000
    floor_total = sum(i.self_us for i in floor) / 1000
    print(
        f"  all imports: {len(check)} modules, {total:.1f} ms  (floor: {len(floor)} modules, {floor_total:.1f} ms;"
        " importtime itself inflates both)"
    )
    names = {i.name for i in check}
    print("  watched packages:")
    for pkg in WATCHED:
        hit = [i for i in check if i.name == pkg or i.name.startswith(pkg + ".")]
        if hit:
            cost = max(i.cumulative_us for i in hit) / 1000
            first = pkg if pkg in names else hit[0].name
            note = "  <- must be absent" if pkg == "torch" else ""
            print(f"    {pkg:<16} imported ({len(hit)} modules, {first} {cost:.1f} ms cumulative){note}")
        else:
            print(f"    {pkg:<16} not imported")
    extra = ", ".join(sorted(top_level(check) - top_level(floor))) or "(none)"
    print(
        textwrap.fill(
            extra,
            120,
            initial_indent="  top-level packages a check imports beyond the floor: ",
            subsequent_indent="    ",
        )
    )
    return not any(i.name == "torch" or i.name.startswith("torch.") for i in check)


def report_warm_imports(warm: list[Import], reference: list[Import]) -> bool:
    """What a warm check imports, heaviest first; False if it imported transformers."""
    print("\n-X importtime of one warm check (top 10 by cumulative time)")
    print_top(warm)
    total = sum(i.self_us for i in warm) / 1000
    ref_total = sum(i.self_us for i in reference) / 1000
    print(
        f"  all imports: {len(warm)} modules, {total:.1f} ms  (check-jsonschema: {len(reference)} modules, "
        f"{ref_total:.1f} ms)"
    )
    # What a warm check imports that check-jsonschema does not: the candidates for a lazy import.
    extra: dict[str, int] = {}
    for i in warm:
        if i.name.split(".")[0] not in top_level(reference):
            top = i.name.split(".")[0]
            extra[top] = extra.get(top, 0) + i.self_us
    shown = ", ".join(f"{name} {us / 1000:.1f} ms" for name, us in sorted(extra.items(), key=lambda kv: -kv[1])[:12])
    print(
        textwrap.fill(
            shown or "(none)",
            120,
            initial_indent="  top-level packages beyond check-jsonschema (self time): ",
            subsequent_indent="    ",
        )
    )
    transformers = [i for i in warm if i.name == "transformers" or i.name.startswith("transformers.")]
    state = f"IMPORTED ({len(transformers)} modules)  <- must be absent" if transformers else "not imported"
    print(f"  transformers: {state}")
    return not transformers


# --------------------------------------------------------------------------------------------------
# The tree: distinct, realistic drafter configs with a sprinkling of defects and skipped targets

ORGS = ("z-lab", "acme-ai", "specdec-lab", "ml-team", "mirror", "research")
# (hidden_size, heads, kv heads, intermediate_size, vocab_size, eos, special-token range for the mask id)
SHAPES = (
    (2560, 32, 8, 9216, 248320, 248044, (248044, 248320)),
    (4096, 32, 8, 12288, 248320, 248044, (248044, 248320)),
    (5120, 40, 8, 17408, 248320, 248044, (248044, 248320)),
    (2048, 16, 4, 6144, 248320, 248044, (248044, 248320)),
    (2560, 32, 8, 9728, 151936, 151645, (151643, 151936)),
    (4096, 32, 8, 12288, 151936, 151645, (151643, 151936)),
    (2880, 64, 8, 2880, 201088, 200002, (199998, 201088)),
)
DEFECTS = (
    "duplicate-key",
    "use-sliding-window-false",
    "use-sliding-window-absent",
    "all-full-with-window",
    "layer-types-length",
    "tap-out-of-range",
    "mask-top-level-only",
    "bom",
    "truncated",
)
DEFECT_RATE = 0.12
SLIDING, FULL = "sliding_attention", "full_attention"


def find_base() -> Path:
    for path in BASE_CANDIDATES:
        if path.is_file():
            return path
    raise BenchError("no base drafter config: looked for " + ", ".join(map(str, BASE_CANDIDATES)))


def taps_for(rng: random.Random, depth: int) -> list[int]:
    """K taps spread over the target like the DFlash selections (first near the bottom, last below the top)."""
    k = rng.choice((4, 5, 5, 6, 8, 8))
    start = rng.choice((0, 1, 1, 2))
    end = depth - rng.choice((2, 3, 3, 4))
    taps = sorted({round(start + j * (end - start) / (k - 1)) for j in range(k)})
    return taps


def layout(rng: random.Random, n: int) -> list[str]:
    style = rng.choices(("s-then-f", "alternate", "f-then-s", "all-sliding", "all-full"), (60, 12, 8, 10, 10))[0]
    if style == "s-then-f":
        return [SLIDING] * (n - 1) + [FULL]
    if style == "alternate":
        return [SLIDING if i % 2 == 0 else FULL for i in range(n - 1)] + [FULL]
    if style == "f-then-s":
        return [FULL] + [SLIDING] * (n - 1)
    if style == "all-sliding":
        return [SLIDING] * n
    return [FULL] * n


def drafter(rng: random.Random, base: dict[str, Any]) -> dict[str, Any]:
    cfg = copy.deepcopy(base)
    hidden, heads, kv, inter, vocab, eos, (lo, hi) = rng.choice(SHAPES)
    depth = rng.choice((24, 28, 32, 36, 40, 48, 64))
    layers = rng.choices((1, 2, 3, 4, 5, 6, 8), (2, 3, 4, 8, 30, 45, 8))[0]
    types = layout(rng, layers)
    window = rng.choice((512, 1024, 2048, 4096, 4096, 8192))
    cfg.update(
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        intermediate_size=inter,
        vocab_size=vocab,
        eos_token_id=eos,
        num_hidden_layers=layers,
        max_window_layers=layers,
        num_target_layers=depth,
        layer_types=types,
        sliding_window=window if SLIDING in types or rng.random() < 0.3 else None,
        use_sliding_window=SLIDING in types,
        max_position_embeddings=rng.choice((32768, 40960, 131072, 262144)),
    )
    dflash = cfg["dflash_config"]
    dflash["block_size"] = rng.choice((8, 10, 16, 16, 16))
    dflash["mask_token_id"] = rng.randrange(lo, hi) if rng.random() < 0.8 else rng.randrange(0, vocab)
    dflash["target_layer_ids"] = taps_for(rng, depth)
    if rng.random() < 0.25:  # older layout: block_size mirrored at the top level, flat rope_theta
        cfg["block_size"] = dflash["block_size"]
    if rng.random() < 0.3:
        cfg.pop("rope_parameters", None)
        cfg["rope_theta"] = rng.choice((1000000, 10000000))
        cfg["rope_scaling"] = None
    else:
        cfg["rope_parameters"] = {"rope_theta": rng.choice((1000000, 10000000)), "rope_type": "default"}
    cfg["transformers_version"] = rng.choice(("4.57.3", "5.3.0", "5.7.0"))
    return dict(sorted(cfg.items()))  # the key order save_pretrained writes


def render(rng: random.Random, cfg: dict[str, Any]) -> tuple[bytes, str | None]:
    defect = rng.choice(DEFECTS) if rng.random() < DEFECT_RATE else None
    layers = cfg["num_hidden_layers"]
    if defect == "use-sliding-window-false":
        cfg["layer_types"] = [SLIDING] * (layers - 1) + [FULL]
        cfg["sliding_window"] = cfg["sliding_window"] or 4096
        cfg["use_sliding_window"] = False
    elif defect == "use-sliding-window-absent":
        cfg["layer_types"] = [SLIDING] * (layers - 1) + [FULL]
        cfg["sliding_window"] = cfg["sliding_window"] or 2048
        del cfg["use_sliding_window"]
    elif defect == "all-full-with-window":  # the stale-file signature
        cfg["layer_types"] = [FULL] * layers
        cfg["sliding_window"] = cfg["sliding_window"] or 4096
    elif defect == "layer-types-length":
        cfg["layer_types"] = [*cfg["layer_types"], FULL]
    elif defect == "tap-out-of-range":
        taps = cfg["dflash_config"]["target_layer_ids"]
        taps[-1] = cfg["num_target_layers"] + rng.choice((0, 1, 3))
    elif defect == "mask-top-level-only":
        cfg["mask_token_id"] = cfg["dflash_config"].pop("mask_token_id")
    text = json.dumps(cfg, indent=2) + "\n"
    if defect == "duplicate-key":  # json.load keeps the last one silently
        key, value = rng.choice((("sliding_window", 2048), ("num_hidden_layers", 5), ("vocab_size", 151936)))
        text = text.replace("{\n", f"{{\n  {json.dumps(key)}: {json.dumps(value)},\n", 1)
    data = text.encode()
    if defect == "bom":
        data = b"\xef\xbb\xbf" + data
    elif defect == "truncated":
        data = data[: len(data) * 2 // 3]
    return data, defect


def place(rng: random.Random, i: int) -> Path:
    org = rng.choice(ORGS)
    name = f"{rng.choice(('Qwen3', 'Qwen3.5', 'Qwen3.6', 'gpt-oss', 'LLaMA3.1'))}-DFlash-{i:04d}"
    style = rng.random()
    if style < 0.7:
        return Path(org) / name / "config.json"
    if style < 0.85:
        return Path(org) / name / f"checkpoint-{rng.randrange(1, 60) * 500}" / "config.json"
    snapshot = f"{rng.getrandbits(160):040x}"  # a Hugging Face cache layout (blobs/ is skipped, snapshots/ is not)
    return Path("hf-cache") / f"models--{org}--{name}" / "snapshots" / snapshot / "config.json"


def targets(base: dict[str, Any]) -> list[tuple[Path, bytes]]:
    """A few non-DFlash target configs: each must be skipped, not linted."""
    out = []
    if TARGETS_DIR.is_dir():
        for path in sorted(TARGETS_DIR.glob("*/config.json")):
            out.append((Path("targets") / path.parent.name / "config.json", path.read_bytes()))
    plain = {k: v for k, v in base.items() if k not in ("dflash_config", "auto_map", "num_target_layers")}
    for n, (layers, ctx) in enumerate(((36, 40960), (28, 32768), (48, 131072), (64, 262144))):
        cfg = dict(
            plain,
            architectures=["Qwen3ForCausalLM"],
            num_hidden_layers=layers,
            max_window_layers=layers,
            layer_types=[FULL] * layers,
            use_sliding_window=False,
            sliding_window=None,
            max_position_embeddings=ctx,
        )
        out.append((Path("targets") / f"local-target-{n}" / "config.json", (json.dumps(cfg, indent=2) + "\n").encode()))
    return out


@dataclass(frozen=True)
class Tree:
    root: Path
    drafters: int
    skipped: int
    defects: dict[str, int]


def build_tree(root: Path, base_path: Path, count: int, seed: int) -> Tree:
    rng = random.Random(seed)
    base = json.loads(base_path.read_bytes())
    seen: set[bytes] = set()
    defects: dict[str, int] = {}
    used: set[Path] = set()
    i = 0
    while len(seen) < count:
        data, defect = render(rng, drafter(rng, base))
        if data in seen:
            continue
        seen.add(data)
        rel = place(rng, i)
        while rel.parent in used:  # one config.json per directory
            rel = place(rng, i)
        used.add(rel.parent)
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
        if defect:
            defects[defect] = defects.get(defect, 0) + 1
        i += 1
    skipped = targets(base)
    for rel, data in skipped:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return Tree(root, count, len(skipped), defects)


def validate_tree_run(argv: Sequence[str], env: dict[str, str], tree: Tree) -> dict[str, Any]:
    """One untimed run: the JSON must account for every file, so the timed runs measure real work."""
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=env, check=False)
    if proc.returncode not in (0, 1):
        raise BenchError(f"tree check exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}")
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise BenchError(f"tree check did not print JSON: {exc}") from None
    files = report.get("files", [])
    summary: dict[str, Any] = dict(report.get("summary", {}))
    kinds = {k: sum(1 for f in files if f.get("kind") == k) for k in ("dflash", "dflash2", "skipped")}
    if summary.get("files", 0) < tree.drafters or summary.get("files") != tree.drafters + tree.skipped:
        raise BenchError(f"JSON summary reports {summary.get('files')} files, expected {tree.drafters + tree.skipped}")
    if kinds["dflash"] != tree.drafters or kinds["skipped"] != tree.skipped:
        raise BenchError(f"kinds {kinds}, expected {tree.drafters} dflash and {tree.skipped} skipped")
    if report.get("errors"):
        raise BenchError(f"tree check reported errors: {report['errors'][:3]}")
    summary["exit_code"] = proc.returncode
    return summary


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


class FreshCaches:
    """Cache directories (XDG_CACHE_HOME) for cold runs: a new, never used one for each run.

    Not one directory emptied before each run: deleting the last run's thousand entries just before the
    next run makes ext4 charge that run's file creations several times their cost (a new directory of a
    never-emptied parent does not), which would measure the benchmark's own clean-up. The directories go
    with the work directory at the end."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0

    def env(self, base: dict[str, str]) -> dict[str, str]:
        self.count += 1
        return dict(base, XDG_CACHE_HOME=str(self.root / f"run-{self.count}"))


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


# --------------------------------------------------------------------------------------------------
# [6] A model dir on object storage (a loopback S3 server)


def remote_model(folder: Path) -> int:
    """A small drafter dir with two shards and 32 MiB of tensor data; returns the bytes a check may read:
    config.json plus 8 + n header bytes per shard."""
    sys.path.insert(0, str(ROOT / "tests"))
    from checkpoints import save, small_config, small_shapes

    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(small_config(), indent=2) + "\n")
    shapes = small_shapes()
    names = sorted(shapes)
    save(folder / "model-a.safetensors", {n: shapes[n] for n in names[: len(names) // 2]} | {"pad.a": (2048, 4096)})
    save(folder / "model-b.safetensors", {n: shapes[n] for n in names[len(names) // 2 :]} | {"pad.b": (2048, 4096)})
    allowed = len((folder / "config.json").read_bytes())
    for shard in sorted(folder.glob("*.safetensors")):
        with open(shard, "rb") as fh:
            allowed += 8 + int.from_bytes(fh.read(8), "little")
    return allowed


def remote_child(folder: Path, url: str, rounds: int) -> int:
    """In one process: warm both, then local, remote, local, remote, ...; prints the times and the bytes."""
    import dflash_cfg
    from dflash_cfg.sources import remote

    def once(path: str) -> float:
        start = time.perf_counter()
        report = dflash_cfg.check([path])
        elapsed = time.perf_counter() - start
        if report.errors or not report.files:
            raise BenchError(f"check {path}: {report.errors or 'no file'}")
        return elapsed

    for _ in range(3):  # imports, the content cache, connections
        once(str(folder))
        once(url)
    local, far, received = [], [], []
    for _ in range(rounds):
        local.append(once(str(folder)))
        before = remote.bytes_received()
        far.append(once(url))
        received.append(remote.bytes_received() - before)
    print(json.dumps({"local": local, "remote": far, "bytes": received}))
    return 0


def measure_remote(args: argparse.Namespace, python: str, script: Path, work: Path) -> list[tuple[str, str, bool]]:
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from s3server import S3Server
    except ImportError as exc:
        raise BenchError(f"[6] needs the test dependencies (pip install -e . --group test): {exc}") from None
    folder = work / "remote-model"
    allowed = remote_model(folder)
    server = S3Server(work)
    print("\n[6] a model dir on a loopback S3 server (moto, request signatures checked) against the same dir on disk")
    try:
        server.start()
        bucket = server.new_bucket()
        server.upload_dir(bucket, "fleet/drafter", folder)
        url = f"s3://{bucket}/fleet/drafter"
        env = dict(os.environ, NO_COLOR="1", XDG_CACHE_HOME=str(work / "cache-remote"), **server.env())
        client = server.client()
        latency = []
        for _ in range(max(args.rounds, 10)):
            start = time.perf_counter()
            client.get_object(Bucket=bucket, Key="fleet/drafter/config.json")["Body"].read()
            latency.append(time.perf_counter() - start)
        child = subprocess.run(
            [python, str(Path(__file__).resolve()), "--remote-child", str(folder), url, str(args.rounds)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if child.returncode != 0:
            raise BenchError(f"[6] the in-process run failed: {child.stderr.strip()[-2000:]}")
        got = json.loads(child.stdout.strip().splitlines()[-1])
        local, far = Series("local", tuple(got["local"])), Series("s3", tuple(got["remote"]))
        print(f"  in one process, warm (imports, content cache, connections): check {folder}  vs  check {url}")
        print(local.line())
        print(far.line())
        ratio, ok = ratio_line("s3/local", local, far, REMOTE_TARGET)
        print(
            f"  one bare GET of config.json with botocore: median {ms(statistics.median(latency))}; a check of the "
            "s3:// dir makes 4 requests (the listing, config.json, then the 8-byte and the n-byte range of each "
            "shard, each round for all shards at once)"
        )
        most = max(got["bytes"])
        bytes_ok = most <= allowed
        print(
            f"  bytes received per check: {sorted(set(got['bytes']))}; allowed {allowed} (config.json + 8 + n per "
            f"shard; the shards hold {sum(p.stat().st_size for p in folder.glob('*.safetensors'))} bytes): "
            f"{'MET' if bytes_ok else 'MISSED'}"
        )
        check_local = [python, str(script), "check", str(folder)]
        check_far = [python, str(script), "check", url]
        run_timed(check_local, env, frozenset({0, 1}))
        run_timed(check_far, env, frozenset({0, 1}))
        f6, r6 = interleave(args.rounds, check_local, check_far, env, frozenset({0, 1}), "s3", floor_label="local")
        print("  as whole processes, content cache warm (reported, not a target: s3fs and botocore load per process)")
        print(f6.line())
        print(r6.line())
        print(f"  ratio of medians s3/local as processes = {r6.median / f6.median:.3f}")
    finally:
        server.stop()
    return [
        ("warm check s3:// / local (one process)", f"{ratio:.3f} (<= {REMOTE_TARGET})", ok),
        ("bytes read from s3:// per check", f"{most} (<= {allowed})", bytes_ok),
    ]


if __name__ == "__main__":
    sys.exit(main())

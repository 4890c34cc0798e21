"""The generated tree of bench.py's [3] and [5]: distinct, realistic drafter configs (the shapes, attention
layouts, taps and mask ids of the DFlash releases) in the layouts a fleet keeps them in (org/name,
checkpoints, a Hugging Face cache), a sprinkling of defects, and non-DFlash target configs a check must skip;
and the untimed run that proves a check of it accounts for every file.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runs import BenchError

ROOT = Path(__file__).resolve().parent.parent
TARGETS_DIR = ROOT / "fixtures" / "targets"


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


_VIEW_COST = """
import json, statistics, sys, time
from pathlib import Path
from dflash_cfg.sources.views import view
raws = []
for path in sorted(Path(sys.argv[1]).rglob("config.json")):
    try:
        raw = json.loads(path.read_bytes().decode("utf-8-sig"))
    except ValueError:
        continue
    if isinstance(raw, dict) and "dflash_config" in raw:
        raws.append(raw)
view(raws[0])  # transformers is imported here, not timed
rounds = []
for _ in range(3):
    start = time.perf_counter()
    for raw in raws:
        view(raw)
    rounds.append((time.perf_counter() - start) / len(raws))
print(statistics.median(rounds))
"""


def view_cost(python: str, root: Path, env: dict[str, str]) -> float:
    """Seconds per drafter of the tree that the view through the engines' config class takes, in one process:
    the part of a check no reading or linting code can save (each distinct file is built by the class)."""
    out = subprocess.run([python, "-c", _VIEW_COST, str(root)], capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise BenchError(f"[3] timing the config class failed: {out.stderr.strip()[-500:]}")
    return float(out.stdout.strip().splitlines()[-1])

"""How the benchmark (bench.py) measures one command: its wall time (run_timed; interleave runs a baseline and
the measured command round by round, Series and ratio_line compare their medians), the peak memory of its
whole process tree (Linux /proc: the sum of Pss, pages counted once, and of RSS), and what it imports
(-X importtime: the heaviest imports, the watched packages, and what it imports beyond a baseline).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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

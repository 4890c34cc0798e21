"""The hostile-input campaign (issue 21), outside the test run: every surface's generator (tests/fuzz/) at
scale, each input held to its surface's invariants; it prints how many inputs each surface ran and every
defect found, and exits 1 if it found any.

Run: .venv/bin/python tests/fuzz/campaign.py [--scale X] [--seed N] [SURFACE ...]
(surfaces: project-tables, project-files, cache-entries, launch-parse, preflight, s3, signals, engines, gcs, probe;
all by default, about 18,600 inputs at scale 1; s3 starts moto and gcs the GCS emulator, as the tests do, each
behind the fault proxy; signals and engines run real processes; probe serves misbehaving /metrics on loopback).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: helpers, the servers, this package

from fuzz import launch, project
from fuzz.common import Tally, isolated

Surface = Callable[[random.Random, int, Path, Tally], None]


def project_tables(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    where = home / "project" / "dflash-cfg.toml"
    for i in range(n):
        table = project.project_table(rng)
        if (found := project.table_defect(table, where)) is not None:
            tally.defect("project-tables", f"{i}: {found}")
        tally.ran("project-tables")


def project_files(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    for i in range(n):
        folder = home / "project-files" / str(i % 50)
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.toml"):
            old.unlink()
        path = project.toml_file(rng, folder)
        if (found := project.file_defect(path)) is not None:
            tally.defect("project-files", f"{i}: {found}")
        tally.ran("project-files")


def cache_entries(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    for i in range(n):
        if (found := project.cache_defect(project.cache_entry(rng, project.CACHE_KEY), project.CACHE_KEY)) is not None:
            tally.defect("cache-entries", f"{i}: {found}")
        tally.ran("cache-entries")


def launch_parse(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    world = launch.make_world(home / "launch")
    os.chdir(world.root)
    for i in range(n):
        case = launch.launch_case(rng, world)
        launch.write_case(world, case)
        if (found := launch.parse_defect(case)) is not None:
            tally.defect("launch-parse", f"{i}: {found}")
        tally.ran("launch-parse")


def preflight(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    world = launch.make_world(home / "launch")
    os.chdir(world.root)
    before = launch.snapshot(world)
    for i in range(n):
        case = launch.launch_case(rng, world)
        launch.write_case(world, case)
        fmt = rng.choice(["text", "json", "sarif"])
        if (found := launch.preflight_defect(case, fmt, engine_check=rng.random() < 0.05)) is not None:
            tally.defect("preflight", f"{i}: {found}")
        if launch.snapshot(world) != before:
            tally.defect("preflight", f"{i}: the world changed <- {launch.shown(case)}")
            before = launch.snapshot(world)
        tally.ran("preflight")


def s3(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    from fuzz import s3 as surface

    surface.campaign(rng, n, home, tally)


def engines(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    from fuzz import engines as surface

    surface.campaign(rng, n, home, tally)


def gcs(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    from fuzz import gcs as surface

    surface.campaign(rng, n, home, tally)


def probe(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    from fuzz import probe as surface

    surface.campaign(rng, n, home, tally)


def signals(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    from fuzz import signals as surface

    surface.campaign(rng, n, home, tally)


SURFACES: dict[str, tuple[Surface, int]] = {
    "project-tables": (project_tables, 3000),
    "project-files": (project_files, 2000),
    "cache-entries": (cache_entries, 1000),
    "launch-parse": (launch_parse, 4000),
    "preflight": (preflight, 600),
    "s3": (s3, 300),
    "signals": (signals, 200),
    "engines": (engines, 1800),
    "gcs": (gcs, 700),
    "probe": (probe, 5000),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("surfaces", nargs="*", choices=[[], *SURFACES], default=[])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=21)
    options = parser.parse_args()
    chosen = options.surfaces or list(SURFACES)
    tally = Tally()
    started = time.monotonic()
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="dflash-cfg-campaign-") as tmp, isolated(Path(tmp)):
        for name in chosen:
            run, count = SURFACES[name]
            began = time.monotonic()
            run(random.Random(f"{options.seed}-{name}"), max(1, int(count * options.scale)), Path(tmp), tally)
            os.chdir(cwd)
            print(f"{name}: {tally.counts.get(name, 0)} inputs in {time.monotonic() - began:.0f} s", flush=True)
    total = sum(tally.counts.values())
    print(f"{total} inputs in {time.monotonic() - started:.0f} s; {len(tally.found)} defects")
    for what, count in tally.notes.items():
        print(f"  noted {count}x: {what}")
    for line in tally.found[:50]:
        print(" ", line)
    return 1 if tally.found else 0


if __name__ == "__main__":
    raise SystemExit(main())

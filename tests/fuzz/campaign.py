"""A hostile-input campaign over the pure surfaces (not part of the test run): project-config TOML through
the parser and the per-file globs, and result-cache entries through the entry check. Every input must
either parse or be refused with a UsageError naming the file; a cache entry must be a hit or a miss, never
an exception. Run: .venv/bin/python tests/fuzz/campaign.py [N] (default 10,000 per surface)."""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from dflash_cfg.errors import UsageError
from dflash_cfg.model import FIELDS
from dflash_cfg.sources import cache, project

ATOMS: list[Any] = [
    None,
    True,
    0,
    -1,
    10**30,
    1.5,
    float("nan"),
    "",
    "x",
    "a/b",
    "s3://",
    "hf://a/b",
    "[" * 50,
    "**/config.json",
    "models/",
    [],
    {},
    [[]],
    [None],
    {"a": []},
]
KEYS = ["select", "ignore", "fail-on", "per-file-ignores", "models", "path", "upstream", "revision", "target"]


def value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.5:
        return (
            rng.choice(ATOMS)
            if rng.random() < 0.7
            else "".join(rng.choice("[]*?!/.-az") for _ in range(rng.randint(0, 30)))
        )
    if roll < 0.75:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {
        rng.choice(KEYS) if rng.random() < 0.7 else str(value(rng, 4)): value(rng, depth + 1)
        for _ in range(rng.randint(0, 4))
    }


def project_table(rng: random.Random) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for key in rng.sample(["select", "ignore", "fail-on", "per-file-ignores", "models"], rng.randint(0, 5)):
        if key == "models" and rng.random() < 0.7:
            table[key] = [
                {k: value(rng, 3) for k in rng.sample(KEYS[5:], rng.randint(0, 4))} for _ in range(rng.randint(0, 3))
            ]
        elif key == "per-file-ignores" and rng.random() < 0.7:
            table[key] = {str(value(rng, 4)): [rng.choice(["DF105", "DF2", ""])] for _ in range(rng.randint(0, 3))}
        else:
            table[key] = value(rng)
    return table


def cache_entry(rng: random.Random, key: dict[str, Any]) -> Any:
    values = {name: value(rng, 2) if rng.random() < 0.3 else 4 for name in FIELDS}
    eff = {
        "transformers_version": key["transformers"],
        "values": values,
        "error": None,
        "warnings": [],
        "config_class": "Qwen3Config",
    }
    entry: dict[str, Any] = {**key, "effective": eff}
    if rng.random() < 0.2:
        entry = value(rng)
    return entry


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    rng = random.Random(21)
    where = Path("/campaign/dflash-cfg.toml")
    found: list[str] = []
    started = time.monotonic()
    for i in range(n):
        table = project_table(rng)
        try:
            config = project.parse(table, where)
            config.ignored_for(Path("/campaign/models/x/config.json"))
            config.model_for(Path("/campaign/models/x/config.json"))
        except UsageError as exc:
            if str(where) not in str(exc):
                found.append(f"project {i}: refusal without the file: {exc}")
        except Exception as exc:  # noqa: BLE001 - the finding
            found.append(f"project {i}: {type(exc).__name__}: {exc} <- {table!r:.300}")
    key = {
        "format": cache.FORMAT,
        "sha256": "0" * 64,
        "config_class": "q",
        "transformers": "5.24.0",
        "dflash_cfg": "0.1.0",
    }
    for i in range(n):
        entry = cache_entry(rng, key)
        try:
            text = json.dumps(entry, allow_nan=True)
            cache._valid(json.loads(text), key)
        except (ValueError, RecursionError):
            pass
        except Exception as exc:  # noqa: BLE001
            found.append(f"cache {i}: {type(exc).__name__}: {exc}")
    elapsed = time.monotonic() - started
    print(f"{2 * n} inputs ({n} project configs, {n} cache entries) in {elapsed:.1f} s; {len(found)} findings")
    for line in found[:20]:
        print(" ", line)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())

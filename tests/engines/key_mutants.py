"""Mutants made from the recorded engine keys (dflash_cfg/lint/engine_keys.py): for a key some vLLM or SGLang
release's own code reads, on a base drafter that has it, set it to a plausible other value, drop it, move it between
the top level and dflash_config, and retype it (a number as a string, a list as its first element); and plant each
key only one release reads (vLLM 0.34's no_rope_layers) on every base, since the file never has it. Pure and
seeded, like tests/engines/mutants.py, which appends them (family "keys").

Bounded: KEY_LIMIT mutants, the one-release plants always among them and the rest sampled with the seed, so the
differential suite grows by at most KEY_LIMIT cases (~1.5 s each per engine here)."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from typing import Any

from dflash_cfg.lint.engine_keys import KEYS

Config = dict[str, Any]
DC = "dflash_config"
KEY_LIMIT = 60
# The engines whose releases the drafters' own format is run through (speculators reads only its own format).
_ENGINES = ("vllm", "sglang")


def engine_read() -> dict[str, tuple[tuple[str, str], ...]]:
    """Pointer -> the (engine, release)s whose own code reads it (source "engine"), top level and dflash_config."""
    found: dict[str, list[tuple[str, str]]] = {}
    for engine in _ENGINES:
        for release, keys in sorted(KEYS.get(engine, {}).items()):
            for pointer, sources in keys.items():
                top = pointer.count("/") == 1
                if "engine" in sources and (top or (pointer.startswith(f"/{DC}/") and pointer.count("/") == 2)):
                    found.setdefault(pointer, []).append((engine, release))
    return {p: tuple(r) for p, r in sorted(found.items())}


def one_release() -> tuple[str, ...]:
    """Keys exactly one release of an engine reads while another recorded release of it does not."""
    out = []
    for engine in _ENGINES:
        releases = KEYS.get(engine, {})
        if len(releases) < 2:
            continue
        for release, keys in releases.items():
            others = set().union(*(set(k) for r, k in releases.items() if r != release))
            out += [p for p, s in keys.items() if "engine" in s and p not in others and p.count("/") <= 2]
    return tuple(sorted(set(out)))


def _holder(d: Config, pointer: str) -> tuple[Config, str] | None:
    parts = pointer.split("/")[1:]
    node: Any = d
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    return (node, parts[-1]) if isinstance(node, dict) and parts[-1] in node else None


def _other(value: Any) -> Any:
    """A plausible other value of the same type, or None when there is none to make."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1 if value > 0 else 1
    if isinstance(value, float):
        return value * 2 if value else 1.0
    if isinstance(value, list) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return [v + 1 for v in value]
    return None


def _planted(name: str) -> Any:
    """A value for a key the file lacks, by the kind of thing its name says it holds."""
    if name.endswith(("_layers", "_ids")):
        return [1]
    if name.startswith(("use_", "is_", "has_", "add_", "enable")):
        return True
    return 1


Edit = tuple[str, str, Callable[[Config], bool]]


def _edits(pointer: str) -> Iterator[Edit]:
    name = pointer.rsplit("/", 1)[1]
    inner = pointer.startswith(f"/{DC}/")

    def set_other(d: Config) -> bool:
        found = _holder(d, pointer)
        if found is None or (new := _other(found[0][found[1]])) is None:
            return False
        found[0][found[1]] = new
        return True

    def drop(d: Config) -> bool:
        found = _holder(d, pointer)
        if found is None:
            return False
        del found[0][found[1]]
        return True

    def move(d: Config) -> bool:
        found, block = _holder(d, pointer), d.get(DC)
        if found is None or not isinstance(block, dict):
            return False
        (block if not inner else d)[name] = found[0].pop(name)
        return True

    def retype(d: Config) -> bool:
        found = _holder(d, pointer)
        if found is None:
            return False
        value = found[0][found[1]]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            found[0][found[1]] = str(value)
        elif isinstance(value, list) and value:
            found[0][found[1]] = value[0]
        else:
            return False
        return True

    slug = pointer.strip("/").replace("/", ".")
    yield f"set-{slug}", f"{pointer} set to another value of its type", set_other
    yield f"drop-{slug}", f"{pointer} dropped", drop
    where = "the top level" if inner else "dflash_config"
    yield f"move-{slug}", f"{pointer} moved to {where}", move
    yield f"retype-{slug}", f"{pointer} retyped (a number as a string, a list as its first element)", retype


def edits(pointer: str) -> list[Edit]:
    """The set, drop, move and retype edits of `pointer` (each returns False where it does not apply)."""
    return list(_edits(pointer))


def _plant(pointer: str) -> Edit:
    def plant(d: Config) -> bool:
        parts = pointer.split("/")[1:]
        holder = d if len(parts) == 1 else d.get(parts[0])
        if not isinstance(holder, dict) or parts[-1] in holder:
            return False
        holder[parts[-1]] = _planted(parts[-1])
        return True

    slug = pointer.strip("/").replace("/", ".")
    return f"plant-{slug}", f"{pointer}={_planted(pointer.rsplit('/', 1)[1])!r} added (one release reads it)", plant


def candidates(bases: list[tuple[str, Config]]) -> Iterator[tuple[str, str, str, Config]]:
    """(kind, description, base name, mutated data) for every key edit that changes a base, in a fixed order."""
    planted = set(one_release())
    for pointer in engine_read():
        edits = [_plant(pointer)] if pointer in planted else []
        for name, original in bases:
            for kind, description, edit in [*edits, *_edits(pointer)]:
                data = copy.deepcopy(original)
                if edit(data) and data != original:
                    yield kind, description, name, data


def sample(rng: random.Random, found: list[tuple[str, str, str, Config]]) -> list[tuple[str, str, str, Config]]:
    """Every plant, then one base per other edit, then the rest, up to KEY_LIMIT; in their order."""
    keep = {i for i, (kind, *_) in enumerate(found) if kind.startswith("plant-")}
    by_kind: dict[str, list[int]] = {}
    for i, (kind, *_) in enumerate(found):
        by_kind.setdefault(kind, []).append(i)
    firsts = [rng.choice(ids) for kind, ids in by_kind.items() if not kind.startswith("plant-")]
    keep.update(rng.sample(firsts, max(0, min(len(firsts), KEY_LIMIT - len(keep)))))
    return [m for i, m in enumerate(found) if i in keep]

"""Who reads a config.json key, from the keys each engine release was recorded reading (lint.engine_keys, generated
by `./dev engines --keys`). Pure: the data is a module, indexed once at import.

A key is a JSON pointer into the drafter's file ("/hidden_size", "/dflash_config/target_layer_ids"); a reader is
(engine, release). A key is read when some engine's code asked for it or the config class it loads the file through
took it (the sources of lint.engine_keys: both count, since either way the file's value reaches the engine).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from dflash_cfg.lint.engine_keys import KEYS
from dflash_cfg.model import Engine, is_engine, release

Reader = tuple[Engine, str]  # (engine, release), as lint.engine_keys names them: ("vllm", "0.34.0")


def _engine(name: str) -> Engine:
    """An engine of the generated table; any other name is a broken generator, refused at import."""
    if not is_engine(name):
        raise ValueError(f"lint.engine_keys names no engine {name!r}")
    return name


# Every recorded (engine, release), engine by engine, each engine's releases in release order.
_RELEASES: tuple[Reader, ...] = tuple(
    (_engine(engine), r) for engine in sorted(KEYS) for r in sorted(KEYS[engine], key=lambda v: release(v) or ())
)


def _index() -> Mapping[str, tuple[Reader, ...]]:
    found: dict[str, list[Reader]] = {}
    for engine, r in _RELEASES:
        for pointer in KEYS[engine][r]:
            found.setdefault(pointer, []).append((engine, r))
    return MappingProxyType({p: tuple(r) for p, r in sorted(found.items())})


_READERS = _index()
_ALL = frozenset(_READERS)
# A key's parent (its object's pointer) -> the names read in it.
_BY_PARENT: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        parent: frozenset(p.rsplit("/", 1)[1] for p in _ALL if p.rsplit("/", 1)[0] == parent)
        for parent in {p.rsplit("/", 1)[0] for p in _ALL}
    }
)
# The DFlash block and the top level: the two places the engines look for a DFlash key (one falls back to the other).
_DFLASH = "/dflash_config"
# How close a misspelling must be (difflib's ratio) to be named as one: high, because naming a published drafter's
# own key a typo is worse than missing a typo. 0.9 takes one dropped or doubled letter in a name of ten or more
# (target_layers_ids, num_target_layer) and leaves distinct names that share a stem (max_position_embeddings vs
# max_window_layers).
_CUTOFF = 0.9
_MIN_TYPO_LENGTH = 8


def readers(pointer: str) -> tuple[Reader, ...]:
    """The engine releases that read `pointer`, in engine then release order; () when none does."""
    return _READERS.get(pointer, ())


def recorded(engines: Iterable[str]) -> tuple[Reader, ...]:
    """Every release recorded of `engines`, in engine then release order: who "no engine" stands for."""
    wanted = set(engines)
    return tuple(r for r in _RELEASES if r[0] in wanted)


def all_read() -> frozenset[str]:
    """Every pointer some recorded engine release reads."""
    return _ALL


def _normal(name: str) -> str:
    """A name as a different spelling convention writes it: camelCase, kebab-case and snake_case agree."""
    return name.replace("_", "").replace("-", "").lower()


def closest(pointer: str) -> str | None:
    """A read key `pointer` is probably meant as, for a key no engine reads; None when `pointer` is read or nothing
    is close enough. In order: the same name at the other DFlash place (the top level for a dflash_config key and
    back); the same name in another spelling convention at the same place (targetLayerIds); a misspelling of a name
    read at the same place (difflib, a strict cutoff, names of 8 characters or more, one candidate only)."""
    if pointer in _ALL or "/" not in pointer:
        return None
    parent, name = pointer.rsplit("/", 1)
    # Only between the two DFlash places: elsewhere the same name is another object's key (a speculators file's
    # transformer_layer_config is the draft model's config, its top level the speculator's).
    swapped = f"/{name}" if parent == _DFLASH else f"{_DFLASH}/{name}" if parent == "" else None
    if swapped in _READERS:
        return swapped
    siblings = _BY_PARENT.get(parent, frozenset())
    respelled = sorted(s for s in siblings if _normal(s) == _normal(name))
    if respelled:
        return f"{parent}/{respelled[0]}"
    if len(name) < _MIN_TYPO_LENGTH:
        return None
    close = difflib.get_close_matches(name, sorted(siblings), n=2, cutoff=_CUTOFF)
    # Two names as close: no telling which one was meant.
    return f"{parent}/{close[0]}" if len(close) == 1 else None


__all__ = ["Reader", "all_read", "closest", "readers", "recorded"]

"""The keys the engines' DFlash-family source reads (dflash_cfg/lint/engine_source_keys.py) are the installed
engines' own: extracted again here from the engine venv's site-packages and compared with the committed data."""

from __future__ import annotations

from pathlib import Path

from dflash_cfg.pinned import PINNED
from engines import build
from tools.engines import source_keys as engine_source_keys


def test_the_source_keys_are_the_installed_engines(engine_python: Path) -> None:
    site, versions = engine_source_keys.installed(engine_python)
    committed = engine_source_keys.table()
    stale = []
    for engine, (release, entry) in engine_source_keys.wanted(site, versions, PINNED).items():
        old = committed.get(engine, {}).get(release)
        if old != entry:
            gone = sorted(set(old or {}) - set(entry))
            new = sorted(set(entry) - set(old or {}))
            changed = sorted(p for p in set(entry) & set(old or {}) if entry[p] != (old or {})[p])
            stale.append(f"{engine} {release}: new {new}, gone {gone}, changed {changed}")
    lock = "" if build.default_lock() == build.LOCK else f"DFLASH_CFG_ENGINES_LOCK={build.default_lock()} "
    assert not stale, (
        f"stale: run {lock}.venv/bin/python tools/engines/source_keys.py --python {engine_python}\n" + "\n".join(stale)
    )

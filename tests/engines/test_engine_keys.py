"""The keys each engine release reads (dflash_cfg/lint/engine_keys.py) are the installed engines' own: recorded
again here by running them on the differential suite's base drafters, and compared with the committed data."""

from __future__ import annotations

from pathlib import Path

from dflash_cfg.lint import key_reads
from engines import build
from tools.engines import engine_keys


def test_the_recorded_keys_are_the_installed_engines(engine_python: Path) -> None:
    found = engine_keys.wanted(engine_keys.installed(engine_python), build.default_lock() == build.LOCK)
    committed = engine_keys.table()
    stale = []
    for engine, (release, keys) in sorted(found.items()):
        old = committed.get(engine, {}).get(release, {})
        if old != keys:
            stale += [f"{engine} {release}:", *(f"  {line}" for line in engine_keys.diff(old, keys))]
    lock = "" if build.default_lock() == build.LOCK else f"DFLASH_CFG_ENGINES_LOCK={build.default_lock()} "
    assert not stale, f"stale: run {lock}./dev engines --keys\n" + "\n".join(stale)
    # What the DFlash rules stand on is among them, read by the engine itself.
    for engine in [e for e in ("vllm", "sglang") if e in found]:
        release, keys = found[engine]
        assert "engine" in keys["/dflash_config/target_layer_ids"], (engine, release)
        assert (engine, release) in key_reads.readers("/dflash_config/mask_token_id")

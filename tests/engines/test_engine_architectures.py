"""The drafter classes each engine release registers (dflash_cfg/lint/engine_architectures.py) are the installed
engines' own: extracted again here from the engine venv's site-packages and compared with the committed data."""

from __future__ import annotations

from pathlib import Path

from engines import build
from tools.engines import architectures
from tools.engines.source_keys import installed


def test_the_registered_architectures_are_the_installed_engines(engine_python: Path) -> None:
    site, versions = installed(engine_python)
    committed = architectures.table()
    stale = []
    for engine, (release, entry) in architectures.wanted(site, versions).items():
        old = committed.get(engine, {}).get(release, {})
        if old != entry:
            stale.append(
                f"{engine} {release}: new {sorted(set(entry) - set(old))}, gone {sorted(set(old) - set(entry))}"
            )
    lock = "" if build.default_lock() == build.LOCK else f"DFLASH_CFG_ENGINES_LOCK={build.default_lock()} "
    assert not stale, (
        f"stale: run {lock}.venv/bin/python tools/engines/architectures.py --python {engine_python}\n"
        + "\n".join(stale)
    )


def test_every_class_dflash_cfg_builds_is_registered_by_an_engine_it_names() -> None:
    """lint.engines.REGISTERED_ARCHITECTURES (what the engine suite builds) agrees with the registries."""
    from dflash_cfg.lint.engines import REGISTERED_ARCHITECTURES, registrations

    wrong = {
        name: (engines, sorted(registrations(name)))
        for name, engines in REGISTERED_ARCHITECTURES.items()
        if not set(engines) <= set(registrations(name))
    }
    assert not wrong, wrong

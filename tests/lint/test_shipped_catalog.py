"""The catalog shipped in the package is what tools/shipped_catalog.py builds from fixtures/published.toml, and
every published drafter of fixtures/ is in it as itself."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from helpers import ROOT

from dflash_cfg.sources import catalog


def test_the_shipped_catalog_is_what_the_manifest_builds() -> None:
    run = subprocess.run(
        [sys.executable, "tools/shipped_catalog.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr


def test_every_complete_published_drafter_is_in_the_shipped_catalog_by_its_bytes() -> None:
    shipped = catalog.shipped()
    files = [p for p in (ROOT / "fixtures" / "upstream").rglob("config.json")]
    assert len(files) >= 9
    known = {r.sha256 for e in shipped.drafters for r in e.revisions}
    assert all(hashlib.sha256(p.read_bytes()).hexdigest() in known for p in files)

"""The documentation is part of the product: generated pages match the code."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from helpers import ROOT

DOCS = ROOT / "docs"


def generator() -> ModuleType:
    """docs/generate.py, the script `./dev docs` runs (docs/ is not a package, so it is loaded by path)."""
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_pages_match_the_code() -> None:
    pages: dict[Path, str] = generator().pages()
    assert pages, "docs/generate.py generates nothing"
    for path, text in pages.items():
        name = path.relative_to(ROOT)
        assert path.exists(), f"{name} is missing: run ./dev docs"
        assert path.read_text(encoding="utf-8") == text, f"{name} is stale: run ./dev docs"


def test_the_rules_reference_documents_every_rule() -> None:
    from dflash_cfg.lint.rules import ALL

    text = (DOCS / "rules.md").read_text(encoding="utf-8")
    for r in ALL:
        assert f"\n## {r.id} {r.name}\n" in text, r.id


@pytest.mark.slow
def test_dev_docs_is_a_no_op_on_a_current_checkout() -> None:
    """`./dev docs` (the command the stale-page message names) runs, and writes nothing when the pages are
    current, which the test above has checked."""
    done = subprocess.run(["sh", str(ROOT / "dev"), "docs"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "wrote" not in done.stdout

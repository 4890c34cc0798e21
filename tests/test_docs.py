"""The documentation is part of the product: generated pages match the code, the README stays a user's
page, and every relative link leads somewhere."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from helpers import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README, ROOT / "CONTRIBUTING.md", *sorted(DOCS.glob("*.md"))]
# A user's page: what the tool is, the incident, each command once, CI; everything else is in docs/.
README_MAX_LINES = 250


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


def test_the_readme_stays_short() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; details belong in docs/"


# --- links ----------------------------------------------------------------------------------------------

FENCE = re.compile(r"^```.*?^```[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+).+?\1", re.S)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # https:, mailto:, ...


def prose(text: str) -> str:
    """The text without fenced code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """The fragment GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The fragments of a Markdown file's headings (a repeated heading is numbered, as GitHub does)."""
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        n = seen.get(slug(heading), 0)
        seen[slug(heading)] = n + 1
        out.add(slug(heading) if n == 0 else f"{slug(heading)}-{n}")
    return out


def test_slugs_are_githubs() -> None:
    assert slug("Remote model dirs: `s3://`, `gs://`, `hf://`") == "remote-model-dirs-s3-gs-hf"
    assert slug("DF204 window-dropped") == "df204-window-dropped"
    assert slug("JSON: `--format json`") == "json---format-json"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if EXTERNAL.match(target):
            continue
        file, _, fragment = target.partition("#")
        resolved = (page.parent / file).resolve() if file else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)

"""Every engine citation of the repository (`path:qualname`) names code the pinned engines have, and the line
table the docs render from (dflash_cfg/lint/cited_lines.py) is the installed code's."""

from __future__ import annotations

from pathlib import Path

import pytest

from engines import build, citations


def test_every_citation_names_installed_code(engine_python: Path) -> None:
    result = citations.resolve_all(citations.site_packages(engine_python))
    assert result.gone == {}, "cited code is gone from the pinned engines: re-cite it (./dev engines --cite)"
    assert result.lines, "no citation found: the scanner is broken"


def test_the_line_table_is_the_installed_code(engine_python: Path) -> None:
    if build.locked() != build.locked(build.LOCK):
        pytest.skip("a staged lock: the table is the adopted release's (./dev engines --upgrade rewrites it in place)")
    result = citations.resolve_all(citations.site_packages(engine_python))
    assert citations.TABLE.read_text(encoding="utf-8") == citations.render(result.lines, result.versions), (
        "dflash_cfg/lint/cited_lines.py is stale: run ./dev engines --cite"
    )


def test_a_citation_resolves_to_its_definition_and_a_gone_one_to_nothing(engine_python: Path) -> None:
    site = citations.site_packages(engine_python)
    span = citations.resolve(site, "vllm/config/speculative.py:SpeculativeConfig")
    assert span is not None
    source = (site / "vllm/config/speculative.py").read_text(encoding="utf-8").splitlines()
    assert "class SpeculativeConfig" in "\n".join(source[span[0] - 1 : span[0] + 2])
    # Written in two parts, so the repository's own scan does not take them for citations.
    assert citations.resolve(site, "vllm/config/speculative.py" + ":SpeculativeConfig.no_such_method") is None
    assert citations.resolve(site, "vllm/no_such_file.py" + ":f") is None

"""Every engine citation of the repository (`path:qualname[@release]`) names code the engine venv under test has
when it holds the citation's release, and the line table the docs render from (dflash_cfg/lint/cited_lines.py) is
that venv's installed code for those citations (the other releases' entries are another venv's to check)."""

from __future__ import annotations

from pathlib import Path

from tools.engines import citations


def test_every_citation_names_installed_code(engine_python: Path) -> None:
    result = citations.resolve_all(citations.site_packages(engine_python))
    assert result.gone == {}, "cited code is gone from these engines' releases: re-cite it (./dev engines --cite)"
    assert result.bad_tags == {}, "a citation's tag names a release neither pinned nor ALSO_CHECKED (pinned.py)"
    assert result.lines, "no citation found: the scanner is broken"


def test_the_line_table_is_the_installed_code(engine_python: Path) -> None:
    result = citations.resolve_all(citations.site_packages(engine_python))
    table = citations.table_lines()
    assert {k: table.get(k) for k in result.lines} == result.lines, (
        "dflash_cfg/lint/cited_lines.py is stale: run ./dev engines --cite (with this lock's venv)"
    )
    assert citations.TABLE.read_text(encoding="utf-8") == citations.render(citations.merged(result, table)), (
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

"""The pinned releases are written once (dflash_cfg/pinned.py) and that table is the lock's, and engine code is
cited by name (fast: no engine)."""

from __future__ import annotations

from dflash_cfg.lint.citations import parse, with_lines
from dflash_cfg.lint.rules import ALL
from dflash_cfg.model import Engine
from dflash_cfg.pinned import ALSO_CHECKED, PINNED, PLACEHOLDERS, expand, is_checked, named
from engines import build
from tools.engines import citations


def test_the_pinned_table_is_the_lock() -> None:
    lock = build.locked(build.LOCK)  # the repository's lock, whichever DFLASH_CFG_ENGINES_LOCK names
    assert {name: lock.get(name) for name in PINNED} == dict(PINNED)


def test_each_release_also_checked_has_a_lock_that_moves_only_that_distribution() -> None:
    default = build.locked(build.LOCK)
    assert ALSO_CHECKED, "nothing but the pinned releases is checked: drop this test with the table"
    for dist, releases in ALSO_CHECKED.items():
        assert dist in PINNED
        for release in releases:
            assert release != PINNED[dist]
            lock = build.RELEASES / f"{dist}-{release}.lock.txt"
            assert lock.is_file(), f"{dist} {release} is also checked but has no lock at {lock}"
            pins = build.locked(lock)
            assert pins[dist] == release
            assert {k: v for k, v in pins.items() if k != dist} == {k: v for k, v in default.items() if k != dist}


def test_a_release_is_checked_when_pinned_or_also_checked() -> None:
    for dist, release in PINNED.items():
        assert is_checked(dist, release)
        assert not is_checked(dist, release + ".post99") and not is_checked(dist, None)
    for dist, releases in ALSO_CHECKED.items():
        assert all(is_checked(dist, r) for r in releases)


def test_placeholders_expand_to_the_pinned_releases() -> None:
    for placeholder, dist in PLACEHOLDERS.items():
        assert expand(f"as {placeholder} reads it") == f"as {named(dist)} reads it"
    assert expand('{"method": "dflash"} {vllm}') == '{"method": "dflash"} {vllm}'  # other braces stay


def test_no_rule_text_keeps_a_placeholder() -> None:
    left = [r.id for r in ALL if any(p in r.doc for p in PLACEHOLDERS)]
    assert left == []


def test_engine_code_is_cited_by_name_not_by_line() -> None:
    assert citations.by_line() == [], "cite engine code as PACKAGE/PATH.py:QUALNAME (dflash_cfg/lint/citations.py)"


# Citations written in parts below, so that the repository's own scan does not take them for its citations.
_CITED = "vllm/config/x.py" + ":Config.f"


def test_a_citation_tag_names_its_release_and_the_docs_render_it() -> None:
    assert parse(_CITED).release is None and parse(_CITED + "@0.1.0").release == "0.1.0"
    assert parse(_CITED + "@0.1.0").qualname == "Config.f"
    lines = {_CITED: (10, 20), _CITED + "@0.1.0": (30, 30)}
    text = f"see `{_CITED}` and `{_CITED}@0.1.0`."
    assert with_lines(text, lines, {"vllm": "9.0.0"}) == (
        f"see `{_CITED}` (lines 10-20 in 9.0.0) and `{_CITED}@0.1.0` (line 30 in 0.1.0)."
    )


def test_a_venv_holds_the_untagged_citations_of_the_pinned_release_and_the_tagged_ones_of_their_own() -> None:
    pinned: dict[Engine, str] = {"vllm": "2.0.0"}
    assert citations.due(_CITED, {"vllm": "2.0.0"}, pinned)
    assert not citations.due(_CITED, {"vllm": "1.0.0"}, pinned)
    assert citations.due(_CITED + "@1.0.0", {"vllm": "1.0.0"}, pinned)
    assert not citations.due(_CITED + "@1.0.0", {"vllm": "2.0.0"}, pinned)
    assert not citations.due(_CITED, {}, pinned)


def test_every_citation_tag_names_a_release_the_suite_runs() -> None:
    cited = citations.collect()
    assert citations.bad_tags(cited) == {}, "tag a citation only with PINNED's or ALSO_CHECKED's release"
    assert citations.bad_tags({_CITED + "@0.0.1": ["here"]}) == {_CITED + "@0.0.1": ["here"]}
    assert all(citations.bad_tags({f"{_CITED}@{r}": ["here"]}) == {} for r in ALSO_CHECKED["vllm"])


def test_re_citing_with_one_venv_keeps_the_other_releases_entries() -> None:
    old = f"{_CITED}@0.0.1"
    result = citations.Resolution(
        lines={_CITED: (1, 2)},
        gone={},
        versions={"vllm": "2.0.0"},
        cited=frozenset({_CITED, old}),
        held=frozenset({_CITED}),
        bad_tags={},
    )
    before = {_CITED: (5, 6), old: (7, 8), "vllm/gone.py" + ":g": (1, 1)}
    assert citations.merged(result, before) == {_CITED: (1, 2), old: (7, 8)}  # no longer cited: dropped

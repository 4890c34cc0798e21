"""The pinned releases are written once (dflash_cfg/pinned.py) and that table is the lock's, and engine code is
cited by name (fast: no engine)."""

from __future__ import annotations

from dflash_cfg.lint.rules import ALL
from dflash_cfg.pinned import ALSO_CHECKED, PINNED, PLACEHOLDERS, expand, is_checked, named
from engines import build, citations


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

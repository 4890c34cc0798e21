"""The pinned releases are written once (dflash_cfg/pinned.py) and that table is the lock's, and engine code is
cited by name (fast: no engine)."""

from __future__ import annotations

from dflash_cfg.lint.releases import CHANGES
from dflash_cfg.lint.rules import ALL
from dflash_cfg.pinned import PINNED, PLACEHOLDERS, expand, named
from engines import build, citations


def test_the_pinned_table_is_the_lock() -> None:
    lock = build.locked(build.LOCK)  # the repository's lock, whichever DFLASH_CFG_ENGINES_LOCK names
    assert {name: lock.get(name) for name in PINNED} == dict(PINNED)


def test_placeholders_expand_to_the_pinned_releases() -> None:
    for placeholder, dist in PLACEHOLDERS.items():
        assert expand(f"as {placeholder} reads it") == f"as {named(dist)} reads it"
    assert expand('{"method": "dflash"} {vllm}') == '{"method": "dflash"} {vllm}'  # other braces stay


def test_no_rule_text_keeps_a_placeholder() -> None:
    left = [r.id for r in ALL if any(p in r.doc for p in PLACEHOLDERS)]
    assert left == []


def test_engine_code_is_cited_by_name_not_by_line() -> None:
    assert citations.by_line() == [], "cite engine code as PACKAGE/PATH.py:QUALNAME (dflash_cfg/lint/citations.py)"


def test_each_release_change_names_rules_that_exist() -> None:
    ids = {r.id for r in ALL}
    for change in CHANGES:
        assert change.rules and set(change.rules) <= ids, change

"""The catalogue (dflash_cfg.lint.rules): every rule defined is registered (a Rule left out of its module's
RULES, or a module's RULES left out of the catalogue, would never run and nothing else would notice), ids
and names are well-formed and unique, in order, and every rule documents itself."""

from __future__ import annotations

import importlib
import pkgutil
import re
from types import ModuleType

import pytest

import dflash_cfg.lint.rules as rules_package
from dflash_cfg.lint.rules import ALL, REGISTRY
from dflash_cfg.model import Severity

RuleType = type(ALL[0])


def rule_modules() -> list[ModuleType]:
    return [
        importlib.import_module(f"{rules_package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(rules_package.__path__)
    ]


def defined_here(module: ModuleType) -> dict[str, object]:
    """Module-level Rule objects whose check function is defined in `module` (not imported from elsewhere)."""
    return {
        name: value
        for name, value in vars(module).items()
        if isinstance(value, RuleType) and value.check.__module__ == module.__name__
    }


MODULES = rule_modules()


def test_the_rules_package_has_rule_modules() -> None:
    assert sum(1 for m in MODULES if defined_here(m)) >= 5


@pytest.mark.parametrize("module", [m for m in MODULES if defined_here(m)], ids=lambda m: m.__name__.rsplit(".")[-1])
def test_every_rule_of_a_module_is_in_its_rules_and_in_the_catalogue(module: ModuleType) -> None:
    rules = getattr(module, "RULES", None)
    assert isinstance(rules, tuple), f"{module.__name__} defines rules but no RULES tuple"
    registered = {id(r) for r in rules}
    catalogue = {id(r) for r in ALL}
    for name, value in defined_here(module).items():
        assert id(value) in registered, f"{module.__name__}.{name} is not in its module's RULES"
        assert id(value) in catalogue, f"{module.__name__}.{name} is not in dflash_cfg.lint.rules.ALL"
    assert all(id(r) in catalogue for r in rules), f"{module.__name__}.RULES is not all in ALL"


def test_the_catalogue_is_exactly_the_modules_rules() -> None:
    defined = [r for m in MODULES for r in defined_here(m).values()]
    assert sorted(id(r) for r in ALL) == sorted(id(r) for r in defined)
    ids = [r.id for r in ALL]
    assert len(ids) == len(set(ids)), "duplicate rule ids"


# Rules that are dflash-cfg's own checks and not an engine read: the schema (stricter than any engine on
# purpose), the tap formula shown as evidence, transformers' log lines passed on, the local clone's LFS
# pointers, the comparison with upstream, and the lock and checksum of the file on disk. Each says so in its
# documentation. Every other rule names the engine behaviour behind it (`reads`), so a rule that describes
# an engine cannot be added without the code that decides it.
TOOL_LEVEL = frozenset({"DF010", "DF106", "DF303", "DF504", "DF601", "DF602", "DF603", "DF701", "DF702", "DF703"})
OWN_CHECK = "dflash-cfg's own"


def test_every_rule_names_its_engine_reads_or_is_a_tool_level_check() -> None:
    from dflash_cfg.lint.engines import READS

    ids = {r.id for r in ALL}
    assert TOOL_LEVEL <= ids, f"unknown ids in TOOL_LEVEL: {sorted(TOOL_LEVEL - ids)}"
    for r in ALL:
        unknown = [key for key in r.reads if key not in READS]
        assert not unknown, f"{r.id} reads keys lint.engines.READS lacks: {unknown}"
        if r.id in TOOL_LEVEL:
            assert not r.reads, f"{r.id} names engine reads, so it is not a tool-level check"
            assert OWN_CHECK in " ".join(r.doc.split()), f"{r.id} does not say it is a check of dflash-cfg's own"
        else:
            assert r.reads, f"{r.id} names no engine read: add one to lint.engines.READS or list it in TOOL_LEVEL"
            assert "What the engines do:" in r.doc


def test_every_engine_read_is_named_by_some_rule() -> None:
    from dflash_cfg.lint.engines import READS

    used = {key for r in ALL for key in r.reads}
    assert sorted(set(READS) - used) == [], "READS rows no rule names (dead data, or a rule that forgot them)"


def test_registry_ids_and_names() -> None:
    ids = [r.id for r in ALL]
    names = [r.name for r in ALL]
    assert len(set(ids)) == len(ids), ids
    assert len(set(names)) == len(names), names
    assert set(REGISTRY) == set(ids) and all(REGISTRY[r.id] is r for r in ALL)
    for r in ALL:
        assert re.fullmatch(r"DF\d{3}", r.id), r.id
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name), r.name
        assert r.severity in Severity


def test_catalogue_order_is_by_id() -> None:
    ids = [r.id for r in ALL]
    assert ids == sorted(ids)


@pytest.mark.parametrize("rule_id", [r.id for r in ALL])
def test_rule_doc_has_fail_and_pass_examples(rule_id: str) -> None:
    r = REGISTRY[rule_id]
    assert r.doc and r.summary, f"{r.id} has no docstring"
    assert re.search(r"^Fail\b", r.doc, re.M), f"{r.id} doc has no 'Fail' example:\n{r.doc}"
    assert re.search(r"^Pass\b", r.doc, re.M), f"{r.id} doc has no 'Pass' example:\n{r.doc}"

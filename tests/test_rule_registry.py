"""Every rule defined is registered: a Rule left out of its module's RULES (or a module's RULES left out
of the catalogue) would never run and nothing else would notice."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

import dflash_cfg.lint.rules as rules_package
from dflash_cfg.lint.rules import ALL

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

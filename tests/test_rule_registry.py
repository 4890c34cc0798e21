"""The rules' metadata is true: every rule defined is registered (a Rule left out of its module's RULES, or a
module's RULES left out of the catalogue, would never run and nothing else would notice), every rule names
the engine reads behind it or says it is the tool's own check, and what a rule declares it may yield
(severities, a fix) is what it yields."""

from __future__ import annotations

import copy
import importlib
import json
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest
from helpers import REAL_DATA, ROOT

import dflash_cfg.lint.rules as rules_package
import dflash_cfg.sources.views
from dflash_cfg.jsondoc.document import parse
from dflash_cfg.lint.linter import Inputs, UndeclaredFinding, lint
from dflash_cfg.lint.rules import ALL, REGISTRY, Context, Rule
from dflash_cfg.lint.rules.base import rule
from dflash_cfg.model import AddedToken, Fix, PatchOp, Problem, Severity, Target
from dflash_cfg.report.catalogue import catalogue_json, markdown


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
        if isinstance(value, Rule) and value.check.__module__ == module.__name__
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


# The rules that are dflash-cfg's own checks and not an engine read (`own_check` on @rule): the schema
# (stricter than any engine on purpose), the tap formula shown as evidence, transformers' log lines passed on,
# the local clone's LFS pointers, the comparison with upstream, and the lock and checksum of the file on disk.
# Each says so in its documentation. Every other rule names the engine behaviour behind it (`reads`), so a
# rule that describes an engine cannot be added without the code that decides it.
OWN_CHECK = "dflash-cfg's own"


def test_every_rule_names_its_engine_reads_or_is_a_tool_level_check() -> None:
    from dflash_cfg.lint.engines import READS

    for r in ALL:
        unknown = [key for key in r.reads if key not in READS]
        assert not unknown, f"{r.id} reads keys lint.engines.READS lacks: {unknown}"
        if r.own_check:
            assert not r.reads, f"{r.id} names engine reads, so it is not a check of dflash-cfg's own"
            assert OWN_CHECK in " ".join(r.doc.split()), f"{r.id} does not say it is a check of dflash-cfg's own"
        else:
            assert r.reads, f"{r.id} names no engine read: add one to lint.engines.READS or declare own_check=True"
            assert "What the engines do:" in r.doc


def test_every_engine_read_is_named_by_some_rule() -> None:
    from dflash_cfg.lint.engines import READS

    used = {key for r in ALL for key in r.reads}
    assert sorted(set(READS) - used) == [], "READS rows no rule names (dead data, or a rule that forgot them)"


# --- declared severities and fixes ------------------------------------------------------------------------
# The linter refuses a finding outside its rule's declaration, so every test that lints shows that nothing
# undeclared is produced. What remains to show is that each declaration is no wider than the rule: every
# severity beyond the default, and every declared fix, is produced by a fixture (the golden record of
# `check` on all of them) or by one of the cases below, which plant what no fixture has.

GOLDEN = ROOT / "tests" / "golden" / "check.json"


def _golden() -> Iterator[tuple[str, Severity, bool]]:
    for args, record in json.loads(GOLDEN.read_text(encoding="utf-8")).items():
        if "--format json" not in args:
            continue
        for report in json.loads(record["out"]).get("files", []):
            for f in report["findings"]:
                yield f["rule"], Severity[f["severity"].upper()], f["fix"] is not None


def _set(*path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def _taps_at_top(data: dict[str, Any]) -> None:
    data["target_layer_ids"] = data["dflash_config"].pop("target_layer_ids")


# REAL_DATA is z-lab/Qwen3.5-4B-DFlash: vocab_size 248320, mask id 248077, θ 1e7 in rope_parameters only.
PADDED_TARGET = Target(
    path="target",
    model_type=None,
    num_hidden_layers=None,
    hidden_size=None,
    vocab_size=248320 + 256,
    special_ids=(),
    added_tokens=(AddedToken(248077, "<|MASK|>", special=True),),
    base_vocab_size=248000,
    mask_token=None,
    files=(),
)


@dataclass(frozen=True)
class Shown:
    rule: str
    severity: Severity
    fix: bool
    change: Callable[[dict[str, Any]], None]
    target: Target | None = None


PLANTED = (
    Shown("DF102", Severity.WARNING, True, _taps_at_top),
    Shown("DF112", Severity.WARNING, False, _set("mask_token_id", value=248070)),
    Shown("DF204", Severity.ERROR, True, _set("use_sliding_window", value=False)),
    Shown("DF210", Severity.ERROR, True, _set("add_swa_attention_sink_bias", value=True)),
    Shown("DF304", Severity.ERROR, False, _set("rope_theta", value=1000000)),
    # The target's tokenizer ends below the drafter's vocabulary: only padding rows are cut.
    Shown("DF402", Severity.INFO, False, lambda data: None, PADDED_TARGET),
)


def _planted(case: Shown) -> list[tuple[str, Severity, bool]]:
    data = copy.deepcopy(REAL_DATA)
    case.change(data)
    doc = parse(json.dumps(data, indent=2).encode())
    inputs = Inputs("config.json", doc, target=case.target, view=dflash_cfg.sources.views.view(data))
    return [(f.rule, f.severity, f.fix is not None) for f in lint(inputs).findings]


@pytest.mark.parametrize("case", PLANTED, ids=lambda c: f"{c.rule}-{c.severity.label}")
def test_a_planted_case_shows_its_severity_and_fix(case: Shown) -> None:
    assert (case.rule, case.severity, case.fix) in _planted(case)


def test_every_declared_severity_and_fix_is_produced() -> None:
    produced = [*_golden(), *(f for case in PLANTED for f in _planted(case))]
    for r in ALL:
        severities = {s for rule_id, s, _ in produced if rule_id == r.id}
        fixed = any(fix for rule_id, _, fix in produced if rule_id == r.id)
        assert severities <= set(r.severities), f"{r.id} yields undeclared {sorted(severities - set(r.severities))}"
        beyond = set(r.severities) - {r.severity}
        assert beyond <= severities, f"{r.id} declares {sorted(s.label for s in beyond - severities)}, never shown"
        assert fixed == r.fix, f"{r.id} declares fix={r.fix}, but the fixtures and cases show fix={fixed}"


def _context() -> Inputs:
    return Inputs("config.json", parse(json.dumps(REAL_DATA).encode()))


@rule("DF999", "test-rule", Severity.ERROR)
def _yields_a_warning(ctx: Context) -> Iterator[Problem]:
    """A rule that yields a severity it does not declare."""
    yield Problem("", "a warning", severity=Severity.WARNING)


@rule("DF999", "test-rule", Severity.ERROR)
def _yields_a_fix(ctx: Context) -> Iterator[Problem]:
    """A rule that yields a fix it does not declare."""
    yield Problem("", "fixable", Fix("remove it", (PatchOp("remove", "/auto_map"),)))


@rule("DF999", "test-rule", Severity.ERROR, fix=True)
def _yields_an_unsafe_fix(ctx: Context) -> Iterator[Problem]:
    """A rule that declares a (safe) fix and yields an unsafe one."""
    yield Problem("", "fixable", Fix("remove it", (PatchOp("remove", "/auto_map"),), safe=False))


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (_yields_a_warning, "DF999 yielded a warning finding; it declares error"),
        (_yields_a_fix, "DF999 yielded a fix it does not declare"),
        (_yields_an_unsafe_fix, "DF999 yielded an unsafe fix it does not declare"),
    ],
)
def test_the_linter_refuses_a_finding_outside_the_declaration(bad: Rule, says: str) -> None:
    with pytest.raises(UndeclaredFinding, match=says):
        lint(_context(), (bad,))


def test_a_declaration_holds_the_default_severity_first() -> None:
    assert REGISTRY["DF304"].severities == (Severity.ERROR, Severity.WARNING, Severity.INFO)
    assert REGISTRY["DF304"].severity == Severity.WARNING
    assert REGISTRY["DF001"].severities == (Severity.ERROR,)


@pytest.mark.parametrize("r", ALL, ids=lambda r: r.id)
def test_the_doc_gives_the_declaration_beside_the_examples(r: Rule) -> None:
    paragraphs = r.doc.split("\n\n")
    (examples,) = [p for p in paragraphs if r.severity_line in p.splitlines()]
    assert examples.startswith("Fail") and examples.splitlines()[-2:] == [r.severity_line, r.fix_line]
    # Written only by the declaration: a docstring that wrote its own would drift from it.
    assert [line for line in r.doc.splitlines() if line.startswith(("Severity:", "Fix:"))] == [
        r.severity_line,
        r.fix_line,
    ]
    assert r.severity_line.startswith(f"Severity: {r.severity.label}")
    assert all(s.label in r.severity_line for s in r.severities)


# --- the catalogue as JSON ---------------------------------------------------------------------------------


def test_the_json_catalogue_gives_plain_fields_and_markdown() -> None:
    entries = json.loads(catalogue_json())
    assert [e["id"] for e in entries] == [r.id for r in ALL]
    for e, r in zip(entries, ALL, strict=True):
        assert list(e) == [
            "id",
            "name",
            "severity",
            "severities",
            "fix",
            "own_check",
            "summary",
            "description",
            "examples",
            "reads",
            "markdown",
        ]
        assert (e["name"], e["severity"], e["fix"], e["own_check"]) == (r.name, r.severity.label, r.fix, r.own_check)
        assert e["severities"] == [s.label for s in r.severities]
        assert e["description"].startswith(e["summary"]) and "\n\n\n" not in e["description"]
        labels = [x["label"] for x in e["examples"]]
        assert labels[0].startswith("Fail") and labels[-1].startswith("Pass"), labels
        assert all(x["text"] and "\n" not in x["text"] for x in e["examples"])
        assert [f"{x['reader']}:{x['key']}" for x in e["reads"]] == list(r.reads)
        assert all(x["source"] and x["order"] for x in e["reads"])
        assert e["markdown"] == markdown(r.doc)
        # The plain fields show code as `code`, never the docstring's reST ``code``.
        plain_text = json.dumps({k: v for k, v in e.items() if k != "markdown"}, ensure_ascii=False)
        assert "``" not in plain_text, r.id


def test_a_field_that_does_not_apply_to_an_engine_read_is_null() -> None:
    (vllm,) = [x for x in json.loads(catalogue_json((REGISTRY["DF121"],)))[0]["reads"] if x["reader"] == "vLLM"]
    assert vllm["default"] is None and vllm["bad_type"] is None

"""The rules' metadata is true: every rule defined is registered (a Rule left out of its module's RULES, or a
module's RULES left out of the catalogue, would never run and nothing else would notice), every rule names
the engine reads behind it or says it is the tool's own check, and what a rule declares it may yield
(severities, a fix) is what it yields."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from collections.abc import Iterator
from types import ModuleType

import pytest
from helpers import REAL_DATA, ROOT

import dflash_cfg.lint.rules as rules_package
from dflash_cfg.jsondoc.document import parse
from dflash_cfg.lint.linter import Inputs, UndeclaredFinding, lint
from dflash_cfg.lint.releases import V1_RUNNER_GONE
from dflash_cfg.lint.rules import ALL, CHANGES, REGISTRY, Context, Rule, catalogue
from dflash_cfg.lint.rules.base import rule
from dflash_cfg.model import Fix, PatchOp, Problem, Severity
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
        unknown = [read.name for read in r.reads if READS.get(read.name) is not read]
        assert not unknown, f"{r.id} names reads that are no row of lint.engines.READS: {unknown}"
        if r.own_check:
            assert not r.reads, f"{r.id} names engine reads, so it is not a check of dflash-cfg's own"
            assert OWN_CHECK in " ".join(r.doc.split()), f"{r.id} does not say it is a check of dflash-cfg's own"
        else:
            assert r.reads, f"{r.id} names no engine read: add one to lint.engines.READS or declare own_check=True"
            assert "What the engines do:" in r.doc


def test_every_engine_read_is_named_by_some_rule() -> None:
    from dflash_cfg.lint.engines import READS

    used = {read.name for r in ALL for read in r.reads}
    assert sorted(set(READS) - used) == [], "READS rows no rule names (dead data, or a rule that forgot them)"


def test_every_engine_read_says_how_it_was_verified() -> None:
    # Each row names the engine version it was checked against by execution, or says why it cannot be executed
    # here (citing the pinned code), or says it is not yet checked: no row is silently transcribed.
    from dflash_cfg.lint.engines import MARKERS, READS, UNCHECKED, UNEXECUTABLE

    unmarked = [key for key, read in READS.items() if not read.source.startswith(MARKERS)]
    assert unmarked == [], f"READS rows with no verification marker: {unmarked}"
    for key, read in READS.items():
        if read.source.startswith(UNEXECUTABLE):
            assert re.search(r"\((?!\))[^)]+\); read in the installed", read.source), key  # says why
        if read.source.startswith((UNEXECUTABLE, UNCHECKED)):
            assert re.search(r"\.py(:\d+)?", read.source), f"{key} cites no engine file"


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


# --- declared severities and fixes ------------------------------------------------------------------------
# The linter refuses a finding outside its rule's declaration, so every test that lints shows that nothing
# undeclared is produced; the rule-case table (tests/lint/rules/test_rule_cases.py) shows that each declaration
# is no wider than the rule. Here: the refusal itself.


def _context() -> Inputs:
    return Inputs(path="config.json", doc=parse(json.dumps(REAL_DATA).encode()))


@rule("DF999", "test-rule", Severity.ERROR)
def _yields_a_warning(ctx: Context) -> Iterator[Problem]:
    """A rule that yields a severity it does not declare."""
    yield Problem(pointer="", message="a warning", severity=Severity.WARNING)


@rule("DF999", "test-rule", Severity.ERROR)
def _yields_a_fix(ctx: Context) -> Iterator[Problem]:
    """A rule that yields a fix it does not declare."""
    yield Problem(pointer="", message="fixable", fix=Fix("remove it", (PatchOp("remove", "/auto_map"),)))


@rule("DF999", "test-rule", Severity.ERROR, fix=True)
def _yields_an_unsafe_fix(ctx: Context) -> Iterator[Problem]:
    """A rule that declares a (safe) fix and yields an unsafe one."""
    yield Problem(pointer="", message="fixable", fix=Fix("remove it", (PatchOp("remove", "/auto_map"),), safe=False))


@rule("DF999", "test-rule", Severity.ERROR, until=V1_RUNNER_GONE)
def _yields_a_release_it_does_not_declare(ctx: Context) -> Iterator[Problem]:
    """A rule that knows the releases before a change and yields a finding for those after it."""
    yield Problem(pointer="", message="from 0.34 on", engines=(V1_RUNNER_GONE.since.on,))


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (_yields_a_warning, "DF999 yielded a warning finding; it declares error"),
        (_yields_a_fix, "DF999 yielded a fix it does not declare"),
        (_yields_an_unsafe_fix, "DF999 yielded an unsafe fix it does not declare"),
        (
            _yields_a_release_it_does_not_declare,
            "DF999 yielded a finding for vllm>=0.34.0; it declares no change of it as since",
        ),
    ],
)
def test_the_linter_refuses_a_finding_outside_the_declaration(bad: Rule, says: str) -> None:
    with pytest.raises(UndeclaredFinding, match=says):
        lint(_context(), (bad,))


def test_the_release_changes_are_the_rules_declarations() -> None:
    """The release report's "what the rules say" is CHANGES: every change some rule declares, with those rules."""
    said = {change: ids for change, ids in CHANGES}
    assert set(said[V1_RUNNER_GONE]) == {"DF806", "DF807", "DF811"}
    assert {rid for ids in said.values() for rid in ids} == {r.id for r in ALL if r.since or r.until}
    assert all(change.what and change.since.engine == "vllm" for change in said)


def test_every_launch_rule_has_its_row_on_the_launch_checks_page() -> None:
    """docs/launch-checks.md's rows that name a launch rule come from the rules' `checks`: each DF8xx rule is
    named in one, and the template holds no hand-written row naming one (it would drift from the rule)."""
    named = " ".join(c.preflight for r in ALL for c in r.checks)
    assert [r.id for r in ALL if r.id.startswith("DF8") and r.id not in named] == []
    template = (ROOT / "docs" / "src" / "launch-checks.md").read_text(encoding="utf-8")
    assert [line for line in template.splitlines() if line.startswith("|") and "DF8" in line] == []


def test_no_rule_is_left_as_the_scaffold_wrote_it() -> None:
    """`./dev new-rule` marks each text it cannot write TODO: a rule shipped with one documents nothing."""
    for r in ALL:
        texts = [r.docstring, *(c.what for c in r.changes), *(f"{c.check} {c.where}" for c in r.checks)]
        assert not any("TODO" in t for t in texts), f"{r.id} still has the scaffold's TODOs"


def test_a_declaration_holds_the_default_severity_first() -> None:
    assert REGISTRY["DF121"].severities == (Severity.ERROR, Severity.WARNING, Severity.INFO)
    assert REGISTRY["DF121"].severity == Severity.ERROR
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
    entries = json.loads(catalogue_json(catalogue()))
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
        assert [f"{x['reader']}:{x['key']}" for x in e["reads"]] == [read.name for read in r.reads]
        assert all(x["source"] and x["order"] for x in e["reads"])
        assert e["markdown"] == markdown(r.doc)
        # The plain fields show code as `code`, never the docstring's reST ``code``.
        plain_text = json.dumps({k: v for k, v in e.items() if k != "markdown"}, ensure_ascii=False)
        assert "``" not in plain_text, r.id


def test_a_field_that_does_not_apply_to_an_engine_read_is_null() -> None:
    (entry,) = json.loads(catalogue_json(catalogue((REGISTRY["DF121"],))))
    (vllm,) = [x for x in entry["reads"] if x["reader"] == "vLLM"]
    assert vllm["default"] is None and vllm["bad_type"] is None

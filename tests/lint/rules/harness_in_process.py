"""The rule cases linted in this process, on the bytes in memory: the rows that are a config.json alone
(Row.in_process), and the engine rows, whose records no CLI run can bring without an engine.

The CLI (`check DIR --format json`, DIR holding only that config.json, no project config above it) gathers,
for such a file, exactly this (commands/check.py, `gather`): every rule of the catalogue, the engine's config
class on the file (`Views`), no target, weights, upstream or launch, and the facts of a plain file (its
sha256; no lock, no symlink, no cache snapshot). The file is parsed from at most the reader's limit + 1
bytes, as `files.read` gives it, and the report is rendered by the JSON reporter, so the findings are the
CLI's JSON. test_rule_cases holds a sample of rows to the CLI's answer, so the two paths cannot drift apart
unnoticed.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any

from dflash_cfg.commands.common import Views
from dflash_cfg.jsondoc.document import MAX_BYTES, parse

# EngineCheck and from_json (what preflight hands the DF90x rules, and how it parses an adapter's record): the
# harness imports them here and nowhere else.
from dflash_cfg.lint.linter import Inputs, classify, lint, needs
from dflash_cfg.lint.rules import ALL
from dflash_cfg.model import EngineCheck, Integrity, Report
from dflash_cfg.pinned import PINNED
from dflash_cfg.report.formats import render
from dflash_cfg.sources import catalog
from dflash_cfg.sources.adapters import from_json
from dflash_cfg.sources.views import transformers_version
from dflash_cfg.version import __version__

SHOWN = "drafter/config.json"  # the report's path: no finding says it
PYTHON = "/venv/bin/python"  # the interpreter a record names when the row does not
ENGINE_KEYS = {"records", "notes"}
RECORD_KEYS = {"engine", "version", "python", "refused", "reads", "stand_ins", "failed"}


class InProcess:
    """Lints a row's bytes as `check` would, with the row's `engine:` as preflight's engine step would have
    brought it."""

    def __init__(self, engine: dict[str, Any] | None = None) -> None:
        self.views = _views() if needs(ALL, "effective") else None
        self.engine = engine_check(engine)

    def file_report(self, raw: bytes) -> dict[str, Any]:
        """The file's entry in the JSON document `check` prints for a config.json of these bytes."""
        doc = parse(raw[: MAX_BYTES + 1])
        if classify(doc)[0] == "skipped":
            inputs = Inputs(path=SHOWN, doc=doc)
        else:
            view = self.views.of(doc) if self.views is not None else None
            integrity = Integrity(sha256=hashlib.sha256(raw).hexdigest())
            inputs = Inputs(
                path=SHOWN, doc=doc, view=view, integrity=integrity, engine=self.engine, catalog=catalog.load()
            )
        report = Report(files=(lint(inputs, ALL),), transformers_version=_transformers(), tool_version=__version__)
        (entry,) = json.loads(render(report, "json"))["files"]
        assert isinstance(entry, dict)
        return entry


@cache
def _views() -> Views:
    """The engine's config class, one for the session. Uncached on disk, where `check` keeps its views: each
    test has a cache dir of its own (conftest), so the CLI's run of a row misses and makes the view just as
    this does, and the cache keeps only an entry that reads back as the view it was made from. (Made once:
    reading the transformers version it keys the cache on costs 10 ms.)"""
    return Views(cached=False)


@cache
def _transformers() -> str | None:
    """The report's transformers version (read from package metadata: 10 ms a time)."""
    return transformers_version()


def engine_check(spec: dict[str, Any] | None) -> EngineCheck | None:
    """A row's `engine:` as preflight's engine step would hand it to the rules: each record through
    `from_json`, as the step reads an adapter's answer, and the notes as they are."""
    if spec is None:
        return None
    assert set(spec) <= ENGINE_KEYS, f"unknown engine keys {sorted(set(spec) - ENGINE_KEYS)}"
    records = []
    for given in spec.get("records", ()):
        assert set(given) <= RECORD_KEYS, f"unknown record keys {sorted(set(given) - RECORD_KEYS)}"
        name = given.get("engine", "vllm")
        # No version: the pinned release, one the adapters were checked against, whatever the pin is today.
        data = {"engine": name, "version": PINNED[name], "refused": None, "reads": None, **given}
        records.append(from_json(name, PYTHON, data))
    return EngineCheck(tuple(records), tuple(str(n) for n in spec.get("notes", ())))

"""DF011 never calls a key ignored that the engines' source reads (lint.engine_source_keys): on every published
drafter of fixtures/upstream and every mutant of the differential suite, each "ignored"/"read by no engine" finding
names a key neither the recorded runs nor the source of an engine reading the file's format read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from engines.mutants import generate
from harness_in_process import InProcess
from helpers import FIXTURES

from dflash_cfg.lint import key_reads


def _claims(raw: bytes) -> Iterator[tuple[str, str]]:
    """(pointer, message) of each DF011 finding that says its key is not read, where the source of an engine that
    reads the file's format reads it (speculators reads its own format only)."""
    report = InProcess().file_report(raw)
    engines = ("vllm", "sglang", "speculators") if report["kind"] == "speculators" else ("vllm", "sglang")
    for finding in report["findings"]:
        said = finding["message"]
        claims = finding["rule"] == "DF011" and ("ignored by" in said or "read by no" in said)
        if claims and any(r[0] in engines for r, _ in key_reads.source_reads(finding["pointer"])):
            yield finding["pointer"], said


def _drafters() -> list[Any]:
    return [
        pytest.param(p.read_bytes(), id=p.relative_to(FIXTURES).as_posix())
        for p in sorted((FIXTURES / "upstream").rglob("config*.json"))
    ]


@pytest.mark.parametrize("raw", _drafters())
def test_no_published_key_the_source_reads_is_called_ignored(raw: bytes) -> None:
    assert not list(_claims(raw))


def test_no_mutant_key_the_source_reads_is_called_ignored() -> None:
    wrong, reached = [], 0
    for mutant in generate():
        raw = json.dumps(mutant.data, indent=2).encode()
        wrong += [(mutant.id, p) for p, _ in _claims(raw)]
        reached += any(not key_reads.readers(p) and key_reads.source_reads(p) for p in _pointers(mutant.data))
    assert not wrong
    # Mutants that put a key only the source reads into the file (moved to the other DFlash place, SGLang's
    # Nemotron-3.5 layout keys): without them this would prove nothing.
    assert reached >= 5


def _pointers(data: dict[str, Any]) -> Iterator[str]:
    yield from (f"/{k}" for k in data)
    if isinstance(data.get("dflash_config"), dict):
        yield from (f"/dflash_config/{k}" for k in data["dflash_config"])

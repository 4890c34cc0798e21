"""The reports of every fixture, byte for byte, as recorded before the package was reorganised.

A refactor must not change what a user sees. This test runs `check` on every JSON file under
fixtures/ and tests/golden/inputs/ (text and JSON output, without and with each target in
fixtures/targets/) and compares exit code, stdout and stderr with tests/golden/check.json.
Only the installed transformers version is normalised, so the record survives an upgrade.

Regenerate (only when a change of findings is intended, and say so in the commit):
    DFLASH_CFG_GOLDEN=record ./dev test tests/report/test_golden.py
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT, Result

GOLDEN = ROOT / "tests" / "golden"
RECORD = GOLDEN / "check.json"
TARGETS = sorted(p for p in (FIXTURES / "targets").iterdir() if p.is_dir())


def _inputs() -> list[Path]:
    found = [p for p in FIXTURES.rglob("*.json") if not {"hub", "hf-cache"} & set(p.relative_to(FIXTURES).parts)]
    return sorted(found) + sorted((GOLDEN / "inputs").glob("*.json"))


def _cases() -> list[tuple[str, ...]]:
    cases: list[tuple[str, ...]] = []
    for path in _inputs():
        rel = str(path.relative_to(ROOT))
        for fmt in ("json", "text"):
            cases.append(("check", rel, "--format", fmt, "--no-cache"))
        if "targets" not in path.parts:
            for target in TARGETS:
                cases.append(
                    ("check", rel, "--format", "json", "--no-cache", "--target", str(target.relative_to(ROOT)))
                )
    return cases


def _normalise(text: str) -> str:
    return text.replace(metadata.version("transformers"), "<transformers>")


@pytest.fixture
def run_in_root(
    dflash: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> Callable[[tuple[str, ...]], dict[str, object]]:
    monkeypatch.chdir(ROOT)

    def run(args: tuple[str, ...]) -> dict[str, object]:
        result = dflash(*args)
        return {"code": result.code, "out": _normalise(result.out), "err": _normalise(result.err)}

    return run


def test_reports_are_unchanged(run_in_root: Callable[[tuple[str, ...]], dict[str, object]]) -> None:
    got = {" ".join(args): run_in_root(args) for args in _cases()}
    if os.environ.get("DFLASH_CFG_GOLDEN") == "record":
        RECORD.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(RECORD.read_text(encoding="utf-8"))
    assert sorted(got) == sorted(want), "the set of golden cases changed: record again on purpose"
    for case, expected in want.items():
        assert got[case] == expected, case

"""The layout of `check` output, byte for byte, on a few representative inputs.

Which findings a file gets is the rule-case table's business (tests/lint/rules/); this record holds what the
table cannot see: how the text and JSON reports lay those findings out. tests/golden/check.json maps each
command line (run from the repository root) to its exit code, stdout and stderr: a drafter with errors,
warnings and infos (alone, and with its target), a DFlash2 drafter, a speculators-format file, a skipped
target config, a file with many problems, escapes in messages, an empty file and an undecodable one. Only the
installed transformers version is normalised, so the record survives an upgrade.

Regenerate (only when a change of output is intended, and say so in the commit):
    DFLASH_CFG_GOLDEN=record ./dev test tests/report/test_golden.py
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import metadata

import pytest
from helpers import ROOT, Result, recorded, recording

RECORD = ROOT / "tests" / "golden" / "check.json"
WANT: dict[str, dict[str, object]] = json.loads(RECORD.read_text(encoding="utf-8"))


def _normalise(text: str) -> str:
    return text.replace(metadata.version("transformers"), "<transformers>")


def test_reports_are_unchanged(dflash: Callable[..., Result], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    got = {}
    for command in sorted(WANT):
        result = dflash(*command.split())
        got[command] = {"code": result.code, "out": _normalise(result.out), "err": _normalise(result.err)}
    if recording("DFLASH_CFG_GOLDEN"):
        RECORD.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
        recorded(str(RECORD.relative_to(ROOT)), "DFLASH_CFG_GOLDEN")
    for command, expected in WANT.items():
        assert got[command] == expected, command

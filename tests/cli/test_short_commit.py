"""A short commit id, as the tool and the Hub's pages print it (28cadb796e2f), names that commit in --revision
when the Hugging Face cache holds a snapshot it begins; one it cannot expand is said, never guessed."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import FIXTURES, Result

Run = Callable[..., Result]
REPO = "z-lab/Qwen3.6-27B-DFlash"
COMMIT = "28cadb796e2f55d398cf4d0b707988ff03abf5bd"


@pytest.fixture
def drafter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(FIXTURES / "hf-cache", tmp_path / "hf")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return Path(shutil.copytree(FIXTURES / "incident" / "Qwen3.6-27B-DFlash", tmp_path / "Qwen3.6-27B-DFlash"))


def _compared(result: Result) -> tuple[str, list[str]]:
    report = json.loads(result.out)
    (file,) = report["files"]
    return file["upstream"]["commit"], sorted(f["rule"] for f in file["findings"] if f["rule"].startswith("DF60"))


def test_a_short_commit_id_is_the_commit_it_begins(dflash: Run, drafter: Path) -> None:
    full = dflash("check", drafter, "--from-hub", REPO, "--revision", COMMIT, "--format", "json")
    short = dflash("check", drafter, "--from-hub", REPO, "--revision", COMMIT[:12], "--format", "json")
    assert short.code == full.code == 1, short.err
    assert _compared(short) == _compared(full) and _compared(short)[0] == COMMIT
    assert "DF601" in _compared(short)[1]
    shown = dflash("diff", drafter, "--from-hub", REPO, "--revision", COMMIT[:7])
    assert shown.code == 1 and COMMIT[:12] in shown.out, shown.err


def test_a_short_id_the_cache_cannot_expand_is_said(dflash: Run, drafter: Path) -> None:
    result = dflash("check", drafter, "--from-hub", REPO, "--revision", "0123456789ab")
    assert result.code == 2 and result.err.count("\n") == 1, result.err
    assert "0123456789ab" in result.err and "not in the local cache" in result.err

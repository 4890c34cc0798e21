"""A gate that fails says the next command: upstream's bytes for a file that differs from its upstream (DF601),
the comparison and the repair for the stale-file signature (DF205) before any way to accept it, and an ignore of
DF205 says what it hides. Through the CLI, on a copy of the incident's stale drafter, offline, with the fixtures'
Hugging Face cache; the printed command is run as a user pastes it."""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import FIXTURES, Result

Run = Callable[..., Result]

REPO = "z-lab/Qwen3.6-27B-DFlash"
COMMIT = "28cadb796e2f55d398cf4d0b707988ff03abf5bd"


@pytest.fixture
def stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HF_HUB_CACHE", str(FIXTURES / "hf-cache" / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    shutil.copytree(FIXTURES / "incident" / "Qwen3.6-27B-DFlash", tmp_path / "models" / "qwen36")
    return Path("models") / "qwen36"


def _line(err: str, start: str) -> str:
    (line,) = [line for line in err.splitlines() if line.startswith(start)]
    return line


def test_a_gate_failing_on_df601_prints_the_fix_from_hub(dflash: Run, stale: Path) -> None:
    result = dflash("check", "--gate", stale, "--from-hub", REPO)
    assert result.code == 1 and "error DF601" in result.out
    line = _line(result.err, "dflash-cfg: models/qwen36/config.json differs from ")
    assert line == (
        f"dflash-cfg: models/qwen36/config.json differs from {REPO}@{COMMIT[:12]} in DFlash-critical fields "
        f"(DF601); write upstream's bytes: dflash-cfg fix models/qwen36/config.json --from-hub {REPO}"
    )
    # Pasted as printed (and --yes, as a script runs it): the file is upstream's, the gate passes.
    command = shlex.split(line.split("write upstream's bytes: ", 1)[1])
    assert command[0] == "dflash-cfg"
    assert dflash(*command[1:], "--yes").code == 0
    assert dflash("check", "--gate", stale, "--from-hub", REPO).code == 0


def test_the_revision_compared_at_is_in_the_command(dflash: Run, stale: Path) -> None:
    result = dflash("check", "--gate", stale, "--from-hub", REPO, "--revision", COMMIT)
    assert result.code == 1
    line = _line(result.err, "dflash-cfg: models/qwen36/config.json differs from ")
    assert line.endswith(f"dflash-cfg fix models/qwen36/config.json --from-hub {REPO} --revision {COMMIT}")


def test_the_stale_signature_offers_the_comparison_and_the_repair_first(dflash: Run, stale: Path) -> None:
    result = dflash("check", "--gate", stale)
    assert result.code == 1
    lines = result.err.splitlines()
    stale_line = _line(result.err, "dflash-cfg: models/qwen36/config.json has the stale-file signature (DF205)")
    advice = _line(result.err, "dflash-cfg: failed on warnings only")
    assert lines.index(stale_line) < lines.index(advice)  # the repair before the ways to accept it
    assert (
        f"compare it with its upstream, dflash-cfg diff models/qwen36/config.json --from-hub {REPO}, then write "
        f"upstream's bytes: dflash-cfg fix models/qwen36/config.json --from-hub {REPO}"
    ) in stale_line
    # The ignore that would silence the incident says what it hides.
    assert '"models/qwen36/config.json" = ["DF205", "DF604"]' in advice
    assert "an ignore of DF205 hides the stale-file signature itself" in advice
    diff = shlex.split(stale_line.split("compare it with its upstream, ", 1)[1].split(", then", 1)[0])
    shown = dflash(*diff[1:])
    assert shown.code == 1 and "* differs  layer_types" in shown.out


def test_warnings_without_the_stale_signature_keep_the_plain_advice(dflash: Run, tmp_path: Path) -> None:
    drafter = tmp_path / "m"
    shutil.copytree(FIXTURES / "upstream" / "z-lab__Qwen3.5-4B-DFlash", drafter)
    (drafter / "config.json").write_text(
        (drafter / "config.json").read_text().replace('"block_size": 16', '"block_size": 12'),
        encoding="utf-8",
    )
    result = dflash("check", "--gate", drafter, "--isolated")
    assert "stale-file signature" not in result.err and "DF601" not in result.err

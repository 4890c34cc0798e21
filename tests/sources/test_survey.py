"""An interpreter's survey (which engines it imports and what is installed there, no engine imported:
sources/interpreters.survey) on a real interpreter, a venv of this one; and the survey remembered beside the
engine answers (sources/engine_cache.EngineCache.survey), taken while its witnesses stand."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dflash_cfg.sources.engine_cache import EngineCache
from dflash_cfg.sources.interpreters import survey


@pytest.fixture
def venv(tmp_path: Path) -> tuple[Path, Path]:
    """A real interpreter (a venv of this one, no pip) behind a script that marks each start in `starts`,
    and its site-packages."""
    folder = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    real = folder / "bin" / "python"
    site = Path(subprocess.run([real, "-c", code], capture_output=True, text=True, check=True).stdout.strip())
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.write_text(f'#!/bin/sh\necho start >> {tmp_path}/starts\nexec {real} "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    return python, site


def starts(python: Path) -> int:
    marks = python.parent.parent / "starts"
    return len(marks.read_text().splitlines()) if marks.exists() else 0


def install(site: Path, name: str, version: str) -> None:
    """A package named like an engine (never imported: it would say so) and its metadata, as pip lays them out."""
    (site / name).mkdir(exist_ok=True)
    (site / name / "__init__.py").write_text("raise SystemExit('imported')\n", encoding="utf-8")
    for old in site.glob(f"{name}-*.dist-info"):
        shutil.rmtree(old)
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nlong text\n", "utf-8")


def test_an_engine_installed_upgraded_or_removed_changes_the_survey(venv: tuple[Path, Path]) -> None:
    """Found, not imported, and its metadata read as importlib.metadata reads it."""
    python, site = venv
    bare = survey(str(python))
    assert bare is not None and bare.engines == () and bare.witnesses
    install(site, "sglang", "2.4.0")
    installed = survey(str(python))
    assert installed is not None and installed.engines == ("sglang",) and installed.versions == {"sglang": "2.4.0"}
    assert survey(str(python)) == installed  # nothing changed: the same survey
    install(site, "sglang", "0.5.24")
    upgraded = survey(str(python))
    assert upgraded is not None and upgraded.versions == {"sglang": "0.5.24"}
    assert upgraded.installation != installed.installation
    (site / "other-1.0.dist-info").mkdir()  # any other package installed beside it
    other = survey(str(python))
    assert other is not None and other.installation not in (installed.installation, upgraded.installation)


def test_a_remembered_survey_spares_the_interpreters_start(venv: tuple[Path, Path], tmp_path: Path) -> None:
    python, site = venv
    install(site, "vllm", "1.7.0")
    store = EngineCache(tmp_path / "cache")
    first = store.survey(str(python))
    assert first is not None and first.versions == {"vllm": "1.7.0"} and starts(python) == 1
    assert store.survey(str(python)) == first and starts(python) == 1
    install(site, "vllm", "1.7.1")  # an upgrade: its old metadata gone, new metadata beside it
    upgraded = store.survey(str(python))
    assert upgraded is not None and upgraded.versions == {"vllm": "1.7.1"} and starts(python) == 2
    (site / "extra.pth").write_text(f"{tmp_path}\n", encoding="utf-8")  # sys.path itself changes
    assert store.survey(str(python)) not in (first, upgraded) and starts(python) == 3
    assert store.survey(str(python)) is not None and starts(python) == 3
    assert EngineCache(None).survey(str(python)) is not None and starts(python) == 4  # --no-cache: started


@pytest.mark.parametrize("case", ["not json", "truncated", "a foreign engine", "no witnesses", "bad witness"])
def test_a_corrupt_remembered_survey_starts_the_interpreter(venv: tuple[Path, Path], tmp_path: Path, case: str) -> None:
    python, site = venv
    install(site, "vllm", "1.7.0")
    store = EngineCache(tmp_path / "cache")
    first = store.survey(str(python))
    [path] = (tmp_path / "cache" / "engine").glob("survey-*.json")
    entry = json.loads(path.read_bytes())
    if case == "not json":
        path.write_bytes(b"\xff{")
    elif case == "truncated":
        path.write_bytes(path.read_bytes()[:50])
    elif case == "a foreign engine":
        entry["survey"]["engines"] = ["tensorrt"]
        path.write_text(json.dumps(entry), encoding="utf-8")
    elif case == "no witnesses":  # nothing would vouch for it: never taken
        entry["survey"]["witnesses"] = []
        path.write_text(json.dumps(entry), encoding="utf-8")
    else:
        entry["survey"]["witnesses"][0][1] = ["a"]
        path.write_text(json.dumps(entry), encoding="utf-8")
    assert store.survey(str(python)) == first and starts(python) == 2


def test_what_is_not_an_interpreter_has_no_survey(tmp_path: Path) -> None:
    assert survey(str(tmp_path / "nope")) is None
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\necho '[1, 2]'\n", encoding="utf-8")
    script.chmod(0o755)
    assert survey(str(script)) is None

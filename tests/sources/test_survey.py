"""An interpreter's survey (which engines it imports and what is installed there, no engine imported:
sources/interpreters.survey) on a real interpreter, a venv of this one."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
    install(site, "sglang", "0.5.23")
    installed = survey(str(python))
    assert installed is not None and installed.engines == ("sglang",) and installed.versions == {"sglang": "0.5.23"}
    assert survey(str(python)) == installed  # nothing changed: the same survey
    install(site, "sglang", "0.5.24")
    upgraded = survey(str(python))
    assert upgraded is not None and upgraded.versions == {"sglang": "0.5.24"}
    assert upgraded.installation != installed.installation
    (site / "other-1.0.dist-info").mkdir()  # any other package installed beside it
    other = survey(str(python))
    assert other is not None and other.installation not in (installed.installation, upgraded.installation)


def test_what_is_not_an_interpreter_has_no_survey(tmp_path: Path) -> None:
    assert survey(str(tmp_path / "nope")) is None
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\necho '[1, 2]'\n", encoding="utf-8")
    script.chmod(0o755)
    assert survey(str(script)) is None

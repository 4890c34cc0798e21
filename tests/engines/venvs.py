"""Interpreters the engine tests make from the pinned engine venv (tests import this module, never each other)."""

from __future__ import annotations

import subprocess
from pathlib import Path

_PURELIB = "import sysconfig; print(sysconfig.get_paths()['purelib'])"


def site_packages(python: Path) -> Path:
    return Path(subprocess.run([python, "-c", _PURELIB], capture_output=True, text=True, check=True).stdout.strip())


def other_version(engine_python: Path, root: Path, versions: dict[str, str]) -> Path:
    """A real second interpreter whose engines report other versions: a venv of the engine venv's python that
    sees the engine venv's packages through a .pth file, with its own dist-info of each engine in `versions`
    (found first, as an installed release would be)."""
    venv = root / "venv"
    subprocess.run([str(engine_python), "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    (site_packages(python) / "engines.pth").write_text(f"{site_packages(engine_python)}\n", encoding="utf-8")
    for name, version in versions.items():
        release(python, name, version)
    return python


def release(python: Path, name: str, version: str) -> None:
    """Install the metadata of `name` `version` in `python`'s venv, where importlib.metadata finds it first: the
    version its engine reports from then on (the code stays the engine venv's)."""
    info = site_packages(python) / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", "utf-8")

"""dflash-cfg as a user installs it: a wheel built by pip from a copy of the source tree, pip-installed (not
editable) into a venv of its own, run by its console script or `python -m` from wherever the user stands, the
checkout root included. Its dependencies come from the test venv's site-packages through a .pth line, which
adds that directory without running its .pth files: the editable install's import hook stays out."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from helpers import ROOT
from packaging.requirements import Requirement
from packaging.version import Version

# What never goes into a wheel and may be large or busy (caches, VCS, the venv, test data).
NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".venv*",  # .venv, and venvs older test runs left in the checkout
    "*_cache",
    ".hypothesis",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "fixtures",
    "tests",
    "bench",
)
# PEP 639: `license = "SPDX expression"` is understood by setuptools from 77.0 on; older ones reject the
# string ("`project.license` must be valid exactly by one definition").
SPDX_LICENSE_SETUPTOOLS = Version("77.0")


def setuptools_requirement() -> Requirement:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib

    with open(ROOT / "pyproject.toml", "rb") as fh:
        found = [Requirement(r) for r in tomllib.load(fh)["build-system"]["requires"]]
    (req,) = [r for r in found if r.name == "setuptools"]
    return req


def venv_setuptools() -> Version | None:
    try:
        return Version(metadata.version("setuptools"))
    except metadata.PackageNotFoundError:
        return None


def build_wheel(work: Path) -> Path:
    """The wheel pip builds from a copy of the tree (so nothing is written into the checkout)."""
    src = work / "src" / "dflash-cfg"
    shutil.copytree(ROOT, src, ignore=NOT_SOURCE, symlinks=True)
    out = work / "wheelhouse"
    out.mkdir()
    command = [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-w", str(out), "--no-input", "-q"]
    have = venv_setuptools()
    if have is not None and have >= SPDX_LICENSE_SETUPTOOLS and setuptools_requirement().specifier.contains(have):
        command.append("--no-build-isolation")  # offline: the venv's own setuptools can build it
    # else: pip fetches a setuptools matching build-system.requires into an isolated env (the package index).
    proc = subprocess.run(command, capture_output=True, text=True, cwd=out, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = out.glob("dflash_cfg-*.whl")
    return built


@dataclass(frozen=True)
class Installed:
    """A venv holding the wheel, installed as `pip install dflash-cfg` would."""

    venv: Path
    wheel: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def env(self, **extra: str) -> dict[str, str]:
        """The test's environment (loopback Hub, the test's own caches) with this venv's bin first on PATH, as
        an activated venv has it; no PYTHONPATH."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
        env.update(PATH=f"{self.bin}{os.pathsep}{env.get('PATH', '')}", NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1")
        env.pop("PYTHONPYCACHEPREFIX", None)  # ./dev's: a cache of the checkout's sources, not the install's
        env.update(extra)
        return env

    def run(
        self, *args: str | Path, cwd: Path = ROOT, timeout: float = 180, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """`args` as typed at a shell in `cwd`: `dflash-cfg ...` or `python ...` resolve to this venv's."""
        argv = [str(a) for a in args]
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            cwd=cwd,
            env=self.env(**env),
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )


def install(work: Path) -> Installed:
    wheel = build_wheel(work)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = Path(
        subprocess.run(
            [venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # After the venv's own site-packages (the wheel), the test venv's: the dependencies, not its editable hook.
    (purelib / "zz-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q"]
    subprocess.run([*command, "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True, timeout=300)
    return Installed(venv, wheel)

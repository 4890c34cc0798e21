"""The package as users get it: a real (non-editable) wheel, built by pip from a copy of the source tree,
unpacked, and run from there with the repo checkout and the editable install out of the way."""

from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from helpers import REAL, REAL_DATA, ROOT, mutated, write_config
from installed import build_wheel, setuptools_requirement
from packaging.requirements import Requirement

import dflash_cfg


def pyproject() -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib

        with open(ROOT / "pyproject.toml", "rb") as fh:
            data: dict[str, Any] = tomllib.load(fh)
        return data
    pytest.skip("tomllib needs Python 3.11")


def test_build_requirement_admits_only_setuptools_that_can_build_it() -> None:
    # Checked by hand: 76.1.0 rejects `license = "Apache-2.0"`, 77.0.3 builds the wheel.
    license_ = pyproject()["project"].get("license")
    req = setuptools_requirement()
    if isinstance(license_, str):
        too_old = [v for v in ("68.0.0", "70.0.0", "75.8.0", "76.1.0") if req.specifier.contains(v)]
        assert not too_old, f"{req} admits {too_old}, which cannot read license = {license_!r}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built with pip, from a copy of the tree (so nothing is written into the checkout)."""
    return build_wheel(tmp_path_factory.mktemp("build"))


@pytest.fixture(scope="module")
def unpacked(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as zf:
        assert zf.testzip() is None
        zf.extractall(target)
    return target


@pytest.mark.slow
def test_wheel_contents(wheel: Path) -> None:
    assert wheel.name == f"dflash_cfg-{dflash_cfg.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        dist = f"dflash_cfg-{dflash_cfg.__version__}.dist-info"
        for schema in ("dflash.schema.json", "dflash2.schema.json"):
            name = f"dflash_cfg/schemas/{schema}"
            assert name in names
            packed = json.loads(zf.read(name))
            assert packed == json.loads((ROOT / "schemas" / schema).read_bytes())
        for module in ("__init__", "__main__", "cli/__init__", "lint/linter", "lint/rules/__init__", "report/__init__"):
            assert f"dflash_cfg/{module}.py" in names, module
        # PEP 561: the classifier "Typing :: Typed" promises the marker that makes type checkers read the package.
        assert "Classifier: Typing :: Typed" in zf.read(f"{dist}/METADATA").decode()
        assert zf.read("dflash_cfg/py.typed") == b""
        # Everything in the source package is shipped (no module forgotten in [tool.setuptools] packages).
        for source in (ROOT / "dflash_cfg").rglob("*.py"):
            assert source.relative_to(ROOT).as_posix() in names, source
        assert not [n for n in names if n.startswith(("tests/", "fixtures/", "schemas/", "bench/"))]
        assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]

        entry_points = configparser.ConfigParser()
        entry_points.read_string(zf.read(f"{dist}/entry_points.txt").decode())
        assert entry_points["console_scripts"]["dflash-cfg"].strip() == "dflash_cfg.__main__:run"

        meta = zf.read(f"{dist}/METADATA").decode()
        assert "Name: dflash-cfg" in meta and f"Version: {dflash_cfg.__version__}" in meta
        assert "License-Expression: Apache-2.0" in meta and "License-File: LICENSE" in meta
        assert zf.read(f"{dist}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        requires = {
            Requirement(line.split(":", 1)[1].strip()).name.replace("-", "_").lower()
            for line in meta.splitlines()
            if line.startswith("Requires-Dist:") and "extra ==" not in line
        }
        assert {"click", "jsonschema", "referencing", "transformers", "huggingface_hub", "deepdiff"} <= requires


def run_from_wheel(unpacked: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(PYTHONPATH=str(unpacked), NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


@pytest.mark.slow
def test_installed_wheel_is_what_runs(unpacked: Path, tmp_path: Path) -> None:
    probe = (
        "import json, dflash_cfg, dflash_cfg.schemas, dflash_cfg.cli; from importlib import resources; "
        "print(json.dumps([dflash_cfg.__file__, str(resources.files('dflash_cfg.schemas')), "
        "dflash_cfg.cli.__file__]))"
    )
    proc = run_from_wheel(unpacked, tmp_path, "-c", probe)
    assert proc.returncode == 0, proc.stderr
    for where in json.loads(proc.stdout):
        assert Path(where).resolve().is_relative_to(unpacked.resolve()), where  # not the editable checkout


@pytest.mark.slow
def test_wheel_checks_a_real_config(unpacked: Path, tmp_path: Path) -> None:
    path = write_config(tmp_path / "Qwen3.5-4B-DFlash")
    assert path.read_bytes() == REAL.read_bytes()
    proc = run_from_wheel(unpacked, tmp_path, "-m", "dflash_cfg", "check", str(path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    report = json.loads(proc.stdout)
    assert report["tool"]["version"] == dflash_cfg.__version__
    (f,) = report["files"]
    assert f["kind"] == "dflash"
    assert {x["severity"] for x in f["findings"]} <= {"info"}


@pytest.mark.slow
def test_wheel_validates_against_its_packaged_schema(unpacked: Path, tmp_path: Path) -> None:
    assert isinstance(REAL_DATA["hidden_size"], int)
    path = write_config(tmp_path / "m", mutated(lambda d: d.__setitem__("hidden_size", "2560")))
    proc = run_from_wheel(
        unpacked, tmp_path, "-m", "dflash_cfg", "check", str(path), "--format", "json", "--select", "DF010"
    )
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    (f,) = json.loads(proc.stdout)["files"]
    df010 = [x for x in f["findings"] if x["rule"] == "DF010"]
    assert [x["pointer"] for x in df010] == ["/hidden_size"], f["findings"]
    assert proc.returncode == 1, proc.stderr


@pytest.mark.slow
def test_wheel_version_and_rules(unpacked: Path, tmp_path: Path) -> None:
    proc = run_from_wheel(unpacked, tmp_path, "-m", "dflash_cfg", "--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"dflash-cfg, version {dflash_cfg.__version__}"
    proc = run_from_wheel(unpacked, tmp_path, "-m", "dflash_cfg", "rules", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    from dflash_cfg.lint.rules import ALL

    assert [r["id"] for r in json.loads(proc.stdout)] == [r.id for r in ALL]

"""The adapter runner on interpreters that are not the engine venv: whatever the process does, the caller gets one
record per request saying what went wrong, never a traceback. Fast: no engine is imported here."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT

from dflash_cfg.sources import adapters
from dflash_cfg.sources.adapters import Request

DRAFTER = str(FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash")


def fake_python(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def test_an_interpreter_without_the_engine_answers_every_request_with_why() -> None:
    records = adapters.run(sys.executable, "vllm", [Request(drafter=DRAFTER), Request(drafter="/no/such/dir")])
    assert len(records) == 2
    for record in records:
        assert record.failed is not None and record.failed.startswith("cannot import vllm"), record
        assert record.refused is None and record.reads is None and not record.checked


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("exit 3", "exited with code 3"),
        ("echo 'not json'; cat > /dev/null", "not a record"),
        ('echo \'{"engine": "sglang"}\'', "not a record"),
        ("echo boom >&2; exit 1", "boom"),
    ],
)
def test_a_broken_adapter_process_becomes_failed_records(tmp_path: Path, body: str, says: str) -> None:
    records = adapters.run(fake_python(tmp_path, body), "vllm", [Request(drafter=DRAFTER)] * 3)
    assert len(records) == 3
    assert all(r.failed is not None for r in records) and says in str(records[0].failed), records


def test_a_hung_adapter_times_out(tmp_path: Path) -> None:
    records = adapters.run(fake_python(tmp_path, "sleep 30"), "sglang", [Request(drafter=DRAFTER)], timeout=1)
    assert records[0].failed is not None and "no record within 1 s" in records[0].failed


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_hung_adapter_that_never_reads_its_batch_leaves_no_pipe_open(tmp_path: Path) -> None:
    # A batch larger than the pipe: the feeding thread is still blocked in its write when the adapter is killed.
    records = adapters.run(
        fake_python(tmp_path, "exec sleep 30"), "vllm", [Request(drafter=DRAFTER * 40)] * 100, timeout=1
    )
    assert all(r.failed is not None and "no record within 1 s" in r.failed for r in records)
    gc.collect()  # an unclosed pipe is reported (ResourceWarning, unraisable) when collected


def test_a_missing_interpreter_is_a_failed_record(tmp_path: Path) -> None:
    records = adapters.run(tmp_path / "nope", "speculators", [Request(drafter=DRAFTER)])
    assert records[0].failed is not None and records[0].failed.startswith("cannot start the adapter")


def test_the_adapters_run_in_cpu_mode_with_the_v2_runner() -> None:
    env = adapters.adapter_env({"PATH": "/bin", "HF_HUB_OFFLINE": "1", "PYTHONPATH": "/x"})
    assert env["CUDA_VISIBLE_DEVICES"] == "" and env["VLLM_TARGET_DEVICE"] == "cpu"
    assert env["VLLM_USE_V2_MODEL_RUNNER"] == "1" and env["HF_HUB_OFFLINE"] == "1"
    assert "PYTHONPATH" not in env


def test_no_adapter_is_named_after_an_engine() -> None:
    # The script's directory is sys.path[0] in the engine's interpreter: `vllm.py` there would shadow vLLM.
    names = {p.stem for p in adapters.ADAPTERS.glob("*.py")}
    assert not names & {"vllm", "sglang", "speculators", "torch", "transformers"}
    assert {f"adapter_{e}" for e in adapters.ENGINES} <= names


@pytest.mark.slow  # runs the CLI in child processes
def test_check_never_imports_the_runner_or_an_engine() -> None:
    code = (
        "import sys, dflash_cfg; dflash_cfg.check([sys.argv[1]]); "
        "print(sorted(m for m in sys.modules if m.startswith(('dflash_cfg.sources.adapters', 'dflash_cfg.adapters', "
        "'dflash_cfg.sources.interpreters', 'dflash_cfg.commands.engine', 'vllm', 'sglang', 'speculators'))))"
    )
    out = subprocess.run([sys.executable, "-c", code, DRAFTER], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow  # runs the CLI in child processes
def test_check_and_the_hooks_never_start_an_engine(tmp_path: Path) -> None:
    # `vllm`, `sglang` and a python that has every engine, first on PATH: each leaves a mark if started.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marks = tmp_path / "marks"
    for name in ("vllm", "sglang"):
        fake_python(bin_dir, f"echo {name} >> {marks}").rename(bin_dir / name)
    drafter = tmp_path / "drafter"
    drafter.mkdir()
    (drafter / "config.json").write_bytes((Path(DRAFTER) / "config.json").read_bytes())
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HF_HUB_OFFLINE": "1"}
    tool = [sys.executable, "-m", "dflash_cfg"]
    for args in (["check", str(drafter)], ["check", "--gate", str(drafter)], hooks_fix(drafter)):
        subprocess.run([*tool, *args], capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    assert not marks.exists(), marks.read_text()


def hooks_fix(drafter: Path) -> list[str]:
    return ["fix", "--yes", "--no-backup", "--no-lock", "--exit-non-zero-on-fix", str(drafter)]


def _engine_without_bytecode(tmp_path: Path) -> tuple[Path, Path]:
    """An interpreter whose "vllm" (and "torch", which the adapter imports first) are packages installed without
    bytecode, as uv installs them. The adapter imports both, then fails: they are not the real engine."""
    site = tmp_path / "site"
    (site / "vllm").mkdir(parents=True)
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("", encoding="utf-8")
    (site / "vllm" / "__init__.py").write_text("from vllm import engine\n", encoding="utf-8")
    (site / "vllm" / "engine.py").write_text("VALUE = 1\n", encoding="utf-8")
    return site, fake_python(tmp_path, f'PYTHONPATH={site} exec {sys.executable} "$@"')


def test_an_engine_installed_without_bytecode_gets_it_kept_in_our_cache(tmp_path: Path) -> None:
    site, python = _engine_without_bytecode(tmp_path)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    records = adapters.run(python, "vllm", [Request(drafter=DRAFTER)], env=env)
    assert records[0].failed is not None and "cannot import vllm" in records[0].failed  # not the real vLLM
    kept = (tmp_path / "cache" / "dflash-cfg" / "bytecode").rglob("*.pyc")
    names = sorted(f"{p.parent.name}/{p.name.split('.')[0]}" for p in kept)
    assert names == ["torch/__init__", "vllm/__init__", "vllm/engine"], names
    assert not list(site.rglob("__pycache__")), "bytecode was written into the engine's own tree"


def test_an_engine_installed_with_its_bytecode_is_left_as_it_is(tmp_path: Path) -> None:
    site, python = _engine_without_bytecode(tmp_path)
    # Into the package's own tree, as pip installs it (not under ./dev's PYTHONPYCACHEPREFIX).
    compiled = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(site)], check=True, env=compiled)
    # A caller's own bytecode prefix does not reach the engine: there it would find none of the engine's bytecode.
    prefix = tmp_path / "callers-pycache"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPYCACHEPREFIX": str(prefix)}
    adapters.run(python, "vllm", [Request(drafter=DRAFTER)], env=env)
    assert not (tmp_path / "cache" / "dflash-cfg" / "bytecode").exists()
    assert not prefix.exists()

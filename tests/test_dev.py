"""`./dev`, as a user and a contributor run it from the checkout: the demo (the README's main job), the test
loop and the hooks."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT

pytestmark = pytest.mark.slow


def test_demo_runs_each_step_once_and_judges_that_run() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "DFLASH_CFG_"))}
    done = subprocess.run(["sh", str(ROOT / "dev"), "demo"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    out = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)
    steps = re.findall(r"^== ([0-9])\. ", out, re.MULTILINE)
    assert steps == ["1", "2", "3", "4", "5", "6"]
    assert len(re.findall(r"^\$ dflash-cfg ", out, re.MULTILINE)) == 6
    # Step 4 shows the run whose exit code is judged: the one that writes.
    repair = out.split("== 4. ", 1)[1].split("== 5. ", 1)[0]
    assert "wrote $TMP/Qwen3.6-27B-DFlash/config.json" in repair
    assert "demo: expected exit" not in done.stderr
    assert out.rstrip().endswith("demo passed: 6 steps, each with the exit it should have")


def test_the_fast_loop_builds_no_engine_venv(tmp_path: Path) -> None:
    # The engine venv (7 GB) is built by the engine fixture when an engine test runs, never by `./dev test` itself.
    cache = tmp_path / "test-cache"
    env = {**os.environ, "DFLASH_CFG_TEST_CACHE": str(cache)}
    args = ["sh", str(ROOT / "dev"), "test", "-m", "not slow", "--collect-only", "-q", "tests/engines"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "test_pinned.py" in done.stdout
    assert not list(cache.glob("engines-*")), "the fast loop built the engine venv"


def test_the_lock_flag_runs_the_suite_on_a_release_lock_and_builds_nothing_first(tmp_path: Path) -> None:
    # `./dev test --lock NAME-VERSION` names a lock under tests/engines/releases/; the run says which lock it is on.
    # Collecting builds no engine venv: the engine fixture builds it when an engine test runs.
    release = sorted((ROOT / "tests" / "engines" / "releases").glob("*.lock.txt"))[0]
    name = release.name.removesuffix(".lock.txt")
    cache = tmp_path / "test-cache"
    env = {**os.environ, "DFLASH_CFG_TEST_CACHE": str(cache)}
    env.pop("DFLASH_CFG_ENGINES_LOCK", None)
    args = ["sh", str(ROOT / "dev"), "test", "--lock", name, "--collect-only", "tests/engines/test_pinned.py"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"engines lock: tests/engines/releases/{release.name}" in done.stdout
    assert not list(cache.glob("engines-*")), "collecting built the engine venv"
    unknown = subprocess.run(
        ["sh", str(ROOT / "dev"), "test", "--lock", "no-such-0.0.0"], capture_output=True, text=True, env=env
    )
    assert unknown.returncode == 2 and name in unknown.stderr, unknown.stderr


def test_the_hooks_command_installs_the_commit_subject_hook(tmp_path: Path) -> None:
    # `./dev hooks` (run by ./dev when it creates .venv) installs .pre-commit-config.yaml's hooks: a commit whose
    # subject is over 72 characters is then refused by git itself, and a short one lands.
    repo = tmp_path / "checkout"
    repo.mkdir()
    for name in ("dev", ".pre-commit-config.yaml"):
        shutil.copy2(ROOT / name, repo / name)
    (repo / ".venv").symlink_to(ROOT / ".venv")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    done = subprocess.run(["sh", str(repo / "dev"), "hooks"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (repo / "notes.txt").write_text("x\n", encoding="utf-8")
    subprocess.run([*git, "add", "notes.txt"], check=True)
    long = subprocess.run([*git, "commit", "-q", "-m", "x" * 73], capture_output=True, text=True)
    assert long.returncode != 0 and "commit subject" in long.stdout + long.stderr
    short = subprocess.run([*git, "commit", "-q", "-m", "x" * 72], capture_output=True, text=True)
    assert short.returncode == 0, short.stdout + short.stderr

"""Which Python interpreters on this host can run an engine, and which one a launch command runs.

An engine runs in whatever interpreter its launcher names: `python -m sglang.launch_server` in that python,
`vllm serve` in the interpreter of the `vllm` script's shebang (pip writes one into every console script).
Nothing here imports an engine: a probe subprocess asks the interpreter which engines it has (find_spec,
no import), and the adapters run later in that interpreter (dflash_cfg.sources.adapters).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dflash_cfg.sources.adapters import ENGINES, Engine

PROBE_TIMEOUT = 30.0
_PROBE = (
    "import importlib.util as u, json, sys\n"
    "print(json.dumps([e for e in sys.argv[1:] if u.find_spec(e) is not None]))\n"
)


@dataclass(frozen=True)
class Interpreter:
    python: str  # absolute path (not resolved: a venv's python is a symlink to the base one)
    engines: tuple[Engine, ...]  # the engines that can be imported there


@dataclass(frozen=True)
class NotRun:
    """Why the launch's engine cannot be run on this host."""

    reason: str


def engine_timeout(default: float) -> float:
    """Seconds an adapter may take per record: $DFLASH_CFG_ENGINE_TIMEOUT (a loaded host or a cold disk cache
    makes an engine import take minutes), else `default`."""
    try:
        value = float(os.environ.get("DFLASH_CFG_ENGINE_TIMEOUT", ""))
    except ValueError:
        return default
    return value if value > 0 else default


def engines_here() -> tuple[Engine, ...]:
    """The engines the current interpreter can import (found, not imported)."""
    return tuple(e for e in ENGINES if importlib.util.find_spec(e) is not None)


def probe(python: str) -> tuple[Engine, ...] | None:
    """The engines `python` can import; None when it does not run as a Python interpreter."""
    try:
        out = subprocess.run(
            [python, "-I", "-c", _PROBE, *ENGINES],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )
        found = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return None
    if not isinstance(found, list):
        return None
    return tuple(e for e in ENGINES if e in found)


def shebang_python(script: str) -> str | None:
    """The interpreter a console script runs with: `#!/path/python`, `#!/usr/bin/env python3`, or pip's
    `#!/bin/sh` + `'''exec' "/long path/python" "$0" "$@"` form for paths a shebang cannot hold."""
    try:
        with open(script, "rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    if not head or not head[0].startswith("#!"):
        return None
    words = head[0][2:].split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return shutil.which(rest[0]) if rest else None
    if os.path.basename(words[0]) == "sh" and len(head) > 1 and head[1].startswith("'''exec'"):
        try:
            parts = shlex.split(head[1][len("'''exec'") :])
        except ValueError:
            return None
        return parts[0] if parts else None
    return words[0]


def discover(pythons: Sequence[str] = ()) -> tuple[list[Interpreter], list[str]]:
    """The interpreters that have an engine, and a note per one asked for that has none.

    With `pythons`, only those; else the current interpreter (when an engine imports here) and the
    interpreters behind `vllm` and `sglang` on PATH."""
    notes: list[str] = []
    candidates: list[str] = []
    if pythons:
        for given in pythons:
            found = given if os.sep in given else shutil.which(given)
            if found is None:
                notes.append(f"{given}: not found on PATH")
                continue
            candidates.append(os.path.abspath(found))
    else:
        if engines_here():
            candidates.append(os.path.abspath(sys.executable))
        for program in ("vllm", "sglang"):
            script = shutil.which(program)
            python = shebang_python(script) if script else None
            if python is not None:
                candidates.append(os.path.abspath(python))
    found_list: list[Interpreter] = []
    for python in dict.fromkeys(candidates):
        engines = probe(python)
        if engines is None:
            notes.append(f"{python}: does not run as a Python interpreter")
        elif not engines:
            notes.append(f"{python}: imports none of {', '.join(ENGINES)}")
        else:
            found_list.append(Interpreter(python, engines))
    return found_list, notes


def launch_python(command: Sequence[str], environment: Mapping[str, str], cwd: str) -> str | NotRun:
    """The interpreter a launch command (wrappers already removed by the launch parser, see
    `launch_command`) runs its engine in: a python named by the command, else the shebang of the engine's
    script, looked up on the launch's PATH."""
    if not command:
        return NotRun("no command")
    head = command[0]
    path = environment.get("PATH", os.environ.get("PATH", ""))
    found = (os.path.join(cwd, head) if not os.path.isabs(head) else head) if os.sep in head else None
    if found is None:
        found = shutil.which(head, path=path)
    if found is None or not os.path.exists(found):
        return NotRun(f"{head!r} is not found on this host's PATH")
    if os.path.basename(head).startswith("python"):
        return os.path.abspath(found)
    python = shebang_python(found)
    if python is None:
        return NotRun(f"{found} has no Python shebang")
    return python


def uv_python(project: str | None, environment: Mapping[str, str], cwd: str, active: bool) -> str | NotRun:
    """The interpreter `uv run` runs in: the project's environment (UV_PROJECT_ENVIRONMENT, else the `.venv`
    beside the nearest pyproject.toml from --project/--directory or the working directory), or the active
    venv with --active."""
    if active:
        venv = environment.get("VIRTUAL_ENV") or os.environ.get("VIRTUAL_ENV")
        if not venv:
            return NotRun("uv run --active with no VIRTUAL_ENV")
        return os.path.join(venv, "bin", "python")
    start = Path(cwd, project) if project else Path(cwd)
    named = environment.get("UV_PROJECT_ENVIRONMENT") or os.environ.get("UV_PROJECT_ENVIRONMENT")
    for folder in (start, *start.parents):
        if (folder / "pyproject.toml").is_file():
            env_dir = Path(folder, named) if named else folder / ".venv"
            python = env_dir / "bin" / "python"
            if python.exists():
                return str(python)
            return NotRun(f"uv run: the project environment {env_dir} does not exist yet (uv would create it)")
    return NotRun(f"uv run: no pyproject.toml at or above {start}, so no project environment")

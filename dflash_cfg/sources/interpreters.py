"""Which Python interpreters on this host can run an engine, and which one a launch command runs.

An engine runs in whatever interpreter its launcher names: `python -m sglang.launch_server` in that python,
`vllm serve` in the interpreter of the `vllm` script's shebang (pip writes one into every console script).
Nothing here imports an engine: a probe subprocess asks the interpreter which engines it has (find_spec,
no import), and the adapters run later in that interpreter (dflash_cfg.sources.adapters).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dflash_cfg.model import Adapted
from dflash_cfg.sources.adapters import ADAPTERS, ENGINES, adapter_env

PROBE_TIMEOUT = 30.0
_PROBE = (
    "import importlib.util as u, json, sys\n"
    "print(json.dumps([e for e in sys.argv[1:] if u.find_spec(e) is not None]))\n"
)


@dataclass(frozen=True)
class Interpreter:
    python: str  # absolute path (not resolved: a venv's python is a symlink to the base one)
    engines: tuple[Adapted, ...]  # the engines that can be imported there


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


def engines_here() -> tuple[Adapted, ...]:
    """The engines the current interpreter can import (found, not imported)."""
    return tuple(e for e in ENGINES if importlib.util.find_spec(e) is not None)


def probe(python: str) -> tuple[Adapted, ...] | None:
    """The engines `python` can import; None when it does not run as a Python interpreter."""
    out = _answer([python, "-I", "-c", _PROBE, *ENGINES], {k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    try:
        found = json.loads(out.strip().splitlines()[-1]) if out is not None else None
    except (ValueError, IndexError, RecursionError):
        return None
    if not isinstance(found, list):
        return None
    return tuple(e for e in ENGINES if e in found)


@dataclass(frozen=True)
class Survey:
    """What an interpreter has installed, as the adapters will see it (adapters/dflash_adapter_survey.py)."""

    engines: tuple[Adapted, ...]  # the engines it can import (found, not imported)
    versions: Mapping[str, str | None]  # each engine's version, from its metadata (None: no metadata found)
    # sha256 of everything the survey reported: the interpreter, its sys.path and the state of each directory
    # on it, each engine's package and metadata. Any install, upgrade or removal there changes it.
    installation: str
    # Each file and directory whose state decides what the interpreter imports, and that state (size,
    # modification time, inode; None: absent), as `stat` gives it: while none changes, neither does the survey.
    witnesses: tuple[tuple[str, tuple[int, ...] | None], ...] = ()


SURVEY = ADAPTERS / "dflash_adapter_survey.py"


def survey(python: str) -> Survey | None:
    """`python` surveyed in one short process (no engine imported); None when it does not run as a Python
    interpreter or answers something else. Run as the adapters run (a script, in their environment), so the
    engines found are the ones the adapters can import."""
    out = _answer([python, str(SURVEY), *ENGINES], adapter_env())
    lines = out.strip().splitlines() if out is not None else []
    try:
        data = json.loads(lines[-1]) if lines else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("engines"), list):
        return None
    packages = data.get("packages")
    packages = packages if isinstance(packages, dict) else {}
    engines = tuple(e for e in ENGINES if e in data["engines"])
    versions: dict[str, str | None] = {}
    for engine in engines:
        version = packages.get(engine, {}).get("version") if isinstance(packages.get(engine), dict) else None
        versions[engine] = version if isinstance(version, str) else None
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))  # ASCII: non-ASCII is escaped
    return Survey(engines, versions, hashlib.sha256(canonical.encode()).hexdigest(), _witnesses(data))


# A survey states a few hundred paths; an answer larger than this is not one (and is read no further).
MAX_ANSWER_BYTES = 4 << 20


def _answer(argv: list[str], env: Mapping[str, str]) -> str | None:
    """What a short probe process printed, when it exits 0 within PROBE_TIMEOUT having printed at most
    MAX_ANSWER_BYTES; else None (it does not run, fails, hangs or floods: not an interpreter to believe). Its
    stderr is not read; its whole process group is ended with it."""
    import selectors
    import signal
    import subprocess  # here: a cached engine step starts no process, and need not load the module
    import time

    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(env),
            start_new_session=True,
        )
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    assert process.stdout is not None
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + PROBE_TIMEOUT
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while size <= MAX_ANSWER_BYTES and (left := deadline - time.monotonic()) > 0:
                if not selector.select(min(left, 1.0)):
                    if process.poll() is not None:
                        break  # it ended, and a process it started holds its output open: that was all
                    continue
                chunk = os.read(process.stdout.fileno(), 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            else:
                return None  # too much, or too long
        process.wait(max(deadline - time.monotonic(), 0.1))  # its own exit status, before anything is ended
    except subprocess.TimeoutExpired:
        return None
    finally:
        with contextlib.suppress(OSError):  # gone already, or not ours to end
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        process.stdout.close()
    if process.returncode != 0:
        return None
    return b"".join(chunks).decode("utf-8", "replace")


def _witnesses(data: dict[str, Any]) -> tuple[tuple[str, tuple[int, ...] | None], ...]:
    """The survey's witnesses; none when any is malformed (then nothing can vouch for the survey)."""
    found = []
    for item in data.get("witnesses") or ():
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
            return ()
        state = item[1]
        if state is not None and not (
            isinstance(state, list) and all(isinstance(n, int) and not isinstance(n, bool) for n in state)
        ):
            return ()
        found.append((item[0], tuple(state) if state is not None else None))
    return tuple(found)


def state(path: str) -> tuple[int, ...] | None:
    """A witness's state as the survey states it (adapters/dflash_adapter_survey.py: _stat)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


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

"""The engine venv the engine suite runs its adapters in: `pip install --no-deps -r requirements.lock.txt` into
a venv outside the checkout, named by the lock's hash, built once and reused while the lock is unchanged.

Standard library only, so `./dev engines` runs it with any python3 before dflash-cfg's own venv exists:
    python3 tests/engines/build.py      builds (or finds) the venv and prints its python

$DFLASH_CFG_ENGINES_LOCK names another lock (e.g. tests/engines/releases/vllm-0.33.0.lock.txt, a release the suite
also runs; `./dev test --lock vllm-0.33.0` sets it): the default of every function here and of the suite's
`engine_python` fixture, so `DFLASH_CFG_ENGINES_LOCK=PATH ./dev test tests/engines` runs the engine suite on that lock.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

LOCK = Path(__file__).resolve().parent / "requirements.lock.txt"
# The locks of the other releases the suite runs on demand (dflash_cfg/pinned.py ALSO_CHECKED, `./dev test --lock
# NAME-VERSION`) and of releases staged by `./dev engines --upgrade --lock-out`: NAME-VERSION.lock.txt.
RELEASES = LOCK.parent / "releases"
LOCK_VARIABLE = "DFLASH_CFG_ENGINES_LOCK"
# Written last: a venv without it (a build that died midway) is built again from scratch.
STAMP = ".dflash-cfg-engines-complete"
# Written once the venv's modules are compiled into the venv's own tree; a venv built before that step existed is
# compiled in place. (An earlier stamp, ".dflash-cfg-engines-compiled", was written after a compile that a caller's
# PYTHONPYCACHEPREFIX had sent into the caller's own pycache dir: such a venv is compiled again.)
COMPILED = ".dflash-cfg-engines-bytecode"


def cache_dir() -> Path:
    """$DFLASH_CFG_TEST_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/dflash-cfg-tests (as tests/helpers.py)."""
    if explicit := os.environ.get("DFLASH_CFG_TEST_CACHE"):
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dflash-cfg-tests"


def default_lock() -> Path:
    """$DFLASH_CFG_ENGINES_LOCK (relative to the working directory) if set, else the repository's lock."""
    explicit = os.environ.get(LOCK_VARIABLE)
    return Path(explicit).resolve() if explicit else LOCK


def pins_of(lock: Path) -> list[str]:
    """The lock's requirement lines as pip reads them: comments and blank lines left out."""
    lines = (line.split("#", 1)[0].strip() for line in lock.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


def locked(lock: Path | None = None) -> dict[str, str]:
    """The lock's pins, name -> version, names as pip compares them (lower case, `-` for `_` and `.`)."""
    pins = {}
    for line in pins_of(default_lock() if lock is None else lock):
        name, sep, version = line.partition("==")
        if sep:
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version.split(";")[0].strip()
    return pins


def lock_hash(lock: Path) -> str:
    """What names the venv: the requirement lines only, so an edit of the lock's comments builds nothing."""
    return hashlib.sha256("\n".join(pins_of(lock)).encode("utf-8")).hexdigest()


def venv_dir(cache: Path, lock: Path | None = None) -> Path:
    """Named by the lock's pins, so an edited lock gets a venv of its own and an old one is never reused."""
    return cache / f"engines-{lock_hash(default_lock() if lock is None else lock)[:16]}"


def engine_python(cache: Path | None = None, *, lock: Path | None = None, quiet: bool = False) -> Path:
    """The engine venv's python, built first if needed. Two builders at once (two checkouts, two test runs)
    serialize on a lock file beside the venv: the second finds the stamp the first wrote and builds nothing.
    Raises CalledProcessError when venv or pip fails (pip's output is in the venv's build.log)."""
    lock = default_lock() if lock is None else lock
    venv = venv_dir(cache_dir() if cache is None else cache, lock)
    python = venv / "bin" / "python"
    if (venv / STAMP).exists() and (venv / COMPILED).exists():
        return python
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.with_name(venv.name + ".lock"), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not (venv / STAMP).exists():
            _build(venv, lock, quiet=quiet)
        if not (venv / COMPILED).exists():
            _compile(venv)
    return python


def _build(venv: Path, lock: Path, *, quiet: bool) -> None:
    if not quiet:
        print(f"engines: building {venv} from {lock.name} (a few minutes; log: {venv}/build.log)", file=sys.stderr)
    shutil.rmtree(venv, ignore_errors=True)
    # The interpreter that runs this script: the venv's python is its version.
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    argv = [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--no-input", "-r", str(lock)]
    with open(venv / "build.log", "wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        _show_pip(process, venv / "build.log", len(pins_of(lock)), quiet=quiet)
        if process.returncode != 0:
            sys.stderr.write((venv / "build.log").read_text(errors="replace")[-4000:])
            raise subprocess.CalledProcessError(process.returncode, argv)
    (venv / STAMP).write_text(lock_hash(lock) + "\n")


def _show_pip(process: subprocess.Popen[bytes], log: Path, total: int, *, quiet: bool) -> None:
    """Wait for pip; on a terminal, one line redrawn each second: packages fetched of the lock's, and the time."""
    started = time.monotonic()
    shown = not quiet and sys.stderr.isatty()
    while True:
        try:
            process.wait(timeout=1)
            break
        except subprocess.TimeoutExpired:
            if shown:
                fetched = log.read_bytes().count(b"\nCollecting ") if log.exists() else 0
                elapsed = int(time.monotonic() - started)
                sys.stderr.write(
                    f"\rengines: pip: {fetched} of {total} packages fetched, {elapsed // 60}m{elapsed % 60:02}s "
                )
                sys.stderr.flush()
    if shown:
        sys.stderr.write("\r\x1b[K")


def _compile(venv: Path) -> None:
    """Compile every module, as `pip install` does by default: under PYTHONDONTWRITEBYTECODE pip skips it, and each
    adapter start would compile the engine from source again (an SGLang import: 42 s instead of 12 s here). Its
    exit code is not checked: a few files in the engines' packages are templates, not Python."""
    # Into the venv's own __pycache__ dirs, where every interpreter that runs the engine looks: not under a
    # PYTHONPYCACHEPREFIX (./dev sets one for the checkout), which only processes with that prefix would see.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    site = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "compileall", "-q", "-j", "0", site],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False,
    )  # fmt: skip
    (venv / COMPILED).write_text("compiled\n")


if __name__ == "__main__":
    try:
        print(engine_python())
    except subprocess.CalledProcessError as error:
        sys.exit(f"engines: building the engine venv failed: {error}")

"""The CLI run as an unprivileged user, so the permission branches run where the tests run as root (CI).

Each case runs `python -m dflash_cfg` (this venv's interpreter) in a child process that drops to
`nobody` with setpriv, on files and directories root prepared with the permissions under test: a
directory the user cannot enter, a config.json or a lock file it cannot read, a model dir it cannot
write. The answer must be exit 2 with one line that says why, or (for an unreadable directory that does
not matter) the command working as usual; and the bytes on disk are what they were, unless a fix was
meant to land. Every case starts such a child, so the module is marked slow (the fast loop runs in process).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import REAL, assert_one_line_error, mutated, write_config

SETPRIV = shutil.which("setpriv") or "/usr/bin/setpriv"
USER, GROUP = "nobody", "nogroup"


def _why_not() -> str | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root to drop to an unprivileged user (run as root, e.g. in CI)"
    if not os.access(SETPRIV, os.X_OK):
        return f"setpriv is missing ({SETPRIV}; util-linux)"
    try:
        pwd.getpwnam(USER)
    except KeyError:
        return f"no user {USER!r} on this machine"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")]


@pytest.fixture
def world() -> Iterator[Path]:
    """A directory the unprivileged user can reach (pytest's tmp_path lives under a root-only 0700 dir),
    with a home and caches it can write."""
    root = Path(tempfile.mkdtemp(prefix="dflash-cfg-unprivileged-"))
    root.chmod(0o755)
    for name in ("home", "cache", "hf"):
        (root / name).mkdir()
        (root / name).chmod(0o777)
    yield root
    for dirpath, dirnames, _ in os.walk(root):
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o755)
    shutil.rmtree(root)


def nobody(world: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """`dflash-cfg ARGS` as nobody, with a clean environment of its own."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(world / "home"),
        "XDG_CACHE_HOME": str(world / "cache"),
        "HF_HOME": str(world / "hf"),
        "HF_ENDPOINT": "http://127.0.0.1:9",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
    }
    command = [SETPRIV, f"--reuid={USER}", f"--regid={GROUP}", "--clear-groups", sys.executable, "-m", "dflash_cfg"]
    return subprocess.run(
        [*command, *map(str, args)], capture_output=True, text=True, env=env, cwd=world, timeout=120, check=False
    )


@pytest.fixture(scope="module", autouse=True)
def child_can_run() -> None:
    """The unprivileged child must be able to import this checkout (a venv under a 0700 home cannot)."""
    probe = Path(tempfile.mkdtemp(prefix="dflash-cfg-unprivileged-"))
    try:
        probe.chmod(0o755)
        result = nobody(probe, "--version")
    finally:
        shutil.rmtree(probe)
    if result.returncode != 0:
        pytest.skip(f"{USER} cannot run {sys.executable} -m dflash_cfg here: {result.stderr.strip()[-300:]}")


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode in (0, 1, 2), result
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr


# The user's own home and caches, where the tool may keep its cache of transformers views.
OWN = ("home", "cache", "hf")


def tree(root: Path) -> dict[str, tuple[int, int, bytes | None]]:
    """Every path under root but the user's own dirs, with its mode, owner and (for files) bytes, read as root."""
    out: dict[str, tuple[int, int, bytes | None]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if Path(dirpath) == root:
            dirnames[:] = [d for d in dirnames if d not in OWN]
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            out[str(p)] = (st.st_mode, st.st_uid, p.read_bytes() if stat.S_ISREG(st.st_mode) else None)
    return out


def own(path: Path) -> None:
    entry = pwd.getpwnam(USER)
    os.chown(path, entry.pw_uid, entry.pw_gid)


# A config with one safe mechanical fix (use_sliding_window back to true): `fix` has something to write.
FIXABLE = mutated(lambda d: d.pop("use_sliding_window"))


def readable(path: Path, data: object = None) -> Path:
    """A config.json in `path` that everyone can read (the dir: enter and list)."""
    config = write_config(path, data)
    path.chmod(0o755)
    config.chmod(0o644)
    return config


# --- a path through a directory the user cannot enter -----------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ("check", "{model}"),
        ("check", "{model}/config.json"),
        ("fix", "--yes", "{model}"),
        ("fix", "--dry-run", "{model}"),
        ("verify", "{model}"),
        ("where", "{model}"),
        ("check", "{ok}", "--target", "{model}"),
    ],
    ids=lambda c: "-".join(x.replace("/", "-").strip("{}-").replace("}", "") for x in c),
)
def test_path_through_a_directory_it_cannot_enter(world: Path, command: tuple[str, ...]) -> None:
    secret = world / "secret"
    model = secret / "model"
    readable(model)
    ok = readable(world / "ok")
    secret.chmod(0o700)  # root's: nobody can neither list nor enter it
    before = tree(world)
    result = nobody(world, *(c.format(model=model, ok=ok.parent) for c in command))
    assert_one_line_error(result, one_of=("cannot access", "cannot read"))
    assert tree(world) == before


def test_preflight_with_a_drafter_behind_a_directory_it_cannot_enter(world: Path) -> None:
    secret = world / "secret"
    readable(secret / "drafter")
    target = readable(world / "target").parent
    secret.chmod(0o700)
    spec = json.dumps({"method": "dflash", "model": str(secret / "drafter"), "num_speculative_tokens": 15})
    result = nobody(world, "preflight", "--", "vllm", "serve", target, "--speculative-config", spec)
    assert_one_line_error(result, one_of=("cannot access", "cannot read"))


# --- fix DIR needs DIR/config.json only --------------------------------------------------------------


def test_fix_ignores_an_unreadable_subdirectory(world: Path) -> None:
    model = world / "model"
    config = readable(model, FIXABLE)
    (model / "private").mkdir()
    (model / "private" / "config.json").write_bytes(REAL.read_bytes())
    (model / "private").chmod(0o700)  # root's, unrelated to the fix
    own(model)
    own(config)
    result = nobody(world, "fix", "--yes", model)
    no_traceback(result)
    assert result.returncode in (0, 1), result.stderr
    assert json.loads(config.read_bytes())["use_sliding_window"] is True
    assert (model / "private" / "config.json").read_bytes() == REAL.read_bytes()
    assert nobody(world, "verify", model).returncode == 0


# --- a model dir the user cannot write --------------------------------------------------------------


@pytest.mark.parametrize("file_owner", ["root", USER])
def test_fix_in_a_read_only_model_dir_is_refused(world: Path, file_owner: str) -> None:
    model = world / "model"
    config = readable(model, FIXABLE)
    if file_owner == USER:
        own(config)  # the file is the user's, but the directory (temp file, rename, backup, lock) is not
    before = tree(world)
    result = nobody(world, "fix", "--yes", model)
    assert_one_line_error(result, one_of=("cannot", "permission", "Permission"))
    assert tree(world) == before
    dry = nobody(world, "fix", "--dry-run", model)
    no_traceback(dry)
    assert dry.returncode == 1 and "use_sliding_window" in dry.stdout
    assert tree(world) == before


# --- files the user cannot read ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ("check", "{model}"),
        ("check", "{model}", "--format", "json"),
        ("fix", "--yes", "{model}"),
        ("fix", "--dry-run", "{model}"),
        ("verify", "{model}"),
        ("where", "{model}"),
        ("where", "{config}"),
    ],
    ids=lambda c: "-".join(x.replace("/", "-").strip("{}-").replace("}", "") for x in c),
)
def test_config_it_cannot_read(world: Path, command: tuple[str, ...]) -> None:
    model = world / "model"
    config = readable(model, FIXABLE)
    config.chmod(0o600)  # root's
    before = tree(world)
    result = nobody(world, *(c.format(model=model, config=config) for c in command))
    assert_one_line_error(result, one_of=("cannot read", "cannot access"))
    assert tree(world) == before


def test_lock_file_it_cannot_read(world: Path) -> None:
    model = world / "model"
    config = readable(model, FIXABLE)
    own(model)
    lock = model / ".dflash-cfg.lock"
    lock.write_text(json.dumps({"version": 1, "files": {}}) + "\n")
    lock.chmod(0o600)  # root's
    before = tree(world)
    verify = nobody(world, "verify", model)
    assert_one_line_error(verify, one_of=("cannot read",))
    fix = nobody(world, "fix", "--yes", model)
    assert_one_line_error(fix, one_of=("cannot read",))
    check = nobody(world, "check", model, "--format", "json")
    no_traceback(check)
    assert check.returncode in (1, 2), check
    findings = [x for f in json.loads(check.stdout)["files"] for x in f["findings"]]
    assert check.returncode == 2 or any(x["rule"] == "DF701" for x in findings), (check.stderr, findings)
    assert tree(world) == before
    assert config.read_bytes() == json.dumps(FIXABLE, indent=2).encode() + b"\n"


@pytest.mark.parametrize("command", ["check", "fix", "verify"])
def test_found_bug_config_file_it_cannot_read_named_directly(world: Path, command: str) -> None:
    config = readable(world / "model", FIXABLE)
    config.chmod(0o600)  # root's
    before = tree(world)
    result = nobody(world, command, *(["--yes"] if command == "fix" else []), config)
    assert tree(world) == before
    assert_one_line_error(result, one_of=("cannot read",))


# --- one unlistable subdirectory in a tree ----------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_tree_check_reports_an_unlistable_subdirectory_and_checks_the_rest(world: Path, fmt: str) -> None:
    readable(world / "models" / "a")
    readable(world / "models" / "b", FIXABLE)
    (world / "models").chmod(0o755)
    secret = world / "models" / "private"
    readable(secret / "inner")
    secret.chmod(0o700)  # root's: the user cannot list it
    result = nobody(world, "check", world / "models", "--format", fmt)
    no_traceback(result)
    assert result.returncode == 2, result.stderr  # a file could not be checked: the run is incomplete
    if fmt == "json":
        doc = json.loads(result.stdout)
        assert sorted(Path(f["path"]).parent.name for f in doc["files"]) == ["a", "b"]
        [error] = doc["errors"]
        assert f"cannot list {secret}" in error and "Permission denied" in error
    else:
        assert "models/a/config.json" in result.stdout and "models/b/config.json" in result.stdout
        assert f"cannot list {secret}" in result.stderr

"""The on-disk cache of transformers views: a warm check answers the same without importing transformers.

Real files in tmp_path, the real CLI (in-process through the `dflash` fixture, or as a subprocess), and a
cache of each test's own: XDG_CACHE_HOME points into tmp_path.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, Result

import dflash_cfg
import dflash_cfg.commands.check
import dflash_cfg.commands.diff
import dflash_cfg.sources.cache
import dflash_cfg.sources.views
from dflash_cfg.model import Effective, HubFile
from dflash_cfg.sources.cache import FORMAT, EffectiveCache, default_root
from dflash_cfg.sources.views import transformers_version

Run = Callable[..., Result]
NAME = "z-lab__Qwen3.5-4B-DFlash"


REAL_BYTES = (FIXTURES / "upstream" / NAME / "config.json").read_bytes()
REAL: dict[str, Any] = json.loads(REAL_BYTES)


def variant(name: str) -> dict[str, Any]:
    """The real config, or one changed so the transformers view differs in a way the rules report."""
    data = copy.deepcopy(REAL)
    if name == "sliding-window-off":  # transformers nulls sliding_window: DF2xx errors come from the view
        data["use_sliding_window"] = False
    elif name == "rejected":  # Qwen3Config.from_dict raises: the view holds an error, no values
        data["hidden_size"] = None
    elif name == "warning":  # transformers logs a warning: DF303 reports it
        data["rope_parameters"] = {"rope_theta": 10000000, "rope_type": "bogus"}
    return data


def write(folder: Path, data: dict[str, Any] | None = None, *, raw: bytes | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.json"
    path.write_bytes(raw if raw is not None else (json.dumps(data, indent=2) + "\n").encode())
    return path


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """XDG_CACHE_HOME for this test; returns the dir the entries go to."""
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    return xdg / "dflash-cfg" / "effective"


@dataclasses.dataclass
class Counter:
    calls: int = 0


@pytest.fixture
def views(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Counts calls of the real transformers view (a miss computes it; a hit never does)."""
    counter = Counter()
    real = dflash_cfg.sources.views.view

    def counting(raw: dict[str, Any], key: str | None = None) -> Effective:
        counter.calls += 1
        return real(raw, key)

    monkeypatch.setattr(dflash_cfg.sources.views, "view", counting)
    return counter


def entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("*.json")) if cache_dir.is_dir() else []


def leftovers(cache_dir: Path) -> list[Path]:
    return [p for p in cache_dir.rglob("*") if p.is_file() and not p.name.endswith(".json")]


def subprocess_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", **extra}


def imported(stderr: str) -> set[str]:
    """Module names from `python -X importtime` stderr."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name)
    return names


def transformers_in(names: set[str]) -> set[str]:
    return {n for n in names if n == "transformers" or n.startswith("transformers.")}


# --------------------------------------------------------------------------------------------------
# Warm checks answer the same


@pytest.mark.parametrize("name", ["real", "sliding-window-off", "rejected", "warning"])
def test_warm_check_gives_the_same_report(
    dflash: Run, tmp_path: Path, cache_dir: Path, views: Counter, name: str
) -> None:
    path = write(tmp_path / "model", variant(name))
    cold = dflash("check", path, "--format", "json")
    assert views.calls == 1 and len(entries(cache_dir)) == 1
    warm = dflash("check", path, "--format", "json")
    assert views.calls == 1, "a warm check computed the view again"
    assert (warm.code, warm.out, warm.err) == (cold.code, cold.out, cold.err)
    uncached = dflash("check", path, "--format", "json", "--no-cache")
    assert views.calls == 2
    assert (uncached.code, uncached.out) == (cold.code, cold.out)
    # The text report (which draws what engines see) is the same warm too.
    assert dflash("check", path).out == dflash("check", path, "--no-cache").out
    if name == "sliding-window-off":
        findings = cold.json()["files"][0]["findings"]
        assert any(f["rule"].startswith("DF2") and f["severity"] == "error" for f in findings)
    if name == "warning":
        assert "bogus" in cold.out


def test_entry_is_self_describing(dflash: Run, tmp_path: Path, cache_dir: Path) -> None:
    path = write(tmp_path / "model", raw=REAL_BYTES)
    dflash("check", path)
    [entry_path] = entries(cache_dir)
    entry = json.loads(entry_path.read_bytes())
    assert entry["format"] == FORMAT
    assert entry["sha256"] == hashlib.sha256(REAL_BYTES).hexdigest()
    assert entry["transformers"] == transformers_version()
    assert entry["dflash_cfg"] == dflash_cfg.__version__
    assert entry["effective"]["values"]["sliding_window"] == REAL["sliding_window"]
    assert entry_path.parent == cache_dir  # one flat directory: no fan-out
    assert not leftovers(cache_dir)


@pytest.mark.slow
def test_warm_subprocess_does_not_import_transformers(tmp_path: Path) -> None:
    path = write(tmp_path / "model", variant("sliding-window-off"))
    env = subprocess_env(XDG_CACHE_HOME=str(tmp_path / "xdg"))
    argv = [sys.executable, "-X", "importtime", "-m", "dflash_cfg", "check", str(path), "--format", "json"]
    cold = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    assert cold.returncode == 1, cold.stderr[-2000:]
    assert "transformers" in imported(cold.stderr), "the importtime probe cannot see transformers"
    warm = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    assert warm.returncode == 1, warm.stderr[-2000:]
    assert imported(warm.stderr), "no importtime output to judge"
    assert not transformers_in(imported(warm.stderr))
    assert warm.stdout == cold.stdout
    # The same in-process: run the CLI and look at sys.modules afterwards.
    code = (
        "import sys\n"
        "from dflash_cfg.cli import cli, run\n"
        f"code = run(cli, ['check', {str(path)!r}, '--format', 'json'])\n"
        "assert code == 1, code\n"
        "loaded = sorted(m for m in sys.modules if m == 'transformers' or m.startswith('transformers.'))\n"
        "assert not loaded, loaded\n"
    )
    inproc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert inproc.returncode == 0, inproc.stderr[-2000:]
    assert inproc.stdout == cold.stdout
    # --no-cache reads nothing: even with a warm cache it loads transformers.
    argv.append("--no-cache")
    uncached = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    assert uncached.returncode == 1 and "transformers" in imported(uncached.stderr)
    assert uncached.stdout == cold.stdout


# --------------------------------------------------------------------------------------------------
# Never trusted: corrupt, truncated, foreign entries are recomputed and rewritten


def _set(*keys: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(entry: dict[str, Any]) -> None:
        target = entry
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return change


def _delete(*keys: str) -> Callable[[dict[str, Any]], None]:
    def change(entry: dict[str, Any]) -> None:
        target = entry
        for key in keys[:-1]:
            target = target[key]
        del target[keys[-1]]

    return change


def _rejected(entry: dict[str, Any]) -> None:  # values gone but no error: neither a view nor a failure
    entry["effective"]["values"] = None


def _error_and_values(entry: dict[str, Any]) -> None:
    entry["effective"]["error"] = "ValueError: both"


def _reordered(entry: dict[str, Any]) -> None:
    values = entry["effective"]["values"]
    entry["effective"]["values"] = dict(reversed(values.items()))


BYTES: dict[str, Callable[[bytes], bytes]] = {
    "empty": lambda b: b"",
    "garbage": lambda b: b"\x00\xff\xfe not json at all",
    "truncated": lambda b: b[: len(b) // 2],
    "truncated-by-one": lambda b: b.rstrip()[:-1],
    "not-utf8": lambda b: b.replace(b'"format"', b'"form\xffat"'),
    "a-list": lambda b: b"[" + b + b"]",
    "null": lambda b: b"null",
    "a-string": lambda b: json.dumps(b.decode()).encode(),
    "oversized": lambda b: b + b" " * (dflash_cfg.sources.cache.MAX_ENTRY_BYTES + 1),
}
FIELDS: dict[str, Callable[[dict[str, Any]], None]] = {
    "format-version": _set("format", value=FORMAT + 1),
    "format-as-string": _set("format", value=str(FORMAT)),
    "format-as-bool": _set("format", value=True),
    "format-missing": _delete("format"),
    "other-sha256": _set("sha256", value="0" * 64),
    "sha256-as-int": _set("sha256", value=0),
    "other-transformers": _set("transformers", value="4.57.3"),
    "transformers-null": _set("transformers", value=None),
    "view-of-other-transformers": _set("effective", "transformers_version", value="4.57.3"),
    "other-dflash-cfg": _set("dflash_cfg", value="0.0.1"),
    "extra-field": _set("note", value="hello"),
    "effective-missing": _delete("effective"),
    "effective-a-list": _set("effective", value=[]),
    "effective-extra-field": _set("effective", "extra", value=1),
    "values-a-list": _set("effective", "values", value=[]),
    "values-a-string": _set("effective", "values", value="values"),
    "values-missing-a-field": _delete("effective", "values", "sliding_window"),
    "values-extra-field": _set("effective", "values", "made_up", value=1),
    "values-reordered": _reordered,
    "values-null-without-error": _rejected,
    "error-beside-values": _error_and_values,
    "error-an-int": _set("effective", "error", value=5),
    "warnings-a-string": _set("effective", "warnings", value="oops"),
    "warnings-with-an-int": _set("effective", "warnings", value=[1]),
    "warnings-missing": _delete("effective", "warnings"),
    # The right shape with a value of the wrong type: a rule reading it would crash.
    "layer-types-an-int": _set("effective", "values", "layer_types", value=5),
    "layer-types-with-an-int": _set("effective", "values", "layer_types", value=[1]),
    "hidden-size-a-string": _set("effective", "values", "hidden_size", value="4096"),
    "num-layers-a-bool": _set("effective", "values", "num_hidden_layers", value=True),
    "sliding-flag-a-string": _set("effective", "values", "use_sliding_window", value="yes"),
    "rope-theta-a-list": _set("effective", "values", "rope_theta", value=[1]),
    "rope-scaling-a-string": _set("effective", "values", "rope_scaling", value="linear"),
    "dtype-an-int": _set("effective", "values", "dtype", value=16),
}


def _mutate(name: str, original: bytes) -> bytes:
    if name in BYTES:
        return BYTES[name](original)
    entry = json.loads(original)
    FIELDS[name](entry)
    return json.dumps(entry).encode()


@pytest.mark.parametrize("name", [*BYTES, *FIELDS])
def test_bad_entry_is_ignored_and_rewritten(
    dflash: Run, tmp_path: Path, cache_dir: Path, views: Counter, name: str
) -> None:
    path = write(tmp_path / "model", variant("sliding-window-off"))
    cold = dflash("check", path, "--format", "json")
    [entry_path] = entries(cache_dir)
    original = entry_path.read_bytes()
    bad = _mutate(name, original)
    assert bad != original
    entry_path.write_bytes(bad)
    again = dflash("check", path, "--format", "json")
    assert views.calls == 2, "a bad entry was trusted"
    assert (again.code, again.out, again.err) == (cold.code, cold.out, cold.err)
    assert entries(cache_dir) == [entry_path]
    assert entry_path.read_bytes() == original, "the bad entry was not rewritten"
    assert not leftovers(cache_dir)
    dflash("check", path, "--format", "json")
    assert views.calls == 2, "the rewritten entry is not used"


def test_forged_but_well_formed_entry_is_read_and_no_cache_ignores_it(
    dflash: Run, tmp_path: Path, cache_dir: Path, views: Counter
) -> None:
    """Proves the two halves of --no-cache: a normal check reads the entry, --no-cache does not."""
    path = write(tmp_path / "model", raw=REAL_BYTES)
    dflash("check", path)
    [entry_path] = entries(cache_dir)
    entry = json.loads(entry_path.read_bytes())
    entry["effective"]["warnings"] = ["planted by the test"]
    planted = (json.dumps(entry, indent=1) + "\n").encode()
    entry_path.write_bytes(planted)
    assert "planted by the test" in dflash("check", path).out
    assert views.calls == 1
    uncached = dflash("check", path, "--no-cache")
    assert views.calls == 2 and "planted by the test" not in uncached.out
    assert entry_path.read_bytes() == planted, "--no-cache wrote the cache"


def test_no_cache_writes_nothing(dflash: Run, tmp_path: Path, cache_dir: Path, views: Counter) -> None:
    path = write(tmp_path / "model", raw=REAL_BYTES)
    dflash("check", path, "--no-cache")
    dflash("check", path, "--no-cache")
    assert views.calls == 2
    assert not cache_dir.parent.exists()


def test_entry_path_taken_by_a_directory(dflash: Run, tmp_path: Path, cache_dir: Path, views: Counter) -> None:
    path = write(tmp_path / "model", raw=REAL_BYTES)
    cold = dflash("check", path, "--format", "json")
    [entry_path] = entries(cache_dir)
    entry_path.unlink()
    entry_path.mkdir()
    for _ in range(2):
        again = dflash("check", path, "--format", "json")
        assert (again.code, again.out, again.err) == (cold.code, cold.out, cold.err)
    assert views.calls == 3
    assert not leftovers(cache_dir)


# --------------------------------------------------------------------------------------------------
# What the key covers


def test_one_changed_byte_misses(dflash: Run, tmp_path: Path, cache_dir: Path, views: Counter) -> None:
    path = write(tmp_path / "model", raw=REAL_BYTES)
    dflash("check", path)
    window = b'"sliding_window": 4096'
    assert REAL_BYTES.count(window) == 1
    changed = REAL_BYTES.replace(window, b'"sliding_window": 4097')
    assert len(changed) == len(REAL_BYTES) and sum(a != b for a, b in zip(changed, REAL_BYTES, strict=True)) == 1
    path.write_bytes(changed)
    out = dflash("check", path).out
    assert views.calls == 2 and len(entries(cache_dir)) == 2
    assert "window 4097" in out
    assert out == dflash("check", path, "--no-cache").out
    # Bytes, not meaning: one byte of whitespace is another file too.
    path.write_bytes(changed.replace(b"{\n", b"{ \n", 1))
    dflash("check", path)
    assert views.calls == 4 and len(entries(cache_dir)) == 3


def test_another_transformers_version_misses(
    dflash: Run, tmp_path: Path, cache_dir: Path, views: Counter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an upgrade (metadata and the module both say 9.9.9) no entry of the old version is used."""
    path = write(tmp_path / "model", raw=REAL_BYTES)
    dflash("check", path)
    [old] = entries(cache_dir)
    old_bytes = old.read_bytes()
    counting = dflash_cfg.sources.views.view
    monkeypatch.setattr(dflash_cfg.sources.cache, "transformers_version", lambda: "9.9.9")
    monkeypatch.setattr(
        dflash_cfg.sources.views,
        "view",
        lambda raw, key=None: dataclasses.replace(counting(raw, key), transformers_version="9.9.9"),
    )
    dflash("check", path)
    assert views.calls == 2, "an entry of another transformers version was used"
    dflash("check", path)
    assert views.calls == 2  # ... and the 9.9.9 entry is used from then on
    both = entries(cache_dir)
    assert len(both) == 2 and old in both and old.read_bytes() == old_bytes
    [new] = [p for p in both if p != old]
    assert json.loads(new.read_bytes())["transformers"] == "9.9.9"


def test_another_dflash_cfg_version_misses(
    dflash: Run, tmp_path: Path, cache_dir: Path, views: Counter, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "model", raw=REAL_BYTES)
    dflash("check", path)
    monkeypatch.setattr(dflash_cfg.sources.cache, "__version__", "99.0")
    dflash("check", path)
    assert views.calls == 2 and len(entries(cache_dir)) == 2


# --------------------------------------------------------------------------------------------------
# Where the cache lives, and when it cannot be written


def test_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert default_root() == tmp_path / "home" / ".cache" / "dflash-cfg"
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    assert default_root() == tmp_path / "home" / ".cache" / "dflash-cfg"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # invalid per the XDG spec: ignored
    assert default_root() == tmp_path / "home" / ".cache" / "dflash-cfg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_root() == tmp_path / "xdg" / "dflash-cfg"


def test_unwritable_cache_dir_still_checks(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, views: Counter
) -> None:
    path = write(tmp_path / "model", variant("sliding-window-off"))
    reference = dflash("check", path, "--format", "json", "--no-cache")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "cache"))  # chmod would not stop root; this does
    for _ in range(2):
        got = dflash("check", path, "--format", "json")
        assert (got.code, got.out, got.err) == (reference.code, reference.out, reference.err)
    assert views.calls == 3
    assert blocker.read_text() == "not a directory\n"


@pytest.mark.slow
def test_unwritable_cache_dir_subprocess(tmp_path: Path) -> None:
    path = write(tmp_path / "model", variant("sliding-window-off"))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = subprocess_env(XDG_CACHE_HOME=str(blocker / "cache"))
    argv = [sys.executable, "-m", "dflash_cfg", "check", str(path), "--format", "json"]
    got = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    assert got.returncode == 1 and got.stderr == ""
    assert json.loads(got.stdout)["summary"]["errors"] >= 1


# --------------------------------------------------------------------------------------------------
# Concurrent writers


@pytest.mark.slow
@pytest.mark.parametrize("overlap", [False, True], ids=["distinct-files", "same-files"])
def test_concurrent_writers(tmp_path: Path, overlap: bool) -> None:
    """Two processes fill one empty cache at once: both succeed, and every entry is whole and valid."""
    shas = []
    for i in range(100):
        data = copy.deepcopy(REAL)
        data["sliding_window"] = 1024 + i
        path = write(tmp_path / ("a" if i < 50 else "b") / f"m{i:03d}", data)
        shas.append(hashlib.sha256(path.read_bytes()).hexdigest())
    xdg = tmp_path / "xdg"
    env = subprocess_env(XDG_CACHE_HOME=str(xdg))
    trees = (
        [[tmp_path / "a", tmp_path / "b"], [tmp_path / "b", tmp_path / "a"]]
        if overlap
        else [[tmp_path / "a"], [tmp_path / "b"]]
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "dflash_cfg", "check", *map(str, t), "--format", "json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for t in trees
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode in (0, 1), err.decode()[-2000:]
        assert err == b""
        assert json.loads(out)["summary"]["files"] == (100 if overlap else 50)
    root = xdg / "dflash-cfg"
    found = entries(root / "effective")
    assert len(found) == 100
    for entry_path in found:
        json.loads(entry_path.read_bytes())  # every entry parses
    assert not leftovers(root / "effective")
    cache = EffectiveCache(dflash_cfg.sources.views.view, root)
    windows = []
    for sha in shas:
        where = cache.path(sha, "qwen3")
        assert where is not None and where in found
        stored = cache._read(where, cache.key_fields(sha, "qwen3"))  # a valid entry for exactly this file
        assert stored is not None and stored.values is not None
        windows.append(stored.values["sliding_window"])
    assert windows == list(range(1024, 1124))


# --------------------------------------------------------------------------------------------------
# Two dicts per file: --from-hub views the upstream copy too, and diff views both


def upstream_variant() -> bytes:
    return (json.dumps(variant("sliding-window-off"), indent=2) + "\n").encode()


@pytest.fixture
def fake_upstream(monkeypatch: pytest.MonkeyPatch) -> bytes:
    data = upstream_variant()

    def upstream_for(path: Path, hub: Any, environ: Any = None, *, gate: bool = False) -> HubFile:
        return HubFile(repo="org/model", revision="main", commit="c" * 40, blob_id="b" * 40, data=data)

    for command in (dflash_cfg.commands.check, dflash_cfg.commands.diff):
        monkeypatch.setattr(command, "upstream_for", upstream_for)
    return data


def test_check_from_hub_keys_each_copy_by_its_own_bytes(
    dflash: Run, tmp_path: Path, cache_dir: Path, views: Counter, fake_upstream: bytes
) -> None:
    path = write(tmp_path / "model", raw=REAL_BYTES)
    args = ("check", path, "--from-hub", "org/model", "--format", "json")
    cold = dflash(*args)
    assert views.calls == 2 and len(entries(cache_dir)) == 2
    warm = dflash(*args)
    assert views.calls == 2
    uncached = dflash(*args, "--no-cache")
    assert (warm.code, warm.out) == (cold.code, cold.out) == (uncached.code, uncached.out)
    cache = EffectiveCache(dflash_cfg.sources.views.view, cache_dir.parent)
    for data in (REAL_BYTES, fake_upstream):
        sha = hashlib.sha256(data).hexdigest()
        entry_path = cache.path(sha, "qwen3")
        assert entry_path is not None
        stored = cache._read(entry_path, cache.key_fields(sha, "qwen3"))
        assert stored == dflash_cfg.sources.views.view(json.loads(data))


def test_diff_uses_the_cache(
    dflash: Run, tmp_path: Path, cache_dir: Path, views: Counter, fake_upstream: bytes
) -> None:
    path = write(tmp_path / "model", raw=REAL_BYTES)
    cold = dflash("diff", path, "--from-hub", "org/model", "--format", "json")
    assert views.calls == 2 and len(entries(cache_dir)) == 2
    warm = dflash("diff", path, "--from-hub", "org/model", "--format", "json")
    assert views.calls == 2
    assert (warm.code, warm.out) == (cold.code, cold.out)
    assert cold.code == 1  # sliding_window differs through Qwen3Config: a critical field


def test_check_from_hub_tells_equal_looking_copies_apart(
    dflash: Run, tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2560.0 == 2560 in Python, but not to Qwen3Config: the upstream copy must get a view of its own."""
    local = copy.deepcopy(REAL)
    local["hidden_size"] = float(local["hidden_size"])
    path = write(tmp_path / "model", local)
    upstream_bytes = (json.dumps(REAL, indent=2) + "\n").encode()
    assert dflash_cfg.sources.views.view(local) != dflash_cfg.sources.views.view(REAL)
    monkeypatch.setattr(
        dflash_cfg.commands.check,
        "upstream_for",
        lambda p, hub, environ=None, gate=False: HubFile(
            repo="org/model", revision="main", commit="c" * 40, blob_id="b" * 40, data=upstream_bytes
        ),
    )
    args = ("check", path, "--from-hub", "org/model", "--format", "json")
    cold, warm, uncached = dflash(*args), dflash(*args), dflash(*args, "--no-cache")
    assert (cold.code, cold.out) == (warm.code, warm.out) == (uncached.code, uncached.out)
    assert len(entries(cache_dir)) == 2

"""An operator's runs over a fleet of drafters, through the real CLI, offline with a copy of the fixtures' Hugging
Face cache (as `./dev demo` runs): the project config's upstream in every command, several paths each with its own
answer, a diff header per file, and what `verify` proves after each kind of `fix`."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, Result

Run = Callable[..., Result]

REPO = "z-lab/Qwen3.6-27B-DFlash"
COMMIT = "28cadb796e2f55d398cf4d0b707988ff03abf5bd"  # the fixture cache's main
UPSTREAM = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"
INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json"
UNCACHED = "z-lab/Qwen3.5-4B-DFlash"  # a published drafter the fixture cache does not hold
SMALL = FIXTURES / "upstream" / "z-lab__Qwen3.5-4B-DFlash" / "config.json"
PROJECT = f'[[models]]\npath = "models/stale"\nupstream = "{REPO}"\n'


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project dir (the working directory) with the incident's stale drafter in models/stale, and the fixture
    Hugging Face cache copied beside it, offline: the Hub is out of reach and the cache holds REPO at COMMIT."""
    shutil.copytree(FIXTURES / "hf-cache", tmp_path / "hf", symlinks=True)  # as `cp -R` copies a cache
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    put(tmp_path / "models" / "stale", INCIDENT.read_bytes())
    return tmp_path


def put(folder: Path, data: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_bytes(data)
    return folder / "config.json"


def fixable() -> bytes:
    """The published file with one thing a safe fix settles (use_sliding_window false, DF204)."""
    data: dict[str, Any] = json.loads(UPSTREAM.read_text())
    data["use_sliding_window"] = False
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()


# --- the project config's upstream in fix and diff -------------------------------------------------------


def test_fix_from_hub_without_repo_takes_the_project_configs_upstream(dflash: Run, fleet: Path) -> None:
    (fleet / "dflash-cfg.toml").write_text(PROJECT)
    result = dflash("fix", "models/stale", "--from-hub", "--yes")
    assert result.code == 0, result.err
    assert (fleet / "models" / "stale" / "config.json").read_bytes() == UPSTREAM.read_bytes()
    assert f"identical to {REPO}@{COMMIT}" in result.out, result.out


def test_diff_from_hub_without_repo_takes_the_project_configs_upstream(dflash: Run, fleet: Path) -> None:
    (fleet / "dflash-cfg.toml").write_text(PROJECT)
    result = dflash("diff", "models/stale", "--from-hub")
    assert result.code == 1, result.err  # the incident's critical differences
    assert f"vs  {REPO}@{COMMIT}  (main)" in result.out
    assert "* differs  dflash_config/mask_token_id     248064" in result.out


def test_without_a_project_upstream_fix_and_diff_say_where_one_goes(dflash: Run, fleet: Path) -> None:
    for command in ("fix", "diff"):
        result = dflash(command, "models/stale", "--from-hub")
        assert result.code == 2 and "cannot tell which Hub repo" in result.err
        assert "--from-hub ORG/NAME, or name it as `upstream`" in result.err


def test_fix_hint_names_the_project_upstream_and_asks_for_no_entry(dflash: Run, fleet: Path) -> None:
    (fleet / "dflash-cfg.toml").write_text(PROJECT)
    result = dflash("fix", "models/stale", "--yes")
    folder = fleet / "models" / "stale"
    assert result.code == 1  # the project's upstream makes the re-check compare: DF601 errors are left
    assert f"come from its upstream repo, {REPO} (the project config's `upstream` for it)" in result.err
    assert f"dflash-cfg fix {folder} --from-hub (add --only-critical" in result.err
    assert "[[tool.dflash-cfg.models]]" not in result.err  # the entry is there already


# --- one diff header per file ------------------------------------------------------------------------------


def test_fix_of_several_dirs_heads_each_diff_with_its_own_path(dflash: Run, fleet: Path) -> None:
    put(fleet / "models" / "a", fixable())
    put(fleet / "models" / "b", fixable())
    result = dflash("fix", "models/a", "./models/b/", "--dry-run")
    assert result.code == 1
    assert "--- a/models/a/config.json\n+++ b/models/a/config.json\n" in result.out
    assert "--- a/models/b/config.json\n+++ b/models/b/config.json\n" in result.out
    assert "a/config.json\n" not in result.out.replace("models/a/config.json\n", "")
    whole = dflash("fix", fleet / "models" / "a", "--dry-run")  # an absolute path, whole, as `diff -u` shows it
    config = fleet / "models" / "a" / "config.json"
    assert f"--- {config}\n+++ {config}\n" in whole.out


# --- what verify proves ------------------------------------------------------------------------------------


def test_verify_after_safe_fixes_only_proves_no_repair(dflash: Run, fleet: Path) -> None:
    folder = fleet / "models" / "stale"
    fixed = dflash("fix", "models/stale", "--yes")
    assert fixed.code == 0, fixed.err  # no upstream, no target: nothing left at the failing severity
    assert "recorded in" in fixed.out and "safe fixes only, 5 findings (0 errors, 5 warnings) left" in fixed.out
    assert "on each serving host" not in fixed.out  # not a repair to roll out
    lock = json.loads((folder / ".dflash-cfg.lock").read_text())["files"]["config.json"]
    assert lock["source"] is None and lock["repair"] == "safe-fixes"
    # The stale-file signature (DF205), the last layer tapped (DF105), trained values no published revision has (DF604)
    assert lock["left"] == {"errors": 0, "warnings": 5}

    verified = dflash("verify", "models/stale")
    assert verified.code == 0
    line = verified.out.splitlines()[1]
    assert "safe fixes only, no upstream; 5 findings (0 errors, 5 warnings) left" in line
    assert f"proves the file unchanged since, not repaired: dflash-cfg check {folder}" in line
    doc = dflash("verify", "models/stale", "--format", "json").json()
    assert doc["ok"] is True and doc["lock"]["repair"] == "safe-fixes"
    assert doc["lock"]["left"] == {"errors": 0, "warnings": 5}
    assert "not repaired" in doc["proven"]


def test_verify_after_fix_from_hub_proves_the_upstream_bytes(dflash: Run, fleet: Path) -> None:
    assert dflash("fix", "models/stale", "--from-hub", REPO, "--yes").code == 0
    verified = dflash("verify", "models/stale")
    assert verified.code == 0
    assert verified.out.splitlines()[1].endswith(f": the upstream bytes of {REPO}@{COMMIT} (main)")
    doc = dflash("verify", "models/stale", "--format", "json").json()
    assert doc["lock"]["repair"] == "upstream" and doc["proven"] == f"the upstream bytes of {REPO}@{COMMIT} (main)"


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (None, "a local fix, no upstream (this lock does not say what it left: dflash-cfg check"),
        ({"repo": REPO, "revision": "main", "commit": COMMIT}, f"from {REPO}@{COMMIT} (main)"),
    ],
)
def test_verify_reads_a_lock_written_before_the_repair_was_recorded(
    dflash: Run, fleet: Path, source: dict[str, str] | None, said: str
) -> None:
    config = fleet / "models" / "stale" / "config.json"
    result = dflash("check", config, "--format", "json")
    sha = result.json()["files"][0]["sha256"]
    entry = {
        "path": str(config),
        "sha256": sha,
        "git_blob_sha1": "382a7ff1800b" + "0" * 28,
        "source": source,
        "written_at": "2026-01-01T00:00:00Z",
        "tool_version": "0.1.0",
    }
    lock = {"version": 1, "files": {"config.json": entry}}
    (config.parent / ".dflash-cfg.lock").write_text(json.dumps(lock))
    verified = dflash("verify", "models/stale")
    assert verified.code == 0, verified.err
    assert verified.out.splitlines()[1] == f"  written 2026-01-01T00:00:00Z by dflash-cfg 0.1.0: {said}" + (
        f" {config.parent})" if source is None else ""
    )


# --- an unreachable upstream loses one file's comparison, not the tree ---------------------------------------


def test_an_unreachable_project_upstream_is_said_for_its_file_and_the_rest_is_checked(dflash: Run, fleet: Path) -> None:
    put(fleet / "models" / "small", SMALL.read_bytes())
    (fleet / "dflash-cfg.toml").write_text(PROJECT + f'[[models]]\npath = "models/small"\nupstream = "{UNCACHED}"\n')
    result = dflash("check", "models/", "--format", "json")
    assert result.code == 2  # the run could not make every comparison it was asked for
    doc = result.json()
    files = {f["path"]: f for f in doc["files"]}
    assert sorted(files) == ["models/small/config.json", "models/stale/config.json"]
    stale = [f["rule"] for f in files["models/stale/config.json"]["findings"] if f["severity"] == "error"]
    assert stale == ["DF601", "DF601", "DF601"]  # compared with the cached upstream
    assert files["models/small/config.json"]["upstream"] is None  # checked, without the comparison
    [error] = doc["errors"]
    assert error.startswith(
        f'models/small/config.json: not compared with upstream = "{UNCACHED}" of its [[models]] entry in '
        f"{fleet / 'dflash-cfg.toml'}: {UNCACHED}@main: config.json is not in the local cache"
    )
    text = dflash("check", "models/")
    assert text.code == 2 and "models/stale/config.json:13:5: error DF601" in text.out
    assert text.err.splitlines()[-1] == f"dflash-cfg: error: {error}"


# --- several paths: each its own answer, the exit code the worst ---------------------------------------------


def test_fix_takes_a_tree(dflash: Run, fleet: Path) -> None:
    a, b = put(fleet / "tree" / "a", fixable()), put(fleet / "tree" / "deep" / "b", fixable())
    put(fleet / "tree" / "target", (FIXTURES / "targets" / "Qwen__Qwen3.6-27B" / "config.json").read_bytes())
    result = dflash("fix", "tree", "--yes", "--no-backup")
    assert result.code == 0, result.err
    for config in (a, b):
        assert json.loads(config.read_text())["use_sliding_window"] is True
        assert f"--- a/tree/{config.parent.relative_to(fleet / 'tree')}/config.json" in result.out
    assert "tree/target/config.json: nothing to change" in result.out.replace(f"{fleet}/", "")
    assert dflash("fix", "models", "--from-hub", REPO, "--dry-run").code == 1  # one drafter in the tree: one repo


def test_fix_goes_on_past_a_dir_without_a_config(dflash: Run, fleet: Path) -> None:
    put(fleet / "models" / "a", fixable())
    (fleet / "models" / "empty").mkdir()
    put(fleet / "models" / "b", fixable())
    result = dflash("fix", "models/a", "models/empty", "models/b", "--yes")
    assert result.code == 2  # the worst: a PATH that leads to no config.json
    assert result.err.count("dflash-cfg: error:") == 1 and "no config.json under models/empty" in result.err
    for name in ("a", "b"):
        assert json.loads((fleet / "models" / name / "config.json").read_text())["use_sliding_window"] is True
    doc = dflash("fix", "models/a", "models/empty", "--dry-run", "--format", "json").json()
    assert [f["path"] for f in doc["files"]] == [str(fleet / "models" / "a" / "config.json")]
    assert doc["errors"] == ["no config.json under models/empty"]


def test_fix_from_hub_goes_on_past_an_upstream_it_cannot_read(dflash: Run, fleet: Path) -> None:
    put(fleet / "models" / "small", SMALL.read_bytes())
    (fleet / "dflash-cfg.toml").write_text(PROJECT + f'[[models]]\npath = "models/small"\nupstream = "{UNCACHED}"\n')
    result = dflash("fix", "models/small", "models/stale", "--from-hub", "--yes")
    assert result.code == 2
    assert (fleet / "models" / "stale" / "config.json").read_bytes() == UPSTREAM.read_bytes()
    assert (fleet / "models" / "small" / "config.json").read_bytes() == SMALL.read_bytes()
    [line] = [x for x in result.err.splitlines() if x.startswith("dflash-cfg: error:")]
    assert line.startswith(f"dflash-cfg: error: models/small/config.json: {UNCACHED}@main: config.json is not in")


def test_check_goes_on_past_a_missing_path(dflash: Run, fleet: Path) -> None:
    result = dflash("check", "models/stale", "typo", "--format", "json")
    assert result.code == 2
    doc = result.json()
    assert [f["path"] for f in doc["files"]] == ["models/stale/config.json"]
    assert doc["errors"] == ["path not found: typo"]
    text = dflash("check", "models/stale", "typo")
    assert "models/stale/config.json:29:3: warning DF205" in text.out
    assert text.err.splitlines()[-1] == "dflash-cfg: error: path not found: typo"


def test_verify_takes_several_paths_and_exits_with_the_worst(dflash: Run, fleet: Path) -> None:
    put(fleet / "models" / "a", fixable())
    put(fleet / "models" / "b", fixable())
    assert dflash("fix", "models/a", "models/b", "--yes").code == 0
    both = dflash("verify", "models/a", "models/b")
    assert both.code == 0 and [line[:4] for line in both.out.splitlines()[::2]] == ["ok: ", "ok: "]
    (fleet / "models" / "b" / "config.json").write_bytes(fixable())  # replaced behind the lock's back
    replaced = dflash("verify", "models/a", "models/b")
    assert replaced.code == 1 and replaced.out.startswith("ok: ") and "MISMATCH" in replaced.err
    worst = dflash("verify", "models/a", "models/b", "typo", "--format", "json")
    assert worst.code == 2
    doc = worst.json()
    assert [f["ok"] for f in doc["files"]] == [True, False]
    assert doc["errors"] == ["path not found: typo"]

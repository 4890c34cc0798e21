"""The pre-commit hooks, run by real pre-commit from real git commits in a temporary repository.

pre-commit builds the hooks' environment from this checkout (`pip install .`), once per revision;
its store is kept under the tests' cache (helpers.CACHE, outside the checkout) so unchanged code is not
rebuilt on every test run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import CACHE, FIXTURES, ROOT

HOOKS = ROOT / ".pre-commit-hooks.yaml"
STORE = CACHE / "pre-commit"
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"
UPSTREAM = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B" / "config.json"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t.invalid",
}


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        check=check,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(STORE)},
    )


@pytest.fixture(scope="module")
def revision() -> str:
    """This checkout as a commit pre-commit can clone: HEAD plus uncommitted changes to tracked files."""
    stash = subprocess.run(["git", "-C", str(ROOT), "stash", "create"], capture_output=True, text=True, check=True)
    if stash.stdout.strip():
        return stash.stdout.strip()
    return subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, revision: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "models-repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    config = {
        "repos": [{"repo": str(ROOT), "rev": revision, "hooks": [{"id": "dflash-cfg"}, {"id": "dflash-cfg-fix"}]}]
    }
    (path / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    git(path, "add", ".pre-commit-config.yaml")
    monkeypatch.setenv("PRE_COMMIT_HOME", str(STORE))
    subprocess.run([str(PRE_COMMIT), "install"], cwd=path, check=True, capture_output=True)
    git(path, "commit", "-q", "-m", "pre-commit config", "--no-verify")
    return path


def put(repo: Path, rel: str, data: bytes) -> Path:
    target = repo / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    git(repo, "add", rel)
    return target


def standard(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()


@pytest.mark.slow
def test_broken_drafter_config_blocks_the_commit(repo: Path) -> None:
    data = json.loads(UPSTREAM.read_text())
    data["dflash_config"]["target_layer_ids"] = [1, 16, 31, 46, 64]  # past the 64-layer target
    put(repo, "drafters/qwen36/config.json", standard(data))
    commit = git(repo, "commit", "-m", "broken drafter", check=False)
    assert commit.returncode != 0
    out = commit.stdout + commit.stderr
    assert re.search(r"dflash-cfg check.*Failed", out), out
    assert "DF104 tap-out-of-range" in out
    assert git(repo, "log", "--oneline").stdout.count("\n") == 1  # nothing committed


@pytest.mark.slow
def test_good_drafter_and_target_config_pass(repo: Path) -> None:
    put(repo, "drafters/qwen36/config.json", UPSTREAM.read_bytes())
    put(repo, "targets/qwen36/config.json", TARGET.read_bytes())
    put(repo, "notes/config.yaml", b"a: 1\n")
    commit = git(repo, "commit", "-m", "models", check=False)
    out = commit.stdout + commit.stderr
    assert commit.returncode == 0, out
    assert re.search(r"dflash-cfg check.*Passed", out), out
    assert git(repo, "log", "--oneline").stdout.count("\n") == 2


@pytest.mark.slow
def test_fix_hook_repairs_then_the_commit_passes(repo: Path) -> None:
    data = json.loads(UPSTREAM.read_text())
    data["use_sliding_window"] = False
    path = put(repo, "drafters/qwen36/config.json", standard(data))
    first = git(repo, "commit", "-m", "fixable drafter", check=False)
    out = first.stdout + first.stderr
    assert first.returncode != 0
    assert re.search(r"dflash-cfg fix.*Failed", out) and "files were modified by this hook" in out, out
    repaired = json.loads(path.read_text())
    assert repaired["use_sliding_window"] is True
    assert sorted(p.name for p in path.parent.iterdir()) == ["config.json"]  # no backup, no lock in a git repo
    git(repo, "add", "-A")
    second = git(repo, "commit", "-m", "fixable drafter, fixed", check=False)
    assert second.returncode == 0, second.stdout + second.stderr


@pytest.mark.slow
def test_fix_hook_heads_each_files_diff_with_its_own_path(repo: Path) -> None:
    data = json.loads(UPSTREAM.read_text())
    data["use_sliding_window"] = False
    put(repo, "drafters/a/config.json", standard(data))
    put(repo, "drafters/b/config.json", standard(data))
    commit = git(repo, "commit", "-m", "two fixable drafters", check=False)
    out = commit.stdout + commit.stderr
    for name in ("a", "b"):
        assert f"--- a/drafters/{name}/config.json\n+++ b/drafters/{name}/config.json\n" in out, out
    assert "--- a/config.json" not in out


def test_manifest_matches_config_json_at_any_depth() -> None:
    hooks = yaml.safe_load(HOOKS.read_text())
    assert [h["id"] for h in hooks] == ["dflash-cfg", "dflash-cfg-fix"]
    for hook in hooks:
        pattern = re.compile(hook["files"])
        assert hook["types"] == ["json"] and hook["language"] == "python"
        for good in ("config.json", "models/a/config.json", "a/b/c/config.json"):
            assert pattern.search(good), good
        for bad in ("notconfig.json", "config.json.bak", "models/config.json5", "generation_config.json"):
            assert not pattern.search(bad), bad
    readme = (ROOT / "README.md").read_text()
    for hook in hooks:
        assert f"id: {hook['id']}" in readme


def test_pre_commit_validates_the_manifest() -> None:
    result = subprocess.run([str(PRE_COMMIT), "validate-manifest", str(HOOKS)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_pre_commit_validates_the_repositorys_own_config() -> None:
    config = ROOT / ".pre-commit-config.yaml"
    result = subprocess.run([str(PRE_COMMIT), "validate-config", str(config)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    hooks = [h for repo in yaml.safe_load(config.read_text())["repos"] for h in repo["hooks"]]
    assert {h["id"] for h in hooks} == {"ruff-check", "ruff-format", "mypy", "commit-subject"}
    tools = [h for h in hooks if h["id"] != "commit-subject"]
    assert all(h["language"] == "system" and h["entry"].startswith(".venv/bin/") for h in tools)


def test_the_commit_subject_hook_refuses_a_subject_over_72_characters(tmp_path: Path) -> None:
    """The repository's own commit-msg hook, run by real pre-commit on a message file."""
    hook = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(hook))
    git(tmp_path, "init", "-q")
    for subject, code in (("x" * 72, 0), ("x" * 73, 1)):
        message = tmp_path / "MSG"
        message.write_text(f"{subject}\n\nA body line may be as long as it needs to be, {'y' * 80}.\n")
        done = subprocess.run(
            [
                str(PRE_COMMIT),
                "run",
                "--config",
                str(config),
                "--hook-stage",
                "commit-msg",
                "--commit-msg-filename",
                str(message),
                "commit-subject",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert done.returncode == code, done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.slow
def test_every_published_drafter_passes_the_default_hook(repo: Path) -> None:
    """A publisher vendoring the published drafters commits them with the default hook: no finding about one
    engine only (SGLang refusing a speculators-format file, MLX needing a key) fails it."""
    for config in sorted((FIXTURES / "upstream").rglob("config.json")):
        put(
            repo,
            f"drafters/{config.parent.relative_to(FIXTURES / 'upstream').as_posix()}/config.json",
            config.read_bytes(),
        )
    commit = git(repo, "commit", "-m", "published drafters", check=False)
    out = commit.stdout + commit.stderr
    assert commit.returncode == 0, out
    assert re.search(r"dflash-cfg check.*Passed", out), out
    # The project says SGLang serves them: the speculators-format one (DF162) and MiMo's (DF209) fail it.
    (repo / "dflash-cfg.toml").write_text('engines = ["sglang"]\n')
    sglang = subprocess.run(
        [str(PRE_COMMIT), "run", "dflash-cfg", "--all-files"], cwd=repo, capture_output=True, text=True, check=False
    )
    out = sglang.stdout + sglang.stderr
    assert sglang.returncode != 0 and "DF162 speculators-not-sglang" in out and "DF209" in out, out


def test_the_incident_file_is_stopped_by_the_default_hook(repo: Path) -> None:
    """The stale drafter of the incident has only warnings on its own: the hook is a gate and fails."""
    put(
        repo, "drafters/qwen36/config.json", (FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json").read_bytes()
    )
    commit = git(repo, "commit", "-m", "stale drafter", check=False)
    out = commit.stdout + commit.stderr
    assert commit.returncode != 0, out
    assert re.search(r"dflash-cfg check.*Failed", out), out
    assert "DF205 window-without-sliding" in out and "failed on warnings only" in out
    # The project relaxes it on purpose: the same commit passes.
    (repo / "dflash-cfg.toml").write_text('fail-on = "error"\n')
    git(repo, "add", "dflash-cfg.toml")
    relaxed = git(repo, "commit", "-m", "stale drafter, accepted", check=False)
    assert relaxed.returncode == 0, relaxed.stdout + relaxed.stderr


def test_the_documented_local_hook_stops_the_incident(tmp_path: Path) -> None:
    """docs/hooks.md's `repo: local` block, pasted as it is, runs the installed dflash-cfg and stops the stale
    drafter."""
    text = (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "repo: local" in b)
    path = tmp_path / "models-repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / ".pre-commit-config.yaml").write_text(block)
    put(
        path, "drafters/qwen36/config.json", (FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json").read_bytes()
    )
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(STORE),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(
        [str(PRE_COMMIT), "run", "--all-files"], cwd=path, capture_output=True, text=True, check=False, env=env
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1 and re.search(r"dflash-cfg check.*Failed", out), out
    assert "DF205 window-without-sliding" in out


@pytest.mark.slow
def test_the_hook_prints_the_failing_file_and_a_summary_not_every_good_one(repo: Path) -> None:
    """One stale drafter among 40 good ones: the hook's output is the failing file and the summary, not a
    header and layout per good file. `args: [-v]` (the usual verbose option) gives every file again."""
    for i in range(40):
        put(repo, f"drafters/good{i:02d}/config.json", UPSTREAM.read_bytes())
    put(repo, "drafters/stale/config.json", (FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json").read_bytes())
    done = subprocess.run(
        [str(PRE_COMMIT), "run", "dflash-cfg", "--all-files"], cwd=repo, capture_output=True, text=True, check=False
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "drafters/stale/config.json:29:3: warning DF205 window-without-sliding" in out
    assert "drafters/good" not in out, out
    # pre-commit may split the files between processes: a summary each, adding up.
    assert sum(int(n) for n in re.findall(r"^(\d+) files?, 0 errors, \d+ warnings?, \d+ infos?", out, re.M)) == 41
    assert sum(int(n) for n in re.findall(r"^(\d+) passing files? not shown \(-v shows them\)$", out, re.M)) == 40
    assert len(out.splitlines()) < 40, out
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    config["repos"][0]["hooks"][0]["args"] = ["-v"]
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    verbose = subprocess.run(
        [str(PRE_COMMIT), "run", "dflash-cfg", "--all-files"], cwd=repo, capture_output=True, text=True, check=False
    )
    out = verbose.stdout + verbose.stderr
    assert verbose.returncode == 1 and "drafters/good00/config.json  [dflash" in out, out
    assert "not shown" not in out


@pytest.mark.slow
def test_the_fix_hook_says_the_file_it_changed_not_every_unchanged_one(repo: Path) -> None:
    for i in range(20):
        put(
            repo,
            f"drafters/good{i:02d}/config.json",
            (FIXTURES / "upstream" / "z-lab__Qwen3.5-4B-DFlash" / "config.json").read_bytes(),
        )
    data = json.loads(UPSTREAM.read_text())
    del data["use_sliding_window"]  # DF204: a safe fix the hook makes
    put(repo, "drafters/broken/config.json", standard(data))
    done = subprocess.run(
        [str(PRE_COMMIT), "run", "dflash-cfg-fix", "--all-files"], cwd=repo, capture_output=True, text=True, check=False
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1 and "drafters/broken/config.json" in out, out
    assert "nothing to change" not in out and "drafters/good" not in out, out

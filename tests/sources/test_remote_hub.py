"""hf:// model dirs (huggingface_hub's HfFileSystem) against the real olah Hub server on loopback: read at
the commit the revision points at, weights by header ranges, and what `fix` does there (a pull request
whose parent is the commit read; olah has no commit API, so the request itself is checked by recording
it, and the real call is shown to fail in one line)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from checkpoints import save, small_config, small_shapes
from helpers import FIXTURES, REAL, Result
from hubserver import Olah

from dflash_cfg.sources import remote

Run = Callable[..., Result]
REPO = "z-lab/Qwen3.6-27B-DFlash"
UPSTREAM = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"


def test_check_reads_at_the_commit_the_branch_points_at(dflash: Run, hub: Olah) -> None:
    result = dflash("check", f"hf://{REPO}", "--format", "json")
    assert result.code == 0, result.err
    [file] = result.json()["files"]
    assert file["path"] == f"hf://{REPO}@{hub.head(REPO)}/config.json"
    assert file["sha256"] == hashlib.sha256(UPSTREAM.read_bytes()).hexdigest()


def test_from_hub_takes_the_repo_and_commit_from_the_path(dflash: Run, hub: Olah) -> None:
    result = dflash("check", f"hf://{REPO}@main/config.json", "--from-hub", "--format", "json")
    assert result.code == 0, result.err
    [file] = result.json()["files"]
    assert file["upstream"]["commit"] == hub.head(REPO)
    assert "DF603" in {f["rule"] for f in file["findings"]}


def test_weights_by_header_ranges(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    repo = "dflash-cfg-tests/remote-weights"
    shard = save(tmp_path / "model.safetensors", small_shapes(taps=8))  # too wide for 5 taps: DF501
    config = json.dumps(small_config()).encode()
    hub.publish(repo, {"config.json": config, "model.safetensors": shard.read_bytes()})
    with open(shard, "rb") as fh:
        header = 8 + int.from_bytes(fh.read(8), "little")
    before = remote.bytes_received()
    result = dflash("check", f"hf://{repo}", "--format", "json", "--select", "DF5")
    assert result.code == 1, result.err
    assert [f["rule"] for f in result.json()["files"][0]["findings"]] == ["DF501"]
    # olah answers a ranged GET with the whole file (200, no Range support), so what arrives is the
    # config and the shard once per range asked: two ranges (8 bytes, then the header). Against S3 the
    # bytes are exactly the config and the header (test_remote.py).
    received = remote.bytes_received() - before
    assert received in (len(config) + header, len(config) + 2 * shard.stat().st_size)


def test_where_names_the_repo_and_commit(dflash: Run, hub: Olah) -> None:
    result = dflash("where", f"hf://{REPO}", "--format", "json")
    assert result.code == 0, result.err
    doc = result.json()
    assert (doc["repo"], doc["commit"]) == (REPO, hub.head(REPO))


def test_a_missing_repo_is_one_line(dflash: Run, hub: Olah) -> None:
    result = dflash("check", "hf://dflash-cfg-tests/no-such-repo")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1


def _published_with_bom(hub: Olah) -> str:
    repo = "dflash-cfg-tests/remote-fix"
    hub.publish(repo, {"config.json": b"\xef\xbb\xbf" + REAL.read_bytes()})
    return repo


def test_fix_opens_a_pull_request_on_the_commit_read(
    dflash: Run, hub: Olah, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from huggingface_hub import HfApi

    repo = _published_with_bom(hub)
    read_at = hub.head(repo)
    calls: list[dict[str, Any]] = []

    class Info:
        pr_url = f"{hub.endpoint}/{repo}/discussions/1"

    def create_commit(self: HfApi, repo_id: str, operations: list[Any], **kwargs: Any) -> Info:
        calls.append({"repo_id": repo_id, "operations": operations, **kwargs})
        return Info()

    monkeypatch.setattr(HfApi, "create_commit", create_commit)
    monkeypatch.setenv("HF_TOKEN", "hf_writeTokenForTheTestsOnly")
    result = dflash("fix", f"hf://{repo}", "--yes")
    assert result.code == 0, result.err
    [call] = calls
    assert call["repo_id"] == repo and call["create_pr"] is True and call["parent_commit"] == read_at
    [op] = call["operations"]
    local = tmp_path / "config.json"  # the same repair made on a local copy
    local.write_bytes(b"\xef\xbb\xbf" + REAL.read_bytes())
    assert dflash("fix", local, "--yes", "--no-backup", "--no-lock").code == 0
    assert op.path_in_repo == "config.json" and op.path_or_fileobj == local.read_bytes()
    assert f"opened a pull request for hf://{repo}@{read_at}/config.json: {Info.pr_url}" in result.out
    assert "hf_writeTokenForTheTestsOnly" not in result.out + result.err


def test_fix_without_a_token_writes_nothing(dflash: Run, hub: Olah) -> None:
    repo = _published_with_bom(hub)
    result = dflash("fix", f"hf://{repo}", "--yes")
    assert result.code == 2 and "needs HF_TOKEN" in result.err


def test_fix_against_a_server_without_commits_is_one_line(
    dflash: Run, hub: Olah, monkeypatch: pytest.MonkeyPatch
) -> None:
    """olah serves no commit API: the real create_commit call fails, said in one line, token unprinted."""
    repo = _published_with_bom(hub)
    monkeypatch.setenv("HF_TOKEN", "hf_writeTokenForTheTestsOnly")
    result = dflash("fix", f"hf://{repo}", "--yes")
    assert result.code == 2, result
    assert len(result.err.strip().splitlines()) == 1 and "pull request" in result.err
    assert "hf_writeTokenForTheTestsOnly" not in result.out + result.err


def test_target_and_a_tree_on_the_hub(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    target = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"
    hub.publish_dir("dflash-cfg-tests/target", target)
    drafter = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
    far = dflash("check", drafter, "--target", "hf://dflash-cfg-tests/target", "--engine", "sglang", "--format", "json")
    near = dflash("check", drafter, "--target", target, "--engine", "sglang", "--format", "json")
    assert far.code == near.code == 1, far.err  # DF406: the guessed last tap, on this target, for SGLang
    assert far.json()["files"][0]["findings"] == near.json()["files"][0]["findings"]

    hub.publish("dflash-cfg-tests/fleet", {"a/config.json": UPSTREAM.read_bytes(), "b/config.json": REAL.read_bytes()})
    tree = dflash("check", "hf://dflash-cfg-tests/fleet@main", "--format", "json")
    assert tree.code == 0, tree.err
    commit = hub.head("dflash-cfg-tests/fleet")
    assert [f["path"] for f in tree.json()["files"]] == [
        f"hf://dflash-cfg-tests/fleet@{commit}/a/config.json",
        f"hf://dflash-cfg-tests/fleet@{commit}/b/config.json",
    ]

"""check/diff --from-hub against a real Hugging Face-compatible server (olah) on loopback.

Every test gets its own HF_HOME (the conftest), so "cached" always means cached by this test.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import FIXTURES, Result
from hubserver import ErrorHub, Olah

REPO = "z-lab/Qwen3.6-27B-DFlash"
UPSTREAM = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"
INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json"

Run = Callable[..., Result]


def drafter(tmp_path: Path, source: Path, name: str = "Qwen3.6-27B-DFlash") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    shutil.copyfile(source, folder / "config.json")
    return folder


def findings(result: Result) -> list[tuple[str, str, str]]:
    doc = result.json()
    return [(f["rule"], f["pointer"], f["severity"]) for file in doc["files"] for f in file["findings"]]


def test_incident_file_reports_every_stale_field(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    result = dflash("check", drafter(tmp_path, INCIDENT), "--from-hub", REPO, "--format", "json")
    assert result.code == 1, result.err
    stale = {(r, p) for r, p, s in findings(result) if r == "DF601" and s == "error"}
    assert stale == {
        ("DF601", "/dflash_config/mask_token_id"),
        ("DF601", "/dflash_config/target_layer_ids"),
        ("DF601", "/layer_types"),
    }
    upstream = result.json()["files"][0]["upstream"]
    assert upstream["repo"] == REPO and upstream["revision"] == "main"
    assert upstream["commit"] == hub.head(REPO)
    assert upstream["git_blob_sha1"] != result.json()["files"][0]["git_blob_sha1"]


def test_incident_diff_shows_the_values_side_by_side(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    result = dflash("diff", drafter(tmp_path, INCIDENT), "--from-hub", REPO)
    assert result.code == 1, result.err
    lines = result.out.splitlines()
    assert f"{REPO}@{hub.head(REPO)}" in lines[0]
    mask = next(line for line in lines if "dflash_config/mask_token_id" in line)
    # Words, not symbols: `!=` on an equal row read as "not equal".
    assert mask.startswith("* differs  ") and "248064" in mask and mask.rstrip().endswith("248070")
    window = next(line for line in lines if line.split()[2:3] == ["sliding_window"])
    assert window.startswith("* equal    ")
    layers = next(line for line in lines if line.split()[2:3] == ["layer_types"])
    assert "F F F F F" in layers and layers.rstrip().endswith("S S S S F")
    rows = [line.split()[2] for line in lines[3:] if line.startswith(("* differs", "* equal"))]
    assert rows.index("dflash_config/mask_token_id") < rows.index("layer_types")  # critical first, catalogue order
    assert 'a blank cell under "local via Qwen3Config": the class does not interpret that' in result.out


def test_diff_json_and_effective_only_difference(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    # Same values except that use_sliding_window is missing: the raw files differ in that one key, and
    # through Qwen3Config the window itself disappears (sliding_window 2048 -> None).
    data = json.loads(UPSTREAM.read_text())
    del data["use_sliding_window"]
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    result = dflash("diff", folder, "--from-hub", REPO, "--format", "json")
    assert result.code == 1
    rows = {r["pointer"]: r for r in result.json()["rows"]}
    assert rows["/use_sliding_window"]["differs"] and not rows["/use_sliding_window"]["local_present"]
    window = rows["/sliding_window"]
    assert not window["differs"] and window["differs_effective"]
    assert (window["local_effective"], window["upstream_effective"]) == (None, 2048)


def test_identical_file_is_clean_and_says_so(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    result = dflash("check", drafter(tmp_path, UPSTREAM), "--from-hub", REPO, "--format", "json")
    assert result.code == 0, result.out
    assert not [f for f in findings(result) if f[0] in ("DF601", "DF602")]
    [identical] = [f for file in result.json()["files"] for f in file["findings"] if f["rule"] == "DF603"]
    assert identical["message"].startswith(f"identical to upstream at {REPO}@{hub.head(REPO)}")
    text = dflash("check", drafter(tmp_path, UPSTREAM, "again"), "--from-hub", REPO)
    assert f"upstream {REPO}@{hub.head(REPO)[:12]} (main, found by --from-hub)" in text.out


def test_a_new_upstream_commit_is_seen(dflash: Run, olah: Olah, hub: Olah, tmp_path: Path) -> None:
    repo = "dflash-cfg-tests/moving"
    first = olah.publish(repo, {"config.json": UPSTREAM.read_bytes()})
    folder = drafter(tmp_path, UPSTREAM)
    assert (
        dflash("check", folder, "--from-hub", repo, "--format", "json").json()["files"][0]["upstream"]["commit"]
        == first
    )
    changed = json.loads(UPSTREAM.read_text())
    changed["dflash_config"]["mask_token_id"] = 248077
    second = olah.publish(repo, {"config.json": (json.dumps(changed, indent=2, sort_keys=True) + "\n").encode()})
    result = dflash("check", folder, "--from-hub", repo, "--format", "json")
    assert result.json()["files"][0]["upstream"]["commit"] == second != first
    assert ("DF601", "/dflash_config/mask_token_id", "error") in findings(result)
    # The old commit is still reachable by its sha.
    pinned = dflash("check", folder, "--from-hub", repo, "--revision", first, "--format", "json")
    assert pinned.code == 0 and pinned.json()["files"][0]["upstream"]["commit"] == first


def test_tag_revision(dflash: Run, olah: Olah, hub: Olah, tmp_path: Path) -> None:
    repo = "dflash-cfg-tests/tagged"
    commit = olah.publish(repo, {"config.json": UPSTREAM.read_bytes()})
    olah.tag(repo, "v1.0")
    result = dflash("check", drafter(tmp_path, UPSTREAM), "--from-hub", repo, "--revision", "v1.0", "--format", "json")
    upstream = result.json()["files"][0]["upstream"]
    assert (upstream["revision"], upstream["commit"]) == ("v1.0", commit)


def test_cached_commit_needs_no_request(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    folder = drafter(tmp_path, INCIDENT)
    online = dflash("check", folder, "--from-hub", REPO, "--format", "json")
    commit = online.json()["files"][0]["upstream"]["commit"]
    with hub.stopped():
        pinned = dflash("check", folder, "--from-hub", REPO, "--revision", commit, "--format", "json")
        assert pinned.code == 1, pinned.err
        assert findings(pinned) == findings(online)
        offline = dflash("check", folder, "--from-hub", REPO, "--offline", "--format", "json")
        assert offline.json()["files"][0]["upstream"]["commit"] == commit
        # Without --offline a branch has to be resolved, and the Hub is down: say so, do not guess.
        branch = dflash("check", folder, "--from-hub", REPO)
        assert branch.code == 2 and "hub unreachable" in branch.err and "--offline" in branch.err


def test_offline_without_cache_says_what_to_do(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    result = dflash("check", drafter(tmp_path, INCIDENT), "--from-hub", REPO, "--offline")
    assert result.code == 2
    assert result.err.count("\n") == 1 and "not in the local cache" in result.err and "Traceback" not in result.err


def test_hf_hub_offline_environment_is_honoured(
    dflash: Run, hub: Olah, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = drafter(tmp_path, INCIDENT)
    assert dflash("check", folder, "--from-hub", REPO).code == 1
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with hub.stopped():
        assert dflash("check", folder, "--from-hub", REPO).code == 1


def test_closed_port_is_one_line_exit_2(dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    start = time.monotonic()
    result = dflash("check", drafter(tmp_path, INCIDENT), "--from-hub", REPO)
    assert time.monotonic() - start < 10  # the documented per-request timeout (HF_HUB_ETAG_TIMEOUT)
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("dflash-cfg: error: hub unreachable at http://127.0.0.1:9")
    assert result.err.count("\n") == 1


@pytest.mark.parametrize(
    ("repo", "expected"),
    [
        pytest.param("z-lab/gated", "is gated", id="gated"),
        pytest.param("z-lab/private", "not found", id="repo-not-found"),
        pytest.param("z-lab/no-config", "has no config.json", id="entry-not-found"),
        pytest.param("z-lab/missing-revision", "revision 'v9' not found", id="revision-not-found"),
        pytest.param("z-lab/broken", "HTTP 500", id="server-error"),
    ],
)
def test_hub_error_classes(
    dflash: Run, error_hub: ErrorHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repo: str, expected: str
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", error_hub.endpoint)
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token_value")
    result = dflash("check", drafter(tmp_path, INCIDENT), "--from-hub", repo, "--revision", "v9")
    assert result.code == 2
    assert expected in result.err and result.err.count("\n") == 1
    assert "hf_secret_token_value" not in result.err + result.out
    assert "Bearer hf_secret_token_value" in error_hub.seen_auth  # the token was used, just never shown


def test_gated_mentions_hf_token(
    dflash: Run, error_hub: ErrorHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", error_hub.endpoint)
    result = dflash("diff", drafter(tmp_path, INCIDENT), "--from-hub", "z-lab/gated")
    assert result.code == 2 and "HF_TOKEN" in result.err


def test_timeout_is_reported(dflash: Run, error_hub: ErrorHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", error_hub.endpoint)
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "0.5")
    error_hub.delay["slow"] = 3.0
    try:
        result = dflash("check", drafter(tmp_path, INCIDENT), "--from-hub", "z-lab/slow")
    finally:
        error_hub.delay["slow"] = 0.0
    assert result.code == 2 and "no answer from" in result.err and "0.5 s" in result.err


def test_repo_inferred_from_a_cache_snapshot(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    from huggingface_hub import hf_hub_download

    path = Path(
        hf_hub_download(
            REPO,
            "config.json",
            revision="main",
            endpoint=hub.endpoint,
            cache_dir=os.path.join(os.environ["HF_HOME"], "hub"),
        )
    )
    assert "snapshots" in path.parts
    result = dflash("check", path.parent, "--from-hub", "--format", "json")
    assert result.code == 0, result.err
    upstream = result.json()["files"][0]["upstream"]
    assert (upstream["repo"], upstream["commit"]) == (REPO, hub.head(REPO))
    # `--from-hub PATH`: the path given where REPO may stand is taken as the path.
    swallowed = dflash("check", "--from-hub", str(path.parent), "--format", "json")
    assert swallowed.code == 0 and swallowed.json()["files"][0]["upstream"]["repo"] == REPO


def test_repo_cannot_be_inferred_is_a_usage_error(dflash: Run, tmp_path: Path) -> None:
    result = dflash("check", drafter(tmp_path, INCIDENT), "--from-hub")
    assert result.code == 2 and "--from-hub ORG/NAME" in result.err


def test_modified_cache_blob_is_not_trusted(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    from huggingface_hub import hf_hub_download

    path = Path(
        hf_hub_download(
            REPO,
            "config.json",
            revision="main",
            endpoint=hub.endpoint,
            cache_dir=os.path.join(os.environ["HF_HOME"], "hub"),
        )
    )
    path.resolve().write_bytes(INCIDENT.read_bytes())  # what an edit through the snapshot symlink does
    with hub.stopped():
        result = dflash("check", path.parent, "--from-hub", "--offline")
    assert result.code == 2 and "modified after download" in result.err
    # Online, the cache is repaired from the Hub and the comparison is with the real upstream.
    result = dflash(
        "check", drafter(tmp_path, INCIDENT), "--from-hub", REPO, "--revision", hub.head(REPO), "--format", "json"
    )
    assert ("DF601", "/dflash_config/mask_token_id", "error") in findings(result)


def test_revision_and_offline_need_from_hub(dflash: Run, tmp_path: Path) -> None:
    result = dflash("check", drafter(tmp_path, INCIDENT), "--revision", "main")
    assert result.code == 2 and "--from-hub" in result.err


def test_a_mechanical_mirror_is_not_a_critical_difference(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    folder = drafter(tmp_path, UPSTREAM)
    assert dflash("fix", folder, "--yes").code == 0  # mirrors block_size into dflash_config
    result = dflash("check", folder, "--from-hub", REPO, "--format", "json")
    assert result.code == 0, result.out
    [mirror] = [f for f in result.json()["files"][0]["findings"] if f["pointer"] == "/dflash_config/block_size"]
    assert mirror["rule"] == "DF602" and "mirrors upstream's block_size" in mirror["message"]


@pytest.mark.parametrize("command", ["check", "diff"])
def test_malformed_repo_id_is_a_usage_error(dflash: Run, tmp_path: Path, command: str) -> None:
    result = dflash(command, drafter(tmp_path, INCIDENT), "--from-hub", "not a repo!")
    assert result.code == 2 and result.err.count("\n") == 1
    assert "is not a Hub repo id" in result.err and "internal error" not in result.err


def test_a_check_never_moves_what_an_engine_resolves(dflash: Run, olah: Olah, hub: Olah, tmp_path: Path) -> None:
    """An engine started with HF_HUB_OFFLINE=1 resolves the same snapshot before and after a check."""
    from huggingface_hub import snapshot_download

    repo = "dflash-cfg-tests/engine-cache"
    weights = b"not really weights"
    first = olah.publish(repo, {"config.json": UPSTREAM.read_bytes(), "model.safetensors": weights})
    full = snapshot_download(repo, revision="main", endpoint=hub.endpoint)  # what the engine downloaded
    assert Path(full).name == first
    changed = json.loads(UPSTREAM.read_text())
    changed["dflash_config"]["mask_token_id"] = 248077
    second = olah.publish(repo, {"config.json": (json.dumps(changed, indent=2, sort_keys=True) + "\n").encode()})
    result = dflash("check", Path(full), "--from-hub", repo, "--format", "json")
    assert result.json()["files"][0]["upstream"]["commit"] == second != first
    after = snapshot_download(repo, revision="main", local_files_only=True)
    assert after == full and (Path(after) / "model.safetensors").read_bytes() == weights
    # dflash-cfg keeps its own record of the branch, so --offline still answers by branch name.
    offline = dflash("check", Path(full), "--from-hub", repo, "--offline", "--format", "json")
    assert offline.json()["files"][0]["upstream"]["commit"] == second


def test_the_project_config_names_each_drafters_upstream_and_target(
    dflash: Run, hub: Olah, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No flags: the project config says where the incident drafter's trained values come from."""
    models = tmp_path / "models"
    models.mkdir()
    stale = drafter(models, INCIDENT)
    shutil.copytree(FIXTURES / "targets" / "Qwen__Qwen3.6-27B", models / "target")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "fleet"\n\n'
        "[[tool.dflash-cfg.models]]\n"
        f'path = "models/{stale.name}"\nupstream = "{REPO}"\ntarget = "models/target"\n'
    )
    monkeypatch.chdir(tmp_path)
    result = dflash("check", f"models/{stale.name}", "--format", "json")
    assert result.code == 1
    found = findings(result)
    for pointer in ("/dflash_config/mask_token_id", "/dflash_config/target_layer_ids", "/layer_types"):
        assert ("DF601", pointer, "error") in found
    assert any(rule == "DF404" for rule, _, _ in found)  # the target's tokenizer was read too
    # --isolated: no project config, so no upstream and no target.
    isolated = findings(dflash("check", f"models/{stale.name}", "--isolated", "--format", "json"))
    assert not [r for r, _, _ in isolated if r in ("DF601", "DF404")]
    # The same through the gate: the hook fails, and after `fix --from-hub` it passes (identical: DF603).
    assert dflash("check", "--gate", f"models/{stale.name}").code == 1
    assert dflash("fix", f"models/{stale.name}", "--from-hub", REPO, "--yes").code == 0
    healed = dflash("check", "--gate", f"models/{stale.name}", "--format", "json")
    assert healed.code == 0 and ("DF603", "", "info") in findings(healed)

"""fix / verify / check --expect-sha256 through the real CLI, on real files, against the real Hub server."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, Result
from hubserver import Olah

from dflash_cfg.commands.fix import ConfirmPolicy, confirmation
from dflash_cfg.errors import UsageError
from dflash_cfg.model import Plan

REPO = "z-lab/Qwen3.6-27B-DFlash"
UPSTREAM = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"
INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"

Run = Callable[..., Result]


def model_dir(tmp_path: Path, source: Path | bytes, name: str = "Qwen3.6-27B-DFlash") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    data = source if isinstance(source, bytes) else source.read_bytes()
    (folder / "config.json").write_bytes(data)
    return folder


def standard(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()


def git_hash(path: Path) -> str:
    out = subprocess.run(["git", "hash-object", "--no-filters", str(path)], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def test_fix_from_hub_lands_the_upstream_bytes_and_verify_proves_it(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    folder = model_dir(tmp_path, INCIDENT)
    config = folder / "config.json"
    result = dflash("fix", folder, "--from-hub", REPO, "--yes")
    assert result.code == 0, result.err
    upstream_blob = git_hash(UPSTREAM)
    assert config.read_bytes() == UPSTREAM.read_bytes()
    assert git_hash(config) == upstream_blob
    sha = hashlib.sha256(UPSTREAM.read_bytes()).hexdigest()
    assert f"wrote {config.resolve()}" in result.out
    assert f"sha256   {sha}" in result.out
    assert f"identical to {REPO}@{hub.head(REPO)}" in result.out
    assert '-    "mask_token_id": 248064,' in result.out and '+    "mask_token_id": 248070,' in result.out
    lock = json.loads((folder / ".dflash-cfg.lock").read_text())["files"]["config.json"]
    assert lock["sha256"] == sha and lock["git_blob_sha1"] == upstream_blob
    assert lock["source"] == {"repo": REPO, "revision": "main", "commit": hub.head(REPO)}
    backups = list(folder.glob("config.json.*.bak"))
    assert [b.read_bytes() for b in backups] == [INCIDENT.read_bytes()]

    verified = dflash("verify", folder)
    assert verified.code == 0 and verified.out.startswith(f"ok: {config.resolve()} sha256 {sha}")
    assert dflash("check", folder, "--expect-sha256", sha).code == 0
    clean = dflash("check", folder, "--from-hub", "--format", "json")  # repo inferred from the lock file
    assert clean.code == 0 and clean.json()["files"][0]["upstream"]["repo"] == REPO

    # An old copy synced over it on the serving host: every gate fails loudly.
    shutil.copyfile(INCIDENT, config)
    stale = dflash("verify", folder)
    assert stale.code == 1 and "MISMATCH" in stale.err and sha in stale.err
    assert f"the upstream bytes of {REPO}@{hub.head(REPO)} (main)" in stale.err
    expect = dflash("check", folder, "--expect-sha256", sha, "--format", "json")
    assert expect.code == 1
    rules = {(f["rule"], f["severity"]) for f in expect.json()["files"][0]["findings"]}
    assert {("DF701", "error"), ("DF702", "error")} <= rules


def test_fix_use_sliding_window_false_makes_check_clean(dflash: Run, tmp_path: Path) -> None:
    data = json.loads(UPSTREAM.read_text())
    data["use_sliding_window"] = False
    folder = model_dir(tmp_path, standard(data))
    before = dflash("check", folder, "--format", "json")
    assert before.code == 1
    assert [f["rule"] for f in before.json()["files"][0]["findings"] if f["severity"] == "error"] == ["DF204"]
    result = dflash("fix", folder, "--yes")
    assert result.code == 0, result.err
    after = dflash("check", folder, "--format", "json")
    # Clean: the catalog names the published revision whose trained values the file now has (DF606, an info).
    assert after.code == 0 and [f["rule"] for f in after.json()["files"][0]["findings"]] == ["DF606"]
    # Only the changed values' lines changed (plus the mirrored block_size line): standard form kept.
    new = (folder / "config.json").read_bytes()
    fixed = json.loads(new)
    assert fixed["use_sliding_window"] is True and fixed["dflash_config"]["block_size"] == 16
    assert new == standard(fixed)
    # Second run: nothing to change, nothing written.
    stat = (folder / "config.json").stat()
    again = dflash("fix", folder, "--yes")
    assert again.code == 0 and "nothing to change" in again.out
    assert (folder / "config.json").stat().st_mtime_ns == stat.st_mtime_ns


def test_fix_never_infers_trained_values(dflash: Run, tmp_path: Path) -> None:
    folder = model_dir(tmp_path, INCIDENT)
    result = dflash("fix", folder, "--yes", "--target", TARGET)
    fixed = json.loads((folder / "config.json").read_text())
    stale = json.loads(INCIDENT.read_text())
    for key in ("layer_types", "sliding_window", "rope_theta", "block_size"):
        assert fixed[key] == stale[key]
    assert fixed["dflash_config"]["mask_token_id"] == 248064
    assert fixed["dflash_config"]["target_layer_ids"] == [1, 17, 33, 49, 63]
    # Only upstream can settle what is left. With the target that includes an error for SGLang (DF406, the last
    # target layer tapped), which fails nothing while nothing says SGLang serves the drafter: fix answers as
    # `check --target` of the written file does, and with the project's engines = ["sglang"] both fail.
    assert result.code == 0 and dflash("check", folder, "--target", TARGET).code == 0
    (tmp_path / "dflash-cfg.toml").write_text('engines = ["sglang"]\n')
    served = dflash("fix", folder, "--yes", "--target", TARGET)
    assert served.code == 1 and "1 error(s) remain" in served.err
    assert dflash("check", folder, "--target", TARGET).code == 1


def test_dry_run_writes_nothing(dflash: Run, tmp_path: Path) -> None:
    data = json.loads(UPSTREAM.read_text())
    data["use_sliding_window"] = False
    folder = model_dir(tmp_path, standard(data))
    before = (folder / "config.json").read_bytes()
    result = dflash("fix", folder, "--dry-run")
    assert result.code == 1
    assert '-  "use_sliding_window": false,' in result.out and '+  "use_sliding_window": true,' in result.out
    assert (folder / "config.json").read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["config.json"]


def test_fix_asks_and_refuses_without_a_terminal(dflash: Run, tmp_path: Path) -> None:
    data = json.loads(UPSTREAM.read_text())
    data["use_sliding_window"] = False
    folder = model_dir(tmp_path, standard(data))
    before = (folder / "config.json").read_bytes()
    result = dflash("fix", folder)
    assert result.code == 2 and "--yes" in result.err
    assert (folder / "config.json").read_bytes() == before


def test_bom_is_stripped(dflash: Run, tmp_path: Path) -> None:
    folder = model_dir(tmp_path, b"\xef\xbb\xbf" + UPSTREAM.read_bytes())
    assert dflash("check", folder).code == 1
    result = dflash("fix", folder, "--yes")
    assert result.code == 0, result.err
    data = (folder / "config.json").read_bytes()
    assert not data.startswith(b"\xef\xbb\xbf")
    upstream = json.loads(UPSTREAM.read_text())
    assert json.loads(data) == {**upstream, "dflash_config": {**upstream["dflash_config"], "block_size": 16}}


def test_only_critical_keeps_local_edits(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    data = json.loads(INCIDENT.read_text())
    data["max_position_embeddings"] = 131072  # a local edit
    folder = model_dir(tmp_path, standard(data))
    result = dflash("fix", folder, "--from-hub", REPO, "--only-critical", "--yes")
    assert result.code == 0, result.err
    fixed = json.loads((folder / "config.json").read_text())
    upstream = json.loads(UPSTREAM.read_text())
    assert fixed["max_position_embeddings"] == 131072
    assert fixed["dflash_config"] == upstream["dflash_config"] and fixed["layer_types"] == upstream["layer_types"]
    check = dflash("check", folder, "--from-hub", REPO, "--format", "json")
    assert check.code == 0
    assert {f["rule"] for f in check.json()["files"][0]["findings"]} == {"DF602", "DF121"}


def test_symlink_into_cache_blob_is_replaced_not_written_through(dflash: Run, tmp_path: Path) -> None:
    blob = tmp_path / "hub" / "models--z-lab--Qwen3.6-27B-DFlash" / "blobs" / "0123abcd"
    blob.parent.mkdir(parents=True)
    data = json.loads(UPSTREAM.read_text())
    data["use_sliding_window"] = False
    blob.write_bytes(standard(data))
    folder = tmp_path / "models" / "drafter"
    folder.mkdir(parents=True)
    os.symlink(blob, folder / "config.json")
    check = dflash("check", folder, "--format", "json")
    assert ("DF703", "warning") in {(f["rule"], f["severity"]) for f in check.json()["files"][0]["findings"]}
    result = dflash("fix", folder, "--yes")
    assert result.code == 0, result.err
    assert "replaced the symlink" in result.out
    assert not (folder / "config.json").is_symlink()
    assert blob.read_bytes() == standard(data)  # the cache is untouched


def test_cache_snapshot_is_refused(dflash: Run, tmp_path: Path) -> None:
    snap = tmp_path / "hub" / "models--z-lab--Qwen3.6-27B-DFlash" / "snapshots" / ("a" * 40)
    snap.mkdir(parents=True)
    data = json.loads(UPSTREAM.read_text())
    data["use_sliding_window"] = False
    (snap / "config.json").write_bytes(standard(data))
    result = dflash("fix", snap, "--yes")
    assert result.code == 2 and "snapshot" in result.err
    assert json.loads((snap / "config.json").read_text())["use_sliding_window"] is False


def test_verify_without_lock_is_exit_2(dflash: Run, tmp_path: Path) -> None:
    folder = model_dir(tmp_path, UPSTREAM)
    result = dflash("verify", folder)
    assert result.code == 2 and "no .dflash-cfg.lock" in result.err
    sha = hashlib.sha256(UPSTREAM.read_bytes()).hexdigest()
    assert dflash("verify", folder, "--expect-sha256", sha).code == 0
    assert dflash("verify", folder, "--expect-sha256", "0" * 64).code == 1
    assert dflash("verify", folder, "--expect-sha256", "xyz").code == 2


def test_corrupt_lock_is_reported_not_trusted(dflash: Run, tmp_path: Path) -> None:
    folder = model_dir(tmp_path, UPSTREAM)
    (folder / ".dflash-cfg.lock").write_text("{not json")
    check = dflash("check", folder, "--format", "json")
    assert ("DF701", "error") in {(f["rule"], f["severity"]) for f in check.json()["files"][0]["findings"]}
    assert dflash("verify", folder).code == 2
    data = json.loads(UPSTREAM.read_text())
    data["use_sliding_window"] = False
    (folder / "config.json").write_bytes(standard(data))
    before = (folder / "config.json").read_bytes()
    result = dflash("fix", folder, "--yes")
    assert result.code == 2 and (folder / "config.json").read_bytes() == before


def tree(folder: Path) -> dict[str, bytes | str]:
    """Every name in `folder`: a file's bytes, a symlink's target (what a write could change)."""
    return {p.name: os.readlink(p) if p.is_symlink() else p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("link", ["dangling", "loop"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_lock_symlink_that_leads_nowhere_is_refused_before_writing(
    dflash: Run, tmp_path: Path, link: str, fmt: str
) -> None:
    # The lock could not be recorded there: the write of config.json (and its backup) must not happen either.
    data = json.loads(UPSTREAM.read_text())
    data["use_sliding_window"] = False  # DF204: a safe fix to write
    folder = model_dir(tmp_path, standard(data))
    lock = folder / ".dflash-cfg.lock"
    lock.symlink_to("no-such-lock" if link == "dangling" else ".dflash-cfg.lock")
    before = tree(folder)
    result = dflash("fix", folder, "--yes", "--format", fmt)
    assert result.code == 2, result
    assert len(result.err.strip().splitlines()) == 1 and str(lock) in result.err, result.err
    assert "symlink" in result.err and "Traceback" not in result.err, result.err
    assert tree(folder) == before  # no backup, no temp, config.json and the link as they were
    if fmt == "json":
        doc = result.json()
        assert doc["files"] == [] and [str(lock) in e for e in doc["errors"]] == [True], doc
    lock.unlink()  # as the line says: then the repair is made and recorded
    assert dflash("fix", folder, "--yes").code == 0
    assert json.loads((folder / "config.json").read_text())["use_sliding_window"] is True and lock.is_file()


@pytest.mark.parametrize("args", [("--only-critical",), ("--from-hub", REPO, "--dry-run", "extra")])
def test_fix_usage_errors(dflash: Run, tmp_path: Path, args: tuple[str, ...]) -> None:
    folder = model_dir(tmp_path, UPSTREAM)
    result = dflash("fix", folder, *args)
    assert result.code == 2 and "Traceback" not in result.err


def test_nothing_to_fix_but_errors_left_is_exit_1(dflash: Run, tmp_path: Path) -> None:
    folder = model_dir(tmp_path, b'{"architectures": ["DFlashDraftModel"], "dflash_config": {}, "a": 1, "a": 2}')
    before = (folder / "config.json").read_bytes()
    result = dflash("fix", folder, "--yes")
    assert result.code == 1 and "nothing to change" in result.out and "need upstream values" in result.err
    assert (folder / "config.json").read_bytes() == before


# fix's confirm policy on its own: (policy, a terminal on stdin) -> (what is shown and asked, the answer).
PLAN = Plan(path=Path("/m/config.json"), old=b"{}", new=b'{"a": 1}', applied=("a",))
POLICY = [
    pytest.param(ConfirmPolicy(), True, ["show", "ask"], True, id="asks on a terminal"),
    pytest.param(ConfirmPolicy(yes=True), False, ["show"], True, id="yes writes without asking"),
    pytest.param(ConfirmPolicy(dry_run=True), False, ["show"], False, id="dry run shows and writes nothing"),
    pytest.param(ConfirmPolicy(dry_run=True, yes=True), True, ["show"], False, id="dry run wins over yes"),
    pytest.param(ConfirmPolicy(yes=True, document=True), False, [], True, id="document with yes: silent write"),
    pytest.param(ConfirmPolicy(dry_run=True, document=True), False, [], False, id="document dry run: silent"),
]


@pytest.mark.parametrize(("policy", "terminal", "effects", "answer"), POLICY)
def test_confirm_policy(policy: ConfirmPolicy, terminal: bool, effects: list[str], answer: bool) -> None:
    done: list[str] = []

    def ask(p: Plan) -> bool:
        done.append("ask")
        return True

    confirm = confirmation(policy, lambda p: done.append("show"), ask, lambda: terminal)
    assert (confirm(PLAN), done) == (answer, effects)


def test_confirm_policy_refuses_what_cannot_be_asked() -> None:
    with pytest.raises(UsageError, match="--format json cannot ask"):
        ConfirmPolicy(document=True)
    shown: list[Plan] = []
    confirm = confirmation(ConfirmPolicy(), shown.append, lambda p: True, lambda: False)
    with pytest.raises(UsageError, match="stdin is not a terminal"):
        confirm(PLAN)
    assert shown == [PLAN]  # the change is shown before the refusal: the user sees what --yes would write

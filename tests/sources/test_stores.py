"""What holds on every object store the tool reads, each test written once and run on each (the `store` fixture:
s3:// on moto's S3 server, gs:// on the GCS emulator, both on loopback): check reads config.json and only the
headers of the weights, a tree under a prefix, a target on the store, where, the fleet's copy compared with
upstream, and the faults as one line (a missing bucket or object, the server down). What differs between the
stores (the writes: S3's conditional put, GCS's refusal) is in test_remote.py and test_gcs.py."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from checkpoints import drafter_dir, save, small_shapes
from faultproxy import FaultProxy
from helpers import FIXTURES, Result, Store, assert_one_line_error, run_as_user, upload
from hubserver import free_port

from dflash_cfg.sources import remote

Run = Callable[..., Result]
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"
INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"


def rules(result: Result) -> list[tuple[str, str, str]]:
    return [(f["rule"], f["severity"], f["pointer"]) for f in result.json()["files"][0]["findings"]]


def test_check_reads_the_same_findings_as_on_disk(dflash: Run, store: Store, tmp_path: Path) -> None:
    folder = drafter_dir(tmp_path, shapes=small_shapes(taps=8))  # fc.weight too wide for 5 taps: DF501
    _, url = upload(store, folder)
    result = dflash("check", url, "--format", "json")
    assert result.code == 1, result.err
    [file] = result.json()["files"]
    assert file["path"] == f"{url}/config.json"
    assert file["sha256"] == hashlib.sha256((folder / "config.json").read_bytes()).hexdigest()
    assert [f["rule"] for f in file["findings"] if f["severity"] == "error"] == ["DF501"]
    assert rules(result) == rules(dflash("check", folder, "--format", "json"))


def test_check_reads_only_config_and_one_header_per_shard(dflash: Run, store: Store, tmp_path: Path) -> None:
    folder = drafter_dir(tmp_path)
    save(folder / "extra.safetensors", {"extra.weight": (4096, 4096)})  # 32 MiB of tensor data, never read
    _, url = upload(store, folder)
    headers = 0
    for shard in ("model.safetensors", "extra.safetensors"):
        with open(folder / shard, "rb") as fh:
            headers += 8 + int.from_bytes(fh.read(8), "little")  # 8 bytes of length, then the JSON header
    before = remote.bytes_received()
    result = dflash("check", url, "--select", "DF5")
    assert result.code in (0, 1), result.err
    assert remote.bytes_received() - before == len((folder / "config.json").read_bytes()) + headers


def test_the_users_terminal_shows_the_report_and_nothing_else(store: Store, tmp_path: Path) -> None:
    """Without credentials gcsfs cannot ask the storage-layout API what kind of bucket it reads and falls back to
    the JSON API, logging a warning per request: on any store, the user sees the report, not the library's log."""
    _, url = upload(store, drafter_dir(tmp_path))
    result = run_as_user("check", url)
    assert result.code == 0, result.err
    assert result.err == ""
    assert f"{url}/config.json  [dflash, sha256 " in result.out


def test_a_tree_under_a_prefix(dflash: Run, store: Store, tmp_path: Path) -> None:
    bucket = store.new_bucket()
    store.upload_dir(bucket, "fleet/a", drafter_dir(tmp_path / "a"))
    store.upload_dir(bucket, "fleet/b", drafter_dir(tmp_path / "b"))
    store.put(bucket, "fleet/.hidden/config.json", b"{}")
    result = dflash("check", f"{store.scheme}://{bucket}/fleet", "--format", "json")
    assert result.code == 0, result.err
    assert [f["path"] for f in result.json()["files"]] == [
        f"{store.scheme}://{bucket}/fleet/a/config.json",
        f"{store.scheme}://{bucket}/fleet/b/config.json",
    ]


def test_a_target_on_the_store(dflash: Run, store: Store) -> None:
    _, url = upload(store, TARGET, "targets/Qwen3.6-27B")
    remote_run = dflash("check", INCIDENT, "--target", url, "--engine", "sglang", "--format", "json")
    local_run = dflash("check", INCIDENT, "--target", TARGET, "--engine", "sglang", "--format", "json")
    assert remote_run.code == local_run.code == 1, remote_run.err  # DF406: the guessed last tap, for SGLang
    assert rules(remote_run) == rules(local_run) and any(rule.startswith("DF4") for rule, _, _ in rules(local_run))


def test_where_on_the_store(dflash: Run, store: Store, tmp_path: Path) -> None:
    folder = drafter_dir(tmp_path)
    _, url = upload(store, folder)
    result = dflash("where", url, "--format", "json")
    assert result.code == 0, result.err
    assert result.json()["config"] == f"{url}/config.json"
    assert result.json()["sha256"] == hashlib.sha256((folder / "config.json").read_bytes()).hexdigest()


def test_the_fleets_copy_compared_with_upstream(dflash: Run, store: Store, hub: Any) -> None:
    """The incident's check, on the copy a fleet loads from the store: its guessed values against the Hub's."""
    repo = "z-lab/Qwen3.6-27B-DFlash"
    bucket = store.new_bucket()
    store.put(bucket, "team/drafter/config.json", (INCIDENT / "config.json").read_bytes())
    url = f"{store.scheme}://{bucket}/team/drafter"
    diff = dflash("diff", url, "--from-hub", repo)
    assert diff.code == 1 and "248064" in diff.out and "248070" in diff.out, diff.err
    check = dflash("check", url, "--from-hub", repo, "--format", "json", "--select", "DF6")
    assert check.code == 1, check.err
    assert [rule for rule, _, _ in rules(check)] == ["DF601"] * 3


# What a bucket that does not exist is said to be: on s3:// what a missing key is.
NO_BUCKET = {"s3": "path not found", "gs": "no such bucket"}


def test_a_missing_bucket_or_object_is_one_line(store: Store, tmp_path: Path) -> None:
    bucket, _ = upload(store, drafter_dir(tmp_path))
    for command, where, cause in (
        ("check", "no-such-bucket/team/drafter", NO_BUCKET[store.scheme]),
        ("check", f"{bucket}/team/absent", "path not found"),
        ("check", f"{bucket}/team/drafter/absent.json", "path not found"),
        ("verify", f"{bucket}/team/absent", "path not found"),
        ("verify", "no-such-bucket/team/drafter", NO_BUCKET[store.scheme]),
    ):
        assert_one_line_error(run_as_user(command, f"{store.scheme}://{where}"), contains=(cause,))


def test_the_server_down_is_one_line_naming_where_it_was_looked_for(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(store.endpoint_variable, f"http://127.0.0.1:{free_port()}")  # nothing listens there
    for command in (["check"], ["verify"], ["fix", "--yes"]):
        # Within two minutes each (the run is killed past it): gcsfs's six attempts take about 35 s, and a
        # client's retries must not make it hang.
        result = run_as_user(*command, f"{store.scheme}://models-x/team/drafter", timeout=120)
        assert_one_line_error(result, contains=("unreachable", store.endpoint_variable))


def test_a_warm_check_of_an_unchanged_dir_asks_for_its_listing_only(
    dflash: Run, store: Store, proxy: FaultProxy, tmp_path: Path
) -> None:
    """The listing names every object's version (S3's ETag, GCS's generation): config.json and the shard headers
    read by an earlier check of the same bytes come from the content cache, and a changed object alone is read
    again."""
    folder = drafter_dir(tmp_path, shapes=small_shapes(taps=8))  # fc.weight too wide for 5 taps: DF501
    save(folder / "extra.safetensors", {"extra.weight": (64, 64)})
    bucket, url = upload(store, folder)
    cold = dflash("check", url, "--format", "json")
    assert cold.code == 1 and "DF501" in cold.out, cold.err
    assert len(proxy.requests) > 1

    proxy.reset()
    warm = dflash("check", url, "--format", "json")
    assert [r.split("?")[0] for r in proxy.requests] == [proxy.requests[0].split("?")[0]] and len(proxy.requests) == 1
    assert rules(warm) == rules(cold) and warm.code == 1

    changed = json.loads((folder / "config.json").read_text())
    changed["dflash_config"]["target_layer_ids"] = changed["dflash_config"]["target_layer_ids"][:-1]
    store.put(bucket, "team/drafter/config.json", json.dumps(changed, indent=2).encode())
    proxy.reset()
    again = dflash("check", url, "--format", "json")
    assert len(proxy.requests) == 2 and "config.json" in proxy.requests[1], proxy.requests  # the listing, the file
    assert again.json()["files"][0]["sha256"] == hashlib.sha256(json.dumps(changed, indent=2).encode()).hexdigest()
    assert rules(again) != rules(cold)

    proxy.reset()
    uncached = dflash("check", url, "--format", "json", "--no-cache")
    assert len(proxy.requests) > 2 and rules(uncached) == rules(again)

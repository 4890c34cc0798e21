"""Object-store reads through the fault-injecting proxy (tests/faultproxy.py) in front of each store the tests
start (the `store` fixture: moto's S3 server, the GCS emulator): a store that ignores Range (answering far more
than asked for, or without end) and a store that trickles. A read costs memory in proportion to what was asked
for, never to the answer, and no run outlasts DFLASH_CFG_REMOTE_DEADLINE. Each run is the CLI in a process of its
own, so that its memory and its time are its own. S3's write faults: test_remote_faults.py."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from checkpoints import drafter_dir
from faultproxy import FaultProxy
from helpers import Measured, Result, Store, assert_one_line_error, run_measured, upload

# The CLI's own footprint (Python, click, transformers' config classes, s3fs or gcsfs and aiohttp) is 100-140 MiB
# here. An oversized config.json is then read once more, to its hash limit (64 MiB, held twice while it is
# joined): about 300 MiB in all. A read held whole grows with the answer: an endless one takes every byte of
# GUARD (or the machine, without it).
PEAK_MIB = 400
GUARD = 2 << 30  # address space: an unbounded read fails in the child instead of taking the machine


def drafter(store: Store, tmp_path: Path) -> str:
    _, url = upload(store, drafter_dir(tmp_path))
    return url


def cli(*args: str, timeout: float = 120) -> Measured:
    return run_measured(
        [sys.executable, "-m", "dflash_cfg", *args],
        timeout=timeout,
        memory=GUARD,
        env={**os.environ, "NO_COLOR": "1"},
    )


def messages(result: Measured) -> list[str]:
    doc = json.loads(result.out)
    return [f["message"] for file in doc["files"] for f in file["findings"]] + list(doc.get("errors", []))


def test_a_header_answered_whole_is_refused_and_costs_no_more_than_the_range(
    store: Store, proxy: FaultProxy, tmp_path: Path
) -> None:
    url = drafter(store, tmp_path)
    # The shard's header read asks for 8 bytes: the store answers a megabyte more, then without end.
    proxy.faults, proxy.only_key = {"ignore-range"}, "model.safetensors"
    for endless in (False, True):
        proxy.endless = endless
        result = cli("check", url, "--format", "json")
        assert result.code == 1, result
        assert any("ignores Range" in m for m in messages(result)), result.out
        assert "internal error" not in result.err and "Traceback" not in result.err, result.err
        assert result.peak_mib < PEAK_MIB, (endless, result.peak_mib)


def test_a_config_answered_without_end_is_read_no_further_than_its_limit(
    store: Store, proxy: FaultProxy, tmp_path: Path
) -> None:
    url = drafter(store, tmp_path)
    proxy.faults, proxy.only_key, proxy.endless = {"ignore-range"}, "config.json", True
    result = cli("check", url)
    # What was read (the config's size limit, then no more) is not a drafter config: a finding, not a hang.
    assert result.code in (1, 2), result
    assert "internal error" not in result.err and "Traceback" not in result.err, result.err
    assert len(result.err.strip().splitlines()) <= 1, result.err
    assert result.peak_mib < PEAK_MIB, result.peak_mib


@pytest.mark.parametrize("key", ["config.json", "model.safetensors"])
def test_a_trickling_store_is_held_to_the_deadline(
    store: Store, proxy: FaultProxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    url = drafter(store, tmp_path)
    proxy.faults, proxy.only_key, proxy.trickle_delay = {"trickle"}, key, 0.5
    monkeypatch.setenv("DFLASH_CFG_REMOTE_DEADLINE", "2")
    result = cli("check", url, "--format", "json", timeout=90)
    assert result.seconds < 45, result  # the listing and the stat of config.json trickle too: 2 s each at most
    assert result.code in (1, 2), result
    said = result.err if result.code == 2 else " ".join(messages(result))
    assert "DFLASH_CFG_REMOTE_DEADLINE" in said, result
    assert len(result.err.strip().splitlines()) <= 1, result.err


def test_a_deadline_that_is_no_number_is_one_line(
    dflash: Callable[..., Result], store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = drafter(store, tmp_path)
    monkeypatch.setenv("DFLASH_CFG_REMOTE_DEADLINE", "soon")
    assert_one_line_error(dflash("check", url), contains=("DFLASH_CFG_REMOTE_DEADLINE='soon'",))

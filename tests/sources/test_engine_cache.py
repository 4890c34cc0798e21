"""preflight's cache of engine answers, without an engine: the key (real model directories) and the store (real
files under a cache dir of the test's own), corrupt and hostile entries included. The interpreter's survey and
its remembered copy: tests/sources/test_survey.py. End to end: tests/commands/test_preflight_engine_step.py (a
stand-in interpreter) and tests/engines/test_engine_cache.py (the pinned engines)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, vllm_record

from dflash_cfg.model import EngineRecord
from dflash_cfg.sources import engine_cache
from dflash_cfg.sources.adapters import Request, from_json, to_json
from dflash_cfg.sources.engine_cache import MAX_ENTRIES, EngineCache, key

DRAFTER = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"

# A record as the vLLM adapter writes it, for the upstream drafter.
RECORD: dict[str, Any] = vllm_record()


def record(**changes: Any) -> EngineRecord:
    data = copy.deepcopy(RECORD)
    data.update(changes)
    return from_json("vllm", "/venv/bin/python", data)


@pytest.fixture
def models(tmp_path: Path) -> tuple[Path, Path]:
    """Copies of the upstream drafter and its target, to change."""
    drafter, target = tmp_path / "drafter", tmp_path / "target"
    shutil.copytree(DRAFTER, drafter)
    shutil.copytree(TARGET, target)
    return drafter, target


def request(drafter: Path, target: Path, **settings: Any) -> Request:
    return Request(drafter=str(drafter), target=str(target), **{"num_speculative_tokens": 15, **settings})


# --- the key ------------------------------------------------------------------------------------------------


def test_the_same_launch_on_the_same_files_has_the_same_key(models: tuple[Path, Path]) -> None:
    drafter, target = models
    first = key("vllm", sys.executable, "install-1", request(drafter, target))
    assert first is not None and first == key("vllm", sys.executable, "install-1", request(drafter, target))
    (drafter / "config.json").touch()  # a new time, the same bytes
    assert key("vllm", sys.executable, "install-1", request(drafter, target)) == first


def test_every_input_of_the_answer_changes_the_key(models: tuple[Path, Path], tmp_path: Path) -> None:
    drafter, target = models
    base = key("vllm", sys.executable, "install-1", request(drafter, target), {})
    keys = {"base": base}
    keys["engine"] = key("sglang", sys.executable, "install-1", request(drafter, target), {})
    keys["installation"] = key("vllm", sys.executable, "install-2", request(drafter, target), {})
    keys["python"] = key("vllm", str(tmp_path / "python"), "install-1", request(drafter, target), {})
    launches: dict[str, dict[str, Any]] = {
        "tokens": {"num_speculative_tokens": 7},
        "tp": {"tensor_parallel_size": 2},
        "pp": {"pipeline_parallel_size": 2},
        "method": {"speculative_config": {"method": "dflash"}},
        "max_model_len": {"max_model_len": 4096},
    }
    for name, settings in launches.items():
        keys[name] = key("vllm", sys.executable, "install-1", request(drafter, target, **settings), {})
    keys["env"] = key(
        "vllm", sys.executable, "install-1", request(drafter, target), {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}
    )
    keys["hub"] = key("vllm", sys.executable, "install-1", request(drafter, target), {"HF_HUB_OFFLINE": "1"})
    data = (drafter / "config.json").read_bytes()
    (drafter / "config.json").write_bytes(data.replace(b"{", b"{ ", 1))  # the same JSON, other bytes
    keys["drafter bytes"] = key("vllm", sys.executable, "install-1", request(drafter, target), {})
    (drafter / "config.json").write_bytes(data)
    (target / "generation_config.json").write_text('{"temperature": 0.6}\n', encoding="utf-8")
    keys["target file added"] = key("vllm", sys.executable, "install-1", request(drafter, target), {})
    (target / "generation_config.json").write_text('{"temperature": 0.7}\n', encoding="utf-8")
    keys["target file changed"] = key("vllm", sys.executable, "install-1", request(drafter, target), {})
    assert all(k is not None for k in keys.values())
    assert len(set(keys.values())) == len(keys), keys
    (target / "generation_config.json").unlink()
    assert key("vllm", sys.executable, "install-1", request(drafter, target), {}) == base  # back as it was


def test_a_large_file_is_keyed_by_its_size_and_time(models: tuple[Path, Path]) -> None:
    drafter, target = models
    weights = drafter / "model.safetensors"
    weights.write_bytes(b"\0" * (engine_cache.SMALL_FILE + 1))
    before = key("vllm", sys.executable, "i", request(drafter, target), {})
    os.utime(weights, ns=(1, 1))
    assert key("vllm", sys.executable, "i", request(drafter, target), {}) != before


def test_variables_that_change_no_answer_are_not_in_the_key(models: tuple[Path, Path]) -> None:
    drafter, target = models
    base = key("vllm", sys.executable, "i", request(drafter, target), {"PATH": "/bin"})
    assert key("vllm", sys.executable, "i", request(drafter, target), {"PATH": "/usr/bin", "TERM": "x"}) == base
    assert key("vllm", sys.executable, "i", request(drafter, target), {"HF_TOKEN": "hf_secret"}) == base
    # The adapters always run with V2 (adapters.adapter_env): the caller's value changes nothing they see.
    assert key("vllm", sys.executable, "i", request(drafter, target), {"VLLM_USE_V2_MODEL_RUNNER": "0"}) == base


def test_a_directory_that_cannot_be_listed_has_no_key(models: tuple[Path, Path], tmp_path: Path) -> None:
    drafter, target = models
    assert key("vllm", sys.executable, "i", request(tmp_path / "nowhere", target), {}) is None
    assert key("vllm", sys.executable, "i", request(drafter, drafter / "config.json"), {}) is None


def test_a_fifo_in_a_model_directory_is_stated_not_read(models: tuple[Path, Path]) -> None:
    drafter, target = models
    os.mkfifo(drafter / "tokenizer.json")  # reading it would block
    assert key("vllm", sys.executable, "i", request(drafter, target), {}) is not None


# --- the store ----------------------------------------------------------------------------------------------


def test_an_answer_reads_back_as_it_was_stored(tmp_path: Path) -> None:
    store = EngineCache(tmp_path / "cache")
    answer = record()
    store.put("k1", answer)
    assert store.get("k1", "vllm") == answer
    assert store.get("k2", "vllm") is None and store.get("k1", "sglang") is None
    refusal = record(reads=None, refused={"type": "IndexError", "message": "list index out of range", "where": "x:1"})
    store.put("k3", refusal)
    assert store.get("k3", "vllm") == refusal
    assert to_json(answer) == RECORD


def test_a_failure_is_never_stored(tmp_path: Path) -> None:
    store = EngineCache(tmp_path / "cache")
    store.put("k", record(reads=None, failed="the adapter gave no record within 120 s"))
    assert store.get("k", "vllm") is None and not (tmp_path / "cache").exists()


def test_no_root_or_an_unwritable_one_keeps_nothing_and_says_nothing(tmp_path: Path) -> None:
    EngineCache(None).put("k", record())
    assert EngineCache(None).get("k", "vllm") is None
    (tmp_path / "file").write_text("not a dir", encoding="utf-8")
    store = EngineCache(tmp_path / "file")
    store.put("k", record())
    assert store.get("k", "vllm") is None


def entry(store: EngineCache, key: str) -> Path:
    path = store.path(key)
    assert path is not None
    return path


HOSTILE: dict[str, Any] = {
    "not json": b"{",
    "truncated": None,  # the stored entry cut in half
    "not an object": b"[]",
    "another key": {"key": "other"},
    "another engine": {"engine": "sglang"},
    "another format": {"format": 999},
    "a bool for the format": {"format": True},
    "an extra field": {"extra": 1},
    "a failed record": {"record": {**RECORD, "failed": "x"}},
    "unhashable layer types": {"record": {**RECORD, "reads": {**RECORD["reads"], "layer_types": [{}]}}},
    "taps that are no numbers": {"record": {**RECORD, "reads": {**RECORD["reads"], "target_layer_ids": ["a"]}}},
    "a read missing": {
        "record": {**RECORD, "reads": {k: v for k, v in RECORD["reads"].items() if k != "mask_token_id"}}
    },
    "a refusal without a message": {"record": {**RECORD, "reads": None, "refused": {"type": "X", "where": None}}},
    "nested too deeply": b'{"record": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "an integer too long": b'{"format": 1' + b"0" * 5000 + b"}",
    "not UTF-8": b'{"format": "\xff"}',
    "too large": b" " * (engine_cache.MAX_ENTRY_BYTES + 1) + b"{}",
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_corrupt_or_hostile_entry_is_a_miss(tmp_path: Path, case: str) -> None:
    store = EngineCache(tmp_path / "cache")
    store.put("k", record())
    path = entry(store, "k")
    good = json.loads(path.read_bytes())
    change = HOSTILE[case]
    if change is None:
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif isinstance(change, bytes):
        path.write_bytes(change)
    else:
        path.write_text(json.dumps({**good, **change}), encoding="utf-8")
    assert store.get("k", "vllm") is None
    store.put("k", record())  # the next answer replaces it
    assert store.get("k", "vllm") == record()


def test_an_entry_that_is_a_directory_or_a_fifo_is_a_miss(tmp_path: Path) -> None:
    store = EngineCache(tmp_path / "cache")
    store.put("k", record())
    entry(store, "d").mkdir()
    os.mkfifo(entry(store, "f"))
    assert store.get("d", "vllm") is None and store.get("f", "vllm") is None


def test_the_newest_entries_are_kept(tmp_path: Path) -> None:
    store = EngineCache(tmp_path / "cache")
    for i in range(MAX_ENTRIES + 3):
        store.put(f"k{i}", record())
        os.utime(entry(store, f"k{i}"), ns=(i * 10**9, i * 10**9))  # written in order, one second apart
    kept = sorted(p.name for p in (tmp_path / "cache" / "engine").iterdir())
    assert len(kept) == MAX_ENTRIES
    assert store.get("k0", "vllm") is None and store.get(f"k{MAX_ENTRIES + 2}", "vllm") == record()

"""Integers of thousands of digits in every integer field of a real drafter config (issue 32, item 4): each
prints (Python refuses int -> str past 4,300 digits), but what the rules compute from two of them (a product,
a byte count, a float) does not. Every rule that reads the values (DF5xx with weights beside the file or LFS
pointers in their place, the target's DF4xx, preflight's launch rules) must answer with findings, never an
internal error. The installed command's own run of the worst cases: tests/test_installed.py."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from checkpoints import lfs_pointer, save, small_shapes
from helpers import FIXTURES, Result

Run = Callable[..., Result]
HUGE = int("9" * 2201)
BASE: dict[str, Any] = json.loads((FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json").read_bytes())
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"


def _integer_fields(d: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for k, v in d.items():
        if isinstance(v, int) and not isinstance(v, bool):
            out.append(f"{prefix}/{k}")
        elif isinstance(v, dict):
            out.extend(_integer_fields(v, f"{prefix}/{k}"))
    return out


FIELDS = [*_integer_fields(BASE), "/target_hidden_size", "/v_head_dim"]
PAIRS: list[tuple[str, ...]] = [
    ("/head_dim", "/num_attention_heads"),
    ("/num_key_value_heads", "/head_dim"),
    ("/hidden_size", "/intermediate_size"),
]


def _with(pointers: tuple[str, ...]) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    for pointer in pointers:
        *parents, last = pointer.strip("/").split("/")
        node = data
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = HUGE
    return data


CASES: list[tuple[str, ...]] = [(f,) for f in FIELDS] + PAIRS


@pytest.mark.parametrize("weights", ["safetensors", "lfs-pointer"])
@pytest.mark.parametrize("pointers", CASES, ids=lambda p: "+".join(p))
def test_check_and_preflight_answer(dflash: Run, tmp_path: Path, pointers: tuple[str, ...], weights: str) -> None:
    folder = tmp_path / "Qwen3.6-27B-DFlash"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(_with(pointers), indent=2), encoding="utf-8")
    if weights == "safetensors":
        save(folder / "model.safetensors", small_shapes())
    else:
        (folder / "model-00001-of-00001.safetensors").write_bytes(lfs_pointer(10**9))
    checked = dflash("check", folder, "--target", TARGET, "--format", "json")
    assert checked.code in (0, 1) and "internal error" not in checked.err, checked.err
    assert checked.json()["files"][0]["findings"]
    spec = json.dumps({"method": "dflash", "model": str(folder), "num_speculative_tokens": 15})
    launch = ("vllm", "serve", str(TARGET), "--max-model-len", "100000", "--speculative-config", spec)
    gate = dflash("preflight", "--no-engine-check", "--", *launch)
    assert gate.code in (0, 1) and "internal error" not in gate.err, gate.err

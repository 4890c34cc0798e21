"""dflash_cfg.sources.views: the engine's config class through the installed transformers, as the CLI runs it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from helpers import FIXTURES, REAL_DATA, Result, mutated, write_config


def test_a_transformers_warning_is_reported_again_for_the_next_file(
    dflash: Callable[..., Result], tmp_path: Path
) -> None:
    # transformers' warning_once is an lru_cache: a second file with the same warning must still get DF303
    # (--no-cache: both views come from transformers, not from the cache of views).
    data = mutated(lambda d: d.__setitem__("mask_token_id", REAL_DATA["vocab_size"]))
    first, second = write_config(tmp_path / "a", data), write_config(tmp_path / "b", data)

    def df303(path: Path) -> list[str]:
        report = json.loads(dflash("check", path, "--format", "json", "--no-cache").out)
        return [f["message"] for f in report["files"][0]["findings"] if f["rule"] == "DF303"]

    assert df303(first) == df303(second) != []


def test_a_config_class_that_gives_no_one_value_of_a_field_is_no_crash(
    dflash: Callable[..., Result], tmp_path: Path
) -> None:
    # Gemma 4's text config (model_type gemma4_text) raises on a global read of a per-layer attribute such as
    # head_dim: the view leaves the field out, so check reports the file (DF131's warning for SGLang: only vLLM
    # registers the DSpark class) and DF302 does not say that head_dim "becomes null".
    data = json.loads((FIXTURES / "upstream/z-lab__gemma-4-26B-A4B-it-DFlash/config.json").read_text(encoding="utf-8"))
    data.update(architectures=["Gemma4DSparkModel"], model_type="gemma4_text", markov_rank=64)
    result = dflash("check", write_config(tmp_path / "g", data), "--format", "json", "--no-cache")
    assert result.code == 0, result.err
    assert "internal error" not in result.err
    rules = {(f["rule"], f["severity"], f["pointer"]) for f in json.loads(result.out)["files"][0]["findings"]}
    assert ("DF131", "warning", "/architectures") in rules
    assert not any(rule == "DF302" and where == "/head_dim" for rule, _, where in rules)

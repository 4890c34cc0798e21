"""dflash_cfg.sources.views: the engine's config class through the installed transformers, as the CLI runs it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from helpers import REAL_DATA, Result, mutated, write_config


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

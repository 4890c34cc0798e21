"""The keys `--speculative-config` may hold (dflash_cfg/lint/speculative_fields.py, DF812's table) are the
installed vLLM release's, read from its SpeculativeConfig; and a key outside them is what that release refuses."""

from __future__ import annotations

from pathlib import Path

from tools.engines import speculative_fields


def test_the_table_holds_the_installed_release(engine_python: Path) -> None:
    release, fields = speculative_fields.installed(engine_python)
    assert speculative_fields.table().get(release) == fields, "stale for this release: run ./dev engines --cite"
    assert {"method", "model", "num_speculative_tokens"} <= set(fields)

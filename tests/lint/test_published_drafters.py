"""The severity policy on real files: a rule never errors on a published drafter, alone or checked against
the target it was trained for (every drafter config in fixtures/upstream, through the real CLI)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, ROOT, Result

UPSTREAM = FIXTURES / "upstream"


def real_drafter_files() -> list[Path]:
    """Every drafter config in fixtures/upstream, at any depth (MiMo's sits in dflash/)."""
    return sorted(UPSTREAM.rglob("config*.json"))


def test_real_drafter_files_cover_fixtures_upstream() -> None:
    names = {p.relative_to(UPSTREAM).as_posix() for p in real_drafter_files()}
    assert {
        "XiaomiMiMo__MiMo-V2.5-Pro-FP4-DFlash/dflash/config.json",
        "RedHatAI__DeepSeek-V4-Flash-speculator.dflash/config.json",
        "RedHatAI__DeepSeek-V4-Flash-speculator.dflash/config.partial.json",
        "poolside__Laguna-XS-2.1-DFlash/config.json",
        "z-lab__Kimi-K2.5-DFlash/config.partial.json",
        "z-lab__Qwen3.6-35B-A3B-DFlash/config.partial.json",
        "z-lab__gpt-oss-20b-DFlash/config.partial.json",
        "z-lab__Muse-Glimmer-30B-DFlash2/config.json",
        "z-lab__Qwen3-4B-DFlash-b16/config.json",
        "z-lab__Qwen3.5-4B-DFlash/config.json",
        "z-lab__Qwen3.6-27B-DFlash/config.json",
        "z-lab__Qwen3.6-27B-DFlash/config.partial.json",
        "z-lab__Qwen3.8-27B-DFlash2/config.json",
        "z-lab__gemma-4-26B-A4B-it-DFlash/config.json",
        "z-lab__gemma-4-31B-it-DFlash/config.partial.json",
    } <= names


# config.partial.json (PROVENANCE.md level D) holds only the keys a source quotes: its missing keys are
# unknown, not absent, so an error about a key the partial file lacks says nothing about the published file.
def about_a_missing_key(pointer: str, data: dict[str, Any]) -> bool:
    node: Any = data
    for part in [p for p in pointer.split("/") if p]:
        if not isinstance(node, dict) or part not in node:
            return True
        node = node[part]
    return False


def errors_of(path: Path, result: Result) -> list[dict[str, Any]]:
    (report,) = result.json()["files"]
    assert report["kind"] in ("dflash", "dflash2", "speculators"), f"not linted as a drafter: {report}"
    data = json.loads(path.read_bytes())
    return [
        f
        for f in report["findings"]
        if f["severity"] == "error"
        and not (path.name == "config.partial.json" and about_a_missing_key(f["pointer"], data))
    ]


@pytest.mark.parametrize("path", real_drafter_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_real_drafter_config_has_no_error(path: Path, dflash: Callable[..., Result]) -> None:
    assert errors_of(path, dflash("check", path, "--format", "json")) == []


# Each real drafter with the target it was trained for, where fixtures/targets has that target's config.
OWN_TARGET = {
    "z-lab__Qwen3-4B-DFlash-b16/config.json": "Qwen__Qwen3-4B",
    "z-lab__Qwen3.6-27B-DFlash/config.json": "Qwen__Qwen3.6-27B",
    "z-lab__Qwen3.6-27B-DFlash/config.partial.json": "Qwen__Qwen3.6-27B",
    "z-lab__gpt-oss-20b-DFlash/config.partial.json": "openai__gpt-oss-20b",
    "z-lab__gemma-4-31B-it-DFlash/config.partial.json": "google__gemma-4-31B-it",
    "z-lab__Kimi-K2.5-DFlash/config.partial.json": "moonshotai__Kimi-K2.5",
    "RedHatAI__DeepSeek-V4-Flash-speculator.dflash/config.partial.json": "deepseek-ai__DeepSeek-V4-Flash",
    "RedHatAI__DeepSeek-V4-Flash-speculator.dflash/config.json": "deepseek-ai__DeepSeek-V4-Flash",
    "XiaomiMiMo__MiMo-V2.5-Pro-FP4-DFlash/dflash/config.json": "XiaomiMiMo__MiMo-V2.5-Pro",
}


@pytest.mark.parametrize("name", sorted(OWN_TARGET))
def test_real_drafter_config_has_no_error_with_its_target(name: str, dflash: Callable[..., Result]) -> None:
    path = UPSTREAM / name
    result = dflash("check", path, "--target", FIXTURES / "targets" / OWN_TARGET[name], "--format", "json")
    assert errors_of(path, result) == [], name

"""The drafters the engine suite runs: every drafter config in fixtures/ with its target where fixtures/targets/
has one, and the defect cases whose engine behaviour the suite pins, as named adapter requests."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from helpers import FIXTURES

from dflash_cfg.model import EngineRecord
from dflash_cfg.sources import adapters
from dflash_cfg.sources.adapters import Request

TARGETS = FIXTURES / "targets"
# Each drafter config under fixtures/ (hub/ and hf-cache/ are copies of these) -> its target, or None.
FIXTURE_DRAFTERS: dict[str, str | None] = {
    "incident/Qwen3.6-27B-DFlash/config.json": "Qwen__Qwen3.6-27B",
    "upstream/RedHatAI__DeepSeek-V4-Flash-speculator.dflash/config.json": "deepseek-ai__DeepSeek-V4-Flash",
    "upstream/RedHatAI__DeepSeek-V4-Flash-speculator.dflash/config.partial.json": "deepseek-ai__DeepSeek-V4-Flash",
    "upstream/XiaomiMiMo__MiMo-V2.5-Pro-FP4-DFlash/dflash/config.json": "XiaomiMiMo__MiMo-V2.5-Pro",
    "upstream/poolside__Laguna-XS-2.1-DFlash/config.json": None,
    "upstream/z-lab__Kimi-K2.5-DFlash/config.partial.json": "moonshotai__Kimi-K2.5",
    "upstream/z-lab__Muse-Glimmer-30B-DFlash2/config.json": None,
    "upstream/z-lab__Qwen3-4B-DFlash-b16/config.json": "Qwen__Qwen3-4B",
    "upstream/z-lab__Qwen3.5-4B-DFlash/config.json": None,
    "upstream/z-lab__Qwen3.6-27B-DFlash/config.json": "Qwen__Qwen3.6-27B",
    "upstream/z-lab__Qwen3.6-27B-DFlash/config.partial.json": "Qwen__Qwen3.6-27B",
    "upstream/z-lab__Qwen3.6-35B-A3B-DFlash/config.partial.json": None,
    "upstream/z-lab__Qwen3.8-27B-DFlash2/config.json": None,
    "upstream/z-lab__gemma-4-26B-A4B-it-DFlash/config.json": None,
    "upstream/z-lab__gemma-4-31B-it-DFlash/config.partial.json": "google__gemma-4-31B-it",
    "upstream/z-lab__gpt-oss-20b-DFlash/config.partial.json": "openai__gpt-oss-20b",
}

UPSTREAM_36 = "upstream/z-lab__Qwen3.6-27B-DFlash/config.json"
QWEN36 = "Qwen__Qwen3.6-27B"


def load(rel: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / rel).read_text(encoding="utf-8"))
    return data


def write_drafter(folder: Path, data: Mapping[str, Any]) -> str:
    """`data` as folder/config.json (engines read a directory's config.json): the request's drafter."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return str(folder)


def changed(rel: str, change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    data = copy.deepcopy(load(rel))
    change(data)
    return data


def fixture_requests(root: Path) -> dict[str, Request]:
    """Every fixture drafter as a request (a partial file is copied in as config.json), keyed by its path."""
    requests = {}
    for index, (rel, target) in enumerate(sorted(FIXTURE_DRAFTERS.items())):
        folder = (FIXTURES / rel).parent
        if (FIXTURES / rel).name != "config.json":
            folder = Path(write_drafter(root / f"fixture-{index}", load(rel)))
        requests[rel] = Request(drafter=str(folder), target=str(TARGETS / target) if target else None)
    return requests


def run_all(python: Path, requests: Mapping[str, Request]) -> dict[tuple[str, str], EngineRecord]:
    """Every request through every engine: one adapter process per engine for the whole batch, side by side."""
    names = list(requests)
    batch = [requests[n] for n in names]
    with ThreadPoolExecutor(len(adapters.ENGINES)) as pool:
        futures = {e: pool.submit(adapters.run, python, e, batch) for e in adapters.ENGINES}
        return {(e, n): r for e, f in futures.items() for n, r in zip(names, f.result(), strict=True)}

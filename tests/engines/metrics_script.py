"""Run by the pinned engine venv's python: the /metrics text an engine's own metrics code writes for the
incident's acceptance numbers, one file per scrape, into the directory given as argv[2].

    python metrics_script.py vllm OUT   # vLLM's SpecDecodingProm fed SpecDecodingStats
    python metrics_script.py sglang OUT TARGET_DIR  # SGLang's SchedulerMetricsCollector fed SchedulerStats

The process/platform/gc collectors of prometheus_client are unregistered so the text depends on the numbers
only. Not imported by the suite: the engines live in their own interpreter.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

MODEL = "Qwen/Qwen3.6-27B"
SPEC_TOKENS = 15  # DFlash block_size 16: 15 drafted tokens per step

# The incident: ~1.1 % of draft tokens accepted. 1000 drafts of 15 tokens; 150 accept the first token, 15 of
# them the second too: 165 / 15000 = 1.1 %, mean acceptance length 1 + 165 / 1000 = 1.165.
INCIDENT = [2] * 15 + [1] * 135 + [0] * 850
# After the real values: mean acceptance length 2.8 (1800 accepted over 1000 drafts, 12 %).
HEALTHY = [5] * 100 + [3] * 200 + [2] * 200 + [1] * 300 + [0] * 200


def _clean_registry() -> Any:
    from prometheus_client import REGISTRY

    for collector in list(REGISTRY._collector_to_names):
        REGISTRY.unregister(collector)
    return REGISTRY


def vllm(out: Path) -> None:
    from prometheus_client import generate_latest
    from vllm.v1.spec_decode.metrics import SpecDecodingProm, SpecDecodingStats

    def scrape(name: str, *phases: list[int]) -> None:
        registry = _clean_registry()
        prom = SpecDecodingProm(
            SimpleNamespace(num_speculative_tokens=SPEC_TOKENS), ["model_name", "engine"], {0: [MODEL, "0"]}
        )
        for phase in phases:
            stats = SpecDecodingStats.new(SPEC_TOKENS)
            for accepted in phase:
                stats.observe_draft(SPEC_TOKENS, accepted)
            prom.observe(stats, engine_idx=0)
        (out / name).write_bytes(generate_latest(registry))

    scrape("vllm-incident.prom", INCIDENT)
    scrape("vllm-healthy.prom", HEALTHY)
    # The same server later: healthy first, then collapsed (a drafter swapped for a stale one). Over the
    # counters' lifetime the mean still looks fine (1.98); only the window between scrapes shows the collapse.
    scrape("vllm-healthy-then-incident.prom", HEALTHY, INCIDENT)


def sglang(out: Path, target: str) -> None:
    from prometheus_client import generate_latest
    from sglang.srt import runtime_context
    from sglang.srt.observability.metrics_collector import SchedulerMetricsCollector, SchedulerStats
    from sglang.srt.server_args import ServerArgs

    args = ServerArgs(model_path=target, device="cpu", enable_metrics=True, served_model_name=MODEL)
    runtime_context._CONTEXT.set_server_args(args)  # what the scheduler process publishes before its collector
    labels = {"model_name": MODEL, "engine_type": "unified", "tp_rank": 0, "pp_rank": 0, "moe_ep_rank": 0}
    registry = _clean_registry()
    collector = SchedulerMetricsCollector(labels=labels, server_args=args)
    for name, length, rate in (("sglang-incident.prom", 1.165, 0.011), ("sglang-healthy.prom", 2.8, 0.12)):
        stats = SchedulerStats()
        stats.spec_accept_length, stats.spec_accept_rate = length, rate
        collector.log_stats(stats)
        (out / name).write_bytes(generate_latest(registry))


if __name__ == "__main__":
    if sys.argv[1] == "vllm":
        vllm(Path(sys.argv[2]))
    else:
        sglang(Path(sys.argv[2]), sys.argv[3])

"""The verdict on a measured acceptance (sources/metrics.py measures it): collapse below the model's
threshold, healthy at or above it, idle when nothing was scored."""

from __future__ import annotations

from dflash_cfg.lint import acceptance
from dflash_cfg.model import Acceptance

# The incident's healthy lifetime (fixtures/metrics/vllm-healthy.prom): 1800 accepted over 1000 drafts.
HEALTHY = Acceptance(
    server="vllm",
    model_name="Qwen/Qwen3.6-27B",
    engine="0",
    acceptance_rate=1800 / 15000,
    mean_acceptance_length=2.8,
    per_position=None,
    drafts=1000,
    draft_tokens=15000,
    accepted_tokens=1800,
)


def test_a_window_with_nothing_scored_is_idle() -> None:
    idle = Acceptance(
        server="vllm",
        model_name="Qwen/Qwen3.6-27B",
        engine="0",
        acceptance_rate=None,
        mean_acceptance_length=None,
        per_position=None,
        drafts=0,
        draft_tokens=0,
        accepted_tokens=0,
    )
    [judged] = acceptance.judge([idle], {}, 1.5)
    assert judged.verdict == "idle"


def test_thresholds_per_model() -> None:
    assert [j.verdict for j in acceptance.judge([HEALTHY], {}, 1.5)] == ["healthy"]
    assert [j.verdict for j in acceptance.judge([HEALTHY], {"Qwen/Qwen3.6-27B": 3.0}, 1.5)] == ["collapse"]
    assert [j.verdict for j in acceptance.judge([HEALTHY], {"other": 3.0}, 1.5)] == ["healthy"]
    [judged] = acceptance.judge([HEALTHY], {}, 2.8)
    assert (judged.verdict, judged.threshold) == ("healthy", 2.8)  # at the threshold is healthy

"""The arithmetic of acceptance on the engines' own text (fixtures/metrics): vLLM's formulas, the window
between two scrapes, SGLang's idle gauge, and text that is not what it claims."""

from __future__ import annotations

import pytest
from helpers import FIXTURES

from dflash_cfg.errors import ProbeError
from dflash_cfg.sources import metrics

METRICS = FIXTURES / "metrics"


def scrape(name: str) -> metrics.Scrape:
    return metrics.parse((METRICS / name).read_text(encoding="utf-8"))


def test_vllm_formulas_over_the_lifetime() -> None:
    [a] = metrics.acceptance(scrape("vllm-healthy-then-incident.prom"))
    assert (a.server, a.model_name, a.engine) == ("vllm", "Qwen/Qwen3.6-27B", "0")
    assert (a.drafts, a.draft_tokens, a.accepted_tokens) == (2000, 30000, 1965)
    assert a.acceptance_rate == pytest.approx(1965 / 30000)
    assert a.mean_acceptance_length == pytest.approx(1 + 1965 / 2000)
    assert a.per_position is not None and len(a.per_position) == 15
    assert a.per_position[0] == pytest.approx((800 + 150) / 2000)


def test_the_window_is_the_difference() -> None:
    [a] = metrics.acceptance(metrics.window(scrape("vllm-healthy.prom"), scrape("vllm-healthy-then-incident.prom")))
    assert (a.drafts, a.draft_tokens, a.accepted_tokens) == (1000, 15000, 165)
    assert a.per_position is not None and a.per_position[:2] == pytest.approx((0.15, 0.015))


def test_an_empty_window_scores_nothing_and_a_smaller_counter_is_a_restart() -> None:
    [a] = metrics.acceptance(metrics.window(scrape("vllm-healthy.prom"), scrape("vllm-healthy.prom")))
    assert a.mean_acceptance_length is None
    with pytest.raises(ProbeError, match="went backwards"):
        metrics.window(scrape("vllm-healthy-then-incident.prom"), scrape("vllm-healthy.prom"))


def test_sglang_zero_means_off() -> None:
    text = (METRICS / "sglang-healthy.prom").read_text(encoding="utf-8").replace("} 2.8", "} 0.0")
    [a] = metrics.acceptance(metrics.parse(text))
    assert a.server == "sglang" and a.mean_acceptance_length is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<html></html>", "HTML"),
        ("up{ 1\n", "not Prometheus text"),
        ("", "no speculative-decoding metrics"),
        ('vllm:spec_decode_num_accepted_tokens_per_pos_total{position="x"} 1\n', "not Prometheus text"),
    ],
)
def test_what_is_refused(text: str, message: str) -> None:
    with pytest.raises(ProbeError, match=message):
        metrics.parse(text)

"""probe's values: acceptance read from a serving engine's metrics, judged against a threshold, per scrape or
window, and the check of a collapsed model's drafter."""

from __future__ import annotations

from dataclasses import dataclass

from dflash_cfg.model.engines import Launched
from dflash_cfg.model.findings import Report


@dataclass(frozen=True, kw_only=True)
class Acceptance:
    """How one engine serving one model accepted drafts, over a counters' lifetime or a window between two
    scrapes. `server`: "vllm" or "sglang"; `engine`: the engine's own label (vLLM's engine index, SGLang's
    dp_rank, "0" when there is one). `drafts` is None for SGLang, which exports gauges only; a record with
    no draft scored (`mean_acceptance_length` None) is idle: no traffic to judge. `labels`: the series'
    other labels, sorted (a federating endpoint's `instance`, SGLang's `tp_rank`): two records of one model
    and engine differ there."""

    server: Launched
    model_name: str
    engine: str
    acceptance_rate: float | None
    mean_acceptance_length: float | None
    per_position: tuple[float, ...] | None = None
    drafts: float | None = None
    draft_tokens: float | None = None
    accepted_tokens: float | None = None
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Judged:
    """An `Acceptance` with the threshold that applied to it and the verdict: "collapse", "healthy" or
    "idle" (nothing scored in the window)."""

    acceptance: Acceptance
    threshold: float
    verdict: str


@dataclass(frozen=True)
class Window:
    """One judged scrape (`interval` None: the counters' lifetime) or window between two scrapes."""

    source: str
    interval: float | None
    judged: tuple[Judged, ...]

    @property
    def collapsed(self) -> tuple[Judged, ...]:
        return tuple(j for j in self.judged if j.verdict == "collapse")

    @property
    def idle(self) -> bool:
        return all(j.verdict == "idle" for j in self.judged)


@dataclass(frozen=True)
class Diagnosis:
    """The collapsed model's drafter, its check, and what to try first."""

    model_name: str
    drafter: str
    upstream: str | None
    report: Report


@dataclass(frozen=True, kw_only=True)
class RuleSettings:
    """What `probe --emit-rules` writes Prometheus rules for: probe's window (`--interval`, whole seconds: rate()'s
    range) and thresholds (`default`, and `per_model` by served model name, as the project config sets them), a
    collapse held `hold` seconds before the alert fires; the engines' metric names as probe reads them (vLLM's
    counters: drafts, draft tokens, accepted tokens, without `_total`; SGLang's gauges: length, rate)."""

    window: int
    hold: int
    default: float
    per_model: tuple[tuple[str, float], ...]
    vllm_counters: tuple[str, str, str]
    sglang_gauges: tuple[str, str]

"""An engine's speculative-decoding metrics: its Prometheus text (a /metrics scrape, sources/scrape.py reads
it) -> the series it holds, the window between two scrapes, and the acceptance they measure per engine and
model. Pure: text in, values out; the verdict on the acceptance is lint/acceptance.py's.

The names and their meaning are the engines' own (read in their metrics code, not in docs):
- vLLM (the pinned release, dflash_cfg.pinned; vllm/v1/spec_decode/metrics.py:SpecDecodingProm): counters
  labelled `model_name` and `engine` (the engine index): `vllm:spec_decode_num_drafts`, `…_num_draft_tokens`,
  `…_num_accepted_tokens`, and `…_num_accepted_tokens_per_pos` with a `position` label. Acceptance rate =
  accepted / draft tokens; mean acceptance length = 1 + accepted / drafts ("conventionally including the bonus
  token"); position i's rate = accepted at i / drafts.
- SGLang (the pinned release; sglang/srt/observability/metrics_collector.py:SchedulerMetricsCollector): gauges
  `sglang:spec_accept_length` (accepted drafts + bonus token per forward) and `sglang:spec_accept_rate`,
  set at each decode log interval ("mostrecent"): already a window, 0 when speculative decoding is off.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from dflash_cfg.errors import NotReady, ProbeError
from dflash_cfg.model import Acceptance, Launched

_VLLM = "vllm:spec_decode_"
_DRAFTS, _DRAFT_TOKENS, _ACCEPTED, _PER_POS = (
    f"{_VLLM}num_drafts",
    f"{_VLLM}num_draft_tokens",
    f"{_VLLM}num_accepted_tokens",
    f"{_VLLM}num_accepted_tokens_per_pos",
)
_SGLANG_LENGTH, _SGLANG_RATE = "sglang:spec_accept_length", "sglang:spec_accept_rate"
# The names as probe reads them, for the Prometheus rules that judge as probe does (`probe --emit-rules`).
VLLM_COUNTERS = (_DRAFTS, _DRAFT_TOKENS, _ACCEPTED)
SGLANG_GAUGES = (_SGLANG_LENGTH, _SGLANG_RATE)

_MAX_POSITIONS = 1024
Labels = tuple[tuple[str, str], ...]  # a series' other labels, sorted: a federation's `instance`, SGLang's tp_rank
Key = tuple[Launched, str, str, Labels]  # (server, model_name, engine, the other labels)


@dataclass(frozen=True)
class Counters:
    """vLLM's four counters for one series (model_name, engine and any other labels), as scraped."""

    drafts: float = 0.0
    draft_tokens: float = 0.0
    accepted: float = 0.0
    per_position: tuple[float, ...] = ()


@dataclass(frozen=True)
class Scrape:
    """The speculative-decoding series of one scrape: vLLM's counters and SGLang's (length, rate) gauges."""

    counters: Mapping[Key, Counters]
    gauges: Mapping[Key, tuple[float, float]]


def _key(server: Launched, labels: Mapping[str, str], engine_label: str) -> Key:
    # Every label keeps a series apart: two engines behind one federating endpoint differ by `instance`
    # only, and one kept over the other would hide a collapse.
    rest = tuple(sorted((k, v) for k, v in labels.items() if k not in ("model_name", engine_label, "position")))
    return server, labels.get("model_name", ""), labels.get(engine_label, "0"), rest


def parse(text: str) -> Scrape:
    """The speculative-decoding series in Prometheus text. ProbeError when it is not Prometheus text, holds
    none of them, holds one series twice (two scrapes in one file: which is now?) or a value that is not a
    number probe can judge."""
    if text.lstrip().startswith("<"):  # the parser would read `<html>` as a sample name; say what it is
        raise ProbeError("the answer is HTML, not Prometheus text (is this the engine's /metrics endpoint?)")
    values: dict[Key, dict[str, float]] = {}
    positions: dict[Key, dict[int, float]] = {}
    gauges: dict[Key, dict[str, float]] = {}
    seen: set[tuple[str, Labels]] = set()
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                name, labels, value = sample.name, sample.labels, float(sample.value)
                if name.startswith(_VLLM) and name.endswith("_total"):
                    key = _key("vllm", labels, "engine")
                    base = name.removesuffix("_total")
                    if base == _PER_POS:
                        positions.setdefault(key, {})[_position(labels.get("position"))] = value
                    elif base in (_DRAFTS, _DRAFT_TOKENS, _ACCEPTED):
                        values.setdefault(key, {})[base] = value
                    else:
                        continue
                elif name in (_SGLANG_LENGTH, _SGLANG_RATE):
                    key = _key("sglang", labels, "dp_rank")
                    if not math.isfinite(value):  # SGLang divides by its step count: NaN is "no steps", not 0
                        raise ProbeError(
                            f"{name} of {key[1] or 'the model'} (dp_rank {key[2]}) is {value}: "
                            "not a number probe can judge"
                        )
                    gauges.setdefault(key, {})[name] = value
                else:
                    continue
                series = (name, tuple(sorted(labels.items())))
                if series in seen:
                    raise ProbeError(
                        f"the scrape holds {name}{{{_shown(series[1])}}} twice (two scrapes in one file?): "
                        "which one is now cannot be told"
                    )
                seen.add(series)
    except (ValueError, TypeError, IndexError) as exc:  # what prometheus_client's parser raises on bad text
        raise ProbeError(f"not Prometheus text ({' '.join(str(exc).split())[:120]})") from None
    counters = {
        key: Counters(
            v.get(_DRAFTS, 0.0),
            v.get(_DRAFT_TOKENS, 0.0),
            v.get(_ACCEPTED, 0.0),
            _per_position(positions.get(key, {})),
        )
        for key, v in values.items()
    }
    found = {k: (g.get(_SGLANG_LENGTH, 0.0), g.get(_SGLANG_RATE, 0.0)) for k, g in gauges.items()}
    if not counters and not found:  # vLLM registers them once the drafter is loaded
        raise NotReady(
            "no speculative-decoding metrics there (vllm:spec_decode_* or sglang:spec_accept_*): "
            "is speculative decoding on, and is this the engine's /metrics?"
        )
    for value in (x for c in counters.values() for x in (c.drafts, c.draft_tokens, c.accepted, *c.per_position)):
        if not math.isfinite(value) or value < 0:
            raise ProbeError(f"a speculative-decoding counter is {value}: not a counter")
    return Scrape(counters, found)


def _shown(labels: Labels) -> str:
    return ",".join(f'{k}="{v}"' for k, v in labels)[:200]


def _per_position(found: Mapping[int, float]) -> tuple[float, ...]:
    """Positions 0..max; one the scrape lacks counts 0 (vLLM exports them all, a relabelling proxy may not)."""
    return tuple(found.get(i, 0.0) for i in range(max(found) + 1)) if found else ()


def _position(raw: str | None) -> int:
    # A draft is at most a few dozen tokens; a bigger position is not vLLM's (and would size a tuple).
    if raw is None or not raw.isascii() or not raw.isdigit() or int(raw) >= _MAX_POSITIONS:
        raise ValueError(f"position label {raw!r} is not a draft position")
    return int(raw)


def window(before: Scrape, after: Scrape) -> Scrape:
    """What happened between two scrapes: the counters' difference (a series new in `after` counts from 0),
    SGLang's gauges as `after` has them. ProbeError when a counter went backwards: the engine restarted."""
    diffs = {}
    for key, now in after.counters.items():
        was = before.counters.get(key, Counters())
        pairs = [(now.drafts, was.drafts), (now.draft_tokens, was.draft_tokens), (now.accepted, was.accepted)]
        pairs += zip(now.per_position, was.per_position, strict=False)  # a new position counts from 0
        if any(n < w for n, w in pairs):
            raise ProbeError(
                f"the counters of {key[1] or 'the model'} (engine {key[2]}) went backwards between scrapes: "
                "the engine restarted; probe again"
            )
        per = tuple(
            n - (was.per_position[i] if i < len(was.per_position) else 0.0) for i, n in enumerate(now.per_position)
        )
        diffs[key] = Counters(
            now.drafts - was.drafts, now.draft_tokens - was.draft_tokens, now.accepted - was.accepted, per
        )
    return Scrape(diffs, after.gauges)


def acceptance(scrape: Scrape) -> tuple[Acceptance, ...]:
    """One record per engine and model, in a stable order."""
    records = [_vllm(key, c) for key, c in scrape.counters.items()]
    records += [_sglang(key, length, rate) for key, (length, rate) in scrape.gauges.items()]
    return tuple(sorted(records, key=lambda a: (a.server, a.model_name, a.engine, a.labels)))


def _vllm(key: Key, c: Counters) -> Acceptance:
    server, model, engine, labels = key
    if c.drafts <= 0:
        return Acceptance(
            server=server,
            model_name=model,
            engine=engine,
            acceptance_rate=None,
            mean_acceptance_length=None,
            per_position=None,
            drafts=c.drafts,
            draft_tokens=c.draft_tokens,
            accepted_tokens=c.accepted,
            labels=labels,
        )
    rate = c.accepted / c.draft_tokens if c.draft_tokens > 0 else None
    per = tuple(p / c.drafts for p in c.per_position)
    length = 1 + c.accepted / c.drafts
    # Finite counters can still divide to infinity (1e300 accepted in 1e-320 drafts): no verdict, no JSON.
    if not all(math.isfinite(x) for x in (length, rate or 0.0, *per)):
        raise ProbeError(
            f"the counters of {model or 'the model'} (engine {engine}) give an acceptance that is not a number "
            f"({c.accepted:g} accepted in {c.drafts:g} drafts): not vLLM's counters"
        )
    return Acceptance(
        server=server,
        model_name=model,
        engine=engine,
        acceptance_rate=rate,
        mean_acceptance_length=length,
        per_position=per,
        drafts=c.drafts,
        draft_tokens=c.draft_tokens,
        accepted_tokens=c.accepted,
        labels=labels,
    )


def _sglang(key: Key, length: float, rate: float) -> Acceptance:
    server, model, engine, labels = key
    if length <= 0:  # SGLang sets 0 when no speculative forward was logged
        return Acceptance(
            server=server,
            model_name=model,
            engine=engine,
            acceptance_rate=None,
            mean_acceptance_length=None,
            labels=labels,
        )
    return Acceptance(
        server=server,
        model_name=model,
        engine=engine,
        acceptance_rate=rate,
        mean_acceptance_length=length,
        labels=labels,
    )

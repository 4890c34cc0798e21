"""The verdict on an engine's speculative-decoding acceptance (measured by sources/metrics.py from its
Prometheus text): a collapse below the model's threshold, healthy at or above it, idle when nothing was
scored. Pure: values in, values out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dflash_cfg.model import Acceptance, Judged

# Below this a draft is barely accepted beyond the bonus token: the incident measured 1.165 (1.1 %).
DEFAULT_MIN_ACCEPTANCE_LENGTH = 1.5


def judge(records: Iterable[Acceptance], threshold_for: Mapping[str, float], default: float) -> tuple[Judged, ...]:
    """Each record's verdict: collapse below its model's threshold (`threshold_for[model_name]`, else
    `default`), healthy at or above it, idle when nothing was scored."""
    out = []
    for a in records:
        threshold = threshold_for.get(a.model_name, default)
        if a.mean_acceptance_length is None:
            verdict = "idle"
        else:
            verdict = "collapse" if a.mean_acceptance_length < threshold else "healthy"
        out.append(Judged(a, threshold, verdict))
    return tuple(out)

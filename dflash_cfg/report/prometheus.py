"""probe's judgement as Prometheus rules (`probe --emit-rules`): recording rules for what probe measures, per
series as probe keeps them apart (model, engine, pod: every label), and alerting rules for its verdict.

The semantics are probe's, on the metric names probe reads (sources/metrics.py):
- vLLM: over a window, mean acceptance length = 1 + accepted / drafts and acceptance rate = accepted / draft
  tokens, from the counters' increase over the window (rate() over `--interval`: the same ratio as two scrapes
  that far apart); a window with no draft scored records nothing (idle: no verdict).
- SGLang: its gauges are already a window (the last decode log interval): taken as they are, 0 being idle.
- collapse: a mean acceptance length strictly below the model's threshold (the project config's per served model,
  else the default); the alert fires when it has held for `hold` seconds, as a watch that keeps seeing it.
Pure: a value in, the YAML text out.
"""

from __future__ import annotations

from dflash_cfg.model import RuleSettings

PREFIX = "dflash_cfg:spec_decode_"
DRAFTS, DRAFT_TOKENS, ACCEPTED = (f"{PREFIX}drafts:rate", f"{PREFIX}draft_tokens:rate", f"{PREFIX}accepted_tokens:rate")
LENGTH, RATE = f"{PREFIX}mean_acceptance_length", f"{PREFIX}acceptance_rate"
ALERT = "DflashCfgAcceptanceCollapse"
RUNBOOK = (
    "Run `dflash-cfg check` on the drafter this pod serves (the model of its --speculative-config), with "
    "--from-hub ORG/NAME to compare it with its upstream repo; `dflash-cfg fix --from-hub ORG/NAME` writes "
    "upstream's file, then restart the pod."
)


def duration(seconds: int) -> str:
    """Seconds as a Prometheus duration: 300 -> 5m."""
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _string(text: str) -> str:
    """A PromQL string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _number(x: float) -> str:
    return repr(float(x)).removesuffix(".0") if float(x).is_integer() else repr(float(x))


def rules_yaml(s: RuleSettings) -> str:
    window = duration(s.window)
    drafts, draft_tokens, accepted = (f"{name}_total" for name in s.vllm_counters)
    length, rate = s.sglang_gauges

    def vllm() -> dict[str, str]:  # a new dict each time: one dict twice would be dumped as a YAML alias
        return {"server": "vllm"}

    def sglang() -> dict[str, str]:
        return {"server": "sglang"}

    recorded = [
        {"record": DRAFTS, "expr": f"rate({drafts}[{window}])", "labels": vllm()},
        {"record": DRAFT_TOKENS, "expr": f"rate({draft_tokens}[{window}])", "labels": vllm()},
        {"record": ACCEPTED, "expr": f"rate({accepted}[{window}])", "labels": vllm()},
        # `> 0` drops a window with no draft: idle, as probe has it (and no division by zero).
        {
            "record": LENGTH,
            "expr": f'1 + {ACCEPTED}{{server="vllm"}} / ({DRAFTS}{{server="vllm"}} > 0)',
            "labels": vllm(),
        },
        {
            "record": RATE,
            "expr": f'{ACCEPTED}{{server="vllm"}} / ({DRAFT_TOKENS}{{server="vllm"}} > 0)',
            "labels": vllm(),
        },
        {"record": LENGTH, "expr": f"{length} > 0", "labels": sglang()},
        {"record": RATE, "expr": f"{rate} and {length} > 0", "labels": sglang()},
    ]
    alerts = [_alert(f"{LENGTH}{{model_name={_string(name)}}}", threshold, s) for name, threshold in s.per_model]
    alerts.append(_alert(LENGTH + (f"{{{_others(s)}}}" if s.per_model else ""), s.default, s))
    groups = {
        "groups": [
            {"name": "dflash-cfg-speculative-decoding", "rules": recorded},
            {"name": "dflash-cfg-speculative-decoding-alerts", "rules": alerts},
        ]
    }
    models = "".join(f"; {name}: {_number(t)}" for name, t in s.per_model)
    header = (
        "# Prometheus rules for speculative decoding on vLLM and SGLang, written by `dflash-cfg probe --emit-rules`:\n"
        f"# probe's window ({window}) and threshold (collapse below {_number(s.default)}{models}),"
        f" alerting when a collapse holds for {duration(s.hold)}.\n"
        "# Load them with rule_files: in prometheus.yml (or a PrometheusRule's spec);"
        " `promtool check rules` reads them.\n"
    )
    import yaml  # here: the CLI loads this module for every command, and only --emit-rules writes YAML

    return header + yaml.safe_dump(groups, sort_keys=False, width=10_000, allow_unicode=True)


def _others(s: RuleSettings) -> str:
    return ", ".join(f"model_name!={_string(name)}" for name, _ in s.per_model)


def _alert(series: str, threshold: float, s: RuleSettings) -> dict[str, object]:
    shown = _number(threshold)
    return {
        "alert": ALERT,
        "expr": f"{series} < {shown}",
        "for": duration(s.hold),
        "labels": {"severity": "critical"},
        "annotations": {
            "summary": (
                "Speculative decoding collapsed for {{ $labels.model_name }} on {{ or $labels.pod $labels.instance }}"
            ),
            "description": (
                'Mean acceptance length {{ printf "%.2f" $value }} is below '
                + shown
                + " over "
                + duration(s.window)
                + " windows, for "
                + duration(s.hold)
                + " ({{ $labels.server }}): drafts are "
                "barely accepted beyond the bonus token. A drafter config.json with stale values is the first suspect."
            ),
            "threshold": shown,
            "runbook": RUNBOOK,
        },
    }

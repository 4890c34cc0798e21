"""probe's output: verdicts on acceptance as text, one line per watch window, or a JSON document (version 1)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click

from dflash_cfg.errors import redact
from dflash_cfg.jsondoc.encode import dumps_printable
from dflash_cfg.model import Acceptance, Judged, Report, display
from dflash_cfg.report.escape import printable
from dflash_cfg.report.formats import render


def _span(interval: float | None) -> str:
    return "over the counters' lifetime" if interval is None else f"over {interval:g} s between two scrapes"


def _who(a: Acceptance, apart: Sequence[str] = ()) -> str:
    where = "".join(f', {k}="{v}"' for k, v in a.labels if k in apart)
    return f"{display(a.server)} {printable(a.model_name) or '(no model_name)'} (engine {printable(a.engine + where)})"


def _apart(judged: Sequence[Judged]) -> dict[int, tuple[str, ...]]:
    """Per record (by index), the labels that tell it from another record of its model and engine (a
    federation's `instance`): shown beside it; a record alone in its model and engine shows none."""
    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, j in enumerate(judged):
        groups.setdefault((j.acceptance.server, j.acceptance.model_name, j.acceptance.engine), []).append(i)
    out: dict[int, tuple[str, ...]] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        names = {k for i in members for k, _ in judged[i].acceptance.labels}
        varying = tuple(
            sorted(n for n in names if len({dict(judged[i].acceptance.labels).get(n) for i in members}) > 1)
        )
        out.update((i, varying) for i in members)
    return out


def _rate(a: Acceptance) -> str:
    if a.acceptance_rate is None:
        return "acceptance rate unknown"
    text = f"acceptance rate {100 * a.acceptance_rate:.1f}%"
    if a.drafts is not None:
        text += f" ({a.accepted_tokens:.0f} of {a.draft_tokens:.0f} draft tokens, {a.drafts:.0f} drafts)"
    return text


def _length(j: Judged) -> str:
    a = j.acceptance
    if a.mean_acceptance_length is None:
        return "no draft scored: no traffic to judge"
    relation = "below" if j.verdict == "collapse" else "at least"
    # Beside the mean, its ceiling: 1.20 of 16 is a collapse whatever the threshold; 1.20 of 2 is not.
    of = "" if _ceiling(a) is None else f" of {_ceiling(a)}"
    return f"mean acceptance length {a.mean_acceptance_length:.2f}{of}, {relation} {j.threshold:g}"


def _ceiling(a: Acceptance) -> int | None:
    """The most a draft can yield: num_speculative_tokens (vLLM's per-position counters, one per draft
    position) + the bonus token. SGLang's gauges do not say it."""
    return len(a.per_position) + 1 if a.per_position else None


def probe_text(source: str, interval: float | None, judged: Sequence[Judged]) -> str:
    lines = [f"{printable(redact(source))}: speculative decoding {_span(interval)}"]
    apart = _apart(judged)
    for i, j in enumerate(judged):
        a = j.acceptance
        lines.append(f"  {_who(a, apart.get(i, ()))}: {_verdict(j)}")
        lines.append(f"    {_length(j)}")
        if a.mean_acceptance_length is not None:
            lines.append(f"    {_rate(a)}")
        if a.per_position and a.mean_acceptance_length is not None:
            lines.append("    per position: " + " ".join(f"{p:.3f}" for p in a.per_position))
    return "\n".join(lines) + "\n"


def _verdict(j: Judged) -> str:
    """The verdict, coloured as check colours its severities (the CLI strips it unless --color or a terminal
    asks for it): a collapse red, healthy green."""
    if j.verdict == "collapse":
        return click.style(j.verdict, fg="red", bold=True)
    return click.style(j.verdict, fg="green") if j.verdict == "healthy" else j.verdict


def probe_line(when: str, judged: Sequence[Judged]) -> str:
    """A watch window: one line per engine and model, stamped."""
    out = []
    apart = _apart(judged)
    for i, j in enumerate(judged):
        a = j.acceptance
        numbers = _length(j) if a.mean_acceptance_length is None else f"{_length(j)}; {_rate(a)}"
        out.append(f"{when} {_who(a, apart.get(i, ()))}: {_verdict(j)}: {numbers}\n")
    return "".join(out)


def diagnosis_text(model_name: str, drafter: str, upstream: str | None, report: Report) -> str:
    shown = render(report, "text", quiet=True) + "".join(f"cannot check: {printable(e)}\n" for e in report.errors)
    repo = upstream or "REPO"
    return (
        f"\nThe drafter serving {printable(model_name)}: {printable(drafter)}\n"
        f"{shown or '(its check finds nothing: compare it with upstream all the same)' + chr(10)}"
        "First things to try: the trained values upstream, field by field; then upstream's bytes, verified\n"
        f"  dflash-cfg diff {printable(drafter)} --from-hub {repo}\n"
        f"  dflash-cfg fix {printable(drafter)} --from-hub {repo}   # then restart the engine\n"
    )


def _record(j: Judged) -> dict[str, Any]:
    a = j.acceptance
    record: dict[str, Any] = {
        "engine": a.engine,
        "server": a.server,
        "model_name": a.model_name,
        "labels": dict(a.labels),
        "acceptance_rate": a.acceptance_rate,
        "mean_acceptance_length": a.mean_acceptance_length,
        "per_position": None if a.per_position is None else list(a.per_position),
        "ceiling": _ceiling(a),
        "min_acceptance_length": j.threshold,
        "verdict": j.verdict,
    }
    if a.drafts is not None:
        record.update(drafts=a.drafts, draft_tokens=a.draft_tokens, accepted_tokens=a.accepted_tokens)
    return record


def probe_document(
    source: str,
    interval: float | None,
    judged: Sequence[Judged],
    version: str,
    diagnoses: Sequence[tuple[str, str, str | None, Report]] = (),
    when: str | None = None,
) -> dict[str, Any]:
    doc: dict[str, Any] = {"version": 1, "tool": {"name": "dflash-cfg", "version": version}, "url": redact(source)}
    if when is not None:
        doc["time"] = when
    doc["interval"] = interval
    doc["engines"] = [_record(j) for j in judged]
    if diagnoses:
        doc["diagnosis"] = [
            {"model_name": m, "drafter": d, "upstream": u, "check": json.loads(render(r, "json"))}
            for m, d, u, r in diagnoses
        ]
    return doc


def probe_json(doc: dict[str, Any], lines: bool = False) -> str:
    """The document, indented; or one compact line (watch's JSON lines). Strict JSON, its strings printable
    (a label value is the endpoint's text)."""
    if lines:
        return dumps_printable(doc, separators=(",", ":")) + "\n"
    return dumps_printable(doc, indent=2) + "\n"

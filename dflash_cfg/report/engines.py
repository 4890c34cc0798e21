"""`dflash-cfg engines` output: the table of what the file says and what each engine reads, then each refusal;
and the JSON document. Pure: an EnginesResult in, text out."""

from __future__ import annotations

import json
from collections.abc import Sequence

from dflash_cfg.jsondoc.encode import strict
from dflash_cfg.model import Answer, EnginesResult, show_layers
from dflash_cfg.report.escape import printable

MARK = "*"
ROWS = ("target_layer_ids", "mask_token_id", "layer_types", "sliding_window", "causal", "rope_theta", "draft tokens")


def _list(values: Sequence[int | float] | None) -> str:
    return "-" if values is None else "[" + ", ".join(str(v) for v in values) + "]"


def _file_cell(result: EnginesResult, row: str) -> str:
    s = result.says
    cells = {
        "target_layer_ids": _list(s.target_layer_ids),
        "mask_token_id": "-" if s.mask_token_id is None else str(s.mask_token_id),
        "layer_types": show_layers(s.layer_types),
        "sliding_window": "-" if s.sliding_window is None else str(s.sliding_window),
        "causal": "-",
        "rope_theta": "-" if s.rope_theta is None else f"{s.rope_theta:g}",
        "draft tokens": "-" if s.block_size is None else f"block_size {s.block_size}",
    }
    return cells[row]


def _causal(value: tuple[bool, ...] | bool | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "causal" if value else "non-causal"
    flags = set(value)
    if flags == {True}:
        return "causal"
    if flags == {False}:
        return "non-causal"
    return " ".join("C" if v else "N" for v in value)


def _engine_cell(answer: Answer, row: str) -> str:
    r = answer.record
    if r.refused is not None:
        return "refused"
    if r.reads is None:
        return "no answer"
    reads = r.reads
    theta = reads.rope_theta
    cells = {
        "target_layer_ids": _list(reads.target_layer_ids),
        "mask_token_id": "-" if reads.mask_token_id is None else str(reads.mask_token_id),
        "layer_types": show_layers(reads.layer_types),
        "sliding_window": ", ".join(str(w) for w in reads.windows) or "none",
        "causal": _causal(reads.causal),
        "rope_theta": f"{theta:g}" if isinstance(theta, (int, float)) else "-",
        "draft tokens": "-" if reads.num_draft_tokens is None else str(reads.num_draft_tokens),
    }
    cell = cells[row]
    if any(d.field == row for d in answer.differences):
        cell += " " + MARK
    return cell


def engines_text(result: EnginesResult) -> str:
    lines = [f"drafter  {result.drafter}", f"target   {result.target or '(none: the engines stand one in)'}", ""]
    headers = ["field", "file", *(a.record.label for a in result.answers)]
    table = [headers] + [
        [row, _file_cell(result, row), *(_engine_cell(a, row) for a in result.answers)] for row in ROWS
    ]
    widths = [max(len(r[i]) for r in table) for i in range(len(headers))]
    for row in table:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    lines.append(f"{MARK}: the engine reads other than the file says ('-': not said, or not read)")
    lines.append("")
    for answer in result.answers:
        r = answer.record
        state = "" if r.checked else " (not checked against this version)"
        lines.append(f"{r.label}: {r.python}{state}")
        if r.refused is not None:
            lines.append(f"  refuses: {r.refused.type}: {' '.join(r.refused.message.split())}")
            lines.append(f"  at {r.refused.where or '(no frame of the engine)'}")
        if r.failed is not None:
            lines.append(f"  no answer: {' '.join(r.failed.split())[:300]}")
        for d in answer.critical:
            lines.append(f"  reads {d.field} {d.engine}, the file says {d.file}")
        shortened = r.shortened_context
        if shortened is not None:
            lines.append(f"  serves max_model_len {shortened[0]} with this drafter, {shortened[1]} without it")
    for note in result.notes:
        lines.append(f"not asked: {note}")
    if result.failing:
        lines.append("an engine refuses or misreads this drafter")
    elif all(a.record.failed is None for a in result.answers):
        lines.append("every engine reads what the file says")
    else:
        lines.append("every engine that answered reads what the file says")
    return printable("\n".join(lines) + "\n", keep="\n")


def engines_json(result: EnginesResult, tool_version: str) -> str:
    doc = {
        "version": 1,
        "tool_version": tool_version,
        "drafter": result.drafter,
        "target": result.target,
        "engines": [record_json(a) for a in result.answers],
        "notes": list(result.notes),
    }
    return json.dumps(strict(doc), indent=2, allow_nan=False) + "\n"


def record_json(answer: Answer) -> dict[str, object]:
    r = answer.record
    reads = None
    if r.reads is not None:
        reads = {**r.reads.named(), **dict(r.reads.extra)}
    return {
        "engine": r.engine,
        "version": r.version,
        "python": r.python,
        "checked": r.checked,
        "note": None if r.checked else "not checked against this version",
        "refused": None
        if r.refused is None
        else {"type": r.refused.type, "message": r.refused.message, "where": r.refused.where},
        "reads": reads,
        "differs": [
            {"field": d.field, "file": d.file, "engine": d.engine, "critical": d.critical} for d in answer.differences
        ],
        "stand_ins": list(r.stand_ins),
        "failed": r.failed,
    }

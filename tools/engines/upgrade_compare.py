"""Steps 3 and 4 of `./dev engines --upgrade` (upgrade.py), pure over JSON-like values: what changed between
the release before and the new one in an engine record (reads field by field; refusals by type, message and the
qualname that raised, a frame's line mapped to the function holding it, so code that only moved is no change;
failed adapters), in a launch oracle's answer, and in the engine code the repository cites (gone, or its
normalized source changed, with the reads and rules that cite it).
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tools.engines import citations

# ---------------------------------------------------------------------------------------------------------------
# Records, launches and citations compared (pure, over JSON-like values)


def frame_qualname(site: Path, where: str | None) -> str | None:
    """A refusal's frame ("pkg/path.py:LINE") as the qualname holding that line in the code under `site`
    ("pkg/path.py:Qualname", or "pkg/path.py:<module>"); as written when the file cannot be read."""
    if where is None:
        return None
    path, _, line = where.rpartition(":")
    if not line.isdigit():
        return where
    try:
        name = citations.qualname_at(site, path, int(line))
    except (OSError, SyntaxError, ValueError):
        return where
    return f"{path}:{name or '<module>'}"


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def record_changes(
    old: Mapping[str, Any], new: Mapping[str, Any], where_old: Callable[[str | None], str | None],
    where_new: Callable[[str | None], str | None],
) -> list[str]:  # fmt: skip
    """How one engine record (asdict of an EngineRecord) differs between the releases, one line per change:
    `failed`, `refused` (type, message, the qualname that raised), `reads.FIELD` and `stand_ins`. The version
    and the interpreter are expected to differ and are left out."""
    out = []
    if bool(old.get("failed")) != bool(new.get("failed")):
        out.append(f"failed: {_failure(old)} -> {_failure(new)}")
        return out
    if old.get("failed"):
        return out
    a, b = old.get("refused"), new.get("refused")
    if a is not None or b is not None:
        shown_a = _refusal(a, where_old) if a is not None else "reads"
        shown_b = _refusal(b, where_new) if b is not None else "reads"
        if shown_a != shown_b:
            out.append(f"refused: {shown_a} -> {shown_b}")
        return out  # a refusal has no reads to compare with the other side's
    reads_a, reads_b = old.get("reads") or {}, new.get("reads") or {}
    fields = sorted(set(reads_a) | set(reads_b))
    for f in fields:
        if f == "extra":
            ea, eb = reads_a.get("extra") or {}, reads_b.get("extra") or {}
            for k in sorted(set(ea) | set(eb)):
                if ea.get(k) != eb.get(k):
                    out.append(f"reads.extra.{k}: {_show(ea.get(k))} -> {_show(eb.get(k))}")
        elif reads_a.get(f) != reads_b.get(f):
            out.append(f"reads.{f}: {_show(reads_a.get(f))} -> {_show(reads_b.get(f))}")
    if list(old.get("stand_ins") or ()) != list(new.get("stand_ins") or ()):
        out.append(f"stand_ins: {_show(list(old.get('stand_ins') or ()))} -> {_show(list(new.get('stand_ins') or ()))}")
    return out


def _failure(record: Mapping[str, Any]) -> str:
    failed = record.get("failed")
    return f"failed ({str(failed).splitlines()[0][:200]})" if failed else "answered"


def one_line(message: str, limit: int = 300) -> str:
    """An engine's message on one line, as a report shows it: pydantic's frame around a validation error (its
    count line, `[type=..., input_value=...]` and the link to its docs) left out, whitespace collapsed."""
    text = re.sub(r"\s*\[type=[^\]]*\]", "", message)
    text = re.sub(r"\s*For further information visit \S+", "", text)
    text = re.sub(r"\b\d+ validation errors? for \w+\s+", "", text.strip())
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _refusal(refused: Mapping[str, Any], where: Callable[[str | None], str | None]) -> str:
    return f"{refused.get('type')}: {one_line(str(refused.get('message') or ''))} [at {where(refused.get('where'))}]"


def answer_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """How one launch_oracle.py answer ({"read": {...}} or {"refused": "..."}) differs between the releases."""
    if "refused" in old or "refused" in new:
        a = f"refused ({one_line(str(old['refused']))})" if "refused" in old else "accepted"
        b = f"refused ({one_line(str(new['refused']))})" if "refused" in new else "accepted"
        return [f"{a} -> {b}"] if a != b else []
    ra, rb = old.get("read") or {}, new.get("read") or {}
    return [
        f"{k}: {_show(ra.get(k))} -> {_show(rb.get(k))}" for k in sorted(set(ra) | set(rb)) if ra.get(k) != rb.get(k)
    ]


def normalized_source(site: Path, cited: str) -> str | None:
    """The code a citation names under `site`, normalized (parsed and unparsed: comments, blank lines and
    formatting do not count); None when it names nothing there."""
    span = citations.resolve(site, cited)
    if span is None:
        return None
    path = cited.partition(":")[0]
    lines = (site / path).read_text(encoding="utf-8", errors="replace").splitlines()
    text = textwrap.dedent("\n".join(lines[span[0] - 1 : span[1]]))
    try:
        return ast.unparse(ast.parse(text))
    except SyntaxError:
        return "\n".join(line.rstrip() for line in text.splitlines() if line.strip())


@dataclass(frozen=True)
class Cited:
    """A citation whose code the release changed: gone, or its source differs."""

    citation: str
    status: Literal["gone", "changed", "new"]
    lines: str  # "10-42 -> 12-44"
    files: tuple[str, ...]  # the repository's files citing it
    reads: tuple[str, ...]  # keys of lint.engines.READS whose source cites it
    rules: tuple[str, ...]  # rules naming those reads, or whose doc cites it


def cited_changes(
    cited: Mapping[str, Sequence[str]],
    old: Mapping[str, tuple[tuple[int, int] | None, str | None]],
    new: Mapping[str, tuple[tuple[int, int] | None, str | None]],
    read_sources: Mapping[str, str],
    rule_reads: Mapping[str, tuple[Sequence[str], str]],
) -> list[Cited]:
    """Each citation (-> the files citing it) whose code differs: `old`/`new` map it to (span, normalized source)
    in each venv; `read_sources` is READS key -> source text, `rule_reads` rule id -> (its reads, its doc)."""
    out = []
    for name in sorted(cited):
        (span_a, code_a), (span_b, code_b) = old.get(name, (None, None)), new.get(name, (None, None))
        if code_a == code_b:
            continue
        status: Literal["gone", "changed", "new"] = "gone" if code_b is None else "new" if code_a is None else "changed"
        reads = tuple(sorted(k for k, source in read_sources.items() if name in set(citations.citations(source))))
        rules = tuple(
            sorted(
                rule
                for rule, (keys, doc) in rule_reads.items()
                if set(keys) & set(reads) or name in set(citations.citations(doc))
            )
        )
        out.append(Cited(name, status, f"{_span(span_a)} -> {_span(span_b)}", tuple(cited[name]), reads, rules))
    return out


def _span(span: tuple[int, int] | None) -> str:
    return "gone" if span is None else f"{span[0]}-{span[1]}"

"""An engine release in one command: `./dev engines --upgrade NAME==VERSION [--lock-out PATH]`.

    python tests/engines/upgrade.py NAME==VERSION [--lock-out PATH] [--report PATH]   (repository root, .venv)

1. Re-freezes the lock: the release's Requires-Dist (its wheel's METADATA, `pip download --no-deps`; markers
   evaluated for this interpreter, extras left out) against the lock's pins. A pin the release wants other than
   locked moves to the newest release that also fits the other locked engines' own requirements (their
   dist-info in the current venv), unless the release before broke it the same way (another engine pins it:
   the lock keeps it, as the suite proved it works) or no release fits every engine. A requirement of a module
   the lock lacks is only named: the adapters install just what the engines' DFlash paths import.
   Writes the new lock (in place, with `PINNED` in dflash_cfg/pinned.py and dflash_cfg/lint/cited_lines.py
   re-derived; or only the lock, to `--lock-out`, leaving the repository on the current release).
2. Builds the new venv (build.engine_python on the new lock).
3. Runs every fixture and mutant of the differential suite through the upgraded engine in the current and the
   new venv, side by side, and the launch checks of test_launch_checks.py / test_launch_differential.py that
   concern it, and compares: reads field by field, refusals by type, message and the qualname that raised
   (a frame's line mapped to the function holding it, so code that only moved is no change), failed adapters.
4. Resolves every engine citation of the repository in both venvs: gone, or its code changed (its source,
   normalized), with the reads (lint/engines/) and rules that cite it.
5. Writes the release report, docs/releases/NAME-VERSION.md: sorted and grouped, the same on a re-run.

The engine runs are kept under the test cache (keyed by both venvs and the cases), so a re-run with nothing
changed writes the report again without running the engines.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from dflash_cfg.lint.releases import CHANGES
from dflash_cfg.model import NAMES, display, is_engine
from dflash_cfg.sources.adapters import ENGINES

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT / "tests") not in sys.path:  # run as a script: the engine suite's modules, as pytest finds them
    sys.path.insert(0, str(ROOT / "tests"))

from engines import build, citations  # noqa: E402
from engines.launches import OracleRun, oracle_runs  # noqa: E402

PINNED_FILE = ROOT / "dflash_cfg" / "pinned.py"
RELEASES = ROOT / "docs" / "releases"
# The lock header's update paragraph, written by every upgrade (and replacing an older one).
TO_UPDATE = """\
# To update: `./dev engines --upgrade NAME==VERSION` re-freezes this file for one engine's release (the pins the
# release needs moved, the coexistence with the other engines kept), rewrites PINNED in dflash_cfg/pinned.py,
# builds the new venv and writes the release report (docs/releases/NAME-VERSION.md); a module the new release's
# DFlash path imports that is not here yet is added by hand. A changed pin builds a new venv (the pins' hash
# names it; comments do not count).
"""


# ---------------------------------------------------------------------------------------------------------------
# The lock and the requirements (pure)


@dataclass(frozen=True)
class Lock:
    header: tuple[str, ...]  # the comment lines before the first pin
    pins: Mapping[str, tuple[str, str]]  # canonical name -> (name as written, version)
    lines: tuple[str, ...]  # every line, as written


def parse_lock(text: str) -> Lock:
    lines = tuple(text.splitlines())
    header: list[str] = []
    for line in lines:
        if not line.startswith("#"):
            break
        header.append(line)
    pins: dict[str, tuple[str, str]] = {}
    for line in lines:
        if m := re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9_.-]*)==([^\s;#]+)\s*", line):
            pins[canonicalize_name(m.group(1))] = (m.group(1), m.group(2))
    return Lock(tuple(header), pins, lines)


def requirements(metadata: str, environment: Mapping[str, str] | None = None) -> list[Requirement]:
    """A distribution's Requires-Dist (METADATA text) that apply here: markers evaluated for `environment` (this
    interpreter's by default) with no extra asked for, so requirements of extras drop out; extras of a
    requirement itself (`fastapi[standard]`) are left out too."""
    env = {**(environment or {}), "extra": ""}
    out = []
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        try:
            req = Requirement(line.split(":", 1)[1].strip())
        except InvalidRequirement:
            continue
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        req.extras = set()
        req.marker = None
        out.append(req)
    return out


Verdict = Literal["satisfied", "absent", "kept", "move", "stuck"]


@dataclass(frozen=True)
class Pin:
    """One requirement of the new release held against the lock."""

    name: str  # canonical
    wants: str  # the release's specifier ("" for any version)
    locked: str | None  # the lock's version, None when the lock lacks it
    verdict: Verdict
    before: str | None = None  # the release before: its specifier, None when it did not ask for it
    others: tuple[tuple[str, str], ...] = ()  # (engine release, specifier) the other locked engines ask
    to: str | None = None  # move: the version it moves to
    why: str = ""  # kept, stuck: the reason, as the report says it


def _spec(req: Requirement) -> str:
    return str(req.specifier) or "any"


def _fits(spec: SpecifierSet, version: str) -> bool:
    return spec.contains(version, prereleases=True)


def compare(
    lock: Lock,
    release: tuple[str, str, str],
    wants: Sequence[Requirement],
    before: Sequence[Requirement],
    others: Mapping[str, Sequence[Requirement]],
) -> list[Pin]:
    """Each requirement of the new release (release = (name, old version, new version)) against the lock:
    satisfied; absent (the lock lacks the module); kept (the lock breaks it, and broke the old release's
    requirement the same way: another engine pins it, and the suite ran on it); move (newly broken: the caller
    finds the version to move to, then `settle`s it). Sorted by name; the engine itself is left out."""
    name, old, _new = release
    old_by_name = {canonicalize_name(r.name): r for r in before}
    out = []
    for req in sorted(wants, key=lambda r: canonicalize_name(r.name)):
        key = canonicalize_name(req.name)
        if key == canonicalize_name(name):
            continue
        pinned = lock.pins.get(key)
        asked = tuple(
            sorted(
                (engine, _spec(r)) for engine, reqs in others.items() for r in reqs if canonicalize_name(r.name) == key
            )
        )
        was = old_by_name.get(key)
        previous = _spec(was) if was is not None else None
        if pinned is None:
            out.append(Pin(key, _spec(req), None, "absent", previous, asked))
            continue
        version = pinned[1]
        if _fits(req.specifier, version):
            out.append(Pin(key, _spec(req), version, "satisfied", previous, asked))
            continue
        if was is not None and not _fits(was.specifier, version):
            pinners = [f"{engine} requires {spec}" for engine, spec in asked if spec != "any"] or [
                f"{engine} requires it" for engine, _ in asked
            ]
            why = "; ".join(pinners) if pinners else "no other engine asks for it"
            why += f"; as with {name} {old} (wants {previous})"
            out.append(Pin(key, _spec(req), version, "kept", previous, asked, why=why))
            continue
        out.append(Pin(key, _spec(req), version, "move", previous, asked))
    return out


def move_spec(pin: Pin) -> str:
    """The requirement a moving pin must meet: the new release's and every other locked engine's, together."""
    specs = [s for s in (pin.wants, *(spec for _, spec in pin.others)) if s != "any"]
    return pin.name + ",".join(specs)


def settle(pin: Pin, found: tuple[str, Sequence[Requirement]] | None, lock: Lock) -> Pin:
    """A moving pin given what the index offers: `found` is the newest release meeting `move_spec(pin)` and its
    own requirements (None: no release meets it). It moves unless no release fits every engine, or that release
    breaks another pin of the lock (which the engines' own pins hold)."""
    if found is None:
        asked = "; ".join(f"{engine} requires {spec}" for engine, spec in pin.others) or "no release fits"
        return Pin(**{**asdict(pin), "verdict": "stuck", "why": f"no release fits every engine: {asked}"})
    version, needs = found
    broken = [
        f"{version} requires {r.name}{_spec(r)}, lock {lock.pins[k][1]}"
        for r in needs
        if (k := canonicalize_name(r.name)) in lock.pins and not _fits(r.specifier, lock.pins[k][1])
    ]
    if broken:
        return Pin(**{**asdict(pin), "verdict": "stuck", "why": "; ".join(sorted(broken))})
    return Pin(**{**asdict(pin), "verdict": "move", "to": version})


def engine_requirement_notes(name: str, version: str, others: Mapping[str, Sequence[Requirement]]) -> list[str]:
    """What the other locked engines ask of the upgraded engine itself (e.g. speculators' `vllm>=X`)."""
    notes = []
    for engine, reqs in sorted(others.items()):
        for r in reqs:
            if canonicalize_name(r.name) == canonicalize_name(name):
                ok = _fits(r.specifier, version)
                notes.append(f"{engine} requires {name}{_spec(r)}: {'met' if ok else 'not met'} by {version}")
    return notes


def rewrite_lock(text: str, moves: Mapping[str, str]) -> str:
    """The lock with each moved pin (canonical name -> version) rewritten, its name kept as written, and its
    header brought along: the releases it names (`vLLM 0.33.0`, `torch 2.14.1`) and the update paragraph."""
    lock = parse_lock(text)
    header = list(lock.header)
    for key, version in moves.items():
        written, old = lock.pins[key]
        for label in {written, NAMES[key] if is_engine(key) else written}:
            header = [
                re.sub(
                    rf"(?<![\w.-]){re.escape(label)}( |==){re.escape(old)}(?![\w.])", rf"{label}\g<1>{version}", line
                )
                for line in header
            ]
    start = next((i for i, line in enumerate(header) if line.startswith("# To update")), len(header))
    header = header[:start] + TO_UPDATE.splitlines()
    body = []
    for line in lock.lines[len(lock.header) :]:
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9_.-]*)==([^\s;#]+)(.*)", line)
        if m and (key := canonicalize_name(m.group(1))) in moves:
            line = f"{m.group(1)}=={moves[key]}{m.group(3)}"
        body.append(line)
    return "\n".join(header + body) + "\n"


def rewrite_pinned(text: str, moves: Mapping[str, str]) -> str:
    """dflash_cfg/pinned.py with each moved entry of `PINNED` ("name": "version") rewritten; nothing else."""
    for key, version in moves.items():
        pattern = re.compile(rf'("{re.escape(key)}":\s*")[^"]*(")')
        if pattern.search(text):
            text = pattern.sub(rf"\g<1>{version}\g<2>", text, count=1)
    return text


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


# ---------------------------------------------------------------------------------------------------------------
# The report (pure)


@dataclass(frozen=True)
class Case:
    """A drafter the engine ran: a fixture (its own base) or a mutant."""

    id: str
    base: str  # the short base name of a mutant; "fixture" for a fixture
    description: str


@dataclass(frozen=True)
class Report:
    name: str
    old: str
    new: str
    lock_path: str  # relative to the repository
    pins: tuple[Pin, ...]
    engine_notes: tuple[str, ...]
    cases: Mapping[str, Case]
    changes: Mapping[str, tuple[str, ...]]  # case id -> its record's changes
    launches: Mapping[str, tuple[str, ...]]  # "run #i: item" -> its answer's changes
    launch_count: int
    cited: tuple[Cited, ...]
    cited_count: int
    adopted: bool  # the lock written in place (PINNED too), or beside it
    notes: tuple[str, ...] = field(default=())


def _groups(changes: Mapping[str, Sequence[str]]) -> list[tuple[str, list[str]]]:
    """Identical changes across items, gathered: (change, sorted item ids), the most frequent first."""
    by_change: dict[str, list[str]] = {}
    for item, lines in changes.items():
        for line in lines:
            by_change.setdefault(line, []).append(item)
    return sorted(((c, sorted(ids)) for c, ids in by_change.items()), key=lambda g: (-len(g[1]), g[0]))


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")


def _ids(ids: Sequence[str], cases: Mapping[str, Case]) -> list[str]:
    out = []
    if len(ids) > 1:
        bases: dict[str, int] = {}
        for i in ids:
            base = cases[i].base if i in cases else "-"
            bases[base] = bases.get(base, 0) + 1
        out.append("  by base: " + ", ".join(f"{b} {n}" for b, n in sorted(bases.items())))
    shown = [f"  - `{i}`: {_md(cases[i].description)}" if i in cases else f"  - `{i}`" for i in ids]
    if len(shown) > 8:
        out += ["  <details><summary>the cases</summary>", "", *shown, "", "  </details>"]
    else:
        out += shown
    return out


def render(report: Report) -> str:
    r = report
    title = f"{display(r.name)} {r.new}"
    suite = ("" if r.adopted else f"DFLASH_CFG_ENGINES_LOCK={r.lock_path} ") + "./dev test tests/engines"
    out = [
        f"# {title}: release report",
        "",
        f"Written by `./dev engines --upgrade {r.name}=={r.new}` (tests/engines/upgrade.py; a re-run writes the same",
        f"file): the lock for {r.name} {r.new} in place of {r.old}, and what the release changed on the engine suite's",
        "drafters and launches and in the engine code the repository cites.",
        f"The lock: `{r.lock_path}` "
        + (
            "(adopted: `PINNED` names it)."
            if r.adopted
            else "(not adopted: the repository stays on the release before)."
        ),
        f"The engine suite on it: `{suite}`.",
        "",
        "## The lock",
        "",
    ]
    moved = [p for p in r.pins if p.verdict == "move"]
    counts = {v: sum(p.verdict == v for p in r.pins) for v in ("satisfied", "absent", "kept", "move", "stuck")}
    out.append(
        f"{r.name} {r.old} -> {r.new}"
        + "".join(f"; {p.name} {p.locked} -> {p.to}" for p in moved)
        + f". Of the {len(r.pins)} requirements {r.name} {r.new} declares here (markers evaluated for this "
        f"platform, extras left out): {counts['satisfied']} met by the lock, {counts['move']} moved, "
        f"{counts['kept']} kept as before, {counts['stuck']} that cannot move, {counts['absent']} of modules the "
        "lock does not install."
    )
    out.append("")
    if moved:
        out += ["### Moved", ""]
        out += [f"- {p.name}: lock {p.locked}, {r.name} {r.new} wants {p.wants}: moved to {p.to}" for p in moved]
        out.append("")
    kept = [p for p in r.pins if p.verdict in ("kept", "stuck")]
    out += ["### Coexistence: pins the release wants other than locked", ""]
    if kept:
        out += [
            f"- {p.name}: lock {p.locked}, {r.name} {r.new} wants {p.wants}; "
            + ("kept: " if p.verdict == "kept" else "cannot move: ")
            + p.why
            for p in kept
        ]
    else:
        out.append("None: every pin the release asks for is met.")
    out += [f"- {note}" for note in r.engine_notes]
    out.append("")
    absent = [p for p in r.pins if p.verdict == "absent"]
    if absent:
        out += [
            "### Not in the lock",
            "",
            "Modules the release declares that the lock does not install (the engines' DFlash paths import none "
            "of them; one they do import fails the adapters below): "
            + ", ".join(f"`{p.name}{'' if p.wants == 'any' else p.wants}`" for p in absent)
            + ".",
            "",
        ]
    changes = {k: v for k, v in r.changes.items() if v}
    fixtures = sum(c.base == "fixture" for c in r.cases.values())
    out += [
        "## What the engine does differently",
        "",
        f"{len(r.cases)} drafters ({fixtures} fixtures, {len(r.cases) - fixtures} mutants) through "
        f"{r.name} {r.old} and {r.new}: {len(changes)} answer differently, {len(r.cases) - len(changes)} the same. "
        "A refusal is compared by its type, message and the function that raised it (its frame's line mapped to "
        "the qualname holding it in each release).",
        "",
    ]
    for heading, prefixes in (
        ("Reads", ("reads.",)),
        ("Refusals", ("refused:",)),
        ("Adapter failures", ("failed:",)),
        ("Stand-ins", ("stand_ins:",)),
    ):
        subset = {k: tuple(line for line in v if line.startswith(prefixes)) for k, v in changes.items()}
        groups = _groups(subset)
        out += [f"### {heading}", ""]
        if not groups:
            out += ["None.", ""]
            continue
        for change, ids in groups:
            out.append(f"- **{_md(change)}** ({len(ids)} {'case' if len(ids) == 1 else 'cases'})")
            out += _ids(ids, r.cases)
        out.append("")
    launch_changes = {k: v for k, v in r.launches.items() if v}
    out += [
        "## Launch checks",
        "",
        f"{r.launch_count} launches of test_launch_checks.py and test_launch_differential.py that {r.name} answers "
        f"(tests/engines/launch_oracle.py): {len(launch_changes)} answered differently.",
        "",
    ]
    for change, ids in _groups(launch_changes):
        out.append(f"- **{_md(change)}** ({len(ids)})")
        out += [f"  - {_md(i)}" for i in ids[:8]] + ([f"  - and {len(ids) - 8} more"] if len(ids) > 8 else [])
    if launch_changes:
        out.append("")
    out += [
        "## Cited engine code",
        "",
        f"{r.cited_count} citations (`path:qualname`) of the repository resolved in both releases: "
        f"{len(r.cited)} gone or changed.",
        "",
    ]
    for c in r.cited:
        out.append(f"- `{c.citation}` {c.status} (lines {c.lines}); cited in {', '.join(c.files)}")
        if c.reads:
            out.append(f"  - reads: {', '.join(c.reads)}")
        if c.rules:
            out.append(f"  - rules: {', '.join(c.rules)}")
    out += ["", *rules_section(r.name, r.new)]
    if r.notes:
        out += ["", "## Notes", ""] + [f"- {n}" for n in r.notes]
    return "\n".join(out).rstrip() + "\n"


def rules_section(name: str, version: str) -> list[str]:
    """What the release changed that a drafter or its launch depends on, and the rules that say it
    (dflash_cfg/lint/releases.py CHANGES, written by hand when the behaviour changes are made)."""
    said = [c for c in CHANGES if c.since.engine == name and c.since.version == version]
    out = ["## What the rules say", ""]
    if not said:
        return [*out, f"Nothing yet: no entry of dflash_cfg/lint/releases.py CHANGES is about {name} {version}."]
    out += [
        "From dflash_cfg/lint/releases.py CHANGES: each finding says the releases it holds for "
        f"({name}>={version} or {name}<{version}).",
        "",
    ]
    return [*out, *(f"- {_md(c.what)} Rules: {', '.join(c.rules)}." for c in said)]


# ---------------------------------------------------------------------------------------------------------------
# Effects: the index, the venvs, the engines


def release_metadata(name: str, version: str) -> str:
    """The METADATA of the release's wheel for this platform (`pip download --no-deps`; pip's cache and
    PIP_FIND_LINKS make a second call cheap)."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--quiet", "--dest",
             tmp, f"{name}=={version}"],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as z:
            member = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
            return z.read(member).decode("utf-8", "replace")


def installed_metadata(site: Path, name: str) -> tuple[str, str] | None:
    """(version, METADATA text) of a distribution installed under `site`, None if it is not."""
    for info in sorted(site.glob("*.dist-info")):
        dist, _, version = info.name.removesuffix(".dist-info").partition("-")
        if canonicalize_name(dist) == canonicalize_name(name) and (info / "METADATA").is_file():
            return version, (info / "METADATA").read_text(encoding="utf-8", errors="replace")
    return None


def newest(requirement: str) -> tuple[str, list[Requirement]] | None:
    """The newest release the index offers for `requirement` and its own requirements (pip's resolver, dry run)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed", "--quiet",
             "--report", str(report), requirement],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0 or not report.exists():
            return None
        items = json.loads(report.read_text(encoding="utf-8")).get("install") or []
        if not items:
            return None
        meta = items[0]["metadata"]
        text = "\n".join(f"Requires-Dist: {r}" for r in meta.get("requires_dist") or ())
        return str(meta["version"]), requirements(text)


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _adapters_digest() -> str:
    files = sorted((ROOT / "dflash_cfg" / "adapters").glob("*.py"))
    return _digest(*[(p.name, p.read_text(encoding="utf-8")) for p in files])


def drafter_cases(root: Path, engine: str) -> tuple[dict[str, Case], dict[str, Any]]:
    """The differential suite's drafters that `engine` runs (as test_differential.py builds them), as cases and
    their adapter requests."""
    from dflash_cfg.sources.adapters import Request
    from engines.cases import TARGETS, fixture_requests, write_drafter
    from engines.mutants import generate

    cases: dict[str, Case] = {}
    requests: dict[str, Request] = {}
    for rel, request in fixture_requests(root).items():
        engines = ENGINES if "speculator" in rel else ("vllm", "sglang")
        if engine in engines:
            cases[f"fixture/{rel}"] = Case(f"fixture/{rel}", "fixture", "the fixture as shipped")
            requests[f"fixture/{rel}"] = request
    for index, mutant in enumerate(generate()):
        engines = ENGINES if mutant.base.speculators else ("vllm", "sglang")
        if engine not in engines:
            continue
        folder = write_drafter(root / f"mutant-{index}", mutant.data)
        target = str(TARGETS / mutant.base.target) if mutant.base.target else None
        cases[mutant.id] = Case(mutant.id, mutant.base.name, mutant.description)
        requests[mutant.id] = Request(folder, target)
    return cases, requests


def run_drafters(engine: str, pythons: Sequence[Path], requests: Mapping[str, Any]) -> list[dict[str, dict[str, Any]]]:
    """Every request through `engine` in each interpreter, side by side (one adapter process each), offline as
    the differential suite runs them."""
    from dflash_cfg.sources import adapters

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    names = sorted(requests)
    batch = [requests[n] for n in names]
    with ThreadPoolExecutor(len(pythons)) as pool:
        futures = [
            pool.submit(adapters.run, python, engine, batch, env=env, timeout=1500.0)  # type: ignore[arg-type]
            for python in pythons
        ]
        return [{n: asdict(r) for n, r in zip(names, f.result(), strict=True)} for f in futures]


ORACLE_ENGINE = {"vllm": "vllm", "vllm-config": "vllm", "sglang": "sglang", "sglang-dflash": "sglang"}


def run_launches(python: Path, runs: Sequence[OracleRun]) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for run in runs:
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1"}
        for key, value in run.env.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        done = subprocess.run(
            [str(python), str(ROOT / "tests" / "engines" / "launch_oracle.py")],
            input=json.dumps(run.request), capture_output=True, text=True, cwd=run.cwd, env=env, timeout=1500,
            check=False,
        )  # fmt: skip
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
            items = run.request.get("cases") or run.request.get("lines") or []
            out[run.name] = [{"refused": f"the oracle failed: {tail}"}] * len(items)
        else:
            out[run.name] = json.loads(done.stdout)
    return out


def launch_item(run: OracleRun, index: int, folder: Path) -> str:
    """One launch of a run, readable and the same on every machine (the temporary folder left out)."""
    items = run.request.get("cases") or run.request.get("lines") or []
    shown = json.dumps(items[index], sort_keys=True) if index < len(items) else "?"
    shown = shown.replace(str(folder) + "/", "").replace(str(ROOT) + "/", "")
    if len(shown) > 240:
        shown = shown[:237] + "..."
    return f"{run.name} #{index}: {shown}"


def _cached(path: Path, key: str, compute: Callable[[], Any]) -> Any:
    """`compute()`'s JSON result kept in `path` under `key`: an unchanged re-run reads it instead."""
    if path.exists():
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept.get("key") == key:
            return kept["value"]
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, "value": value}, sort_keys=True), encoding="utf-8")
    return value


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _phase(label: str, start: float, timings: list[tuple[str, float]]) -> float:
    now = time.monotonic()
    timings.append((label, now - start))
    print(f"upgrade: {label}: {now - start:.0f} s", file=sys.stderr)
    return now


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("release", help="NAME==VERSION: the engine release to move the lock to")
    parser.add_argument(
        "--lock-out",
        type=Path,
        help="write the new lock here and leave the repository's lock, PINNED and cited_lines.py as they are "
        "(the suite runs it with DFLASH_CFG_ENGINES_LOCK=PATH); default: rewrite them in place",
    )
    parser.add_argument("--report", type=Path, help="default: docs/releases/NAME-VERSION.md")
    args = parser.parse_args(argv)
    m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9_.-]*)==([^\s]+)", args.release)
    if m is None:
        parser.error("the release is NAME==VERSION, e.g. vllm==0.34.0")
    name, version = canonicalize_name(m.group(1)), m.group(2)
    if name not in ENGINES:
        parser.error(f"{name} is not one of the locked engines ({', '.join(ENGINES)})")
    timings: list[tuple[str, float]] = []
    started = clock = time.monotonic()

    current = build.default_lock()
    lock_text = current.read_text(encoding="utf-8")
    lock = parse_lock(lock_text)
    if name not in lock.pins:
        parser.error(f"{name} is not pinned in {_rel(current)}")
    old_version = lock.pins[name][1]
    old_python = build.engine_python(lock=current)
    old_site = citations.site_packages(old_python)
    clock = _phase(f"the current venv ({name} {old_version})", clock, timings)

    wants = requirements(release_metadata(name, version))
    before_meta = installed_metadata(old_site, name)
    before = requirements(before_meta[1]) if before_meta else []
    others = {}
    for engine in ENGINES:
        if engine == name or engine not in lock.pins:
            continue
        found = installed_metadata(old_site, engine)
        if found is not None:
            others[f"{engine} {found[0]}"] = requirements(found[1])
    pins = compare(lock, (name, old_version, version), wants, before, others)
    pins = [settle(p, newest(move_spec(p)), lock) if p.verdict == "move" else p for p in pins]
    moves = {name: version, **{p.name: p.to for p in pins if p.verdict == "move" and p.to}}
    new_text = rewrite_lock(lock_text, moves)
    adopted = args.lock_out is None
    new_lock = current if adopted else args.lock_out.resolve()
    new_lock.parent.mkdir(parents=True, exist_ok=True)
    new_lock.write_text(new_text, encoding="utf-8")
    if adopted:
        PINNED_FILE.write_text(rewrite_pinned(PINNED_FILE.read_text(encoding="utf-8"), moves), encoding="utf-8")
    print(f"upgrade: wrote {_rel(new_lock)}" + (" and dflash_cfg/pinned.py" if adopted else ""), file=sys.stderr)
    clock = _phase("the lock re-frozen", clock, timings)

    new_python = build.engine_python(lock=new_lock)
    new_site = citations.site_packages(new_python)
    clock = _phase(f"the new venv ({name} {version})", clock, timings)

    work = build.cache_dir() / f"upgrade-{name}"
    if True:  # the same folders on every run, so that paths in messages do not differ between runs
        root = work / "drafters"
        root.mkdir(parents=True, exist_ok=True)
        cases, requests = drafter_cases(root, name)
        key = _digest(str(old_python), str(new_python), build.lock_hash(current), build.lock_hash(new_lock),
                      _adapters_digest(), {k: r.to_json() for k, r in requests.items()})  # fmt: skip
        old_records, new_records = _cached(
            work / f"records-{old_version}-{version}.json",
            key,
            lambda: run_drafters(name, [old_python, new_python], requests),
        )
        clock = _phase(f"{len(requests)} drafters through both releases", clock, timings)

        folder = work / "launches"
        folder.mkdir(parents=True, exist_ok=True)
        runs = [r for r in oracle_runs(folder) if ORACLE_ENGINE[str(r.request["engine"])] == name]
        launch_key = _digest(key, [(r.name, r.request, r.env) for r in runs],
                             (ROOT / "tests" / "engines" / "launch_oracle.py").read_text(encoding="utf-8"))  # fmt: skip

        def both() -> list[dict[str, list[dict[str, Any]]]]:
            with ThreadPoolExecutor(2) as pool:
                futures = [pool.submit(run_launches, p, runs) for p in (old_python, new_python)]
                return [f.result() for f in futures]

        old_answers, new_answers = _cached(work / f"launches-{old_version}-{version}.json", launch_key, both)
        clock = _phase(f"{len(runs)} launch runs through both releases", clock, timings)

    def where_old(where: str | None) -> str | None:
        return frame_qualname(old_site, where)

    def where_new(where: str | None) -> str | None:
        return frame_qualname(new_site, where)

    changes = {c: tuple(record_changes(old_records[c], new_records[c], where_old, where_new)) for c in sorted(cases)}
    launches: dict[str, tuple[str, ...]] = {}
    launch_count = 0
    for run in runs:
        for i, (a, b) in enumerate(zip(old_answers[run.name], new_answers[run.name], strict=False)):
            launch_count += 1
            if differ := answer_changes(a, b):
                launches[launch_item(run, i, folder)] = tuple(differ)

    from dflash_cfg.lint.engines import READS
    from dflash_cfg.lint.rules import ALL

    cited = citations.collect()
    spans_old = {c: (citations.resolve(old_site, c), normalized_source(old_site, c)) for c in cited}
    spans_new = {c: (citations.resolve(new_site, c), normalized_source(new_site, c)) for c in cited}
    changed_code = cited_changes(
        cited,
        spans_old,
        spans_new,
        {k: r.source for k, r in READS.items()},
        {r.id: (r.reads, r.doc) for r in ALL},
    )
    if adopted:
        # Untagged citations now name the new release: PINNED as just written, not as this process imported it.
        from dflash_cfg.pinned import PINNED

        pinned = {**PINNED, **{k: v for k, v in moves.items() if k in PINNED}}
        result = citations.resolve_all(new_site, pinned=pinned)
        table = citations.merged(result, citations.table_lines())
        citations.TABLE.write_text(citations.render(table, pinned), encoding="utf-8")
    clock = _phase("citations resolved in both", clock, timings)

    notes = []
    if any(p.verdict == "stuck" for p in pins):
        notes.append("A pin that cannot move is kept; the new venv is built with it (see the coexistence above).")
    report = Report(
        name=name,
        old=old_version,
        new=version,
        lock_path=_rel(new_lock),
        pins=tuple(pins),
        engine_notes=tuple(engine_requirement_notes(name, version, others)),
        cases=cases,
        changes=changes,
        launches=launches,
        launch_count=launch_count,
        cited=tuple(changed_code),
        cited_count=len(cited),
        adopted=adopted,
        notes=tuple(notes),
    )
    out = args.report or RELEASES / f"{name}-{version}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(report), encoding="utf-8")
    _phase("report written", clock, timings)
    print(f"upgrade: wrote {_rel(out)} ({time.monotonic() - started:.0f} s in all)", file=sys.stderr)
    suite = ("" if adopted else f"DFLASH_CFG_ENGINES_LOCK={_rel(new_lock)} ") + "./dev test tests/engines"
    print(f"upgrade: now run the engine suite on the new lock:\n    {suite}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

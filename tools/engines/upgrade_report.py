"""Step 5 of `./dev engines --upgrade` (upgrade.py), pure: the release report, docs/releases/NAME-VERSION.md,
rendered from a Report: the lock's moves and coexistence, what the engine does differently on the suite's
drafters and launches, the cited engine code that changed, and what the rules say about the release (the changes
they declare, dflash_cfg.lint.rules.CHANGES). Sorted and grouped: a re-run writes the same file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dflash_cfg.lint.rules import CHANGES
from dflash_cfg.model import display
from tools.engines.upgrade_compare import Cited
from tools.engines.upgrade_lock import Pin

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
        f"Written by `./dev engines --upgrade {r.name}=={r.new}` (tools/engines/upgrade.py; a re-run writes the same",
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
    (dflash_cfg.lint.rules.CHANGES: the changes the rules declare with `@rule(since=..., until=...)`)."""
    said = [(c, ids) for c, ids in CHANGES if c.since.engine == name and c.since.version == version]
    out = ["## What the rules say", ""]
    if not said:
        return [*out, f"Nothing yet: no rule declares a change of {name} {version} (`@rule(since=..., until=...)`)."]
    out += [
        "From the rules' `since`/`until` declarations (dflash_cfg.lint.rules.CHANGES): each finding says the "
        f"releases it holds for ({name}>={version} or {name}<{version}).",
        "",
    ]
    return [*out, *(f"- {_md(c.what)} Rules: {', '.join(ids)}." for c, ids in said)]

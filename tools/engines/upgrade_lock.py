"""Step 1 of `./dev engines --upgrade` (upgrade.py), pure: the lock parsed; a release's Requires-Dist (markers
evaluated, extras left out) held against its pins, each settled as satisfied, absent (a module the lock lacks),
kept (the release before broke it the same way), moved (to the newest release that fits the other engines) or
stuck; the other engines' own requirements noted; and the lock and PINNED (dflash_cfg/pinned.py) rewritten
with the moves, the lock's update paragraph (TO_UPDATE) with them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from dflash_cfg.model import NAMES, is_engine

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

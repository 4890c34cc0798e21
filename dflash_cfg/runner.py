"""The one place that joins effects and the pure core: paths in, a Report out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from . import __version__, files
from .effective import Effective, transformers_version
from .linter import Inputs, lint
from .model import FileReport, Report
from .rules import ALL, Rule
from .target import Target, TargetError, load_target
from .weights import Weights, WeightsError, read_weights


class UsageError(Exception):
    """Something the user asked for cannot be done as asked: one line, exit 2."""


@dataclass(frozen=True)
class CheckOptions:
    paths: tuple[str, ...]
    target: str | None = None
    rules: tuple[Rule, ...] = ALL


def select_rules(select: str | None, ignore: str | None) -> tuple[Rule, ...]:
    """--select/--ignore: comma-separated ids or id prefixes (``DF2`` = every DF2xx rule)."""

    def parse(spec: str) -> list[str]:
        items = [s.strip().upper() for s in spec.split(",") if s.strip()]
        unknown = [i for i in items if not any(r.id.startswith(i) for r in ALL)]
        if unknown:
            raise UsageError(f"unknown rule id {', '.join(unknown)} (see `dflash-cfg rules`)")
        return items

    chosen = ALL
    if select:
        wanted = parse(select)
        chosen = tuple(r for r in chosen if any(r.id.startswith(w) for w in wanted))
    if ignore:
        dropped = parse(ignore)
        chosen = tuple(r for r in chosen if not any(r.id.startswith(d) for d in dropped))
    return chosen


def _needs_effective(rules: tuple[Rule, ...]) -> bool:
    return any("effective" in r.needs for r in rules)


def _effective_fn() -> Callable[[dict[str, Any]], Effective]:
    from .effective import view

    return view


def check(options: CheckOptions) -> Report:
    target: Target | None = None
    if options.target is not None:
        try:
            target = load_target(Path(options.target))
        except TargetError as exc:
            raise UsageError(f"--target: {exc}") from None
    try:
        paths = [p for given in options.paths for p in files.discover(Path(given))]
    except files.PathError as exc:
        raise UsageError(str(exc)) from None
    effective_fn = _effective_fn() if _needs_effective(options.rules) else None
    weights_cache: dict[Path, tuple[Weights | None, str | None]] = {}
    reports: list[FileReport] = []
    errors: list[str] = []
    for path in paths:
        try:
            raw = files.read(path)
        except files.PathError as exc:
            errors.append(str(exc))
            continue
        inputs = Inputs(target, partial(_weights, path.parent, weights_cache), effective_fn)
        reports.append(lint(raw, str(path), inputs, options.rules))
    return Report(tuple(reports), transformers_version(), __version__, tuple(errors))


def _weights(folder: Path, seen: dict[Path, tuple[Weights | None, str | None]]) -> tuple[Weights | None, str | None]:
    if folder not in seen:
        try:
            seen[folder] = (read_weights(folder), None)
        except WeightsError as exc:
            seen[folder] = (None, str(exc))
    return seen[folder]

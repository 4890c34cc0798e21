"""check: paths in, a Report out. Gathers every input of each file as a value, then lints it."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dflash_cfg import __version__
from dflash_cfg.commands import pool
from dflash_cfg.commands.common import (
    HubOptions,
    Views,
    check_sha256_option,
    load_target_option,
    upstream_for,
)
from dflash_cfg.errors import LockError, PathError, UsageError, WeightsError
from dflash_cfg.jsondoc.document import parse
from dflash_cfg.lint.linter import Inputs, classify, lint, needs
from dflash_cfg.lint.rules import ALL, Rule
from dflash_cfg.model import FileReport, Integrity, Report, Target, Weights
from dflash_cfg.sources import files
from dflash_cfg.sources.hub import repo_from_cache_path
from dflash_cfg.sources.lockfile import read_lock
from dflash_cfg.sources.views import transformers_version
from dflash_cfg.sources.weights import read_weights

if TYPE_CHECKING:  # the launch parser is only loaded by preflight
    from dflash_cfg.lint.launch import Launch

_BLOB = re.compile(r"/models--[^/]+/blobs/[^/]+$")


@dataclass(frozen=True)
class CheckOptions:
    paths: tuple[str, ...]
    target: str | None = None
    rules: tuple[Rule, ...] = ALL
    hub: HubOptions | None = None
    expect_sha256: str | None = None
    no_cache: bool = False  # --no-cache: neither read nor write the transformers-view cache
    launch: Launch | None = None  # preflight: the engine command the drafter is checked against


def check(options: CheckOptions) -> Report:
    target = load_target_option(options.target)
    check_sha256_option(options.expect_sha256)
    # explicit: the file itself, or the config.json of a model dir the user named.
    found = {given: files.discover(Path(given)) for given in options.paths}
    empty = [given for given, listed in found.items() if not listed]
    if empty:  # a typo in a CI path must not pass as "0 files, all clean"
        raise UsageError(f"no config.json under {files.display(empty[0])}")
    paths = [(p, p == Path(given) or p.parent == Path(given)) for given, listed in found.items() for p in listed]
    views = Views(cached=not options.no_cache) if needs(options.rules, "effective") else None
    weights_seen: dict[Path, tuple[Weights | None, str | None]] = {}

    def one(i: int) -> FileReport | str:
        path, explicit = paths[i]
        try:
            raw = files.read(path)
        except PathError as exc:
            return str(exc)
        return lint(gather(path, raw, explicit, options, target, views, weights_seen), options.rules)

    reports: list[FileReport] = []
    errors: list[str] = []
    for outcome in _each(one, len(paths), parallel=options.hub is None):
        if isinstance(outcome, str):
            errors.append(outcome)
        else:
            reports.append(outcome)
    return Report(tuple(reports), transformers_version(), __version__, tuple(errors))


def _each(one: Callable[[int], FileReport | str], count: int, parallel: bool) -> Iterator[FileReport | str]:
    """one(0), one(1), ... in order. A tree is spread over the cores: the first drafter is read here (it
    loads transformers on a cache miss, builds the schema validator), then the rest go to forked workers,
    which inherit all of that. Small inputs, and anything that talks to the Hub, stay in this process."""
    done = 0
    while done < count:
        outcome = one(done)
        done += 1
        yield outcome
        if not isinstance(outcome, str) and outcome.kind != "skipped":
            break
    jobs = pool.jobs(count - done) if parallel else 1
    if jobs <= 1:
        yield from (one(i) for i in range(done, count))
    else:
        yield from pool.ordered_map(one, range(done, count), jobs)


def gather(
    path: Path,
    raw: bytes,
    explicit: bool,
    options: CheckOptions,
    target: Target | None,
    views: Views | None,
    weights_seen: dict[Path, tuple[Weights | None, str | None]],
) -> Inputs:
    """Everything `lint` reads about one file, read now: only what a drafter file and the selected
    rules need, so a tree of target models never has its shards opened or the Hub asked."""
    doc = parse(raw)
    shown = files.display(path)
    kind, _ = classify(doc, explicit)
    if kind == "skipped":
        return Inputs(shown, doc, explicit)
    weights, weights_error = None, None
    if needs(options.rules, "weights"):
        weights, weights_error = _weights(path.parent, weights_seen)
    upstream = upstream_for(path, options.hub) if options.hub is not None else None
    upstream_doc = parse(upstream.data) if upstream is not None else None
    return Inputs(
        shown,
        doc,
        explicit,
        target,
        weights,
        weights_error,
        views.of(doc) if views else None,
        upstream,
        upstream_doc,
        views.of(upstream_doc) if views and upstream_doc else None,
        integrity(path, raw, options.expect_sha256),
        options.launch,
    )


def integrity(path: Path, raw: bytes, expect_sha256: str | None) -> Integrity:
    """The lock entry, the expected hash and the symlink facts of one config.json."""
    entry, lock_error = None, None
    try:
        entry = read_lock(path)
    except LockError as exc:
        lock_error = str(exc)
    link = os.path.realpath(path) if path.is_symlink() else None
    return Integrity(
        hashlib.sha256(raw).hexdigest(),
        entry,
        lock_error,
        expect_sha256,
        link,
        bool(link and _BLOB.search(link)),
        repo_from_cache_path(path) is not None,
    )


def _weights(folder: Path, seen: dict[Path, tuple[Weights | None, str | None]]) -> tuple[Weights | None, str | None]:
    if folder not in seen:
        try:
            seen[folder] = (read_weights(folder), None)
        except WeightsError as exc:
            seen[folder] = (None, str(exc))
    return seen[folder]

"""The one place that joins effects and the pure core: paths in, a Report out."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dflash_cfg import __version__
from dflash_cfg.errors import HubError, LockError, TargetError, UsageError, WeightsError
from dflash_cfg.jsondoc.document import git_blob_sha1, parse
from dflash_cfg.lint.compare import Row, compare
from dflash_cfg.lint.linter import Inputs, lint
from dflash_cfg.lint.rules import ALL, Rule
from dflash_cfg.model import Effective, FileReport, HubFile, Integrity, Report, Target, Weights
from dflash_cfg.sources import files
from dflash_cfg.sources.cache import EffectiveCache, default_root
from dflash_cfg.sources.hub import fetch_config, repo_from_cache_path
from dflash_cfg.sources.target import load_target
from dflash_cfg.sources.views import transformers_version
from dflash_cfg.sources.weights import read_weights
from dflash_cfg.write.lock import read_lock

if TYPE_CHECKING:  # the launch parser is only loaded by preflight
    from dflash_cfg.lint.launch import Launch


@dataclass(frozen=True)
class HubOptions:
    repo: str | None  # None: infer it from where the file lives
    revision: str | None = None  # None: the commit of a cache snapshot, else "main"
    offline: bool = False


@dataclass(frozen=True)
class CheckOptions:
    paths: tuple[str, ...]
    target: str | None = None
    rules: tuple[Rule, ...] = ALL
    hub: HubOptions | None = None
    expect_sha256: str | None = None
    no_cache: bool = False  # --no-cache: neither read nor write the transformers-view cache
    launch: Launch | None = None  # preflight: the engine command the drafter is checked against


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


def effective_fn() -> Callable[[dict[str, Any]], Effective]:
    from dflash_cfg.sources.views import view

    return view


def load_target_option(option: str | None) -> Target | None:
    if option is None:
        return None
    try:
        return load_target(Path(option))
    except TargetError as exc:
        raise UsageError(f"--target: {exc}") from None


def check(options: CheckOptions) -> Report:
    target = load_target_option(options.target)
    check_sha256_option(options.expect_sha256)
    try:
        # explicit: the file itself, or the config.json of a model dir the user named.
        found = {given: files.discover(Path(given)) for given in options.paths}
    except files.PathError as exc:
        raise UsageError(str(exc)) from None
    empty = [given for given, listed in found.items() if not listed]
    if empty:  # a typo in a CI path must not pass as "0 files, all clean"
        raise UsageError(f"no config.json under {files.display(empty[0])}")
    paths = [(p, p == Path(given) or p.parent == Path(given)) for given, listed in found.items() for p in listed]
    view = effective_fn() if _needs_effective(options.rules) else None
    cache = None if view is None or options.no_cache else EffectiveCache(view, default_root())
    weights_cache: dict[Path, tuple[Weights | None, str | None]] = {}
    reports: list[FileReport] = []
    errors: list[str] = []
    for path, explicit in paths:
        try:
            raw = files.read(path)
        except files.PathError as exc:
            errors.append(str(exc))
            continue
        upstream = None if options.hub is None else partial(upstream_for, path, options.hub)
        file_view = view
        if cache is not None:
            # Keyed by the sha256 of the bytes a dict came from: this file's, and upstream's once fetched.
            sources = [raw]
            file_view = cache.for_sources(sources)
            if upstream is not None:
                upstream = partial(_recorded, sources, upstream)
        inputs = Inputs(
            target,
            partial(_weights, path.parent, weights_cache),
            file_view,
            upstream,
            integrity(path, raw, options.expect_sha256),
            options.launch,
        )
        reports.append(lint(raw, files.display(path), inputs, options.rules, explicit))
    return Report(tuple(reports), transformers_version(), __version__, tuple(errors))


def _recorded(sources: list[bytes], loader: Callable[[], HubFile]) -> HubFile:
    found = loader()
    sources.append(found.data)
    return found


_BLOB = re.compile(r"/models--[^/]+/blobs/[^/]+$")
SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")


def check_sha256_option(value: str | None) -> None:
    if value is not None and not SHA256.match(value):
        raise UsageError(f"--expect-sha256 {value!r} is not a sha256 (64 hex digits)")


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


def repo_for(path: Path, hub: HubOptions) -> tuple[str, str]:
    """The Hub repo and revision a drafter config is compared with: as given, else from the cache
    snapshot it lives in, else from the source dflash-cfg recorded when it last wrote it."""
    if hub.repo:
        return hub.repo, hub.revision or "main"
    cached = repo_from_cache_path(path)
    if cached is not None:
        return cached[0], hub.revision or cached[1]
    try:
        entry = read_lock(path)
    except LockError:
        entry = None
    if entry is not None and entry.source is not None:
        return entry.source.repo, hub.revision or entry.source.revision
    raise UsageError(f"cannot tell which Hub repo {path} comes from: pass it, e.g. --from-hub ORG/NAME")


def upstream_for(path: Path, hub: HubOptions) -> HubFile:
    repo, revision = repo_for(path, hub)
    try:
        return fetch_config(repo, revision, offline=hub.offline)
    except HubError as exc:
        raise UsageError(str(exc)) from None


def _weights(folder: Path, seen: dict[Path, tuple[Weights | None, str | None]]) -> tuple[Weights | None, str | None]:
    if folder not in seen:
        try:
            seen[folder] = (read_weights(folder), None)
        except WeightsError as exc:
            seen[folder] = (None, str(exc))
    return seen[folder]


@dataclass(frozen=True)
class DiffResult:
    path: str
    local: bytes
    upstream: HubFile
    rows: tuple[Row, ...]
    transformers_version: str | None

    @property
    def identical(self) -> bool:
        return git_blob_sha1(self.local) == self.upstream.blob_id

    @property
    def critical(self) -> bool:
        return any(r.critical and (r.differs or r.differs_effective) for r in self.rows)


def one_config(path_arg: str) -> Path:
    """The single config.json a command that works on one file was pointed at (absolute)."""
    try:
        found = files.discover(Path(path_arg))
    except files.PathError as exc:
        raise UsageError(str(exc)) from None
    if len(found) != 1:
        raise UsageError(f"{path_arg}: expected one config.json (a model dir or the file), found {len(found)}")
    return Path(os.path.abspath(found[0]))


def diff(path_arg: str, hub: HubOptions) -> DiffResult:
    path = one_config(path_arg)
    try:
        local = files.read(path)
    except files.PathError as exc:
        raise UsageError(str(exc)) from None
    data = parse(local).data
    if not isinstance(data, dict):
        raise UsageError(f"{path} is not a JSON object; run `dflash-cfg check {path}` to see why")
    upstream = upstream_for(path, hub)
    theirs = parse(upstream.data).data
    if not isinstance(theirs, dict):
        raise UsageError(f"upstream {upstream.repo}@{upstream.commit[:12]} config.json is not a JSON object")
    cache = EffectiveCache(effective_fn(), default_root())
    mine_eff = cache.get(hashlib.sha256(local).hexdigest(), data)
    theirs_eff = cache.get(hashlib.sha256(upstream.data).hexdigest(), theirs)
    rows = compare(data, theirs, mine_eff.values, theirs_eff.values)
    return DiffResult(str(path), local, upstream, rows, transformers_version())

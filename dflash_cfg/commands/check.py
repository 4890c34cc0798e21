"""check: paths in, a Report out. Gathers every input of each file as a value, then lints it."""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from dflash_cfg import progress
from dflash_cfg.commands.common import (
    Views,
    check_sha256_option,
    known_upstream,
    load_target_option,
    named_upstream,
    select_rules,
    upstream_for,
)
from dflash_cfg.errors import DflashCfgError, HubError, LockError, PathError, UsageError, WeightsError
from dflash_cfg.jsondoc.document import MAX_BYTES, Document, git_blob_sha1, parse
from dflash_cfg.lint.linter import Inputs, classify, lint, needs
from dflash_cfg.lint.rules import ALL, Rule
from dflash_cfg.model import (
    Catalog,
    EngineCheck,
    FileReport,
    FoundBy,
    HubFile,
    HubOptions,
    Integrity,
    Launch,
    Report,
    Served,
    Severity,
    Target,
    Weights,
    is_engine,
)
from dflash_cfg.sources import catalog, files, remote, storage
from dflash_cfg.sources.hub import repo_from_cache_path
from dflash_cfg.sources.lockfile import read_lock
from dflash_cfg.sources.project import NONE as NO_PROJECT
from dflash_cfg.sources.project import ProjectConfig, served_engines
from dflash_cfg.sources.project import resolve as resolve_project
from dflash_cfg.sources.views import transformers_version
from dflash_cfg.sources.weights import read_weights, read_weights_remote
from dflash_cfg.sources.where import model_dir
from dflash_cfg.version import __version__

_BLOB = re.compile(r"/models--[^/]+/blobs/[^/]+$")
_GIT_BLOB = re.compile(r"^[0-9a-f]{40}$")
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True, kw_only=True)
class CheckOptions:
    paths: tuple[str, ...]
    target: str | None = None
    select: str | None = None  # None: the project config's, else every rule
    ignore: str | None = None
    hub: HubOptions | None = None  # --from-hub: every drafter against this repo (or the one it came from)
    expect_sha256: str | None = None
    no_cache: bool = False  # --no-cache: neither read nor write the transformers-view cache
    launch: Launch | None = None  # preflight: the engine command the drafter is checked against
    project: ProjectConfig = NO_PROJECT  # per-drafter upstream and target, per-file ignores
    offline: bool = False  # answer Hub questions from the cache only (also for the project's upstreams)
    config: str | None = None  # --config FILE
    isolated: bool = False  # --isolated: no project config
    fail_on: Severity | None = None  # --fail-on / --strict; None: the project's, else the command's default
    # The gates (preflight, hooks): fail on warnings by default, compare with upstream whenever the repo
    # can be known without being told (a cache snapshot path, the lock's record of where the file came from).
    gate: bool = False
    engine: EngineCheck | None = None  # preflight: what the launch's own engine answered (commands/engine_check)
    # The environment the Hub settings are read from (sources/hub.py:settings): preflight's is the engine's
    # endpoint, token, offline switch and cache; None: this process's.
    hub_environ: Mapping[str, str] | None = None
    engines: tuple[str, ...] = ()  # --engine: what serves the drafters (else the project's `engines`)
    min_severity: Severity = Severity.INFO  # --min-severity: findings below it are left out of the report


def check_options(
    paths: Sequence[str | os.PathLike[str]],
    *,
    target: str | os.PathLike[str] | None = None,
    select: str | None = None,
    ignore: str | None = None,
    hub: HubOptions | None = None,
    expect_sha256: str | None = None,
    use_cache: bool = True,
    offline: bool = False,
    config: str | os.PathLike[str] | None = None,
    isolated: bool = False,
    fail_on: str | None = None,
    gate: bool = False,
    engines: Sequence[str] = (),
    min_severity: str = "info",
) -> CheckOptions:
    """The check command's options as its two callers hold them, the CLI's parsed options and the public API's
    arguments (any path-like, a severity by its name): the one place `check` builds its CheckOptions, so the
    two cannot drift apart."""
    if fail_on not in (None, "error", "warning"):
        raise UsageError(f'fail_on must be "error" or "warning", not {fail_on!r}')
    if min_severity not in ("info", "warning", "error"):
        raise UsageError(f'min_severity must be "info", "warning" or "error", not {min_severity!r}')
    return CheckOptions(
        paths=tuple(os.fspath(p) for p in paths),
        target=None if target is None else os.fspath(target),
        select=select,
        ignore=ignore,
        hub=hub,
        expect_sha256=expect_sha256,
        no_cache=not use_cache,
        offline=offline,
        config=None if config is None else os.fspath(config),
        isolated=isolated,
        fail_on=None if fail_on is None else Severity[fail_on.upper()],
        gate=gate,
        engines=tuple(engines),
        min_severity=Severity[min_severity.upper()],
    )


def resolved(options: CheckOptions) -> tuple[CheckOptions, ProjectConfig, tuple[Rule, ...], Severity]:
    """The options with the project config applied: which config, which rules, what fails."""
    start = Path(options.paths[0]) if options.paths and not remote.is_url(options.paths[0]) else Path.cwd()
    project = (
        options.project
        if options.project is not NO_PROJECT
        else resolve_project(start, options.config, options.isolated)
    )
    select = options.select if options.select is not None else project.select
    ignore = options.ignore if options.ignore is not None else project.ignore
    rules = select_rules(select, ignore) if select is not None or ignore is not None else ALL
    default = Severity.WARNING if options.gate else Severity.ERROR
    fail_on = options.fail_on or project.fail_on or default
    engines = served_engines(list(options.engines), lambda why: UsageError(f"--engine: {why}"))
    if options.min_severity > fail_on:
        # Findings that fail the run are never left out: a gate would fail on what it did not show.
        raise UsageError(
            f"--min-severity {options.min_severity.label} would hide {fail_on.label}s, which fail this run "
            f'(--fail-on error, or fail-on = "error" in the project config, accepts them)'
        )
    return replace(options, project=project, engines=engines), project, rules, fail_on


@dataclass(frozen=True, kw_only=True)
class FileSettings:
    """What applies to one config.json: its upstream, its target and its rules."""

    hub: HubOptions | None
    target: str | None
    rules: tuple[Rule, ...]
    found_by: FoundBy | None = None  # how `hub` was found (None: no upstream to compare with)
    identify: bool = True  # compared with the published drafters when no upstream is named (not `upstream = "none"`)


def settings_for(path: storage.Where, options: CheckOptions, rules: tuple[Rule, ...]) -> FileSettings:
    # The project config maps local and remote drafters; per-file ignores are globs over local paths.
    local = None if storage.is_remote(path) else path
    entry = options.project.model_for(path)
    hub, found_by = named_upstream(options.hub, entry, options.offline)
    if hub is None and options.gate and local is not None and repo_from_cache_path(local) is not None:
        pass  # a cache snapshot is its own upstream copy, verified offline (snapshot_upstream)
    elif hub is None and options.gate and known_upstream(path) is not None:
        hub = HubOptions(None, None, options.offline)
        found_by = "hf-path" if storage.is_remote(path) else "lock"
    if found_by == "option" and hub is not None and hub.repo is None:
        found_by = (
            "hf-path" if storage.is_remote(path) else "cache" if local and repo_from_cache_path(local) else "lock"
        )
    target = options.target if options.target is not None else entry.target if entry is not None else None
    ignored = options.project.ignored_for(local) if local is not None else ()
    if ignored:
        rules = tuple(r for r in rules if not any(r.id.startswith(i) for i in ignored))
    return FileSettings(
        hub=hub, target=target, rules=rules, found_by=found_by, identify=entry is None or entry.identify
    )


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or a SIGTERM the CLI turned into one) while the files were being checked: still an interrupt,
    carrying the report of the files checked before it, marked as not done (its `errors`), so that a machine
    format can still write its whole document."""

    def __init__(self, report: Report) -> None:
        super().__init__()
        self.report = report


def check(options: CheckOptions) -> Report:
    with storage.remembered_listings(cached=not options.no_cache):  # a remote tree is listed once
        return _check(options)


def error_report(message: str) -> Report:
    """The report of a check (or preflight) that could not run: no file, the reason as its one error. A run
    that exits 2 still writes one document in a machine format: CI parses stdout."""
    return Report(files=(), transformers_version=transformers_version(), tool_version=__version__, errors=(message,))


def _check(options: CheckOptions) -> Report:
    options, project, rules, fail_on = resolved(options)
    targets = _Targets(options.offline, options.hub_environ)
    if options.target is not None:
        targets.get(options.target)  # a bad --target is refused before any file is read
    check_sha256_option(options.expect_sha256)
    # explicit: the file itself, or the config.json of a model dir the user named.
    # A Hub id (org/name that is no path here) is checked where the engines would read it: the cache, or
    # a download at a commit.
    unlisted: list[str] = []  # subdirectories that could not be listed: reported, the rest checked
    dirs, found, missing = _located(options, unlisted)
    if not any(found.values()):  # nothing to check: the run cannot be made
        if len(missing) == 1:
            raise next(iter(missing.values()))
        raise UsageError("; ".join(str(exc) for exc in missing.values()))
    paths = [(p, p == dirs[given] or p.parent == dirs[given]) for given, listed in found.items() for p in listed]
    doubts = project.unmatched([p for p, _ in paths], list(dirs.values()))
    views = Views(cached=not options.no_cache) if needs(rules, "effective") else None
    published = catalog.load() if needs(rules, "catalog") else None  # read once a run
    weights_seen: dict[storage.Where, tuple[Weights | None, str | None]] = {}
    if options.hub is not None and options.hub.repo:
        _one_drafter_per_repo(options.hub.repo, paths, project)

    def one(i: int) -> FileReport | str | _Partial:
        path, explicit = paths[i]
        try:
            raw = storage.read(path)
        except PathError as exc:
            return str(exc)
        settings = settings_for(path, options, rules)
        target = targets.get(settings.target) if settings.target is not None else None
        doc = parse(raw)
        try:
            inputs = gather(path, doc, explicit, options, settings, target, views, weights_seen, published)
        except HubError as exc:
            if options.hub is not None and options.hub.repo:
                raise  # the repo the command line names: the comparison asked for cannot be made at all
            # An upstream this file has of its own (the project config's, its lock's) that cannot be read now:
            # said for this file, which is checked without it, as is the rest of the tree.
            why = f"{storage.display(path)}: not compared with {_upstream_named(path, settings, options)}: {exc}"
            alone = replace(settings, hub=None, found_by=None)
            inputs = gather(path, doc, explicit, options, alone, target, views, weights_seen, published)
            return _Partial(lint(inputs, settings.rules), why)
        return lint(inputs, settings.rules)

    # Anything that may talk to the Hub stays in this process: --from-hub, a project upstream, a gate.
    # Remote paths too: the forked workers would share the parent's connections.
    local = (
        options.hub is None
        and not options.gate
        and not any(m.upstream for m in project.models)
        and not any(storage.is_remote(p) for p, _ in paths)
    )
    reports: list[FileReport] = []
    # Each path the user gave has its own answer: one that leads to no config.json is said, the rest checked.
    errors: list[str] = [*(str(exc) for exc in missing.values()), *unlisted]
    hidden = done = 0

    def report(errors: list[str]) -> Report:
        return Report(
            files=tuple(reports),
            transformers_version=transformers_version(),
            tool_version=__version__,
            errors=tuple(errors),
            warnings=doubts,
            fail_on=fail_on,
            gate=options.gate,
            served=served(options),
            served_by=served_by(options),
            min_severity=options.min_severity,
            hidden=hidden,
        )

    def kept(outcome: FileReport) -> FileReport:
        nonlocal hidden
        shown = tuple(x for x in outcome.findings if x.severity >= options.min_severity)
        hidden += len(outcome.findings) - len(shown)
        return outcome if len(shown) == len(outcome.findings) else replace(outcome, findings=shown)

    try:
        with progress.counting(len(paths), "checked", "files") as count:
            for outcome in _each(one, len(paths), parallel=local):
                count.advance()
                if isinstance(outcome, str):
                    errors.append(outcome)
                elif isinstance(outcome, _Partial):
                    reports.append(kept(outcome.report))
                    errors.append(outcome.error)
                else:
                    reports.append(kept(outcome))
                done += 1
                _held_for_a_test(done)
    except KeyboardInterrupt as exc:
        why = f"interrupted after {done} of {len(paths)} files: the rest were not checked"
        raise Interrupted(report([*errors, why])) from exc
    return report(errors)


# Tests only: "N:FIFO" makes the run, once N files are checked, write a line into FIFO (a named pipe the test
# reads, so it knows the run is under way) and wait there up to a minute, for the signal the test then sends.
TEST_HOLD = "DFLASH_CFG_TEST_HOLD"


def _held_for_a_test(done: int) -> None:
    setting = os.environ.get(TEST_HOLD)
    if not setting:
        return
    count, _, fifo = setting.partition(":")
    if count.isdigit() and done == int(count) and fifo:
        with open(fifo, "w", encoding="utf-8") as reached:
            reached.write(f"checked {done}\n")
        time.sleep(60)  # a signal's handler raises out of it


def _located(
    options: CheckOptions, unlisted: list[str]
) -> tuple[dict[str, storage.Where], dict[str, list[storage.Where]], dict[str, DflashCfgError]]:
    """Each path given: where it is (a Hub id is checked where the engines would read it: the cache, or a download
    at a commit), the config.json files under it, or why it leads to none (missing, unreadable, no config.json:
    a typo in a CI path must not pass as "0 files, all clean")."""
    dirs: dict[str, storage.Where] = {}
    found: dict[str, list[storage.Where]] = {}
    missing: dict[str, DflashCfgError] = {}
    for given in options.paths:
        try:
            dirs[given] = model_dir(given, offline=options.offline, environ=options.hub_environ)
            own: list[str] = []
            found[given] = storage.discover(dirs[given], own)
        except DflashCfgError as exc:
            missing[given] = exc
            continue
        if not found[given]:
            none = f"no config.json under {storage.display(dirs[given])}"
            missing[given] = PathError(own[0]) if own else UsageError(none)
        else:
            unlisted.extend(own)
    return dirs, found, missing


def served(options: CheckOptions) -> Served:
    """What serves the drafters: the launch's engine at its release (preflight), else --engine, else the
    project's `engines` (any release of each)."""
    if options.launch is not None:
        return ((options.launch.engine, options.launch.engine_version),)
    # Both were held to the served engines when the options were settled (`served_engines`): the filter only types.
    return tuple((name, None) for name in options.engines or options.project.engines if is_engine(name))


def served_by(options: CheckOptions) -> str:
    """Who said what serves the drafters (`served`), as the summary names it; "" when nothing did."""
    if options.launch is not None:
        return "the launch"
    if options.engines:
        return "--engine"
    source = options.project.source
    if not options.project.engines or source is None:
        return ""
    shown = os.path.relpath(source)
    return f"engines in {source if shown.startswith('..') else shown}"


def _one_drafter_per_repo(repo: str, paths: list[tuple[storage.Where, bool]], project: ProjectConfig) -> None:
    """--from-hub REPO compares with one repo: refuse, before any request, a tree of several drafters
    that the project config does not map each to its own upstream."""
    drafters = []
    for path, explicit in paths:
        if project.model_for(path) is not None:
            continue
        try:
            doc = parse(storage.read(path))
        except PathError:
            continue  # reported with the file later
        if classify(doc, explicit)[0] != "skipped":
            drafters.append(path)
        if len(drafters) == 2:
            raise UsageError(
                f"--from-hub {repo} names one repo, but {storage.display(drafters[0])} and "
                f"{storage.display(drafters[1])} are two drafters: check them one at a time, or map each to its "
                "upstream in the project config ([[tool.dflash-cfg.models]])"
            )


class _Targets:
    """Each target read once per run, whether named by --target or by the project config."""

    def __init__(self, offline: bool, environ: Mapping[str, str] | None) -> None:
        self.offline = offline
        self.environ = environ
        self.seen: dict[str, Target] = {}

    def get(self, name: str) -> Target:
        if name not in self.seen:
            found = load_target_option(name, offline=self.offline, environ=self.environ)
            assert found is not None  # a name always gives a target or an error
            self.seen[name] = found
        return self.seen[name]


@dataclass(frozen=True)
class _Partial:
    """A file checked without the upstream comparison it was to have: its report, and why (a run error)."""

    report: FileReport
    error: str


_NAMED_BY = {
    "cache": "the Hugging Face cache snapshot it is in",
    "lock": "the lock dflash-cfg wrote",
    "hf-path": "its hf:// path",
}


def _upstream_named(path: storage.Where, settings: FileSettings, options: CheckOptions) -> str:
    """The upstream a file was to be compared with, and who named it: the project config's entry (which file),
    or how it was known."""
    repo = settings.hub.repo if settings.hub is not None else None
    entry = options.project.model_for(path)
    if settings.found_by == "project" and entry is not None and options.project.source is not None:
        return f'upstream = "{entry.upstream}" of its [[models]] entry in {files.display(options.project.source)}'
    named = f" {repo}" if repo else ""
    return f"its upstream{named} (found by {_NAMED_BY.get(settings.found_by or '', 'the command line')})"


def _each(
    one: Callable[[int], FileReport | str | _Partial], count: int, parallel: bool
) -> Iterator[FileReport | str | _Partial]:
    """one(0), one(1), ... in order. A tree is spread over the cores: the first drafter is read here (it
    loads transformers on a cache miss, builds the schema predicate), then this process and forked children
    share the rest, the children inheriting all of that. Small inputs, and anything that talks to the Hub,
    stay in this process."""
    done = 0
    while done < count:
        outcome = one(done)
        done += 1
        yield outcome
        report = outcome.report if isinstance(outcome, _Partial) else outcome
        if not isinstance(report, str) and report.kind != "skipped":
            break
    if parallel and count - done > 1:
        from dflash_cfg.commands import pool  # pickle, select, fcntl and signal: only a tree pays for them

        jobs = pool.jobs(count - done)
        if jobs > 1:
            yield from pool.ordered_map(one, range(done, count), jobs)
            return
    yield from (one(i) for i in range(done, count))


def gather(
    path: storage.Where,
    doc: Document,
    explicit: bool,
    options: CheckOptions,
    settings: FileSettings,
    target: Target | None,
    views: Views | None,
    weights_seen: dict[storage.Where, tuple[Weights | None, str | None]],
    published: Catalog | None = None,
) -> Inputs:
    """Everything `lint` reads about one file, read now: only what a drafter file and the selected
    rules need, so a tree of target models never has its shards opened or the Hub asked."""
    shown = storage.display(path)
    kind, _ = classify(doc, explicit)
    if kind == "skipped":
        return Inputs(path=shown, doc=doc, explicit=explicit)
    weights, weights_error = None, None
    if needs(settings.rules, "weights"):
        weights, weights_error = weights_beside(path.parent, weights_seen)
    facts = integrity(path, doc.raw, options.expect_sha256)
    found_by = settings.found_by
    upstream = upstream_for(path, settings.hub, options.hub_environ, gate=options.gate) if settings.hub else None
    if upstream is None and settings.identify and facts.edited_snapshot is None:
        upstream = snapshot_upstream(path, doc.raw)
        found_by = "cache" if upstream is not None else None
    return drafter_inputs(
        path=shown,
        doc=doc,
        explicit=explicit,
        settings=settings,
        target=target,
        weights=(weights, weights_error),
        views=views,
        upstream=upstream,
        found_by=found_by,
        facts=facts,
        published=published,
        launch=options.launch,
        engine=options.engine,
    )


def drafter_inputs(
    *,
    path: str,
    doc: Document,
    explicit: bool,
    settings: FileSettings,
    target: Target | None,
    weights: tuple[Weights | None, str | None],
    views: Views | None,
    upstream: HubFile | None,
    found_by: FoundBy | None,
    facts: Integrity | None,
    published: Catalog | None,
    launch: Launch | None = None,
    engine: EngineCheck | None = None,
) -> Inputs:
    """A drafter file's Inputs from what was read about it: the engine's view of it and of its upstream copy, and
    the catalog where the file takes part in identification. Shared by `check` and `fix`'s re-check, so the two
    lint the same inputs."""
    upstream_doc = parse(upstream.data) if upstream is not None else None
    return Inputs(
        path=path,
        doc=doc,
        explicit=explicit,
        target=target,
        weights=weights[0],
        weights_error=weights[1],
        view=views.of(doc) if views else None,
        upstream=upstream,
        upstream_doc=upstream_doc,
        upstream_view=views.of(upstream_doc) if views and upstream_doc else None,
        integrity=facts,
        launch=launch,
        engine=engine,
        catalog=published if settings.identify and needs(settings.rules, "catalog") else None,
        found_by=found_by,
        target_repo=target_repo(settings.target),
    )


def snapshot_upstream(path: storage.Where, raw: bytes) -> HubFile | None:
    """A config.json in a Hugging Face cache snapshot is that repo's file at that commit: its own upstream copy,
    proven offline by its blob's name (the git blob id). None elsewhere, or where the proof is not there."""
    if storage.is_remote(path):
        return None
    found = repo_from_cache_path(path)
    blob = _snapshot_blob(path)
    if found is None or blob is None or git_blob_sha1(raw) != blob:
        return None
    repo, commit = found
    return HubFile(repo=repo, revision=commit, commit=commit, blob_id=blob, data=raw)


def _snapshot_blob(path: Path) -> str | None:
    """The git blob id a snapshot file links to (huggingface_hub names blobs after it), else None."""
    if not os.path.islink(path):
        return None
    name = os.path.basename(os.path.realpath(path))
    return name if _GIT_BLOB.match(name) else None


def target_repo(name: str | None) -> str | None:
    """The Hub repo id of a target named by its id, or found in a cache snapshot (None: a local dir or no target)."""
    if name is None or remote.is_url(name):
        return None
    cached = repo_from_cache_path(Path(os.path.abspath(name)))
    if cached is not None:
        return cached[0]
    if os.path.exists(name):
        return None
    return name if _REPO_ID.match(name) else None


def integrity(path: storage.Where, raw: bytes, expect_sha256: str | None) -> Integrity:
    """The lock entry, the expected hash and the symlink facts of one config.json."""
    entry, lock_error = None, None
    try:
        entry = read_lock(path)
    except LockError as exc:
        lock_error = str(exc)
    except PathError as exc:  # a lock object that cannot be read (remote): said, as a corrupt one is
        lock_error = str(exc)
    if storage.is_remote(path):
        sha256 = hashlib.sha256(raw).hexdigest() if len(raw) <= MAX_BYTES else storage.hashes(path)[0]
        return Integrity(
            sha256=sha256,
            lock=entry,
            lock_error=lock_error,
            expect_sha256=expect_sha256,
            link_target=None,
            link_into_blobs=False,
            in_snapshot=False,
        )
    link = os.path.realpath(path) if os.path.islink(path) else None
    # A file past the parser's limit was read only in part; its hash is still the whole file's.
    sha256 = hashlib.sha256(raw).hexdigest() if len(raw) <= MAX_BYTES else files.hashes(path)[0]
    snapshot = repo_from_cache_path(path)
    blob = _snapshot_blob(path) if snapshot is not None else None
    edited = None
    if snapshot is not None and blob is not None and len(raw) <= MAX_BYTES and git_blob_sha1(raw) != blob:
        edited = (snapshot[0], snapshot[1], blob)
    return Integrity(
        sha256=sha256,
        lock=entry,
        lock_error=lock_error,
        expect_sha256=expect_sha256,
        link_target=link,
        link_into_blobs=bool(link and _BLOB.search(link)),
        in_snapshot=snapshot is not None,
        edited_snapshot=edited,
    )


def weights_beside(
    folder: storage.Where, seen: dict[storage.Where, tuple[Weights | None, str | None]]
) -> tuple[Weights | None, str | None]:
    if folder not in seen:
        try:
            seen[folder] = (read_weights_remote(folder) if storage.is_remote(folder) else read_weights(folder), None)
        except WeightsError as exc:
            seen[folder] = (None, str(exc))
    return seen[folder]

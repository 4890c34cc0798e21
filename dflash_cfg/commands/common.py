"""What several commands share: which rules, which file, which upstream, and the engine's view."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from dflash_cfg.errors import HubError, HubUnreachable, LockError, TargetError, UsageError
from dflash_cfg.jsondoc.document import Document
from dflash_cfg.lint.rules import ALL, Rule
from dflash_cfg.model import Effective, FoundBy, HubFile, HubOptions, Target
from dflash_cfg.sources import files, remote, storage
from dflash_cfg.sources.cache import EffectiveCache, default_root
from dflash_cfg.sources.hub import cache_root, fetch_config, repo_from_cache_path
from dflash_cfg.sources.lockfile import read_lock
from dflash_cfg.sources.project import ModelEntry
from dflash_cfg.sources.project import resolve as resolve_project
from dflash_cfg.sources.target import TARGET_FILES, load_target
from dflash_cfg.sources.where import model_dir

SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")


def select_rules(select: str | None, ignore: str | None) -> tuple[Rule, ...]:
    """--select/--ignore: comma-separated ids, id prefixes (``DF2`` = every DF2xx rule) or rule names."""

    names = {r.name: r.id for r in ALL}  # a rule's kebab name (`window-without-sliding`), as `rules NAME` takes it

    def parse(spec: str) -> list[str]:
        items = [names.get(s.strip().lower(), s.strip().upper()) for s in spec.split(",") if s.strip()]
        unknown = [i for i in items if not any(r.id.startswith(i) for r in ALL)]
        if unknown:
            raise UsageError(f"unknown rule id {', '.join(unknown)} (see `dflash-cfg rules`)")
        return items

    chosen = ALL
    if select is not None:
        wanted = parse(select)
        if not wanted:
            raise UsageError(f"--select {select!r} names no rule (comma-separated ids or prefixes, e.g. DF2,DF601)")
        chosen = tuple(r for r in chosen if any(r.id.startswith(w) for w in wanted))
    if ignore is not None:
        dropped = parse(ignore)
        chosen = tuple(r for r in chosen if not any(r.id.startswith(d) for d in dropped))
    if not chosen:  # a check that runs no rule would pass anything
        raise UsageError("--select/--ignore leave no rule to run (see `dflash-cfg rules`)")
    return chosen


def check_sha256_option(value: str | None) -> None:
    if value is not None and not SHA256.match(value):
        raise UsageError(f"--expect-sha256 {value!r} is not a sha256 (64 hex digits)")


def load_target_option(
    option: str | None, *, offline: bool = False, environ: Mapping[str, str] | None = None
) -> Target | None:
    """The target model: a dir or config.json, or a Hub id (from the cache, else the Hub, as engines
    resolve it; the Hub settings read from `environ`, None: ours). A drafter's own config is refused: its
    depth is not the target's."""
    if option is None:
        return None
    try:
        where = model_dir(option, offline=offline, extra=TARGET_FILES, environ=environ)
        return load_target(where)
    except TargetError as exc:
        raise TargetError(f"--target: {exc}") from None


def one_config(path_arg: str) -> storage.Where:
    """The single config.json a command that works on one file was pointed at (absolute). A model dir's
    own config.json is taken without searching the tree (an unrelated unreadable subdir is no matter)."""
    if remote.is_url(path_arg):
        url = storage.locate(path_arg)
        found_remote = storage.discover(url)
        if storage.probe(url) == "dir" and url / files.CONFIG in found_remote:
            return url / files.CONFIG
        if len(found_remote) != 1:
            raise UsageError(
                f"{path_arg}: expected one config.json (a model dir or the file), found {len(found_remote)}"
            )
        return found_remote[0]
    given = Path(path_arg)
    if files.probe(given) == "dir" and files.probe(given / files.CONFIG) == "file":
        return Path(os.path.abspath(given / files.CONFIG))
    found = files.discover(given)
    if len(found) != 1:
        raise UsageError(f"{path_arg}: expected one config.json (a model dir or the file), found {len(found)}")
    return Path(os.path.abspath(found[0]))


def known_upstream(path: storage.Where) -> tuple[str, str] | None:
    """The Hub repo and revision a drafter config came from, when that can be known without being told:
    the Hub repo and commit of an hf:// path, the cache snapshot it lives in, else the source dflash-cfg
    recorded when it last wrote it."""
    cached = remote.hub_commit(path) if storage.is_remote(path) else repo_from_cache_path(path)
    if cached is not None:
        return cached
    try:
        entry = read_lock(path)
    except LockError:
        entry = None
    if entry is not None and entry.source is not None:
        return entry.source.repo, entry.source.revision
    return None


def project_entry(path: storage.Where) -> ModelEntry | None:
    """The project config's `[[models]]` entry for a drafter, from the config that applies where it lives (a
    remote path: the current directory's), as `check` finds it without --config or --isolated."""
    start = Path.cwd() if storage.is_remote(path) else path
    return resolve_project(start, None, False).model_for(path)


def named_upstream(
    hub: HubOptions | None, entry: ModelEntry | None, offline: bool
) -> tuple[HubOptions | None, FoundBy | None]:
    """The upstream a drafter is compared with where one is named, and who named it: --from-hub REPO; else the
    project config's `upstream` for the drafter (with --from-hub without REPO, or with no --from-hub at all:
    `offline` then); else --from-hub without REPO as given (the repo is then known from where the file lives,
    `known_upstream`, or not at all). The one place check, diff and fix settle it, so they compare alike."""
    if hub is not None and hub.repo:
        return hub, "option"
    if entry is not None and entry.upstream is not None:
        if hub is None:
            return HubOptions(entry.upstream, entry.revision, offline), "project"
        return HubOptions(entry.upstream, hub.revision or entry.revision, hub.offline), "project"
    return hub, None if hub is None else "option"


def repo_for(path: storage.Where, hub: HubOptions) -> tuple[str, str]:
    """The Hub repo and revision a drafter config is compared with: as given, else as known."""
    if hub.repo:
        return hub.repo, hub.revision or "main"
    known = known_upstream(path)
    if known is not None:
        return known[0], hub.revision or known[1]
    raise UsageError(
        f"cannot tell which Hub repo {path} comes from: pass it, e.g. --from-hub ORG/NAME, or name it as `upstream` "
        "in the project config's [[tool.dflash-cfg.models]] entry for the drafter"
    )


def upstream_for(
    path: storage.Where, hub: HubOptions, environ: Mapping[str, str] | None = None, *, gate: bool = False
) -> HubFile:
    """The upstream config.json `path` is compared with; the Hub settings read from `environ` (None: ours).

    `gate`: a commit hook or a launch gate, which must work on a laptop on a train once the project records its
    upstream: with the Hub unreachable, the copy in the local cache (at the commit the branch last resolved to)
    is compared with instead, and the report says so."""
    try:
        return _upstream_for(path, hub, environ)
    except HubUnreachable as exc:
        if not gate or hub.offline:
            # A comparison can be made with the cached copy instead: the one place --offline is the advice.
            raise HubUnreachable(f"{exc}; use --offline to compare with the local cache") from None
        unreachable = str(exc)
    try:
        found = _upstream_for(path, replace(hub, offline=True), environ)
    except HubError:
        repo, revision = repo_for(path, hub)
        raise HubUnreachable(
            f"{unreachable}, and {repo}@{revision} is not in the local cache to compare with: run the check once "
            f"online (or `hf download {repo} config.json`), after which it works offline; or skip this hook once "
            "(SKIP=dflash-cfg git commit)"
        ) from None
    return replace(found, unreachable=unreachable)


def _upstream_for(path: storage.Where, hub: HubOptions, environ: Mapping[str, str] | None) -> HubFile:
    repo, revision = repo_for(path, hub)
    if storage.is_remote(path):
        return fetch_config(repo, revision, offline=hub.offline, environ=environ)
    cached = repo_from_cache_path(path)
    if hub.repo is None and hub.revision is None and cached is not None:
        # A file in a cache snapshot, compared at that snapshot's commit: the cache it lives in holds the
        # upstream copy (any cache: the user's, or one mounted into an engine's container).
        return fetch_config(repo, revision, offline=hub.offline, cache_dir=cache_root(path), environ=environ)
    return fetch_config(repo, revision, offline=hub.offline, environ=environ)


class Views:
    """The engine's config class on parsed documents, through the content cache (keyed by the sha256
    of the bytes the document was parsed from), or uncached."""

    def __init__(self, cached: bool = True) -> None:
        from dflash_cfg.sources.views import view  # cheap: transformers loads on the first miss only

        self._cache = EffectiveCache(view, default_root() if cached else None)

    def of(self, doc: Document) -> Effective | None:
        """None for a document that is not a JSON object (no config class reads it). A speculators-format
        file is viewed as vLLM loads it: translated, through its bare config class."""
        from dflash_cfg.lint.speculators import is_speculators, translate
        from dflash_cfg.sources.views import SPECULATORS, class_key

        if not isinstance(doc.data, dict):
            return None
        sha256 = hashlib.sha256(doc.raw).hexdigest()
        if is_speculators(doc.data):
            return self._cache.get(sha256, translate(doc.data).data, SPECULATORS)
        return self._cache.get(sha256, doc.data, class_key(doc.data))

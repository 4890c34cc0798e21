"""`catalog update`: refresh the user's catalog of published drafters from the Hub; `catalog show`: the catalog.

update lists each author's model repos (one listing), leaves out what the listing shows is no drafter (no
config.json; a config the Hub indexed that is another model and no tag saying otherwise; never the name), and for
every other repo reads model_info (the commit, the card's base_model, gating, the date) and config.json at that
commit, verified against its git blob id. config.json is the judge (lint.linter.classify): a DFlash, DFlash2 or
speculators-format drafter is recorded as a revision (trust "hub"); anything else is skipped with why. Each base
model's config.json is read once for the target's shape; one that cannot be read is recorded as unknown.

The reads run on `jobs` threads; the main thread alone holds the catalog, records what the threads return, and
writes the user's catalog atomically every few new revisions, at the end, at the deadline and on Ctrl-C, so an
interrupted run loses at most the repos in flight and a re-run skips every repo whose commit the catalog holds
(the listing says the commit: no request at all). The threads are daemons: a read still waiting on the Hub (a
Retry-After, a page huggingface_hub retries) when the deadline passes is left behind, not waited for.
"""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from dflash_cfg import progress
from dflash_cfg.commands.readers import Readers
from dflash_cfg.errors import CatalogError, DflashCfgError, HubError, UsageError
from dflash_cfg.jsondoc.document import parse
from dflash_cfg.lint.linter import classify
from dflash_cfg.lint.published import revision_of, target_shape
from dflash_cfg.model.catalog import (
    HUB_DEADLINE,
    HUB_JOBS,
    HUB_MAX_JOBS,
    Catalog,
    Published,
    Revision,
    Shape,
    TargetShape,
)
from dflash_cfg.model.catalog_update import AuthorTally, BaseNote, CatalogView, NewRevision, RepoNote, UpdateResult
from dflash_cfg.sources import hub, publishers
from dflash_cfg.sources.catalog import (
    add_revision,
    catalog_path,
    load,
    merge,
    read_user,
    shipped,
    to_json,
    verified,
    write_user,
)
from dflash_cfg.sources.publishers import CARD, Deadline, Listed, RepoInfo

SAVE_EVERY = 8  # new revisions between two writes of the user's catalog
SAVE_INTERVAL = 2.0  # seconds: and at least this often while any are unsaved
# Tags a publisher puts on a drafter: with one of these, a repo is read whatever its indexed config says.
DRAFTER_TAGS = ("dflash", "dflash2", "speculators", "speculative-decoding", "speculator")
_AUTHOR = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?$")
EMPTY = Catalog(drafters=())


@dataclass(frozen=True, kw_only=True)
class UpdateOptions:
    authors: tuple[str, ...]
    repos: tuple[str, ...] = ()
    jobs: int = HUB_JOBS
    deadline: float = HUB_DEADLINE
    offline: bool = False

    def __post_init__(self) -> None:
        if not self.authors and not self.repos:
            raise UsageError("name an AUTHOR (a Hub user or organisation) or a --repo ORG/NAME to update from")
        if not 1 <= self.jobs <= HUB_MAX_JOBS:
            raise UsageError(f"--jobs {self.jobs}: give 1 to {HUB_MAX_JOBS}")
        if not self.deadline > 0:
            raise UsageError(f"--deadline {self.deadline:g}: give a number of seconds above 0")
        for author in self.authors:
            if not _AUTHOR.match(author):
                raise UsageError(f"{author!r} is not a Hub user or organisation name")
        for repo in self.repos:
            if repo.count("/") != 1:
                raise UsageError(f"--repo {repo!r}: give ORG/NAME")
            hub.check_repo_id(repo)


# --- what the listing says ------------------------------------------------------------------------------------


def config_of(files: tuple[str, ...] | None) -> str | None:
    """The drafter's config.json in a repo of these files: the top-level one, else the only one in a folder (a
    drafter published beside its target, as dflash/config.json); None: no config.json. Unknown files: the top's."""
    if files is None or hub.CONFIG in files:
        return hub.CONFIG
    nested = [f for f in files if f.endswith("/" + hub.CONFIG) and f.count("/") == 1]
    return nested[0] if len(nested) == 1 else None


def listing_says_no(row: Listed) -> str | None:
    """Why the listing alone shows `row` is no drafter; None: read its config.json. Never by the name: a drafter
    may be named anything, and a repo named "...-DFlash" may hold a GGUF or a merged target."""
    if config_of(row.files) is None:
        return "no config.json"
    if any(tag.lower() in DRAFTER_TAGS for tag in row.tags) or not row.config:
        return None
    config = row.config
    archs = config.get("architectures")
    names = [a for a in archs if isinstance(a, str)] if isinstance(archs, list) else []
    model_type = config.get("model_type")
    if any(
        (
            any("dflash" in n.lower() or "speculator" in n.lower() for n in names),
            "dflash_config" in config or "speculators_model_type" in config or "speculators_config" in config,
            isinstance(model_type, str) and ("dflash" in model_type.lower() or "speculator" in model_type.lower()),
        )
    ):
        return None
    if not names and not isinstance(model_type, str):
        return None  # the Hub indexed nothing that tells
    shown = f"architectures {names}" if names else f"model_type {model_type!r}"
    return f"another model by its listing ({shown}, no DFlash tag)"


# --- the reads, on the threads --------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Read:
    author: str
    repo: str
    kind: Literal["new", "unchanged", "skipped", "failed"]
    why: str | None = None
    info: RepoInfo | None = None
    base_model: str | None = None
    revision: Revision | None = None
    shape: Shape | None = None


@dataclass(frozen=True)
class _Base:
    repo: str
    shape: TargetShape | None
    why: str | None


def _read(author: str, repo: str, known: frozenset[str], s: hub.Settings, deadline: Deadline) -> _Read:
    """One repo: model_info, then (at a commit the catalog lacks) config.json at that commit, judged."""
    try:
        info = publishers.repo_info(repo, s, deadline)
    except DflashCfgError as exc:
        return _Read(author=author, repo=repo, kind="failed", why=str(exc))
    if info.sha in known:
        return _Read(author=author, repo=repo, kind="unchanged", info=info)
    name = config_of(info.files)
    if name is None:
        return _Read(author=author, repo=repo, kind="skipped", why="no config.json", info=info)
    try:
        fetched = publishers.fetch_file(repo, info.sha, name, s, deadline, info.blobs.get(name))
    except DflashCfgError as exc:
        return _Read(author=author, repo=repo, kind="failed", why=str(exc), info=info)
    doc = parse(fetched.data)
    if not isinstance(doc.data, dict):
        problem = doc.problems[0].what if doc.problems else "not an object"
        return _Read(
            author=author,
            repo=repo,
            kind="skipped",
            why=f"{name} cannot be read as a JSON object ({problem})",
            info=info,
        )
    kind, why = classify(doc, explicit=False)
    if kind == "skipped":
        return _Read(author=author, repo=repo, kind="skipped", why=why, info=info)
    revision, shape = revision_of(fetched.data, commit=info.sha, date=info.date, trust="hub", source=fetched.url)
    base = info.base_model
    if base is None and not info.card and info.files is not None and CARD in info.files:
        # A Hub answer without cardData: the card's own front matter names the base model.
        with contextlib.suppress(DflashCfgError):
            base = publishers.fetch_card(repo, info.sha, s, deadline, info.blobs.get(CARD))
    return _Read(author=author, repo=repo, kind="new", info=info, base_model=base, revision=revision, shape=shape)


def _base(repo: str, s: hub.Settings, deadline: Deadline) -> _Base:
    try:
        data, why = publishers.fetch_base(repo, s, deadline)
    except DflashCfgError as exc:
        return _Base(repo, None, str(exc))
    if data is None:
        return _Base(repo, None, why)
    doc = parse(data)
    shape = target_shape(doc.data)
    return _Base(repo, shape, None if shape is not None else "its config.json gives no depth, width or vocabulary")


# --- the run --------------------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class _Tally:
    """One author's counts while the run goes (the main thread's only)."""

    author: str
    listed: int | None = None
    drafters: list[str] = field(default_factory=list)
    new: list[NewRevision] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[RepoNote] = field(default_factory=list)
    failed: list[RepoNote] = field(default_factory=list)
    not_done: list[str] = field(default_factory=list)
    error: str | None = None

    def frozen(self) -> AuthorTally:
        return AuthorTally(
            author=self.author,
            listed=self.listed,
            drafters=tuple(sorted(self.drafters, key=str.lower)),
            new=tuple(sorted(self.new, key=lambda n: n.repo.lower())),
            unchanged=tuple(sorted(self.unchanged, key=str.lower)),
            skipped=tuple(sorted(self.skipped, key=lambda n: n.repo.lower())),
            failed=tuple(sorted(self.failed, key=lambda n: n.repo.lower())),
            not_done=tuple(sorted(self.not_done, key=str.lower)),
            error=self.error,
        )


class _Run:
    """The main thread's state: the user's catalog as it grows, and the tallies."""

    def __init__(self, options: UpdateOptions, path: Path, user: Catalog, s: hub.Settings, deadline: Deadline):
        self.options, self.path, self.s, self.deadline = options, path, s, deadline
        self.entries: dict[str, Published] = {e.repo.lower(): e for e in user.drafters}
        self.user, self.shipped = user, shipped()
        self.before = merge(self.shipped, user)
        self.tallies: dict[str, _Tally] = {}
        # Lower-cased repo id -> the id as first seen. The Hub's ids are unique regardless of case (the catalog's are
        # too): a second spelling is the same repo to it, and is reported rather than read twice.
        self.seen: dict[str, str] = {}
        self.outstanding: dict[int, tuple[str, str]] = {}  # key -> (kind, name): "list"/author, "repo"/repo, "base"
        self.bases: dict[str, TargetShape | None] = {
            e.base_model: e.base_shape
            for e in self.before.drafters
            if e.base_model is not None and e.base_shape is not None
        }
        self.base_notes: dict[str, BaseNote] = {}
        self.asked_bases: set[str] = set()
        self.repo_author: dict[str, str] = {}
        self.unsaved = 0
        self.saved_at = time.monotonic()
        self._keys = iter(range(1 << 62))
        self.pool: Readers | None = None
        self.count: progress.Count | None = None

    def tally(self, author: str) -> _Tally:
        return self.tallies.setdefault(author.lower(), _Tally(author=author))

    def _submit(self, kind: str, name: str, read: Callable[[], object]) -> None:
        assert self.pool is not None
        key = next(self._keys)
        self.outstanding[key] = (kind, name)
        self.pool.submit(key, read)

    def _grow(self, n: int) -> None:
        bar = None if self.count is None else self.count.bar
        if bar is not None and n:
            bar.total = (bar.total or 0) + n
            bar.refresh()

    def _done(self) -> None:
        if self.count is not None:
            self.count.advance()

    # -- what to read

    def start(self) -> None:
        for author in self.options.authors:
            self.tally(author)
            self._submit("list", author, functools.partial(publishers.listing, author, self.s, self.deadline))
        for repo in self.options.repos:
            self._repo(repo.split("/")[0], repo, None)

    def _repo(self, author: str, repo: str, listed_sha: str | None) -> None:
        """Read `repo` unless the catalog holds the commit its listing gave."""
        if self._twin(author, repo):
            return
        self.repo_author[repo.lower()] = author
        self._grow(1)
        tally = self.tally(author)
        # Each catalog by itself: read together, a shipped copy of a commit hides the user's of the same commit.
        known = verified(self.user, repo) | verified(self.shipped, repo)
        if listed_sha is not None and listed_sha in known:
            self._unchanged(tally, repo)
            self._done()
            return
        self._submit("repo", repo, functools.partial(_read, author, repo, known, self.s, self.deadline))

    def _twin(self, author: str, repo: str) -> bool:
        """Whether `repo` was seen already (and marks it seen); a spelling that differs only in case is reported."""
        first = self.seen.get(repo.lower())
        if first is None:
            self.seen[repo.lower()] = repo
            return False
        if first == repo:
            return True
        self._grow(1)
        note = f"the same repo id as {first} but for case (the Hub and the catalog tell ids apart regardless of case)"
        self.tally(author).skipped.append(RepoNote(repo=repo, why=note))
        self._done()
        return True

    def _unchanged(self, tally: _Tally, repo: str) -> None:
        tally.unchanged.append(repo)
        tally.drafters.append(repo)
        entry = self.entries.get(repo.lower()) or self.before.get(repo)
        if entry is not None and entry.base_model is not None:
            self._want_base(entry.base_model)

    def _want_base(self, base: str) -> None:
        """Read a base model's config.json, once a run, unless its shape is known."""
        if base in self.bases or base in self.asked_bases:
            return
        self.asked_bases.add(base)
        try:
            hub.check_repo_id(base)
        except HubError:
            self.base_notes[base] = BaseNote(repo=base, known=False, why="not a Hub repo id")
            return
        self._submit("base", base, functools.partial(_base, base, self.s, self.deadline))

    # -- what came back

    def take(self, out: object) -> None:
        if isinstance(out, publishers.Listing):
            self._listing(out)
        elif isinstance(out, _Read):
            self._read(out)
        elif isinstance(out, _Base):
            self._base(out)

    def _listing(self, out: publishers.Listing) -> None:
        tally = self.tally(out.author)
        if out.error is not None:
            tally.error = out.error
            return
        tally.listed = len(out.rows)
        for row in out.rows:
            why = listing_says_no(row)
            if why is None:
                self._repo(out.author, row.repo, row.sha)
            elif not self._twin(out.author, row.repo):
                self._grow(1)
                tally.skipped.append(RepoNote(repo=row.repo, why=why))
                self._done()

    def _read(self, out: _Read) -> None:
        tally = self.tally(out.author)
        self._done()
        if out.kind == "failed":
            tally.failed.append(RepoNote(repo=out.repo, why=out.why or "not read"))
        elif out.kind == "skipped":
            tally.skipped.append(RepoNote(repo=out.repo, why=out.why or "not a drafter"))
        elif out.kind == "unchanged":
            self._unchanged(tally, out.repo)
        elif out.revision is not None and out.info is not None:
            self._record(tally, out, out.revision, out.info)

    def _record(self, tally: _Tally, out: _Read, revision: Revision, info: RepoInfo) -> None:
        key = out.repo.lower()
        entry = self.entries.get(key)
        known = entry or self.before.get(out.repo)  # a card that no longer names its base keeps the one known
        base = out.base_model or (known.base_model if known else None)
        if entry is None:
            entry = Published(
                repo=out.repo,
                shape=out.shape,
                base_model=base,
                base_shape=self.bases.get(base) if base else None,
                revisions=(revision,),
                gated=info.gated,
            )
        else:
            entry = replace(
                add_revision(entry, revision),
                shape=out.shape or entry.shape,
                base_model=base,
                base_shape=(self.bases.get(base) if base else None) or entry.base_shape,
                gated=info.gated,
            )
        self.entries[key] = entry
        first = self.before.get(out.repo) is None
        tally.new.append(NewRevision(repo=out.repo, commit=info.sha, date=info.date, first=first))
        tally.drafters.append(out.repo)
        self.unsaved += 1
        if base is not None:
            self._want_base(base)

    def _base(self, out: _Base) -> None:
        self.bases[out.repo] = out.shape
        self.base_notes[out.repo] = BaseNote(repo=out.repo, known=out.shape is not None, why=out.why)
        if out.shape is None:
            return
        for key, entry in self.entries.items():
            if entry.base_model == out.repo and entry.base_shape != out.shape:
                self.entries[key] = replace(entry, base_shape=out.shape)
                self.unsaved += 1
        # A repo the run found unchanged whose entry is only in the shipped catalog gains nothing here: its
        # base shape is the shipped entry's business.

    # -- the user's catalog

    def catalog(self) -> Catalog:
        return Catalog(
            drafters=tuple(sorted(self.entries.values(), key=lambda e: e.repo.lower())),
            updated=_now(),
        )

    def save(self, force: bool = False) -> None:
        due = self.unsaved >= SAVE_EVERY or time.monotonic() - self.saved_at >= SAVE_INTERVAL
        if not self.unsaved or not (force or due):
            return
        ours = self.catalog()
        try:  # another run may have written meanwhile: keep its revisions too
            on_disk = read_user(self.path)
        except CatalogError:
            on_disk = None
        write_user(ours if on_disk is None else merge(on_disk, ours), self.path)
        self.unsaved = 0
        self.saved_at = time.monotonic()

    def loop(self) -> bool:
        """Take results until every read is done (True) or the deadline passes (False)."""
        assert self.pool is not None
        while self.outstanding:
            left = self.deadline.remaining()
            if left <= 0:
                return False
            try:
                key, out = self.pool.results.get(timeout=min(left, SAVE_INTERVAL))
            except queue.Empty:
                self.save()
                continue
            self.outstanding.pop(key, None)
            if isinstance(out, BaseException):
                raise out  # a bug in a read: the run's one-line internal error, after the finally saves
            self.take(out)
            self.save()
        return True

    def not_done(self) -> None:
        for kind, name in self.outstanding.values():
            if kind == "list":
                self.tally(name).error = f"the deadline passed first ({self.options.deadline:g} s)"
            elif kind == "repo":
                self.tally(self.repo_author[name.lower()]).not_done.append(name)
            else:
                self.base_notes[name] = BaseNote(repo=name, known=False, why="not read before the deadline")
        self.outstanding.clear()


def update(options: UpdateOptions, environ: Mapping[str, str] | None = None) -> UpdateResult:
    """Refresh the user's catalog from the Hub: see the module's doc."""
    s = hub.settings(options.offline, environ)
    path = catalog_path(environ)
    if path is None:
        raise CatalogError("no cache dir for the catalog: set XDG_CACHE_HOME (or HOME), or DFLASH_CFG_CATALOG")
    if s.offline:
        view = show(environ=environ)
        raise CatalogError(
            f"catalog update reads the Hub, and offline mode is on (--offline or HF_HUB_OFFLINE); {view.says}"
        )
    user = _user_catalog(path)
    started = time.monotonic()
    deadline = Deadline.after(options.deadline)
    run = _Run(options, path, user, s, deadline)
    finished = False
    with publishers.counting_retries() as retries, _progress(run):
        run.pool = Readers(options.jobs, "dflash-cfg-catalog")
        try:
            run.start()
            finished = run.loop()
            if finished:
                run.unsaved += 1  # a whole run is an update even when nothing changed: its time is recorded
        finally:
            run.pool.close()
            run.save(force=True)
    if not finished:
        run.not_done()
    final = read_user(path) or run.catalog()
    return UpdateResult(
        authors=tuple(t.frozen() for t in run.tallies.values()),
        bases=tuple(sorted(run.base_notes.values(), key=lambda b: b.repo.lower())),
        path=str(path),
        drafters=len(final.drafters),
        revisions=sum(len(e.revisions) for e in final.drafters),
        seconds=time.monotonic() - started,
        deadline=None if finished else options.deadline,
        retries=retries.count,
    )


@contextlib.contextmanager
def _progress(run: _Run) -> Iterator[None]:
    with progress.counting(0, "catalog update", "repos") as count:
        run.count = count
        try:
            yield
        finally:
            run.count = None


def _user_catalog(path: Path) -> Catalog:
    """The user's catalog to add to. One that cannot be read is moved aside (it is a cache: the Hub has it all),
    never overwritten unread."""
    try:
        return read_user(path) or EMPTY
    except CatalogError as exc:
        aside = path.with_name(path.name + ".unreadable")
        try:
            os.replace(path, aside)
        except OSError:
            raise CatalogError(f"{exc}; and it cannot be moved aside to start a new one") from None
        return EMPTY


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# --- show -----------------------------------------------------------------------------------------------------


def show(repo: str | None = None, environ: Mapping[str, str] | None = None) -> CatalogView:
    """The catalog as check uses it (shipped + the user's), and the user's file: where, since when."""
    path = catalog_path(environ)
    user = read_user(path) if path is not None else None
    catalog = load(environ)
    entry = None if repo is None else catalog.get(repo)
    if repo is not None and entry is None:
        raise CatalogError(
            f"{repo} is not in the catalog ({len(catalog.drafters)} drafters); "
            f"`dflash-cfg catalog update --repo {repo}` reads it from the Hub"
        )
    return CatalogView(
        catalog=catalog,
        user_path=None if path is None else str(path),
        user_exists=user is not None,
        user_updated=None if user is None else user.updated,
        now=_now(),
        document=to_json(catalog if entry is None else Catalog(drafters=(entry,), updated=catalog.updated)),
        repo=None if entry is None else entry.repo,
    )

"""`audit AUTHOR|ORG/NAME[@REV]...`: check the drafters published on the Hub, each with the target it was published for.

An AUTHOR is every DFlash-family drafter repo of that user or organisation: publishers.list_author lists its model
repos in one request a page, and catalog update's `listing_says_no` leaves out what the listing shows is no drafter
(a repo whose only config is in a subfolder is kept: some drafters live there). ORG/NAME is that repo at main,
ORG/NAME@REV at a branch, tag or commit. Each repo is read at one commit (model_info: the commit, the date, the
card's base_model, the files and their git blob ids), its config.json at that commit (verified against its blob
id), the last few commits' config.json for the history of its trained values, and its base model once a run
(config.json, generation_config.json and tokenizer_config.json). config.json is the judge of what is a drafter
(lint.linter.classify), and the linting is check's own: the Inputs a check of that file with `--target` gathers
(the file, the engine's config class on it, the target) handed to lint.linter.lint with every rule. Not gathered:
weights (not downloaded), an upstream or the catalog (the file is the published one), a lock. A repo whose card
names no base model, or one that cannot be read, is checked alone, and its row says so.

Memory stays bounded: each repo is read and linted by one of `jobs` threads, which reduces it at once to an
AuditRow (the findings as rule, severity, pointer and message; the trained values; counts) and drops the bytes.
Linting itself takes a lock: transformers' logging and warnings, which the engine's view captures, are process-wide
(and the GIL runs one thread's Python at a time anyway); the network is what runs concurrently.

Resumable: the main thread appends each finished row to a journal (one JSON line, keyed by repo, revision, commit,
dflash-cfg and transformers versions) in dflash-cfg's cache dir, named after the Hub endpoint and the arguments. A
re-run with the same arguments takes a row from it, without a request, when the listing (or the commit asked for)
gives the same commit; a repo named at a branch costs its one model_info. Only rows a re-run would make the same
are journaled: not a repo that could not be read, nor one whose base model or history failed for a reason that
may pass (gated, a server error). A complete run rewrites the journal to hold its own rows only.

Exit: 1 when a judged repo has a finding that fails it as it fails `check` (an error; lint.gate.verdict); else 2
when nothing at all could be judged and something asked for could not be read (a listing, a repo, the deadline);
else 0. Repos that could not be read are rows with the reason and are counted in the summary, but do not make an
audit that judged others exit 2.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path

from dflash_cfg import progress
from dflash_cfg.commands.catalog import listing_says_no
from dflash_cfg.commands.common import Views
from dflash_cfg.commands.readers import Readers
from dflash_cfg.errors import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    DflashCfgError,
    HubError,
    PathError,
    TargetError,
    UsageError,
)
from dflash_cfg.jsondoc.document import Document, parse
from dflash_cfg.jsondoc.encode import dumps
from dflash_cfg.lint.gate import verdict
from dflash_cfg.lint.linter import Inputs, classify, lint
from dflash_cfg.lint.published import engine_dict, same, trained_values
from dflash_cfg.lint.rules import ALL
from dflash_cfg.model import MISSING, Report, Severity, Target
from dflash_cfg.model.audit import AuditResult, AuditRow, AuditTarget, AuthorNote, Noted, Step, Values
from dflash_cfg.model.catalog import HUB_DEADLINE, HUB_JOBS, HUB_MAX_JOBS
from dflash_cfg.sources import audit_hub, hub, publishers
from dflash_cfg.sources.atomic import replace_atomically
from dflash_cfg.sources.cache import default_root
from dflash_cfg.sources.hfenv import usable_url
from dflash_cfg.sources.publishers import CARD, Deadline, Listed, NotFound, RepoInfo
from dflash_cfg.sources.views import transformers_version
from dflash_cfg.version import __version__

# Commits of each repo's history read for the trained values (the current one included): enough to show a retrain,
# at one request for the list and one GET a commit. Older revisions are shown, never judged: the exit code is about
# what the repo publishes now (or at the REV asked for).
HISTORY = 5
JOURNAL_FORMAT = 1
_AUTHOR = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?$")  # as catalog update's


# --- what was asked ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Asked:
    """One argument: an author, or a repo at a revision."""

    author: str | None = None
    repo: str | None = None
    revision: str = "main"


def parse_argument(text: str) -> Asked:
    if "/" not in text:
        if not _AUTHOR.match(text):
            raise UsageError(f"{text!r} is not a Hub user or organisation name (or give ORG/NAME for one repo)")
        return Asked(author=text)
    repo, _, revision = text.partition("@")
    if repo.count("/") != 1:
        raise UsageError(f"{text!r}: give an AUTHOR, ORG/NAME or ORG/NAME@REV")
    hub.check_repo_id(repo)
    if _ and not revision:
        raise UsageError(f"{text!r}: give a revision after @ (a branch, tag or commit)")
    revision = revision or "main"
    hub.check_revision(revision)
    return Asked(repo=repo, revision=revision)


@dataclass(frozen=True)
class AuditOptions:
    targets: tuple[str, ...]  # AUTHOR, ORG/NAME or ORG/NAME@REV, as given
    jobs: int = HUB_JOBS
    deadline: float = HUB_DEADLINE

    def __post_init__(self) -> None:
        if not self.targets:
            raise UsageError("name an AUTHOR (a Hub user or organisation) or a repo ORG/NAME[@REV] to audit")
        if not 1 <= self.jobs <= HUB_MAX_JOBS:
            raise UsageError(f"--jobs {self.jobs}: give 1 to {HUB_MAX_JOBS}")
        if not self.deadline > 0:
            raise UsageError(f"--deadline {self.deadline:g}: give a number of seconds above 0")
        for text in self.targets:
            parse_argument(text)

    @property
    def asked(self) -> tuple[Asked, ...]:
        return tuple(parse_argument(t) for t in self.targets)


# --- the journal -----------------------------------------------------------------------------------------------


def journal_path(options: AuditOptions, s: hub.Settings, environ: Mapping[str, str] | None = None) -> Path | None:
    """Where a run with these arguments against this Hub keeps its journal; None: no cache dir."""
    root = default_root(environ)
    if root is None:
        return None
    named = json.dumps({"format": JOURNAL_FORMAT, "endpoint": s.endpoint, "asked": sorted(set(options.targets))})
    return root / "audit" / f"{hashlib.sha256(named.encode()).hexdigest()[:32]}.jsonl"


def _versions() -> dict[str, str | None]:
    """What a journaled row depends on besides the repo's commit: the rules and the engine's config class."""
    return {"tool": __version__, "transformers": transformers_version()}


class Journal:
    """The rows of earlier runs (read once, at the start), and this run's as they finish (one line each, appended
    by the main thread with one write: a run killed mid-way leaves at worst a cut last line, which is skipped)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.found: dict[tuple[str, str], AuditRow] = {}
        self._fd: int | None = None
        self.versions = _versions()
        if path is None:
            return
        with contextlib.suppress(OSError), open(path, "rb") as fh:
            for line in fh:
                row = self._read(line)
                if row is not None:
                    self.found[(row.repo, row.revision)] = row

    def _read(self, line: bytes) -> AuditRow | None:
        try:
            entry = json.loads(line)
            key = entry["key"]
            if not isinstance(key, dict) or {k: key.get(k) for k in self.versions} != self.versions:
                return None
            row = AuditRow.from_json(entry["row"])
        except (ValueError, KeyError, TypeError, RecursionError):
            return None
        return row if row.commit is not None and key.get("commit") == row.commit else None

    def get(self, repo: str, revision: str, commit: str) -> AuditRow | None:
        """The journaled row of `repo` at `revision`, if it was made at `commit`."""
        row = self.found.get((repo, revision))
        return row if row is not None and row.commit == commit else None

    def _line(self, row: AuditRow) -> bytes:
        key = {"repo": row.repo, "revision": row.revision, "commit": row.commit, **self.versions}
        return (dumps({"key": key, "row": replace(row, reused=False).to_json()}) + "\n").encode()

    def append(self, row: AuditRow) -> None:
        if self.path is None:
            return
        try:
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(self._fd, self._line(row))
        except OSError:
            self.path = None  # an unwritable cache makes the run not resumable, never fail: it is only a cache

    def rewrite(self, rows: list[AuditRow]) -> None:
        """The journal as exactly these rows: a complete run drops what it no longer holds (older commits)."""
        self.close()
        if self.path is not None:
            with contextlib.suppress(OSError):
                replace_atomically(self.path, b"".join(self._line(r) for r in rows), make_parents=True)

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


# --- reading and judging one repo, on a thread ------------------------------------------------------------------


@dataclass(frozen=True)
class _Task:
    repo: str
    revision: str
    explicit: bool  # named on the command line: a non-drafter is a row, a config that is not JSON is linted
    author: str | None  # the AUTHOR whose listing gave it


@dataclass(frozen=True)
class _Outcome:
    task: _Task
    row: AuditRow
    lasting: bool  # a re-run at the same commit would make the same row: journal it
    reused: bool = False


@dataclass(frozen=True)
class _Base:
    target: Target | None
    note: AuditTarget
    lasting: bool


def config_paths(files: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """Where a repo's drafter config may be, in the order read: config.json, then a subfolder's (XiaomiMiMo
    publishes its drafter under dflash/). None: the file list is not known (read config.json)."""
    if files is None:
        return None
    nested = sorted(f for f in files if f.count("/") == 1 and f.endswith("/" + hub.CONFIG))
    return ((hub.CONFIG,) if hub.CONFIG in files else ()) + tuple(nested)


def says_no(row: Listed) -> str | None:
    """Why an author's listing shows `row` is no drafter (catalog update's reading), None: read it."""
    paths = config_paths(row.files)
    if paths == ():
        return "no config.json"
    return listing_says_no(replace(row, files=None) if paths and paths[0] != hub.CONFIG else row)


class _Targets:
    """Each base model read once a run, by the first thread that needs it; the others wait for it."""

    def __init__(self, s: hub.Settings, deadline: Deadline) -> None:
        self.s, self.deadline = s, deadline
        self._lock = threading.Lock()
        self._read: dict[str, Future[_Base]] = {}

    def get(self, base: str | None) -> _Base:
        if base is None:
            return _Base(None, AuditTarget(repo=None, status="none"), True)
        with self._lock:
            future = self._read.get(base)
            mine = future is None
            if future is None:
                future = self._read[base] = Future()
        if mine:
            try:
                future.set_result(self._base(base))
            except BaseException as exc:  # a bug: the waiting threads get it too, not a hang
                future.set_exception(exc)
                raise
        return future.result()

    def _base(self, base: str) -> _Base:
        def unknown(exc: DflashCfgError, lasting: bool) -> _Base:
            return _Base(None, AuditTarget(repo=base, status="unknown", why=str(exc)), lasting)

        try:
            hub.check_repo_id(base)
        except HubError as exc:  # a card's base_model that is no repo id: so it stays
            return unknown(exc, True)
        try:
            target, commit = audit_hub.read_target(base, self.s, self.deadline)
        except (NotFound, TargetError) as exc:  # no such repo, no model config: so it stays
            return unknown(exc, True)
        except DflashCfgError as exc:  # gated, the Hub failing: may pass by the next run
            return unknown(exc, False)
        return _Base(target, AuditTarget(repo=base, status="read", commit=commit), True)


class _Reader:
    """What the threads share: the Hub settings, the deadline, the base models, the engine's view, the lint lock."""

    def __init__(self, s: hub.Settings, deadline: Deadline, journal: Journal) -> None:
        self.s, self.deadline, self.journal = s, deadline, journal
        self.targets = _Targets(s, deadline)
        self.views = Views(cached=True)
        self.lint_lock = threading.Lock()

    def read(self, task: _Task) -> _Outcome:
        s, deadline = self.s, self.deadline
        blank = AuditRow(repo=task.repo, revision=task.revision, status="unreadable")
        # Past the deadline the run has stopped taking rows: no new request is started for it (a thread still in
        # a read finishes that one request, and its retries, then stops here).
        late = _Outcome(task, replace(blank, status="not-done", reason="not read before the deadline"), lasting=False)
        if deadline.remaining() <= 0:
            return late
        try:
            info = publishers.repo_info(task.repo, s, deadline, task.revision)
        except DflashCfgError as exc:
            return _Outcome(task, replace(blank, reason=str(exc)), lasting=False)
        found = self.journal.get(task.repo, task.revision, info.sha)
        if found is not None:
            return _Outcome(task, replace(found, reused=True), lasting=True, reused=True)
        blank = replace(blank, commit=info.sha, date=info.date, gated=info.gated)
        paths = config_paths(info.files)
        if paths == ():
            return _Outcome(task, replace(blank, status="not-a-drafter", reason="no config.json"), lasting=True)
        doc, path, kind, why, blob = None, hub.CONFIG, None, "", ""
        for path in paths or (hub.CONFIG,):
            if deadline.remaining() <= 0:
                return late
            try:
                fetched = publishers.fetch_file(task.repo, info.sha, path, s, deadline, info.blobs.get(path))
            except DflashCfgError as exc:
                return _Outcome(task, replace(blank, path=path, reason=str(exc)), lasting=False)
            doc, blob = parse(fetched.data), fetched.blob_id
            found_kind, why = classify(doc, task.explicit)
            if found_kind != "skipped":
                kind = found_kind
                break
        if doc is None or kind is None:
            return _Outcome(task, replace(blank, status="not-a-drafter", reason=why), lasting=True)
        base = self._base_model(task.repo, info)
        known = self.targets.get(base)
        history, date, history_lasting = self._history(task.repo, info, path, doc, blob)
        with self.lint_lock:
            report = lint(
                Inputs(
                    path=f"{task.repo}@{info.sha[:12]}/{path}",
                    doc=doc,
                    explicit=task.explicit,
                    target=known.target,
                    view=self.views.of(doc),
                    target_repo=base if known.target is not None else None,
                ),
                ALL,
            )
        judged = Report(files=(report,), transformers_version=None, tool_version=__version__)
        row = replace(
            blank,
            status="judged",
            date=date or info.date,
            path=path,
            kind=kind,
            target=known.note,
            findings=tuple(
                Noted(
                    rule=f.rule,
                    name=f.name,
                    severity=f.severity,
                    pointer=f.pointer,
                    message=f.message,
                    engines=f.engines,
                )
                for f in report.findings
            ),
            fails=verdict(judged, Severity.ERROR).code == EXIT_FINDINGS,
            values=values_of(doc),
            history=history,
        )
        return _Outcome(task, row, lasting=known.lasting and history_lasting)

    def _base_model(self, repo: str, info: RepoInfo) -> str | None:
        base = info.base_model
        if base is None and not info.card and info.files is not None and CARD in info.files:
            # A Hub answer without cardData: the card's own front matter names the base model.
            with contextlib.suppress(HubError):
                base = publishers.fetch_card(repo, info.sha, self.s, self.deadline, info.blobs.get(CARD))
        return base

    def _history(
        self, repo: str, info: RepoInfo, path: str, doc: Document, blob: str
    ) -> tuple[tuple[Step, ...], str | None, bool]:
        """The trained values at the last HISTORY commits (this one first), the commit's date, and whether all of
        it was read. History is context: a failure to read it leaves it out, never fails the repo."""
        try:
            commits = audit_hub.recent_commits(repo, info.sha, HISTORY, self.s)
        except DflashCfgError:
            return (), None, False
        date = commits[0].date if commits and commits[0].commit == info.sha else None
        if len(commits) < 2:
            return (), date, True
        read: list[tuple[str, str | None, str | None, Document | None]] = [(info.sha, date, blob, doc)]
        for older in commits[1:]:
            if self.deadline.remaining() <= 0:
                return (), date, False
            try:
                fetched = publishers.fetch_file(repo, older.commit, path, self.s, self.deadline, None)
            except NotFound:
                read.append((older.commit, older.date, None, None))
                continue
            except DflashCfgError:
                return (), date, False
            read.append((older.commit, older.date, fetched.blob_id, parse(fetched.data)))
        return history(read), date, True


def values_of(doc: Document) -> Values:
    """The trained values of a config as engines read them (a speculators file as vLLM translates it)."""
    if not isinstance(doc.data, dict):
        return ()
    return tuple((name, value) for name, (_, value) in trained_values(engine_dict(doc.data)).items())


def history(read: list[tuple[str, str | None, str | None, Document | None]]) -> tuple[Step, ...]:
    """Steps from (commit, date, blob, document) newest first: consecutive commits with the same file are one step,
    named by the oldest of them; each step says which trained values differ from the step before it."""
    runs: list[list[tuple[str, str | None, str | None, Document | None]]] = []
    for item in read:
        if runs and runs[-1][-1][2] == item[2]:
            runs[-1].append(item)
        else:
            runs.append([item])
    steps: list[Step] = []
    for run in runs:
        commit, date, blob, doc = run[-1]
        values: Values | None = None
        note = None
        if doc is None:
            note = "no config file at this commit"
        elif not isinstance(doc.data, dict):
            note = "not a JSON object"
        else:
            values = values_of(doc)
        steps.append(Step(commit=commit, date=date, git_blob_sha1=blob, values=values, note=note))
    return tuple(
        replace(step, changed=_changed(step.values, steps[i + 1].values)) if i + 1 < len(steps) else step
        for i, step in enumerate(steps)
    )


def _changed(new: Values | None, old: Values | None) -> tuple[str, ...]:
    if new is None or old is None:
        return ()
    before, after = dict(old), dict(new)
    names = list(dict.fromkeys([*after, *before]))
    return tuple(n for n in names if not same(after.get(n, MISSING), before.get(n, MISSING)))


# --- the run ---------------------------------------------------------------------------------------------------


@dataclass
class _Tally:
    author: str
    listed: int | None = None
    drafters: int = 0
    error: str | None = None


@dataclass(kw_only=True)
class _Run:
    """The main thread's state: the rows as they come, the journal, what is still out."""

    options: AuditOptions
    reader: _Reader
    journal: Journal
    pool: Readers
    count: progress.Count
    # Keyed by (repo, revision) as the Hub spells the id: the Hub's ids are unique regardless of case, a test hub's
    # need not be.
    rows: dict[tuple[str, str], AuditRow] = field(default_factory=dict)
    seen: set[tuple[str, str]] = field(default_factory=set)
    outstanding: dict[int, _Task | str] = field(default_factory=dict)  # a repo's task, or an author being listed
    tallies: dict[str, _Tally] = field(default_factory=dict)
    lasting: list[AuditRow] = field(default_factory=list)
    reused: int = 0
    _keys: Iterator[int] = field(default_factory=lambda: iter(range(1 << 62)))

    def start(self) -> None:
        asked = self.options.asked
        for one in asked:  # repos first: a repo named on its own is shown even when it is no drafter
            if one.repo is not None:
                self._want(_Task(one.repo, one.revision, explicit=True, author=None), listed=None)
        for one in asked:
            if one.author is not None and one.author.lower() not in self.tallies:
                self.tallies[one.author.lower()] = _Tally(one.author)
                self._submit(
                    one.author, functools.partial(publishers.listing, one.author, self.reader.s, self.reader.deadline)
                )

    def _submit(self, what: _Task | str, work: Callable[[], object]) -> None:
        key = next(self._keys)
        self.outstanding[key] = what
        self.pool.submit(key, work)

    def _grow(self) -> None:
        bar = self.count.bar
        if bar is not None:
            bar.total = (bar.total or 0) + 1
            bar.refresh()

    def _want(self, task: _Task, listed: str | None) -> None:
        """Read `task`'s repo, unless the journal holds it at the commit already known (listed, or asked for)."""
        key = (task.repo, task.revision)
        if key in self.seen:
            return
        self.seen.add(key)
        self._grow()
        commit = listed or (task.revision if hub.COMMIT.match(task.revision) else None)
        found = self.journal.get(task.repo, task.revision, commit) if commit else None
        if found is not None:
            self.take(_Outcome(task, replace(found, reused=True), lasting=True, reused=True))
            return
        self._submit(task, functools.partial(self.reader.read, task))

    def take(self, out: object) -> None:
        if isinstance(out, publishers.Listing):
            self._listing(out)
            return
        assert isinstance(out, _Outcome)
        self.count.advance()
        row, task = out.row, out.task
        if out.lasting:
            if not out.reused:
                self.journal.append(row)
            self.lasting.append(row)
        self.reused += out.reused
        if row.status == "not-a-drafter" and not task.explicit:
            return  # an author's repo that is no drafter is not a row
        self.rows[(task.repo, task.revision)] = row
        if task.author is not None:
            self.tallies[task.author.lower()].drafters += 1

    def _listing(self, out: publishers.Listing) -> None:
        tally = self.tallies[out.author.lower()]
        if out.error is not None:
            tally.error = out.error
            return
        tally.listed = len(out.rows)
        for listed in out.rows:
            if says_no(listed) is None:
                self._want(_Task(listed.repo, "main", explicit=False, author=out.author), listed=listed.sha)

    def loop(self, deadline: Deadline) -> bool:
        """Take results until every read is done (True) or the deadline passes (False)."""
        while self.outstanding:
            left = deadline.remaining()
            if left <= 0:
                return False
            try:
                key, out = self.pool.results.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            self.outstanding.pop(key, None)
            if isinstance(out, BaseException):
                raise out  # a bug in a read: the run's one-line internal error
            self.take(out)
        return True

    def not_done(self) -> None:
        for what in self.outstanding.values():
            if isinstance(what, str):
                self.tallies[what.lower()].error = f"not listed before the deadline ({self.options.deadline:g} s)"
                continue
            reason = f"not read before the deadline ({self.options.deadline:g} s)"
            self.rows[(what.repo, what.revision)] = AuditRow(
                repo=what.repo, revision=what.revision, status="not-done", reason=reason
            )
            if what.author is not None:
                self.tallies[what.author.lower()].drafters += 1
        self.outstanding.clear()


def audit(options: AuditOptions, environ: Mapping[str, str] | None = None) -> AuditResult:
    """Judge every repo asked for: see the module's doc."""
    s = hub.settings(False, environ)
    if s.offline:
        raise UsageError("audit reads the Hub, and offline mode is on (HF_HUB_OFFLINE); unset it to audit")
    if not usable_url(s.endpoint):
        raise HubError(f"HF_ENDPOINT={s.endpoint!r} is not an http(s) URL with a valid host and port")
    started = time.monotonic()
    deadline = Deadline.after(options.deadline)
    journal = Journal(journal_path(options, s, environ))
    reader = _Reader(s, deadline, journal)
    finished = False
    with publishers.counting_retries() as retries, progress.counting(0, "audit", "repos") as count:
        run = _Run(
            options=options, reader=reader, journal=journal, pool=Readers(options.jobs, "dflash-cfg-audit"), count=count
        )
        try:
            run.start()
            finished = run.loop(deadline)
        finally:
            run.pool.close()
            journal.close()
    if not finished:
        run.not_done()
    result = AuditResult(
        asked=options.targets,
        endpoint=s.endpoint,
        rows=tuple(run.rows[k] for k in sorted(run.rows, key=lambda k: (k[0].lower(), k[0], k[1]))),
        authors=tuple(
            AuthorNote(author=t.author, listed=t.listed, drafters=t.drafters, error=t.error)
            for t in run.tallies.values()
        ),
        reused=run.reused,
        retries=retries.count,
        seconds=time.monotonic() - started,
        deadline=None if finished else options.deadline,
        journal=None if journal.path is None else str(journal.path),
        transformers_version=transformers_version(),
        tool_version=__version__,
    )
    if result.complete:
        journal.rewrite(run.lasting)
    return result


def exit_code(result: AuditResult) -> int:
    """1: a repo fails as it would fail `check`; 2: nothing judged while something could not be read; else 0."""
    if result.failing:
        return EXIT_FINDINGS
    if not result.rows_with("judged") and not result.complete:
        return EXIT_USAGE
    return EXIT_OK


def write_output(path: str, text: str) -> None:
    """--output FILE: the report, replaced whole (a reader never sees half of it), through a symlink to where it
    points. A path that is no regular file (/dev/stdout, a pipe) is written to, never replaced."""
    where = Path(os.path.realpath(path))
    try:
        if where.exists() and not where.is_file():
            with open(where, "w", encoding="utf-8") as fh:
                fh.write(text)
        else:
            replace_atomically(where, text.encode("utf-8"))
    except OSError as exc:
        raise PathError(f"--output {path}: cannot write ({exc.strerror or type(exc).__name__})") from None

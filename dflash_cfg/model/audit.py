"""What `dflash-cfg audit` returns: one row per audited repo and revision, reduced to what the reports show, and the
run around them. Values only: commands/audit.py builds them, report/audit.py and report/audit_html.py render them.

A row is small on purpose: the config bytes, the parsed document and the target are dropped once the row is made,
so an audit of a thousand repos holds a thousand of these and nothing else. `to_json` is the row as the JSON
report shows it and as the run's journal stores it; `from_json` reads a journal line back (raising ValueError,
KeyError or TypeError on anything that is not one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast

from dflash_cfg.model.engines import Requirement
from dflash_cfg.model.findings import JSON, Kind, Severity

# judged: linted; unreadable: the Hub would not give its config.json (gated, not found, failing); not-a-drafter: a
# repo named on the command line whose config.json is no DFlash-family drafter; not-done: still in flight when the
# deadline passed.
Status = Literal["judged", "unreadable", "not-a-drafter", "not-done"]
STATUSES: tuple[Status, ...] = ("judged", "unreadable", "not-a-drafter", "not-done")
# read: the card's base model was read and the drafter linted against it; none: the card names no base model;
# unknown: it names one that could not be read (not found, gated, failing). In the last two the drafter is
# checked alone.
TargetStatus = Literal["read", "none", "unknown"]
TARGET_STATUSES: tuple[TargetStatus, ...] = ("read", "none", "unknown")
KINDS: tuple[Kind, ...] = ("dflash", "dflash2", "speculators")
Values = tuple[tuple[str, JSON], ...]  # a trained value's name (lint.published.TRAINED) and its value, in that order


@dataclass(frozen=True, kw_only=True)
class Noted:
    """A finding as an audit keeps it: no fix, no line (the file is the Hub's, and not kept)."""

    rule: str
    name: str
    severity: Severity
    pointer: str
    message: str
    engines: tuple[Requirement, ...] = ()  # the engine releases it holds for (empty: whatever serves the file)

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity.label,
            "pointer": self.pointer,
            "message": self.message,
        }
        if self.engines:
            out["engines"] = [str(r) for r in self.engines]
        return out

    @classmethod
    def from_json(cls, data: Any) -> Noted:
        return cls(
            rule=_str(data["rule"]),
            name=_str(data["name"]),
            severity=Severity[_str(data["severity"]).upper()],
            pointer=_str(data["pointer"]),
            message=_str(data["message"]),
            engines=tuple(Requirement.parse(_str(e)) for e in _list(data.get("engines", []))),
        )


@dataclass(frozen=True, kw_only=True)
class AuditTarget:
    """The target a drafter was linted against: the base model its card names."""

    repo: str | None  # the card's base_model; None: it names none
    status: TargetStatus
    commit: str | None = None  # the base model's commit that was read
    why: str | None = None  # status "unknown": why it could not be read

    def to_json(self) -> dict[str, JSON]:
        return {"repo": self.repo, "status": self.status, "commit": self.commit, "why": self.why}

    @classmethod
    def from_json(cls, data: Any) -> AuditTarget:
        status = _str(data["status"])
        if status not in TARGET_STATUSES:
            raise ValueError(f"target status {status!r}")
        return cls(
            repo=_opt_str(data["repo"]),
            status=cast(TargetStatus, status),
            commit=_opt_str(data["commit"]),
            why=_opt_str(data["why"]),
        )


@dataclass(frozen=True, kw_only=True)
class Step:
    """One revision in a repo's history: its commit and the trained values its config.json holds there. Consecutive
    commits with the same config.json are one step, named by the oldest of them (where that file appeared, as far
    as the history read goes)."""

    commit: str
    date: str | None
    git_blob_sha1: str | None  # of the config file at that commit; None: it has none
    values: Values | None  # None: no config file there, or not a JSON object (`note` says which)
    changed: tuple[str, ...] = ()  # the trained values that differ from the step before (the older one)
    note: str | None = None

    def to_json(self) -> dict[str, JSON]:
        return {
            "commit": self.commit,
            "date": self.date,
            "git_blob_sha1": self.git_blob_sha1,
            "values": None if self.values is None else dict(self.values),
            "changed": list(self.changed),
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: Any) -> Step:
        values = data["values"]
        return cls(
            commit=_str(data["commit"]),
            date=_opt_str(data["date"]),
            git_blob_sha1=_opt_str(data["git_blob_sha1"]),
            values=None if values is None else tuple(_dict(values).items()),
            changed=tuple(_str(c) for c in _list(data["changed"])),
            note=_opt_str(data["note"]),
        )


@dataclass(frozen=True, kw_only=True)
class AuditRow:
    """One repo at one revision: how it was judged, or why it was not."""

    repo: str
    revision: str  # as asked: "main", or the REV of ORG/NAME@REV
    status: Status
    commit: str | None = None  # what `revision` resolved to
    date: str | None = None  # ISO-8601 date of that commit
    path: str | None = None  # the drafter's config file in the repo (config.json, or a subfolder's)
    kind: Kind | None = None
    gated: bool = False
    target: AuditTarget | None = None
    findings: tuple[Noted, ...] = ()
    fails: bool = False  # a finding fails the repo as it fails `check` (lint.gate.verdict: an error, any engine)
    values: Values = ()  # the trained values at `commit`
    # The trained values over the last few commits, newest first (the first step holds the file at `commit`); empty:
    # the repo has a single commit (or its history could not be read).
    history: tuple[Step, ...] = ()
    reason: str | None = None  # not judged: why
    reused: bool = False  # taken from the journal of an earlier run, not read again

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    @property
    def first_error(self) -> Noted | None:
        return next((f for f in self.findings if f.severity == Severity.ERROR), None)

    def to_json(self) -> dict[str, JSON]:
        return {
            "repo": self.repo,
            "revision": self.revision,
            "status": self.status,
            "commit": self.commit,
            "date": self.date,
            "path": self.path,
            "kind": self.kind,
            "gated": self.gated,
            "target": None if self.target is None else self.target.to_json(),
            "fails": self.fails,
            "counts": {
                "errors": self.count(Severity.ERROR),
                "warnings": self.count(Severity.WARNING),
                "infos": self.count(Severity.INFO),
            },
            "findings": [f.to_json() for f in self.findings],
            "values": dict(self.values),
            "history": [s.to_json() for s in self.history],
            "reason": self.reason,
            "reused": self.reused,
        }

    @classmethod
    def from_json(cls, data: Any) -> AuditRow:
        status = _str(data["status"])
        kind = _opt_str(data["kind"])
        if status not in STATUSES or (kind is not None and kind not in KINDS):
            raise ValueError(f"status {status!r}, kind {kind!r}")
        target = data["target"]
        return cls(
            repo=_str(data["repo"]),
            revision=_str(data["revision"]),
            status=cast(Status, status),
            commit=_opt_str(data["commit"]),
            date=_opt_str(data["date"]),
            path=_opt_str(data["path"]),
            kind=cast("Kind | None", kind),
            gated=_bool(data["gated"]),
            target=None if target is None else AuditTarget.from_json(target),
            findings=tuple(Noted.from_json(f) for f in _list(data["findings"])),
            fails=_bool(data["fails"]),
            values=tuple(_dict(data["values"]).items()),
            history=tuple(Step.from_json(s) for s in _list(data["history"])),
            reason=_opt_str(data["reason"]),
            reused=_bool(data.get("reused", False)),
        )


@dataclass(frozen=True, kw_only=True)
class AuthorNote:
    """One AUTHOR of the run: how many model repos the Hub listed, how many became rows, or why it was not listed."""

    author: str
    listed: int | None  # None: the listing failed, or the deadline passed first
    drafters: int  # rows of this author's repos
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class AuditResult:
    asked: tuple[str, ...]  # the AUTHOR and ORG/NAME[@REV] arguments, as given
    endpoint: str
    rows: tuple[AuditRow, ...]  # sorted by repo, then revision
    authors: tuple[AuthorNote, ...]
    reused: int  # repos taken from the journal of an earlier run (rows, and non-drafters it had already read)
    retries: int  # requests retried (HTTP 429, 5xx, a dropped connection)
    seconds: float
    deadline: float | None  # the --deadline that passed before the run was done; None: it did not
    journal: str | None  # the journal's path; None: no cache dir to keep one in
    transformers_version: str | None
    tool_version: str

    def rows_with(self, status: Status) -> tuple[AuditRow, ...]:
        return tuple(r for r in self.rows if r.status == status)

    @property
    def failing(self) -> tuple[AuditRow, ...]:
        return tuple(r for r in self.rows if r.fails)

    @property
    def complete(self) -> bool:
        """Everything asked for was listed and read (judged, or shown not to be a drafter)."""
        return (
            self.deadline is None
            and all(a.error is None for a in self.authors)
            and not any(r.status in ("unreadable", "not-done") for r in self.rows)
        )


# --- reading a journal line back: refuse what is not one ------------------------------------------------------


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _opt_str(value: Any) -> str | None:
    return None if value is None else _str(value)


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected a boolean, got {type(value).__name__}")
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def _dict(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return value

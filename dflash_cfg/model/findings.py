"""What was found: severities, fixes (JSON Patch operations and byte edits), problems and findings, and the
reports that hold them (a file's, a run's)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Union

from dflash_cfg.model.catalog import Identity

if TYPE_CHECKING:
    from dflash_cfg.model.engines import Engine, Requirement

JSON = Union[None, bool, int, float, str, list[Any], dict[str, Any]]  # noqa: UP007 - runtime alias on 3.10


class Severity(enum.IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class PatchOp:
    """One RFC 6902 operation. `value` is only meaningful for add/replace."""

    op: Literal["add", "replace", "remove"]
    path: str
    value: JSON = None

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"op": self.op, "path": self.path}
        if self.op != "remove":
            out["value"] = self.value
        return out


@dataclass(frozen=True)
class ByteEdit:
    """Replace bytes [start, end) of the file: for the repairs JSON Patch cannot express because they
    are below JSON (a byte-order mark)."""

    start: int
    end: int
    replacement: bytes = b""


@dataclass(frozen=True)
class Fix:
    """A repair expressed as data, so it can be shown, serialised and applied selectively.

    `patch` holds RFC 6902 operations; `edits` the byte-level ones (stripping a BOM) that JSON Patch
    cannot express. JSON output v1 shows `patch` only.
    """

    summary: str
    patch: tuple[PatchOp, ...] = ()
    safe: bool = True
    edits: tuple[ByteEdit, ...] = ()

    def to_json(self) -> dict[str, JSON]:
        return {"summary": self.summary, "safe": self.safe, "patch": [op.to_json() for op in self.patch]}


@dataclass(frozen=True, kw_only=True)
class Problem:
    """What a rule yields: where and what. The linter adds rule id, severity and position."""

    pointer: str
    message: str
    fix: Fix | None = None
    # Rules whose severity depends on the case (e.g. DF122: missing is a warning, too small an error).
    severity: Severity | None = None
    # Line and column, when the pointer cannot give them (the decoder's position of a syntax error).
    at: tuple[int, int] | None = None
    # The engine releases the finding holds for (vllm>=0.34.0, vllm<0.34.0); empty: any engine that serves the file.
    engines: tuple[Requirement, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Finding:
    rule: str
    name: str
    severity: Severity
    pointer: str
    line: int | None
    column: int | None
    message: str
    fix: Fix | None = field(default=None, compare=False)
    engines: tuple[Requirement, ...] = ()  # Problem.engines: the releases it holds for (empty: whatever serves it)

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity.label,
            "pointer": self.pointer,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "fix": self.fix.to_json() if self.fix else None,
        }
        if self.engines:  # absent, not empty, for a finding about the file: the reports of before stay as they were
            out["engines"] = [str(r) for r in self.engines]
        return out


Kind = Literal["dflash", "dflash2", "speculators", "skipped"]


@dataclass(frozen=True, kw_only=True)
class Upstream:
    repo: str
    revision: str
    commit: str
    git_blob_sha1: str
    unreachable: str | None = None  # the Hub could not be reached: this is the local cache's copy (HubFile)


@dataclass(frozen=True)
class Artifact:
    """A checked file as the CI formats (SARIF, GitHub annotations) show it beyond its findings: read by
    the command that renders them (report/ does no I/O), for files with findings only."""

    # The file's text (a UTF-8 byte-order mark stripped, as the linter read it), when the file still has
    # the sha256 the report names: what end positions, line hashes and fix replacements are computed on.
    text: str | None = None
    bom: bool = False  # the file starts with a UTF-8 byte-order mark
    repo_path: str | None = None  # "/"-separated, relative to Report.root; None when outside it


@dataclass(frozen=True, kw_only=True)
class FileReport:
    path: str
    kind: Kind
    sha256: str | None
    git_blob_sha1: str | None
    findings: tuple[Finding, ...] = ()
    # A short human picture of the attention layout and taps; text output only.
    picture: tuple[str, ...] = ()
    upstream: Upstream | None = None
    note: str = ""  # why a file was skipped
    # The config class engines load the file through (Effective.config_class); text output only.
    config_class: str | None = None
    artifact: Artifact | None = None  # for the CI formats only (see Artifact)
    identity: Identity | None = None  # the published drafter the file is, and how that was found


# What serves a drafter, as (engine, release or None): the launch's engine (preflight), else --engine or the
# project's `engines`; () not known. A finding scoped to other engines fails nothing (lint.gate).
Served = tuple[tuple["Engine", str | None], ...]  # (engine, its release when known)


def concerns(x: Finding, served: Served) -> bool | None:
    """Whether the finding holds for what serves the drafter (`Report.served`): True when it is about every
    engine or one that serves it; False when about others only; None when it is about some engines only and
    nothing says which serve it."""
    if not x.engines:
        return True
    if not served:
        return None
    return any(r.admits(name, version) for r in x.engines for name, version in served)


@dataclass(frozen=True, kw_only=True)
class Report:
    files: tuple[FileReport, ...]
    transformers_version: str | None
    tool_version: str
    # Files that could not be read (permission, vanished): an environment problem, exit 2.
    errors: tuple[str, ...] = ()
    # What the run doubts in its own setup, one line each on stderr (a project config entry that matched
    # nothing): no finding about a file, no change of the verdict.
    warnings: tuple[str, ...] = ()
    # What fails this run (the option, else the project config, else the command's default), and
    # whether it was a gate (preflight, hooks), where a file identical to its upstream fails on errors only.
    fail_on: Severity = Severity.ERROR
    gate: bool = False
    # What serves the drafters, as (engine, release or None): the launch's engine (preflight), else --engine or
    # the project's `engines`; () not known. A finding scoped to other engines fails nothing (lint.gate).
    served: Served = ()
    # Who said what serves them, for the summary: "--engine", "the launch", "engines in PATH"; "" not said.
    served_by: str = ""
    # check --min-severity: findings below it are left out of `files`, `hidden` of them.
    min_severity: Severity = Severity.INFO
    hidden: int = 0
    # The repository root (the nearest git work tree of the working directory, else the working
    # directory), absolute: SARIF's %SRCROOT%. Set by the command for the CI formats only.
    root: str | None = None

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.files for x in f.findings if x.severity == severity)

    def gating(self, x: Finding) -> bool | None:
        """Whether the finding holds for what serves the drafters (`served`), so that this run may fail on it:
        True for a finding about every engine or about one that serves them; False when it is about other
        engines or releases only; None when it is about some engines only and nothing says which serve them."""
        return concerns(x, self.served)

    def apart(self) -> tuple[Finding, ...]:
        """The findings this run does not gate on (`gating` is not True): shown, and counted apart."""
        return tuple(x for f in self.files for x in f.findings if self.gating(x) is not True)

    def worst(self) -> Severity | None:
        levels = [x.severity for f in self.files for x in f.findings]
        return max(levels) if levels else None

    def rule_ids(self) -> list[str]:
        """The rules the findings name, sorted: what SARIF describes, and so which rules' docs it needs."""
        return sorted({x.rule for f in self.files for x in f.findings})

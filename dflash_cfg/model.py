"""The values every other module passes around: severities, fixes, findings, reports.

All frozen and built once; nothing here imports from the rest of the package.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Literal, Union

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
class Fix:
    """A repair expressed as data, so it can be shown, serialised and applied selectively.

    `patch` is empty for byte-level fixes (stripping a BOM) that JSON Patch cannot express.
    """

    summary: str
    patch: tuple[PatchOp, ...] = ()
    safe: bool = True

    def to_json(self) -> dict[str, JSON]:
        return {"summary": self.summary, "safe": self.safe, "patch": [op.to_json() for op in self.patch]}


@dataclass(frozen=True)
class Problem:
    """What a rule yields: where and what. The linter adds rule id, severity and position."""

    pointer: str
    message: str
    fix: Fix | None = None
    # Rules whose severity depends on the case (e.g. DF122: missing is a warning, too small an error).
    severity: Severity | None = None


@dataclass(frozen=True)
class Finding:
    rule: str
    name: str
    severity: Severity
    pointer: str
    line: int | None
    column: int | None
    message: str
    fix: Fix | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, JSON]:
        return {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity.label,
            "pointer": self.pointer,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "fix": self.fix.to_json() if self.fix else None,
        }


Kind = Literal["dflash", "dflash2", "skipped"]


@dataclass(frozen=True)
class Upstream:
    repo: str
    revision: str
    commit: str
    git_blob_sha1: str


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Report:
    files: tuple[FileReport, ...]
    transformers_version: str | None
    tool_version: str
    # Files that could not be read (permission, vanished): an environment problem, exit 2.
    errors: tuple[str, ...] = ()

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.files for x in f.findings if x.severity == severity)

    def worst(self) -> Severity | None:
        levels = [x.severity for f in self.files for x in f.findings]
        return max(levels) if levels else None

"""The values every other module passes around, one module a subject: what was found (`findings`: severities,
fixes, findings, reports), what was read (`inputs`: paths, targets, weights, upstream copies, engine views, lock
entries), what the commands return (`results`: diffs, fix plans and outcomes, verifications, preflights), a launch
command (`launch`), which engine (`engines`) and probe's verdicts (`probe`).

All frozen and built once; nothing here imports from the rest of the package or touches the world. Every name is
re-exported here: the rest of the package imports them from `dflash_cfg.model`.
"""

from __future__ import annotations

from dflash_cfg.model.engines import NAMES, Adapted, Engine, Launched, display, is_engine, requirement
from dflash_cfg.model.findings import (
    JSON,
    Artifact,
    ByteEdit,
    FileReport,
    Finding,
    Fix,
    Kind,
    PatchOp,
    Problem,
    Report,
    Severity,
    Upstream,
)
from dflash_cfg.model.inputs import (
    FIELDS,
    AddedToken,
    Effective,
    Entry,
    HubFile,
    Integrity,
    LfsPointer,
    Source,
    Target,
    Tensor,
    Url,
    Weights,
    Where,
)
from dflash_cfg.model.launch import ASSIGNMENT, Container, Launch, Mount
from dflash_cfg.model.probe import Acceptance, Judged
from dflash_cfg.model.results import (
    CRITICAL,
    MISSING,
    NOT_READ,
    DiffResult,
    EngineStatus,
    EngineStep,
    FixResult,
    Location,
    Outcome,
    Plan,
    Preflight,
    Row,
    Verification,
    Written,
)

__all__ = [
    "ASSIGNMENT",
    "CRITICAL",
    "FIELDS",
    "JSON",
    "MISSING",
    "NAMES",
    "NOT_READ",
    "Acceptance",
    "Adapted",
    "AddedToken",
    "Artifact",
    "ByteEdit",
    "Container",
    "DiffResult",
    "Effective",
    "Engine",
    "EngineStatus",
    "EngineStep",
    "Entry",
    "FileReport",
    "Finding",
    "Fix",
    "FixResult",
    "HubFile",
    "Integrity",
    "Judged",
    "Kind",
    "Launch",
    "Launched",
    "LfsPointer",
    "Location",
    "Mount",
    "Outcome",
    "PatchOp",
    "Plan",
    "Preflight",
    "Problem",
    "Report",
    "Row",
    "Severity",
    "Source",
    "Target",
    "Tensor",
    "Upstream",
    "Url",
    "Verification",
    "Weights",
    "Where",
    "Written",
    "display",
    "is_engine",
    "requirement",
]

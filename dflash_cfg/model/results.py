"""What the commands return: diff (`DiffResult` and its `Row`s), fix (`Plan`, `Written`, `Outcome`, `FixResult`),
verify (`Verification`), where (`Location`) and preflight (`Preflight` and its `EngineStep`).

Plain data built once by commands/ (which does the reading, linting and writing) and rendered by report/.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from dflash_cfg.model.engines import Engine
from dflash_cfg.model.findings import Report
from dflash_cfg.model.inputs import Entry, HubFile, Repair, Where
from dflash_cfg.model.launch import Launch

# The fields that decide what the drafter computes: a difference here is an error (DF601).
CRITICAL = (
    "/dflash_config/mask_token_id",
    "/dflash_config/target_layer_ids",
    "/layer_types",
    "/sliding_window",
    "/use_sliding_window",
    "/block_size",
    "/dflash_config/block_size",
    "/num_target_layers",
    "/dflash_config/num_target_layers",
    "/num_hidden_layers",
    "/hidden_size",
    "/vocab_size",
    "/rope_theta",
    "/rope_parameters/rope_theta",
    "/rope_scaling",
    "/is_causal",
    "/mask_token_id",
    "/target_layer_ids",
    "/architectures",
)


class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


MISSING: Any = _Missing()


class _NotRead:
    def __repr__(self) -> str:
        return ""


# For fields Qwen3Config does not interpret (dflash_config, block_size, ...): no effective value to show.
NOT_READ: Any = _NotRead()


@dataclass(frozen=True, kw_only=True)
class Row:
    """One field of a local config against its upstream copy (lint/compare.py builds them)."""

    pointer: str
    local: Any
    upstream: Any
    local_effective: Any = NOT_READ  # only for fields Qwen3Config reads (effective.FIELDS)
    upstream_effective: Any = NOT_READ
    differs: bool = False
    differs_effective: bool = False

    @property
    def critical(self) -> bool:
        return self.pointer in CRITICAL


@dataclass(frozen=True, kw_only=True)
class DiffResult:
    path: str
    local: bytes
    git_blob_sha1: str  # of `local`: equals upstream.blob_id when the file is upstream's
    upstream: HubFile
    rows: tuple[Row, ...]
    transformers_version: str | None
    # Each row's sides as diff's table shows them (local, local through the config class, upstream), in the order of
    # `rows`: as the rules' messages show a compared value (lint.rules.upstream.show_compared), computed by the diff
    # command so that the renderer needs nothing of lint.
    shown: tuple[tuple[str, str, str], ...]

    @property
    def identical(self) -> bool:
        return self.git_blob_sha1 == self.upstream.blob_id

    @property
    def critical(self) -> bool:
        return any(r.critical and (r.differs or r.differs_effective) for r in self.rows)


@dataclass(frozen=True, kw_only=True)
class Plan:
    """A repair of one config.json as planned: the file read, nothing written yet (what fix shows and asks)."""

    path: Where  # absolute, or an s3://, gs:// or hf:// path (hf:// pinned to the commit read)
    old: bytes
    new: bytes
    applied: tuple[str, ...]  # what changes, in words
    upstream: HubFile | None = None
    # The new bytes are upstream's (their git blob sha1 is its blob id): the landing will be provable.
    identical_to_upstream: bool = False
    repair: Repair = "safe-fixes"  # how the new bytes are made
    # The file as the user named it ("models/a/config.json" for `fix models/a`): the diff's header, so that
    # each file of `fix models/*` (or of the fix hook) is told apart. "": the file's name.
    shown: str = ""

    @property
    def changed(self) -> bool:
        return self.new != self.old

    def diff(self) -> str:
        import difflib  # only when a change is shown: a check never needs it

        shown = self.shown or self.path.name
        # A relative path as git shows one (a/PATH, b/PATH: `git apply` and `patch -p1` take it); an absolute path
        # or a URL as `diff -u` shows it, whole on both sides.
        relative = not (shown.startswith("/") or "://" in shown)
        before, after = (f"a/{shown}", f"b/{shown}") if relative else (shown, shown)
        old = self.old.decode("utf-8", errors="replace").splitlines(keepends=True)
        new = self.new.decode("utf-8", errors="replace").splitlines(keepends=True)
        lines = difflib.unified_diff(old, new, before, after)
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


@dataclass(frozen=True, kw_only=True)
class Written:
    path: str  # absolute, directory symlinks resolved: where the bytes are, checkable from another host
    sha256: str  # of the new bytes, as read back from the file after the replace
    git_blob_sha1: str  # equals the Hub's blob id when the bytes are upstream's
    backup: str | None  # absolute path of the copy of the previous bytes
    replaced_link: str | None  # where `path` pointed when it was a symlink (now a regular file)
    pull_request: str | None = None  # hf://: nothing was written in place; the bytes are proposed here


@dataclass(frozen=True)
class Outcome:
    written: Written
    recorded: Entry | None  # the lock entry, when the write was recorded
    remaining_errors: int
    lock_file: str | None = None  # where `recorded` was recorded


@dataclass(frozen=True, kw_only=True)
class FixResult:
    plan: Plan
    outcome: Outcome | None  # None: nothing written (nothing to change, or not confirmed)
    # Findings the file still has at the severity that fails `check` with fix's inputs (errors, or errors and
    # warnings where the project's fail-on says so): what only upstream or a human can settle.
    remaining_errors: int
    # When the file still has errors or warnings no safe fix settles and it was not taken from
    # upstream: the repo its trained values come from, if it can be known ("" when it cannot).
    upstream_hint: str | None = None
    hint_in_project: bool = False  # the project config names that repo as the drafter's `upstream` already
    recheck: str = ""  # the `check` command line with fix's inputs, whose answer the exit code is
    warnings_fail: bool = False  # the project's fail-on counts warnings in `remaining_errors`


@dataclass(frozen=True)
class Verification:
    path: Where
    sha256: str
    entry: Entry | None
    expected: str | None  # --expect-sha256, else the recorded sha256

    @property
    def ok(self) -> bool:
        return self.sha256 == self.expected


@dataclass(frozen=True, kw_only=True)
class Location:
    """Which config.json an engine would read for a model argument (sources/where.py finds it)."""

    name: str  # as given
    source: str  # "local directory" | "Hugging Face cache" | "object storage" | "Hugging Face Hub"
    config: Where  # the path an engine opens
    resolved: Where  # after symlinks: the bytes actually read
    repo: str | None  # when the file belongs to a cache snapshot
    commit: str | None
    revision: str | None  # the ref that led to the commit, for a Hub id
    sha256: str
    git_blob_sha1: str
    is_link: bool  # `config` is a symlink (to `resolved`)

    @property
    def model_dir(self) -> Where:
        return self.config.parent


# ran: the engine built the drafter (its reads are judged by DF902/DF904); refused: it raised (DF901); timeout: no
# answer within the limit; failed: the adapter could not answer (both DF903); skipped: not run, `reason` says why.
EngineStatus = Literal["ran", "skipped", "refused", "timeout", "failed"]


@dataclass(frozen=True, kw_only=True)
class EngineStep:
    """What preflight's engine step did: the launch's engine read the drafter, refused it, could not answer
    (its adapter failed or timed out), or was not run (`reason` says why: turned off, a container, an
    interpreter without the engine, files not on this host). `cached`: the answer is the one the same engine
    gave before for the same files and launch (sources/engine_cache.py), not asked again."""

    status: EngineStatus
    engine: Engine
    version: str | None = None
    python: str | None = None
    seconds: float | None = None  # the step's own time, this run (a cached answer's is the cache's)
    reason: str | None = None  # why it refused, failed or did not run
    cached: bool = False


@dataclass(frozen=True, kw_only=True)
class Preflight:
    launch: Launch
    drafter: Location
    target: Location
    report: Report
    engine_step: EngineStep | None = None

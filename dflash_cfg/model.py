"""The values every other module passes around: what was read (targets, weights, upstream copies, engine
views, lock entries, launch lines), what was found (severities, fixes, findings, reports) and what the
commands return (diffs, fix plans and outcomes, verifications, preflights).

All frozen and built once; nothing here imports from the rest of the package or touches the world.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

# Values engines read from the loaded config that matter for drafting, in report order.
FIELDS = (
    "num_hidden_layers",
    "hidden_size",
    "vocab_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "layer_types",
    "use_sliding_window",
    "sliding_window",
    "max_window_layers",
    "rope_theta",
    "rope_scaling",
    "dtype",
    "max_position_embeddings",
)
# ASCII digits only: \d alone would also accept e.g. Arabic-Indic digits, which no loader produces.
# At most 18 digits: a longer "index" is no layer of a real model, and int() of it could be refused.
_LAYER = re.compile(r"(?:^|\.)layers\.([0-9]{1,18})\.", re.ASCII)

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


@dataclass(frozen=True)
class Problem:
    """What a rule yields: where and what. The linter adds rule id, severity and position."""

    pointer: str
    message: str
    fix: Fix | None = None
    # Rules whose severity depends on the case (e.g. DF122: missing is a warning, too small an error).
    severity: Severity | None = None
    # Line and column, when the pointer cannot give them (the decoder's position of a syntax error).
    at: tuple[int, int] | None = None
    # The engine releases the finding holds for, as requirements ("vllm>=0.34.0", "vllm<0.34.0"); empty: any
    # engine that serves the file.
    engines: tuple[str, ...] = ()


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
    engines: tuple[str, ...] = ()  # Problem.engines: the releases it holds for (empty: whatever serves the file)

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
            out["engines"] = list(self.engines)
        return out


Kind = Literal["dflash", "dflash2", "speculators", "skipped"]


@dataclass(frozen=True)
class Upstream:
    repo: str
    revision: str
    commit: str
    git_blob_sha1: str


@dataclass(frozen=True)
class Artifact:
    """A checked file as the CI formats (SARIF, GitHub annotations) show it beyond its findings: read by
    the command that renders them (report/ does no I/O), for files with findings only."""

    # The file's text (a UTF-8 byte-order mark stripped, as the linter read it), when the file still has
    # the sha256 the report names: what end positions, line hashes and fix replacements are computed on.
    text: str | None = None
    bom: bool = False  # the file starts with a UTF-8 byte-order mark
    repo_path: str | None = None  # "/"-separated, relative to Report.root; None when outside it


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
    # The config class engines load the file through (Effective.config_class); text output only.
    config_class: str | None = None
    artifact: Artifact | None = None  # for the CI formats only (see Artifact)


@dataclass(frozen=True)
class Report:
    files: tuple[FileReport, ...]
    transformers_version: str | None
    tool_version: str
    # Files that could not be read (permission, vanished): an environment problem, exit 2.
    errors: tuple[str, ...] = ()
    # What fails this run (the option, else the project config, else the command's default), and
    # whether it was a gate (preflight, hooks), where a file identical to its upstream fails on errors only.
    fail_on: Severity = Severity.ERROR
    gate: bool = False
    # The repository root (the nearest git work tree of the working directory, else the working
    # directory), absolute: SARIF's %SRCROOT%. Set by the command for the CI formats only.
    root: str | None = None

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.files for x in f.findings if x.severity == severity)

    def worst(self) -> Severity | None:
        levels = [x.severity for f in self.files for x in f.findings]
        return max(levels) if levels else None


# --- What the commands return: diff, fix, verify, where and preflight -----------------------------------
# Plain data built once by commands/ (which does the reading, linting and writing) and rendered by report/.


@dataclass(frozen=True)
class Url:
    """A remote path: `scheme` (s3, gcs, hf) and the path under it (`bucket/key`, `org/repo@rev/file`).
    Offers the little of pathlib's surface the commands use on a config path (name, parent, `/`).
    sources/remote.py parses and reads them."""

    scheme: str
    path: str

    def __str__(self) -> str:
        shown = "gs" if self.scheme == "gcs" else self.scheme
        return f"{shown}://{self.path}"

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    @property
    def parent(self) -> Url:
        head = self.path.rstrip("/").rsplit("/", 1)[0] if "/" in self.path.rstrip("/") else self.path
        return Url(self.scheme, head)

    def __truediv__(self, name: str) -> Url:
        return Url(self.scheme, f"{self.path.rstrip('/')}/{name}")

    @property
    def hub_repo(self) -> tuple[str, str | None, str] | None:
        """hf:// only: (org/repo, revision or None, path in the repo)."""
        if self.scheme != "hf":
            return None
        parts = self.path.split("/", 2)
        if len(parts) < 2:
            return None
        name, _, revision = parts[1].partition("@")
        return f"{parts[0]}/{name}", revision or None, parts[2] if len(parts) > 2 else ""


Where = Path | Url  # where a file lives: a local path, or an s3://, gs:// or hf:// one


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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class DiffResult:
    path: str
    local: bytes
    git_blob_sha1: str  # of `local`: equals upstream.blob_id when the file is upstream's
    upstream: HubFile
    rows: tuple[Row, ...]
    transformers_version: str | None

    @property
    def identical(self) -> bool:
        return self.git_blob_sha1 == self.upstream.blob_id

    @property
    def critical(self) -> bool:
        return any(r.critical and (r.differs or r.differs_effective) for r in self.rows)


@dataclass(frozen=True)
class Plan:
    """A repair of one config.json as planned: the file read, nothing written yet (what fix shows and asks)."""

    path: Where  # absolute, or an s3://, gs:// or hf:// path (hf:// pinned to the commit read)
    old: bytes
    new: bytes
    applied: tuple[str, ...]  # what changes, in words
    upstream: HubFile | None = None
    # The new bytes are upstream's (their git blob sha1 is its blob id): the landing will be provable.
    identical_to_upstream: bool = False

    @property
    def changed(self) -> bool:
        return self.new != self.old

    def diff(self) -> str:
        import difflib  # only when a change is shown: a check never needs it

        name = self.path.name
        old = self.old.decode("utf-8", errors="replace").splitlines(keepends=True)
        new = self.new.decode("utf-8", errors="replace").splitlines(keepends=True)
        lines = difflib.unified_diff(old, new, f"a/{name}", f"b/{name}")
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class FixResult:
    plan: Plan
    outcome: Outcome | None  # None: nothing written (nothing to change, or not confirmed)
    remaining_errors: int  # errors the file still has that only upstream or a human can settle
    # When the file still has errors or warnings no safe fix settles and it was not taken from
    # upstream: the repo its trained values come from, if it can be known ("" when it cannot).
    upstream_hint: str | None = None


@dataclass(frozen=True)
class Verification:
    path: Where
    sha256: str
    entry: Entry | None
    expected: str | None  # --expect-sha256, else the recorded sha256

    @property
    def ok(self) -> bool:
        return self.sha256 == self.expected


@dataclass(frozen=True)
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


EngineStatus = Literal["read", "refused", "failed", "not-run"]


@dataclass(frozen=True)
class EngineStep:
    """What preflight's engine step did: the launch's engine read the drafter, refused it, could not answer
    (its adapter failed or timed out), or was not run (`reason` says why: turned off, a container, an
    interpreter without the engine, files not on this host). `cached`: the answer is the one the same engine
    gave before for the same files and launch (sources/engine_cache.py), not asked again."""

    status: EngineStatus
    engine: str
    version: str | None = None
    python: str | None = None
    seconds: float | None = None  # the step's own time, this run (a cached answer's is the cache's)
    reason: str | None = None  # why it refused, failed or did not run
    cached: bool = False


@dataclass(frozen=True)
class Preflight:
    launch: Launch
    drafter: Location
    target: Location
    report: Report
    engine_step: EngineStep | None = None


@dataclass(frozen=True)
class HubFile:
    repo: str
    revision: str  # as the user asked (branch, tag or commit)
    commit: str  # what it resolved to
    blob_id: str  # git blob sha1 of the file at that commit, as the Hub reports it
    data: bytes


@dataclass(frozen=True)
class Source:
    repo: str
    revision: str  # as the user asked (branch, tag or commit)
    commit: str  # what it resolved to


@dataclass(frozen=True)
class Entry:
    path: str
    sha256: str
    git_blob_sha1: str
    source: Source | None  # None: a local fix, not adopted from the Hub
    written_at: str  # ISO-8601 UTC
    tool_version: str


@dataclass(frozen=True)
class Integrity:
    """What the file system says about a config.json besides its bytes (read by the runner)."""

    sha256: str
    lock: Entry | None = None  # what .dflash-cfg.lock recorded for this file
    lock_error: str | None = None
    expect_sha256: str | None = None
    link_target: str | None = None  # where config.json points, when it is a symlink
    link_into_blobs: bool = False  # ... and that is a Hugging Face cache blob
    in_snapshot: bool = False  # the path itself is inside a cache snapshot dir


@dataclass(frozen=True)
class AddedToken:
    id: int
    content: str
    special: bool


@dataclass(frozen=True)
class Target:
    path: str  # the target path as the user gave it, for messages
    model_type: str | None  # of the text model (text_config first for composite models)
    num_hidden_layers: int | None
    hidden_size: int | None
    vocab_size: int | None
    special_ids: tuple[tuple[str, int], ...]  # (source name, id), deduplicated, sorted
    added_tokens: tuple[AddedToken, ...]  # sorted by id
    base_vocab_size: int | None  # len(tokenizer.json model.vocab); None without tokenizer.json
    mask_token: tuple[str, int | None] | None  # tokenizer_config mask_token and its id, if resolvable
    files: tuple[str, ...]  # names of the files actually read

    def token(self, token_id: int) -> AddedToken | None:
        for tok in self.added_tokens:
            if tok.id == token_id:
                return tok
        return None

    def named_special(self, token_id: int) -> tuple[str, ...]:
        return tuple(name for name, i in self.special_ids if i == token_id)

    def token_count(self) -> int | None:
        """How many ids the tokenizer uses (its base vocabulary and added tokens); None without tokenizer.json."""
        if self.base_vocab_size is None:
            return None
        # One iterable: max(n, *()) would be max(n), which expects an iterable (a tokenizer with no added tokens).
        return max((self.base_vocab_size, *(t.id + 1 for t in self.added_tokens)))


@dataclass(frozen=True)
class Tensor:
    name: str  # full name as in the file, possibly prefixed ("model.layers.0...")
    shape: tuple[int, ...]
    dtype: str  # as written in the header: "BF16", "F16", "F32", ...
    file: str  # file name (not path) the tensor lives in


@dataclass(frozen=True)
class LfsPointer:
    """A Git LFS pointer file where a weights file should be (a git clone without `git lfs pull`)."""

    file: str  # file name (not path), e.g. "model.safetensors"
    oid: str  # sha256 of the real file, 64 lowercase hex
    size: int  # bytes of the real file
    extensions: tuple[str, ...] = ()  # keys beyond version/oid/size (ext-N-name): the size may be transformed


@dataclass(frozen=True)
class Weights:
    files: tuple[str, ...]  # safetensors file names read, sorted
    tensors: tuple[Tensor, ...]  # sorted by name (then file, if a name repeats across files)
    pointers: tuple[LfsPointer, ...] = ()  # files that are Git LFS pointers, not read; sorted by file
    # Where git-lfs matches paths: the model dir relative to its git work tree ("" at its top; None when
    # no work tree holds it). Set only when there are pointers.
    lfs_dir: str | None = None

    def get(self, suffix: str) -> Tensor | None:
        """The tensor named `suffix`, or whose name ends with "." + suffix ("fc.weight" finds
        "model.fc.weight"); None if absent.

        An exact name wins; otherwise the least nested match (fewest components), so "norm.weight"
        means the final "model.norm.weight" rather than a deeper tensor that shares the suffix.
        """
        dotted = "." + suffix
        matches = [t for t in self.tensors if t.name == suffix or t.name.endswith(dotted)]
        if not matches:
            return None
        for t in matches:
            if t.name == suffix:
                return t
        # min() keeps the first of equal keys, and tensors are sorted, so ties resolve the same way
        # on every run.
        return min(matches, key=lambda t: (t.name.count("."), len(t.name)))

    def layer_indices(self) -> tuple[int, ...]:
        """Sorted distinct N of every "layers.N." component, with or without a prefix."""
        found = {int(m.group(1)) for t in self.tensors for m in _LAYER.finditer(t.name)}
        return tuple(sorted(found))


@dataclass(frozen=True)
class Effective:
    """What the engine's config class (`config_class`) made of the file (JSON-able, so it can be cached by
    content)."""

    transformers_version: str
    values: dict[str, Any] | None  # FIELDS as read back from the config object; None if rejected
    error: str | None
    warnings: tuple[str, ...]
    config_class: str | None = None  # e.g. "Qwen3Config"; None when AutoConfig has no class for the file

    @property
    def through(self) -> str:
        """How reports name the view: "Qwen3Config", or "the config class" when there was none."""
        return self.config_class or "the config class"

    def to_json(self) -> dict[str, Any]:
        return {
            "transformers_version": self.transformers_version,
            "values": self.values,
            "error": self.error,
            "warnings": list(self.warnings),
            "config_class": self.config_class,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Effective:
        return cls(
            str(data["transformers_version"]),
            data["values"],
            data["error"],
            tuple(str(w) for w in data["warnings"]),
            data["config_class"],
        )


# --- Launch commands (read by dflash_cfg.launch, checked by preflight) --------------------------------

Engine = Literal["vllm", "sglang"]  # the engines whose launch commands are read, as their programs are named

# A shell `NAME=value` assignment before a command: the shell applies it to the program's environment.
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)


def _assignments(args: tuple[str, ...]) -> int:
    """How many leading tokens are shell `NAME=value` assignments."""
    i = 0
    while i < len(args) and ASSIGNMENT.fullmatch(args[i]):
        i += 1
    return i


@dataclass(frozen=True)
class Launch:
    """An engine launch command as read: the target, the drafter and the drafts per step it asks for."""

    engine: Engine
    target: str  # model path or Hub id of the target
    target_revision: str | None
    drafter: str | None  # drafter path or Hub id (None if the command has no speculative drafter)
    drafter_revision: str | None
    method: str | None  # vLLM speculative method ("dflash"...) / SGLang algorithm ("DFLASH"...), as given
    num_speculative_tokens: int | None  # vLLM: speculative_config.num_speculative_tokens
    num_draft_tokens: int | None  # SGLang: --speculative-num-draft-tokens
    tensor_parallel_size: int  # default 1
    argv: tuple[str, ...]  # the command as given
    config_file: str | None = None  # the `--config FILE` whose options were read, as given
    container: Container | None = None  # `docker run`: the container the engine runs in
    # What the wrappers do to the engine's process (or, with docker, to the docker client's): variables set
    # (None: unset, `env -u`) in order, after the whole environment was dropped when `cleared` (`env -i`);
    # and the working directory, relative to ours (`env -C`, `uv run --directory`).
    env: tuple[tuple[str, str | None], ...] = ()
    env_cleared: bool = False
    cwd: str | None = None
    # The engine variables that change what it accepts, as the engine will see them (set by preflight
    # from the launch's environment): launch.environment.ENGINE_VARIABLES.
    engine_env: tuple[tuple[str, str], ...] = ()
    draft_window_size: int | None = None  # SGLang: --speculative-draft-window-size
    max_model_len: int | None = None  # vLLM: --max-model-len (None: the target's own length)
    distributed_executor_backend: str | None = None  # vLLM: --distributed-executor-backend
    pipeline_parallel_size: int = 1  # vLLM: --pipeline-parallel-size; SGLang: --pp-size
    # SGLang's attention data parallelism as it resolves it: --attn-dp-size, else the deprecated
    # `--dp-size N --enable-dp-attention`; with --enable-dp-lm-head and --attn-cp-size beside it.
    attention_dp_size: int = 1
    dp_lm_head: bool = False
    attention_cp_size: int = 1
    # The release of the engine the launch runs, from its interpreter's package metadata (set by preflight;
    # None: not known here, and the rules say what each release they know would do).
    engine_version: str | None = None
    # vLLM: the speculative_config dict as vLLM builds it from the command line, each key with its value as JSON
    # (frozen, and what a SpeculativeConfig of one release or another accepts is decided from it by the rules).
    speculative_config: tuple[tuple[str, str], ...] = ()

    @property
    def environment(self) -> tuple[tuple[str, str], ...]:
        """The leading `NAME=value` assignments (shell syntax, applied by the shell to the program)."""
        return tuple((t.split("=", 1)[0], t.split("=", 1)[1]) for t in self.argv[: _assignments(self.argv)])

    @property
    def command(self) -> tuple[str, ...]:
        """What --exec runs: the whole command as given (wrappers and `docker run` included), after the
        leading assignments."""
        return self.argv[_assignments(self.argv) :]


@dataclass(frozen=True)
class Mount:
    host: str | None  # the host directory of a bind mount; None for a named or anonymous volume
    container: str  # absolute, normalised
    volume: str | None = None  # the volume's name (or kind), when it is not a bind mount


@dataclass(frozen=True)
class Container:
    """What `docker run` says about the engine's file system. The check runs on the host, so container
    paths are mapped back through the bind mounts (the launch parser's `host_path` and `hub_cache`)."""

    image: str
    mounts: tuple[Mount, ...]
    environment: tuple[tuple[str, str | None], ...]  # -e NAME=value (None: `-e NAME`, the host's value)
    workdir: str | None
    user: bool  # -u/--user given: the home directory (and so the default HF cache) is not known
    env_file: bool  # --env-file given: variables not on the command line
    entrypoint_known: bool | None = True  # False: a vllm/vllm-openai image without --entrypoint
    env_files: tuple[str, ...] = ()  # the --env-file paths, in order (read before -e, which wins)


# --- probe: acceptance read from a serving engine's metrics ------------------------------------------------


@dataclass(frozen=True)
class Acceptance:
    """How one engine serving one model accepted drafts, over a counters' lifetime or a window between two
    scrapes. `server`: "vllm" or "sglang"; `engine`: the engine's own label (vLLM's engine index, SGLang's
    dp_rank, "0" when there is one). `drafts` is None for SGLang, which exports gauges only; a record with
    no draft scored (`mean_acceptance_length` None) is idle: no traffic to judge."""

    server: str
    model_name: str
    engine: str
    acceptance_rate: float | None
    mean_acceptance_length: float | None
    per_position: tuple[float, ...] | None = None
    drafts: float | None = None
    draft_tokens: float | None = None
    accepted_tokens: float | None = None


@dataclass(frozen=True)
class Judged:
    """An `Acceptance` with the threshold that applied to it and the verdict: "collapse", "healthy" or
    "idle" (nothing scored in the window)."""

    acceptance: Acceptance
    threshold: float
    verdict: str

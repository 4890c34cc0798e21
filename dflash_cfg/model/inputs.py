"""What was read: where a file lives (`Url`, `Where`), an upstream copy on the Hub (and `HubOptions`, which one
to read), a lock entry, what the file system
says about a config (`Integrity`), the target's config and tokenizer, the drafter's weights (headers only) and the
engine's view of the file through its config class (`Effective`)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

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


@dataclass(frozen=True)
class HubOptions:
    """Which upstream copy a drafter config is compared with (--from-hub [REPO], --revision, --offline)."""

    repo: str | None  # None: infer it from where the file lives (an hf:// path, a cache snapshot, the lock)
    revision: str | None = None  # None: the commit of a cache snapshot, else "main"
    offline: bool = False  # the local Hugging Face cache only


@dataclass(frozen=True, kw_only=True)
class HubFile:
    repo: str
    revision: str  # as the user asked (branch, tag or commit)
    commit: str  # what it resolved to
    blob_id: str  # git blob sha1 of the file at that commit, as the Hub reports it
    data: bytes
    # A gate that could not reach the Hub compared with the cached copy instead: why (None: as asked).
    unreachable: str | None = None


@dataclass(frozen=True)
class Source:
    repo: str
    revision: str  # as the user asked (branch, tag or commit)
    commit: str  # what it resolved to


# How fix made the bytes it wrote: upstream's exact bytes; the DFlash-critical fields of upstream, local edits kept
# (--only-critical); the safe mechanical fixes alone, no upstream (nothing trained is settled by them).
Repair = Literal["upstream", "critical-fields", "safe-fixes"]


@dataclass(frozen=True)
class Left:
    """Findings the written bytes still had when fix checked them (its re-check, with fix's inputs)."""

    errors: int
    warnings: int

    @property
    def count(self) -> int:
        return self.errors + self.warnings


@dataclass(frozen=True)
class Made:
    """How fix made the bytes it writes, as the lock records it: from where, how, and what its re-check left."""

    source: Source | None  # the upstream read (None: safe fixes only)
    repair: Repair
    left: Left | None = None


@dataclass(frozen=True, kw_only=True)
class Entry:
    path: str
    sha256: str
    git_blob_sha1: str
    source: Source | None  # None: a local fix, not adopted from the Hub
    written_at: str  # ISO-8601 UTC
    tool_version: str
    # What the write was, so `verify` can say what it proves. None on both: a lock written before they were
    # recorded (a `source` there is upstream's bytes or its critical fields; none, safe fixes only).
    repair: Repair | None = None
    left: Left | None = None


@dataclass(frozen=True, kw_only=True)
class Integrity:
    """What the file system says about a config.json besides its bytes (read by the runner)."""

    sha256: str
    lock: Entry | None = None  # what .dflash-cfg.lock recorded for this file
    lock_error: str | None = None
    expect_sha256: str | None = None
    link_target: str | None = None  # where config.json points, when it is a symlink
    link_into_blobs: bool = False  # ... and that is a Hugging Face cache blob
    in_snapshot: bool = False  # the path itself is inside a cache snapshot dir
    # A cache snapshot's config.json whose bytes no longer hash to the blob it links to (edited in place, as
    # `hf cache verify` would say): (repo, commit, the blob's name).
    edited_snapshot: tuple[str, str, str] | None = None


@dataclass(frozen=True)
class AddedToken:
    id: int
    content: str
    special: bool


# SGLang's get_context_length (sglang/srt/utils/hf_transformers/common.py): the first of these its config has.
CONTEXT_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings")
SGLANG_DEFAULT_CONTEXT = 2048  # none of CONTEXT_KEYS


def sglang_context_length(config: Any, rope: Any) -> tuple[int, str] | None:
    """The context length SGLang derives from a (text) config and its RoPE scaling, and the key it came from: the
    first of CONTEXT_KEYS, times the scaling's factor unless the scaling names its original length or is llama3.
    None where that is no finite number (a factor of 1e999): SGLang's own int() of it fails."""
    factor: Any = 1
    if isinstance(rope, dict) and rope:
        factor = rope.get("factor", 1)
        if "original_max_position_embeddings" in rope or rope.get("rope_type") == "llama3":
            factor = 1
    for key in CONTEXT_KEYS:
        value = config.get(key) if isinstance(config, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(factor, (int, float)):
            length = factor * value
            return (int(length), key) if math.isfinite(length) else None
    return SGLANG_DEFAULT_CONTEXT, "SGLang's default"


@dataclass(frozen=True, kw_only=True)
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
    # The context length SGLang derives from the target's (text) config, and the key it came from.
    context_length: tuple[int, str] | None = None

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


@dataclass(frozen=True, kw_only=True)
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
            transformers_version=str(data["transformers_version"]),
            values=data["values"],
            error=data["error"],
            warnings=tuple(str(w) for w in data["warnings"]),
            config_class=data["config_class"],
        )

"""The published drafters the tool knows (the catalog), and what a checked file was identified as.

A catalog entry is one Hub repo of a DFlash-family drafter: its shape (what its weights fix: architecture, widths,
depth, heads, the target depth it taps), the target it was published for (its model card's `base_model`), and every
revision the catalog has seen, each with the trained values a stale or edited copy gets wrong (taps, mask id, layer
layout, window, block size, RoPE, vocabulary). lint/published.py compares a file with it; sources/catalog.py reads
and writes it as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

# A run over many Hub repos (`catalog update`, `audit`): repos read at once (the Hub answers a few requests at once
# per client well; more mostly meets its rate limit), the most a user may ask for, and the whole run's deadline in
# seconds (what is not done by then is reported; a re-run goes on from what was kept).
HUB_JOBS = 8
HUB_MAX_JOBS = 64
HUB_DEADLINE = 600.0

# How a file's upstream was found, in the order the check tries: named on the command line (--from-hub), the project
# config's `upstream`, the Hugging Face cache snapshot the file lives in, the lock dflash-cfg wrote, the catalog.
FoundBy = Literal["option", "project", "cache", "lock", "hf-path", "catalog"]

# What the file is, against the published revisions of the repo it was identified as:
# identical: byte for byte a published revision; trained: another file with a published revision's trained values;
# older: ... of a revision the catalog knows a newer one of; differs: the shape of a published drafter, whose trained
# values match no revision; edited: a cache snapshot file that no longer hashes to its blob.
Match = Literal["identical", "trained", "older", "differs", "edited"]

# Where a catalog revision's bytes come from: "hub" (read by `catalog update`), or a shipped copy's authority
# (fixtures/PROVENANCE.md): A byte-verified, B publisher-owned copy, C third-party transcription, D reconstructed.
Trust = Literal["hub", "A", "B", "C", "D"]


@dataclass(frozen=True, kw_only=True)
class Shape:
    """What a drafter's weights fix: two files with different shapes are different drafters. None: not in the file."""

    method: str  # dflash, dflash2, speculators (lint.linter.classify)
    architecture: str | None
    model_type: str | None
    hidden_size: int | None
    num_hidden_layers: int | None
    num_attention_heads: int | None
    num_key_value_heads: int | None
    head_dim: int | None
    intermediate_size: int | None
    target_depth: int | None  # num_target_layers, as the file says

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "architecture": self.architecture,
            "model_type": self.model_type,
            "hidden_size": self.hidden_size,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "head_dim": self.head_dim,
            "intermediate_size": self.intermediate_size,
            "target_depth": self.target_depth,
        }


@dataclass(frozen=True, kw_only=True)
class TargetShape:
    """The target a drafter was published for, as far as a launch's target can be compared with it."""

    num_hidden_layers: int | None
    hidden_size: int | None
    vocab_size: int | None


@dataclass(frozen=True, kw_only=True)
class Revision:
    commit: str | None  # 40 hex; None: a shipped copy whose commit is not known
    date: str | None  # ISO-8601 of the commit, when known
    git_blob_sha1: str | None  # of config.json: the Hub's blob id
    sha256: str | None
    # The trained values (lint.published.TRAINED names), as JSON values; a name the file lacks is absent here.
    # None: only the bytes' hashes are known (a published hash recorded by a third party).
    values: dict[str, Any] | None
    trust: Trust
    source: str  # where these bytes were read: the Hub URL, or the fixture path and its provenance
    complete: bool = True  # False: a partial copy, whose missing keys are unknown rather than absent


@dataclass(frozen=True, kw_only=True)
class Published:
    """One published drafter repo."""

    repo: str
    shape: Shape | None  # None: no copy of its config is known (only hashes)
    base_model: str | None  # the model card's base_model
    base_shape: TargetShape | None  # the base model's config, where the catalog has read it
    revisions: tuple[Revision, ...]  # oldest first; the last is the newest the catalog has seen
    gated: bool = False

    @property
    def newest(self) -> Revision | None:
        known = [r for r in self.revisions if r.values is not None]
        return known[-1] if known else None


@dataclass(frozen=True, kw_only=True)
class Catalog:
    drafters: tuple[Published, ...]
    updated: str | None = None  # when `catalog update` last refreshed the user's catalog (None: shipped only)
    origin: tuple[str, ...] = ()  # the files it was read from, for `catalog show`

    def get(self, repo: str) -> Published | None:
        for entry in self.drafters:
            if entry.repo.lower() == repo.lower():
                return entry
        return None


@dataclass(frozen=True, kw_only=True)
class Identity:
    """Which published drafter a checked file is, how that was found, and how the file stands against it."""

    repo: str
    commit: str | None
    found_by: FoundBy
    match: Match | None = None  # None: compared with the upstream copy itself (DF601-DF603 say how it stands)
    others: tuple[str, ...] = ()  # other published repos of the same shape

    def to_json(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "commit": self.commit,
            "found_by": self.found_by,
            "match": self.match,
            "same_shape": list(self.others),
        }

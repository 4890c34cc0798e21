"""What `dflash-cfg catalog update` and `catalog show` return: per author, what the Hub listed and what became of each
repo; the catalog as the user sees it, with where their copy is and how old it is. Values only: commands/catalog.py
builds them, report/catalog.py renders them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from dflash_cfg.model.catalog import Catalog


@dataclass(frozen=True, kw_only=True)
class RepoNote:
    """A repo and why it was skipped (not a drafter) or not read (failed)."""

    repo: str
    why: str


@dataclass(frozen=True, kw_only=True)
class NewRevision:
    repo: str
    commit: str
    date: str | None
    first: bool  # the catalog had no revision of this repo before


@dataclass(frozen=True, kw_only=True)
class AuthorTally:
    """One author of the run (or the org of the repos named with --repo)."""

    author: str
    listed: int | None  # model repos the Hub listed; None: not listed (only --repo names), or the listing failed
    drafters: tuple[str, ...]  # repos whose config.json is a DFlash-family drafter (new revision or unchanged)
    new: tuple[NewRevision, ...]
    unchanged: tuple[str, ...]  # the catalog already holds their current commit
    skipped: tuple[RepoNote, ...]  # not drafters: by their listing (no config.json, another model) or by config.json
    failed: tuple[RepoNote, ...]  # could not be read: gated without access, not found, the Hub failing
    not_done: tuple[str, ...]  # still to do when the deadline passed
    error: str | None = None  # the listing itself failed (no such author, the Hub down)

    @property
    def complete(self) -> bool:
        return self.error is None and not self.failed and not self.not_done


@dataclass(frozen=True, kw_only=True)
class BaseNote:
    """A base model (a card's `base_model`) whose config.json the run read for the target's shape."""

    repo: str
    known: bool
    why: str | None = None  # when not known: not found, gated, not a model config


@dataclass(frozen=True, kw_only=True)
class UpdateResult:
    authors: tuple[AuthorTally, ...]
    bases: tuple[BaseNote, ...]
    path: str  # the user's catalog, as written
    drafters: int  # drafters in the user's catalog after the run
    revisions: int  # revisions in the user's catalog after the run
    seconds: float
    deadline: float | None = None  # the --deadline that passed before the run was done; None: it did not
    retries: int = 0  # requests huggingface_hub or dflash-cfg retried (HTTP 429, 5xx, a dropped connection)

    @property
    def complete(self) -> bool:
        return self.deadline is None and all(a.complete for a in self.authors)


@dataclass(frozen=True, kw_only=True)
class CatalogView:
    """The catalog `catalog show` shows: the shipped one with the user's added, and the user's file."""

    catalog: Catalog
    user_path: str | None  # None: no cache dir (neither XDG_CACHE_HOME nor a home)
    user_exists: bool
    user_updated: str | None  # ISO-8601 of the last `catalog update`
    now: str  # ISO-8601, for "updated 3 days ago"
    document: dict[str, Any]  # the catalog in its JSON format (sources/catalog.py), as `--format json` gives it
    repo: str | None = None  # show this drafter's revisions

    @property
    def age(self) -> str | None:
        """How long ago the user's catalog was updated ("3 days ago"); None: never."""
        return None if self.user_updated is None else age(self.user_updated, self.now)

    @property
    def says(self) -> str:
        """What the catalog holds and how old the user's copy is, in one line."""
        drafters = self.catalog.drafters
        revisions = sum(len(e.revisions) for e in drafters)
        held = f"the catalog has {len(drafters)} drafters ({revisions} revisions)"
        if self.user_path is None:
            return f"{held}, all shipped (no cache dir for a catalog of your own)"
        if not self.user_exists:
            return f"{held}, all shipped; you have no catalog of your own yet ({self.user_path})"
        if self.user_updated is None:
            return f"{held}; yours ({self.user_path}) has no update time"
        return f"{held}; yours ({self.user_path}) was updated {self.age} ({self.user_updated})"


def _instant(text: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def age(then: str, now: str) -> str:
    """`then` as seen from `now` (both ISO-8601): "just now", "5 minutes ago", "3 days ago"."""
    start, end = _instant(then), _instant(now)
    if start is None or end is None:
        return f"at {then}"
    seconds = (end - start).total_seconds()
    if seconds < 0:
        return "in the future (check the clock)"
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"

"""What `catalog update` reads from the Hub about publishers and their repos: an author's model repos (one listing),
one repo's card facts at its current commit (model_info), a file's bytes at a commit (verified against its git blob
id), and a base model's config.json. Bytes and Hub facts out; what they mean is the caller's (commands/catalog.py).

Every call goes through huggingface_hub with the settings sources/hub.py reads at call time (HF_ENDPOINT, HF_TOKEN,
HF_HUB_OFFLINE, the timeout). Retries: huggingface_hub retries the listing's pages and `http_backoff` requests itself
(HTTP 408, 429 and 5xx, a timeout or a dropped connection; up to 5 retries, 1-8 s apart, or the server's Retry-After
plus one second); a file read is given only the retries that fit before the run's deadline (`_backoffs`), so a read
that keeps failing ends within the run. `model_info` and the organisation lookups are single requests there, so
`_retrying` retries them the same way, honouring Retry-After, but never sleeps past the deadline. (The listing's
pages are huggingface_hub's alone: no timeout, its own waits; the run's deadline still ends the run.) Nothing here
writes to the Hugging Face cache: a config.json is read with a plain GET at its commit, so no ref of anyone's cache
moves.
"""

from __future__ import annotations

import contextlib
import email.utils
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, TypeVar

from dflash_cfg.errors import DflashCfgError, HubError, causes
from dflash_cfg.jsondoc.document import git_blob_sha1
from dflash_cfg.sources.hfenv import import_hub
from dflash_cfg.sources.hub import COMMIT, CONFIG, Settings, _endpoint, _explain

T = TypeVar("T")

# What a listing asks for, in the one request per page the API allows: the commit (a re-run skips a repo whose
# commit the catalog holds without another request), the tags, the file names and the config the Hub indexed (to
# leave out what is plainly not a drafter), and whether the repo is gated.
LISTING = ("sha", "tags", "gated", "siblings", "config")
RETRY_STATUS = (408, 429, 500, 502, 503, 504)  # huggingface_hub's own (utils/_http.py)
MAX_RETRIES = 5
MAX_WAIT = 8.0  # seconds between retries without a Retry-After, as huggingface_hub's back-off
MAX_FILE = 4 * 1024 * 1024  # a drafter's or a base model's config.json is a few KB
CARD = "README.md"


class Gated(HubError):
    """The repo is gated and the token (if any) has no access to its files."""


class NotFound(HubError):
    """No such repo, file or author on the Hub."""


@dataclass(frozen=True)
class Deadline:
    """When the run must end (time.monotonic())."""

    end: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds)

    def remaining(self) -> float:
        return self.end - time.monotonic()


@dataclass(frozen=True, kw_only=True)
class Listed:
    """One model repo as an author's listing shows it. None: the listing did not say."""

    repo: str
    sha: str | None
    tags: tuple[str, ...]
    files: tuple[str, ...] | None
    config: dict[str, Any] | None
    gated: bool


@dataclass(frozen=True, kw_only=True)
class RepoInfo:
    """One repo at its current commit: what model_info says."""

    repo: str
    sha: str
    date: str | None  # ISO-8601 of its last commit (the Hub's lastModified)
    gated: bool
    base_model: str | None  # the card's base_model (the first, when it names several)
    card: bool  # the card's metadata was in the answer (else base_model may still be in README.md)
    files: tuple[str, ...] | None
    blobs: dict[str, str]  # file name -> git blob id, where the Hub said it


@dataclass(frozen=True, kw_only=True)
class Fetched:
    repo: str
    commit: str
    name: str
    data: bytes
    blob_id: str  # verified: the git blob sha1 of `data`
    url: str  # the file at the commit on this endpoint


# --- retries ------------------------------------------------------------------------------------------------


class _Retries(logging.Filter):
    """Counts huggingface_hub's retry warnings, and keeps them off the user's stderr (the run says how many)."""

    MARKS = ("HTTP Error", "thrown while requesting", "Retrying in", "Rate limited")

    def __init__(self) -> None:
        super().__init__()
        self.count = 0
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if not any(mark in message for mark in self.MARKS):
            return True
        if message.startswith(("Retrying in", "Rate limited")):
            with self._lock:
                self.count += 1
        return False

    def add(self, n: int = 1) -> None:
        with self._lock:
            self.count += n


@contextlib.contextmanager
def counting_retries() -> Iterator[_Retries]:
    """For the duration: every retry, huggingface_hub's and ours, counted instead of logged."""
    import_hub()
    retries = _Retries()
    logger = logging.getLogger("huggingface_hub.utils._http")
    logger.addFilter(retries)
    global _counter
    before, _counter = _counter, retries
    try:
        yield retries
    finally:
        _counter = before
        logger.removeFilter(retries)


_counter: _Retries | None = None


def _status(exc: BaseException) -> int | None:
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def _retry_after(exc: BaseException) -> float | None:
    """The server's Retry-After, in seconds (delay-seconds or an HTTP date)."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    value = headers.get("Retry-After") if headers is not None else None
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    with contextlib.suppress(TypeError, ValueError, IndexError):
        when = email.utils.parsedate_to_datetime(value)
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())
    return None


def _transient(exc: BaseException) -> bool:
    if _status(exc) in RETRY_STATUS:
        return True
    names = ("TimeoutException", "ReadTimeout", "ConnectTimeout", "NetworkError", "ReadError", "RemoteProtocolError")
    return _status(exc) is None and any(cls.__name__ in names for cls in type(exc).__mro__)


def _retrying(call: Callable[[], T], deadline: Deadline) -> T:
    """`call()`, retried as huggingface_hub's http_backoff retries (for the calls it does not), never past the
    deadline: a wait that would end after it is not made and the failure stands."""
    wait = 1.0
    for attempt in range(MAX_RETRIES + 1):
        try:
            return call()
        except Exception as exc:
            if attempt == MAX_RETRIES or not _transient(exc):
                raise
            pause = _retry_after(exc)
            pause = wait if pause is None else pause
            if pause >= deadline.remaining():
                raise
            if _counter is not None:
                _counter.add()
            time.sleep(pause)
            wait = min(MAX_WAIT, wait * 2)
    raise AssertionError("unreachable")


def _backoffs(deadline: Deadline) -> int:
    """How many of http_backoff's retries fit before the deadline, waiting as it waits (1, 2, 4, 8, 8 s): a read
    that keeps failing then fails within the run instead of outliving it. (A Retry-After it honours as it is.)"""
    left, waited, retries = deadline.remaining(), 0.0, 0
    for wait in (min(MAX_WAIT, 2.0**i) for i in range(MAX_RETRIES)):
        if waited + wait >= left:
            break
        waited += wait
        retries += 1
    return retries


def _timeout(s: Settings, deadline: Deadline) -> float:
    """A request's timeout: the settings', but a request never outlives the run."""
    return max(0.1, min(s.timeout, deadline.remaining()))


# --- reads --------------------------------------------------------------------------------------------------


def _api(s: Settings) -> Any:
    _endpoint(s)
    import_hub()
    from huggingface_hub import HfApi

    return HfApi(endpoint=s.endpoint, token=s.token or None)


@dataclass(frozen=True)
class Listing:
    """An author's listing as a run over the Hub goes on with it: its repos, or why there are none."""

    author: str
    rows: tuple[Listed, ...] = ()
    error: str | None = None


def listing(author: str, s: Settings, deadline: Deadline) -> Listing:
    """`list_author` for a thread of a run: a failure is the author's row (the other authors go on), never raised."""
    try:
        return Listing(author, list_author(author, s, deadline))
    except DflashCfgError as exc:
        return Listing(author, error=str(exc))


def list_author(author: str, s: Settings, deadline: Deadline) -> tuple[Listed, ...]:
    """Every model repo of `author`, in as few requests as the API allows (one per page of 1000). An author with no
    repos is asked about once more: an unknown name lists nothing too, and is said as not found."""
    api = _api(s)
    try:
        found = tuple(_listed(info) for info in api.list_models(author=author, expand=list(LISTING)))
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line (see hub._explain)
        raise _explain(exc, author, "main", s) from None
    if not found and not _author_exists(api, author, s, deadline):
        raise NotFound(f"author {author!r} not found on {s.endpoint} (no user or organisation of that name)")
    return found


def _author_exists(api: Any, author: str, s: Settings, deadline: Deadline) -> bool:
    from huggingface_hub import errors

    for ask in (api.get_organization_overview, api.get_user_overview):
        try:
            _retrying(functools.partial(ask, author), deadline)
            return True
        except errors.HfHubHTTPError as exc:
            if _status(exc) != 404:
                raise _explain(exc, author, "main", s) from None
        except Exception as exc:  # noqa: BLE001
            raise _explain(exc, author, "main", s) from None
    return False


def _listed(info: Any) -> Listed:
    siblings = getattr(info, "siblings", None)
    config = getattr(info, "config", None)
    sha = getattr(info, "sha", None)
    return Listed(
        repo=str(info.id),
        sha=sha if isinstance(sha, str) and COMMIT.match(sha) else None,
        tags=tuple(t for t in (getattr(info, "tags", None) or ()) if isinstance(t, str)),
        files=None if siblings is None else tuple(str(f.rfilename) for f in siblings),
        config=config if isinstance(config, dict) else None,
        gated=bool(getattr(info, "gated", False)),
    )


def repo_info(repo: str, s: Settings, deadline: Deadline, revision: str | None = None) -> RepoInfo:
    """model_info of `repo` at `revision` (a branch, tag or commit; None: its default branch now): its commit, date,
    gating, card and files with their blob ids (one request)."""
    api = _api(s)
    try:
        info = _retrying(
            lambda: api.model_info(repo, revision=revision, files_metadata=True, timeout=_timeout(s, deadline)),
            deadline,
        )
    except Exception as exc:  # noqa: BLE001
        raise _classified(exc, repo, revision or "main", s) from None
    sha = str(info.sha or "")
    if not COMMIT.match(sha):
        at = repo if revision is None else f"{repo}@{revision}"
        raise HubError(f"{s.endpoint} answered {at} without a commit id (40 hex digits)")
    card = info.card_data
    siblings = info.siblings
    return RepoInfo(
        repo=repo,
        sha=sha,
        date=None if info.last_modified is None else iso(info.last_modified),
        gated=bool(info.gated),
        base_model=None if card is None else first_model(card.get("base_model")),
        card=card is not None,
        files=None if siblings is None else tuple(str(f.rfilename) for f in siblings),
        blobs={
            str(f.rfilename): str(f.blob_id) for f in (siblings or ()) if isinstance(getattr(f, "blob_id", None), str)
        },
    )


def iso(moment: datetime) -> str:
    """A Hub timestamp as the catalog and audit write it (ISO-8601, UTC as Z)."""
    return moment.isoformat().replace("+00:00", "Z")


def first_model(value: Any) -> str | None:
    """A card's base_model: one repo id, or a list of them (the first names the target)."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str)), None)
    return value.strip() if isinstance(value, str) and value.strip() else None


def fetch_file(repo: str, commit: str, name: str, s: Settings, deadline: Deadline, blob_id: str | None) -> Fetched:
    """`name` of `repo` at `commit`, one GET (huggingface_hub's http_backoff), checked against its git blob id: the
    one model_info gave, else the answer's ETag. A body that does not hash to it (cut short, altered) is asked for
    once more, then refused: it is never handed on."""
    _endpoint(s)
    import_hub()
    from huggingface_hub import hf_hub_url
    from huggingface_hub.utils import build_hf_headers, hf_raise_for_status, http_backoff

    url = hf_hub_url(repo, name, revision=commit, endpoint=s.endpoint)
    headers = build_hf_headers(token=s.token or False)
    got = expected = ""
    for _ in range(2):
        try:
            response = http_backoff(
                "GET", url, headers=headers, timeout=_timeout(s, deadline), max_retries=_backoffs(deadline)
            )
            hf_raise_for_status(response)
        except Exception as exc:  # noqa: BLE001
            raise _classified(exc, repo, commit, s) from None
        served = response.headers.get("X-Repo-Commit")
        if served and COMMIT.match(commit) and served != commit:
            raise HubError(
                f"{s.endpoint} served {name} of {repo} at {served[:12]}, not the commit asked ({commit[:12]})"
            )
        data = response.content
        if len(data) > MAX_FILE:
            raise HubError(f"{name} of {repo}@{commit[:12]} is {len(data)} bytes: not a config file")
        expected = blob_id or _etag(response.headers) or ""
        if not expected:
            raise HubError(f"{s.endpoint} gave no git blob id for {name} of {repo}@{commit[:12]}: cannot verify it")
        got = git_blob_sha1(data)
        if got == expected:
            return Fetched(repo=repo, commit=commit, name=name, data=data, blob_id=got, url=url)
        if _counter is not None:
            _counter.add()
    raise HubError(
        f"{name} of {repo}@{commit[:12]} does not hash to its git blob id {expected[:12]} (got {got[:12]}, twice): "
        "cut short or altered on the way; not recorded"
    )


def _etag(headers: Any) -> str | None:
    for key in ("X-Linked-Etag", "ETag"):
        value = headers.get(key)
        if isinstance(value, str):
            value = value.strip().removeprefix("W/").strip('"')
            if len(value) == 40:
                return value
    return None


def fetch_card(repo: str, commit: str, s: Settings, deadline: Deadline, blob_id: str | None) -> str | None:
    """The card's base_model from README.md's YAML front matter (for an answer without cardData)."""
    text = fetch_file(repo, commit, CARD, s, deadline, blob_id).data.decode("utf-8", "replace")
    if not text.startswith("---"):
        return None  # no front matter (huggingface_hub would log that it found none)
    from huggingface_hub import ModelCard

    try:  # huggingface_hub's own reading of a card, as the Hub's cardData is made
        card = ModelCard(text, ignore_metadata_errors=True)
    except Exception:  # noqa: BLE001 - a card that cannot be read names no base model
        return None
    return first_model(card.data.get("base_model"))


def fetch_base(repo: str, s: Settings, deadline: Deadline) -> tuple[bytes | None, str | None]:
    """A base model's config.json on its main branch, and why not when it cannot be read (not found, gated):
    a target the drafter names is context, never a reason to fail the drafter."""
    try:
        return fetch_file(repo, "main", CONFIG, s, deadline, None).data, None
    except (NotFound, Gated) as exc:
        return None, str(exc)


def _classified(exc: BaseException, repo: str, revision: str, s: Settings) -> HubError:
    """hub._explain's one line, as the class the run sorts by: gated, not found, or another failure."""
    from huggingface_hub import errors

    explained = _explain(exc, repo, revision, s)
    # GatedRepoError is a RepositoryNotFoundError: asked first. A 401 without the Hub's error code is how the Hub
    # hides a private repo, which is not found as far as this token can tell.
    if isinstance(exc, errors.GatedRepoError) or _status(exc) == 403:
        return Gated(f"{repo} is gated: {'HF_TOKEN has no access to it' if s.token else 'set HF_TOKEN to read it'}")
    if isinstance(exc, (errors.RepositoryNotFoundError, errors.EntryNotFoundError, errors.RevisionNotFoundError)):
        return NotFound(str(explained))
    if _status(exc) in (401, 404):
        return NotFound(f"{repo}@{revision}: not found on {s.endpoint}")
    if any(type(e).__name__ == "RemoteProtocolError" for e in causes(exc)):
        # Not "unreachable": the Hub answered, and the answer stopped short (a dropped connection, a cut body).
        return HubError(f"{repo}@{revision[:12]}: {s.endpoint}'s answers were cut short, also when asked again")
    return explained

"""A Hugging Face Hub on loopback that serves many model repos of several authors, for the tests and benchmarks
of the commands that list authors' repos and read their files through huggingface_hub's public API
(`catalog update`, `audit`). In process, no dependency beyond the standard library and PyYAML; it starts in
milliseconds. `PublisherHub` is the server, `Faults` what it does wrong on demand, `populate` a generated
population of drafters, plain models and the targets they name, `publish_fixtures` the real published drafters
and targets of fixtures/.

Routes, as huggingface_hub 2.4.0 calls them (hf_api.py, file_download.py, _snapshot_download.py):

- `GET /api/models?author=&search=&filter=&gated=&pipeline_tag=&sort=&direction=&limit=&full=&cardData=&config=
  &expand=` (list_models). Pages of `page_size` items (`limit`, up to 1000, sets the page size instead), the next
  one named by a `Link: <absolute url with cursor=...>; rel="next"` header as the Hub's (a keyset cursor: a repo
  published while a listing pages on shows up at its place, nothing is listed twice). As the Hub, an item
  carries `_id, id, modelId, likes, trendingScore, private, downloads, tags, pipeline_tag, library_name,
  createdAt` only; `full=true` adds `author, sha, lastModified, gated, disabled, siblings`; `cardData=true` adds
  `cardData`, `config=true` `config`; `expand=X` (repeatable, or `expand[]=X`) gives only `_id`, `id` and the
  properties named. So a tool that forgets full/expand gets no sha, as on the Hub.
- `GET /api/models/{org}/{name}` and `.../revision/{rev}` (model_info, repo_info, repo_exists, revision_exists,
  snapshot_download): sha (the commit the revision resolves to), siblings (`blobs=true`: with size, blobId, lfs),
  cardData (the YAML front matter of README.md at that commit, as parsed), gated (false, "auto" or "manual"),
  tags, config (architectures, model_type, auto_map of config.json), lastModified (that commit's date),
  createdAt; `expand=` as above. A gated repo's info is public, as on the Hub.
- `GET /api/models/{org}/{name}/commits/{rev}` (list_repo_commits): newest first, paged with `?p=N` and `Link`;
  `/refs` (list_repo_refs); `/tree/{rev}[/{path}]?recursive=` (list_repo_tree, list_repo_files,
  snapshot_download).
- `HEAD`/`GET /{org}/{name}/resolve/{rev}/{path}` (hf_hub_download, get_hf_file_metadata, file_exists): a regular
  (git) file at a commit id answers 200 with `X-Repo-Commit`, `ETag: "<git blob sha1>"`, `Content-Length`,
  `Accept-Ranges: bytes` (a `Range: bytes=a-b` GET answers 206 with `Content-Range`: the client resumes a cut
  download with one). At a branch or tag it answers, as the Hub does, `307` with a relative
  `Location: /api/resolve-cache/models/{org}/{name}/{commit}/{path}?...` (same headers), which the client
  follows on the same host (`_httpx2_follow_hub_redirects_with_backoff`); `resolve_cache=False` answers 200
  directly instead. An LFS file (`*.safetensors`, `*.bin`, `*.pt`, `*.pth`, `*.gguf`, `*.onnx`, `*.h5`,
  `*.msgpack`, `*.ckpt`) answers `302` to `http://localhost:PORT/cdn/<sha256>` with `X-Linked-Etag: "<sha256>"`
  and `X-Linked-Size`: another origin (localhost, not 127.0.0.1), so the client takes the metadata from the
  302, drops the Authorization header and downloads from the "CDN" (no auth there) like from the Hub's.
- Errors, with the Hub's `X-Error-Code`/`X-Error-Message` and a JSON `{"error": ...}` body: a missing (or
  private, without the token) repo 401 `RepoNotFound` (404 when the request carries a valid token), a missing
  revision 404 `RevisionNotFound`, a missing file 404 `EntryNotFound` with `X-Repo-Commit` (the client caches
  the absence under .no_exist/<commit>/), a file of a gated repo 401 `GatedRepo` without `Authorization` and 403
  `GatedRepo` with `guest_token` (a valid token not on the repo's authorized list); `Authorization: Bearer
  <token>` reads everything. Any other bearer token is refused everywhere with 401 "Invalid credentials in
  Authorization header", as the Hub does (huggingface_hub then raises a plain HfHubHTTPError).
- `GET /api/whoami-v2` (whoami), and `GET /cdn/<sha256>` (the LFS "CDN", with Range).

What huggingface_hub 2.4.0 retries (read from utils/_http.py, utils/_pagination.py, file_download.py,
hf_api.py, and checked by tests/test_publisherhub.py):

- `http_backoff`/`http_stream_backoff` retry on 408, 429, 500, 502, 503, 504 and on httpx2's TimeoutException,
  NetworkError and RemoteProtocolError (a dropped connection, a body cut short), at most 5 times, then
  hf_raise_for_status raises the last answer (or the exception is re-raised). The wait: `Retry-After` + 1 s when
  the answer has a `Retry-After` of whole seconds (digits only: "0.5" or an HTTP date is ignored, so
  `Retry-After: 0` still waits 1 s); for a 429, a `RateLimit: "api";r=0;t=N` header wins (N + 1 s); otherwise
  exponential backoff 1, 2, 4, 8, 8 s. So any retry costs at least a second.
- Their callers: `paginate` (list_models, list_repo_commits, list_repo_tree/list_repo_files) retries every page
  with those defaults. `get_hf_file_metadata` (the HEAD of hf_hub_download, file_exists) has
  `retry_on_errors=False` by default: no retry at all. `hf_hub_download` makes its HEAD without retry; when it
  fails with 408/429/500/502/503/504 or a network error and no cached copy answers, it makes the HEAD once more
  with `retry_on_errors=True` (the full backoff): one 429 or 503 on the HEAD costs no wait, the next ones back
  off.
  Its GET (`http_get`) goes through `http_stream_backoff` retrying only 408 and 429: a 5xx on the GET raises
  HfHubHTTPError at once. A connection error, timeout or body cut short while reading is resumed after 1 s with
  a `Range: bytes=<received>-` request, up to 5 times in a row without progress (the count starts again whenever
  bytes arrive), then the error is raised; the file goes to a process-unique `.incomplete` name that is deleted
  on failure, and a size that differs from the expected one raises OSError ("Consistency check failed").
- `model_info`/`repo_info`, `list_repo_refs`, `whoami` call the session directly: no retry; a 429 or 5xx raises
  HfHubHTTPError at once.

Faults (`PublisherHub.faults`, plus any added with `add_faults`) change while the server runs; see `Faults`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import random
import re
import socket
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 backport
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

Gated = Literal[False, "auto", "manual"]
Kind = Literal["dflash", "dflash2", "speculators", "model"]

# What the Hub's default .gitattributes sends to LFS (the ones a model repo uses).
LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".onnx", ".h5", ".msgpack", ".ckpt")
_HEX40 = re.compile(r"[0-9a-f]{40}")
_FIRST_DATE = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def git_blob_id(data: bytes) -> str:
    """The git blob sha1 of `data`: the ETag the Hub sends for a regular (non-LFS) file, and the name of its
    blob in huggingface_hub's cache."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _parse_date(text: str) -> datetime:
    """A date as publish takes it: "2026-03-01", "2026-03-01T12:00:00Z", "2026-03-01T12:00:00.000Z", or with
    an offset."""
    if len(text) == 10:
        return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc)
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def card_data(readme: bytes) -> dict[str, Any] | None:
    """The YAML front matter of a model card, parsed as the Hub does for `cardData` (None: no front matter)."""
    text = readme.decode("utf-8", "replace")
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    if end < 0:
        return None
    try:
        data = yaml.load(text[3:end], Loader=_YAML_LOADER)
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


# ------------------------------------------------------------------------------------------------- faults


@dataclass
class Faults:
    """What the server does wrong, for the requests whose path (with its query, as sent: percent-encoded)
    contains `match` and whose method is `method` (None: any). Change the fields while the server runs; the
    counters are taken under the hub's lock, so concurrent requests never take the same one twice.

    Not counted, for every matching request: `latency` seconds before the answer; `drip`: the body sent
    `drip_bytes` at a time with that pause between chunks.

    Counted (the NEXT N matching requests, after the first `skip` matching ones went through untouched), the
    first that applies in this order: `drop` closes the connection without an answer; `rate_limit` answers 429
    with `Retry-After: <retry_after>` (an int, or a float sent as written: huggingface_hub honours only whole
    seconds; None: no header) and, with `ratelimit_reset`, the Hub's `RateLimit: "api";r=0;t=N` header;
    `server_errors` answers the statuses of `error_statuses` in turn (500, 502, 503, 500, ...). `truncate` cuts
    the next N matching answers that have a body (a GET answered 2xx; a HEAD or an error is never cut):
    `Content-Length` says the full size, the first `truncate_at` of the body is sent, then the connection closes.

    "The 3rd config.json download fails once": `Faults(match="config.json", method="GET", skip=2,
    server_errors=1)`. `matched` and `fired` count the matching requests and the counted faults applied.
    """

    match: str = ""
    method: str | None = None
    skip: int = 0
    latency: float = 0.0
    drip: float = 0.0
    drip_bytes: int = 16
    drop: int = 0
    rate_limit: int = 0
    retry_after: int | float | None = 1
    ratelimit_reset: int | None = None
    server_errors: int = 0
    error_statuses: tuple[int, ...] = (500, 502, 503)
    truncate: int = 0
    truncate_at: float = 0.5
    matched: int = 0
    fired: int = 0
    _errors_sent: int = field(default=0, repr=False, compare=False)

    def matches(self, method: str, path: str) -> bool:
        return self.match in path and (self.method is None or self.method.upper() == method)


@dataclass
class _Plan:
    latency: float = 0.0
    drip: float = 0.0
    drip_bytes: int = 16
    action: str | None = None  # "drop", "rate_limit", "error"
    answer: _Answer | None = None
    armed: list[Faults] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------- storage


@dataclass(frozen=True)
class _Blob:
    data: bytes
    oid: str  # git blob sha1
    sha256: str
    lfs: bool


@dataclass(frozen=True)
class _Commit:
    id: str
    files: Mapping[str, _Blob]
    date: str
    title: str
    message: str
    author: str


@dataclass
class _Repo:
    id: str
    seq: int
    commits: list[_Commit]
    gated: Gated
    private: bool
    extra_tags: tuple[str, ...]
    created: str
    downloads: int
    likes: int
    tags_refs: dict[str, str] = field(default_factory=dict)

    @property
    def author(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def mongo_id(self) -> str:
        return hashlib.sha1(self.id.encode()).hexdigest()[:24]


@dataclass
class _Answer:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    rangeable: bool = False  # a file's bytes: Range is honoured


def _json_answer(data: Any, status: int = 200, headers: Sequence[tuple[str, str]] = ()) -> _Answer:
    body = json.dumps(data, default=str).encode()
    return _Answer(status, [("Content-Type", "application/json; charset=utf-8"), *headers], body)


def _error(status: int, code: str | None, message: str, headers: Sequence[tuple[str, str]] = ()) -> _Answer:
    extra = [("X-Error-Message", message), *headers]
    if code:
        extra.insert(0, ("X-Error-Code", code))
    return _json_answer({"error": message}, status, extra)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    hub: PublisherHub

    def __init__(self, hub: PublisherHub) -> None:
        self.hub = hub
        self.live: set[socket.socket] = set()
        self.live_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.live_lock:
            self.live.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.live_lock:
            self.live.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (a cut download it gave up on, a closed test) is no error of the server's.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes: without this, Nagle's algorithm holds the body back until
        # the client's delayed ACK of the headers, 40 ms per answer on Linux.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.hub._serve(self)

    do_HEAD = do_GET
    do_POST = do_GET


# ------------------------------------------------------------------------------------------------- the hub


class PublisherHub:
    """A Hub-compatible server on 127.0.0.1 (a daemon thread; `close()` or a `with` block stops it)."""

    def __init__(
        self,
        token: str = "hf_test_token",
        *,
        guest_token: str = "hf_guest_token",
        page_size: int = 50,
        resolve_cache: bool = True,
    ) -> None:
        self.token = token
        self.guest_token = guest_token
        self.page_size = page_size
        self.resolve_cache = resolve_cache
        self.faults = Faults()
        self.more_faults: list[Faults] = []
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.RLock()
        self._repos: dict[str, _Repo] = {}
        self._lfs: dict[str, _Blob] = {}
        self._commit_count = 0
        self._derived_cache: dict[tuple[str, str, tuple[str, ...]], dict[str, Any]] = {}
        self._server = _Server(self)
        self.port = int(self._server.server_address[1])
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.cdn_endpoint = f"http://localhost:{self.port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="publisherhub", daemon=True
        )
        self._thread.start()

    # -------------------------------------------------------------------------------------------- lifecycle

    def close(self) -> None:
        """Stop serving, and cut the connections clients keep alive (a later server on the same port must
        not be answered by this one)."""
        self._server.shutdown()
        self._server.server_close()
        with self._server.live_lock:
            live = list(self._server.live)
        for sock in live:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> PublisherHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------------------------------------- publishing

    def publish(
        self,
        repo: str,
        files: Mapping[str, bytes],
        *,
        gated: bool | Literal["auto", "manual"] | None = None,
        private: bool | None = None,
        tags: Sequence[str] | None = None,
        date: str | None = None,
        message: str | None = None,
        delete: Iterable[str] = (),
        commit: str | None = None,
    ) -> str:
        """A new commit of `repo` (created on first use) holding the previous commit's files, less `delete`,
        with `files` written over them; returns its id (40 hex: the sha1 of the repo, its index, its parent and
        its files, unless `commit` names one). A new repo whose id differs from an existing one only by case is
        refused with ValueError, as the Hub refuses it. `gated` (True means "auto"), `private` and the extra
        `tags` stay as the repo had them when None (False, False, () for a new repo). `date`: "2026-03-01" or an
        ISO time (default: one hour after the previous commit published on this hub, from 2026-01-05 09:00 UTC)."""
        if repo.count("/") != 1 or not all(repo.split("/")):
            raise ValueError(f"a repo id is org/name: {repo!r}")
        with self._lock:
            self._commit_count += 1
            moment = _parse_date(date) if date else _FIRST_DATE + timedelta(hours=self._commit_count)
            state = self._repos.get(repo)
            if state is None:
                twin = next((r for r in self._repos if r.lower() == repo.lower()), None)
                if twin is not None:  # the Hub's repo ids are unique regardless of case
                    raise ValueError(f"{repo} would be a second {twin}: repo ids are unique regardless of case")
                state = _Repo(
                    id=repo,
                    seq=len(self._repos),
                    commits=[],
                    gated=False,
                    private=False,
                    extra_tags=(),
                    created=_iso(moment),
                    downloads=int(hashlib.sha1(repo.encode()).hexdigest()[:6], 16) % 50_000,
                    likes=int(hashlib.sha1(repo.encode()).hexdigest()[6:10], 16) % 300,
                )
                self._repos[repo] = state
            if gated is not None:
                state.gated = "auto" if gated is True else gated
            if private is not None:
                state.private = private
            if tags is not None:
                state.extra_tags = tuple(tags)
            previous = dict(state.commits[-1].files) if state.commits else {}
            for name in delete:
                previous.pop(name, None)
            for name, data in files.items():
                blob = _Blob(
                    bytes(data),
                    git_blob_id(data),
                    hashlib.sha256(data).hexdigest(),
                    name.lower().endswith(LFS_SUFFIXES),
                )
                previous[name] = blob
                if blob.lfs:
                    self._lfs[blob.sha256] = blob
            parent = state.commits[-1].id if state.commits else ""
            tree = "".join(f"{name}\0{previous[name].oid}\n" for name in sorted(previous))
            if commit is None:
                commit = hashlib.sha1(f"{repo}\n{len(state.commits)}\n{parent}\n{tree}".encode()).hexdigest()
            elif not _HEX40.fullmatch(commit) or any(c.id == commit for c in state.commits):
                raise ValueError(f"not a new commit id of {repo}: {commit!r}")
            title = message or ("initial commit" if not state.commits else f"Update {', '.join(sorted(files))}")
            state.commits.append(
                _Commit(
                    commit,
                    dict(sorted(previous.items())),
                    _iso(moment),
                    title.split("\n")[0],
                    title,
                    repo.split("/")[0],
                )
            )
            return commit

    def tag(self, repo: str, name: str, commit: str | None = None) -> None:
        """A git tag `name` on `commit` (default: the newest), usable as a revision."""
        with self._lock:
            state = self._repos[repo]
            state.tags_refs[name] = commit or state.commits[-1].id

    def commits(self, repo: str) -> tuple[str, ...]:
        """The commit ids of `repo`, oldest first."""
        with self._lock:
            return tuple(c.id for c in self._repos[repo].commits)

    def files(self, repo: str, revision: str = "main") -> dict[str, bytes]:
        """The files of `repo` at `revision` (what the server serves there)."""
        with self._lock:
            found = self._resolve(self._repos[repo], revision)
            if found is None:
                raise KeyError(f"{repo}@{revision}")
            return {name: blob.data for name, blob in found.files.items()}

    def repos(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._repos)

    # -------------------------------------------------------------------------------------------- faults

    def add_faults(self, **settings: Any) -> Faults:
        """Another set of faults, consulted after `faults` and the ones added before (its own `match`)."""
        added = Faults(**settings)
        with self._lock:
            self.more_faults.append(added)
        return added

    def clear_faults(self) -> None:
        with self._lock:
            self.faults = Faults()
            self.more_faults = []

    def _plan(self, method: str, path: str) -> _Plan:
        plan = _Plan()
        with self._lock:
            for faults in (self.faults, *self.more_faults):
                if not faults.matches(method, path):
                    continue
                faults.matched += 1
                plan.latency += max(0.0, faults.latency)
                if faults.drip > 0:
                    plan.drip, plan.drip_bytes = max(plan.drip, faults.drip), max(1, faults.drip_bytes)
                if faults.skip > 0:
                    faults.skip -= 1
                    continue
                plan.armed.append(faults)
                if plan.action is not None:
                    continue
                if faults.drop > 0:
                    faults.drop -= 1
                    faults.fired += 1
                    plan.action = "drop"
                elif faults.rate_limit > 0:
                    faults.rate_limit -= 1
                    faults.fired += 1
                    plan.action = "rate_limit"
                    plan.answer = self._rate_limited(faults)
                elif faults.server_errors > 0:
                    faults.server_errors -= 1
                    faults.fired += 1
                    status = faults.error_statuses[faults._errors_sent % len(faults.error_statuses)]
                    faults._errors_sent += 1
                    plan.action = "error"
                    plan.answer = _error(status, None, f"{status} (injected by the test hub)")
        return plan

    @staticmethod
    def _rate_limited(faults: Faults) -> _Answer:
        headers: list[tuple[str, str]] = []
        after = faults.retry_after
        if after is not None:
            headers.append(("Retry-After", str(int(after)) if float(after).is_integer() else str(after)))
        if faults.ratelimit_reset is not None:
            headers.append(("RateLimit", f'"api";r=0;t={faults.ratelimit_reset}'))
            headers.append(("RateLimit-Policy", '"fixed window";"api";q=1000;w=300'))
        return _error(429, None, "Too Many Requests (injected by the test hub)", headers)

    def _take_truncation(self, plan: _Plan) -> float | None:
        with self._lock:
            for faults in plan.armed:
                if faults.truncate > 0:
                    faults.truncate -= 1
                    faults.fired += 1
                    return min(1.0, max(0.0, faults.truncate_at))
        return None

    # -------------------------------------------------------------------------------------------- serving

    def _serve(self, handler: _Handler) -> None:
        method, path = handler.command, handler.path
        with self._lock:
            self.requests.append((method, path))
        length = int(handler.headers.get("Content-Length") or 0)
        if length:
            handler.rfile.read(length)
        plan = self._plan(method, path)
        if plan.latency:
            time.sleep(plan.latency)
        if plan.action == "drop":
            handler.close_connection = True
            return
        if plan.answer is not None:
            answer = plan.answer
        else:
            try:
                answer = self._route(method, path, handler.headers.get("Authorization"), handler.headers.get("Host"))
            except Exception as exc:  # noqa: BLE001 (a bug here must answer, not hang the client)
                answer = _error(500, None, f"test hub error: {exc!r}")
            if method == "GET" and answer.rangeable and answer.status == 200:
                answer = self._ranged(answer, handler.headers.get("Range"))
        cut = None
        if method == "GET" and 200 <= answer.status < 300 and answer.body:
            cut = self._take_truncation(plan)
        handler.send_response(answer.status)
        for name, value in answer.headers:
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(answer.body)))
        if cut is not None:
            handler.send_header("Connection", "close")
        handler.end_headers()
        if method == "HEAD":
            return
        body = answer.body if cut is None else answer.body[: int(len(answer.body) * cut)]
        if plan.drip > 0 and body:
            for start in range(0, len(body), plan.drip_bytes):
                handler.wfile.write(body[start : start + plan.drip_bytes])
                handler.wfile.flush()
                time.sleep(plan.drip)
        else:
            handler.wfile.write(body)
        if cut is not None:
            handler.wfile.flush()
            handler.close_connection = True

    @staticmethod
    def _ranged(answer: _Answer, spec: str | None) -> _Answer:
        if not spec:
            return answer
        total = len(answer.body)
        match = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", spec)
        if match is None or not (match.group(1) or match.group(2)):
            return answer  # not a single range: the whole file, as a server that ignores Range
        first, last = match.groups()
        if first:
            start, end = int(first), min(int(last), total - 1) if last else total - 1
        else:
            start, end = max(0, total - int(last)), total - 1
        if start >= total or start > end:
            return _Answer(416, [("Content-Range", f"bytes */{total}")])
        headers = [*answer.headers, ("Content-Range", f"bytes {start}-{end}/{total}")]
        return _Answer(206, headers, answer.body[start : end + 1])

    def _route(self, method: str, raw: str, authorization: str | None, host: str | None) -> _Answer:
        split = urlsplit(raw)
        query = parse_qsl(split.query, keep_blank_values=True)
        parts = split.path.split("/")[1:]
        origin = f"http://{host}" if host else self.endpoint
        if parts[:1] == ["cdn"] and len(parts) == 2:
            return self._cdn(parts[1])
        bearer = authorization[7:].strip() if authorization and authorization[:7].lower() == "bearer " else None
        if authorization is not None and bearer not in (self.token, self.guest_token):
            return _error(401, None, "Invalid credentials in Authorization header")
        user = "owner" if bearer == self.token else "guest" if bearer == self.guest_token else None
        if method not in ("GET", "HEAD"):
            return _error(405, None, f"{method} is not served by the test hub")
        with self._lock:
            if parts == ["api", "models"]:
                return self._list_models(query, user, origin, split.query)
            if parts == ["api", "whoami-v2"]:
                if user is None:
                    return _error(401, None, "Invalid credentials in Authorization header")
                return _json_answer({"type": "user", "name": f"test-{user}", "auth": {"type": "access_token"}})
            if parts[:2] == ["api", "models"] and len(parts) >= 4:
                return self._api_repo(f"{unquote(parts[2])}/{unquote(parts[3])}", parts[4:], query, user, origin)
            if parts[:3] == ["api", "resolve-cache", "models"] and len(parts) >= 7:
                repo_id = f"{unquote(parts[3])}/{unquote(parts[4])}"
                return self._resolve_file(repo_id, unquote(parts[5]), unquote("/".join(parts[6:])), user, False)
            if len(parts) >= 5 and parts[2] == "resolve":
                repo_id = f"{unquote(parts[0])}/{unquote(parts[1])}"
                return self._resolve_file(repo_id, unquote(parts[3]), unquote("/".join(parts[4:])), user, True)
        return _error(404, None, f"not a route of the test hub: {split.path}")

    # ------------------------------------------------------------------------------------------------ repos

    def _visible(self, repo: _Repo, user: str | None) -> bool:
        return not repo.private or user == "owner"

    def _find(self, repo_id: str, user: str | None) -> _Repo | _Answer:
        repo = self._repos.get(repo_id)
        if repo is None or not self._visible(repo, user):
            status = 401 if user is None else 404
            return _error(status, "RepoNotFound", "Repository not found")
        return repo

    @staticmethod
    def _resolve(repo: _Repo, revision: str) -> _Commit | None:
        if revision in ("main", "refs/heads/main"):
            return repo.commits[-1]
        tagged = repo.tags_refs.get(revision.removeprefix("refs/tags/"))
        for commit in repo.commits:
            if commit.id == revision or commit.id == tagged:
                return commit
        return None

    def _at(self, repo: _Repo, revision: str) -> _Commit | _Answer:
        commit = self._resolve(repo, revision)
        if commit is None:
            return _error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        return commit

    def _api_repo(
        self, repo_id: str, rest: list[str], query: list[tuple[str, str]], user: str | None, origin: str
    ) -> _Answer:
        repo = self._find(repo_id, user)
        if isinstance(repo, _Answer):
            return repo
        params = dict(query)
        if not rest or rest[0] == "revision":
            commit = self._at(repo, unquote("/".join(rest[1:])) if rest else "main")
            if isinstance(commit, _Answer):
                return commit
            expand = [v for k, v in query if k in ("expand", "expand[]")]
            blobs = params.get("blobs", "").lower() in ("1", "true")
            return _json_answer(self._info(repo, commit, expand=expand or None, blobs=blobs))
        if rest[0] == "commits":
            commit = self._at(repo, unquote("/".join(rest[1:])) or "main")
            if isinstance(commit, _Answer):
                return commit
            return self._commits(repo, commit, params, origin)
        if rest == ["refs"]:
            return _json_answer(
                {
                    "branches": [{"name": "main", "ref": "refs/heads/main", "targetCommit": repo.commits[-1].id}],
                    "converts": [],
                    "tags": [
                        {"name": name, "ref": f"refs/tags/{name}", "targetCommit": target}
                        for name, target in sorted(repo.tags_refs.items())
                    ],
                    "pullRequests": [],
                }
            )
        if rest[0] == "tree" and len(rest) >= 2:
            commit = self._at(repo, unquote(rest[1]))
            if isinstance(commit, _Answer):
                return commit
            recursive = params.get("recursive", "").lower() in ("1", "true")
            return self._tree(commit, unquote("/".join(rest[2:])).strip("/"), recursive)
        return _error(404, None, f"not a route of the test hub: {'/'.join(rest)}")

    def _commits(self, repo: _Repo, head: _Commit, params: dict[str, str], origin: str) -> _Answer:
        history = list(reversed(repo.commits[: repo.commits.index(head) + 1]))
        page = int(params.get("p", "0") or 0)
        chunk = history[page * self.page_size : (page + 1) * self.page_size]
        items = [
            {
                "id": c.id,
                "title": c.title,
                "message": c.message,
                "authors": [{"user": c.author, "avatar": None}],
                "date": c.date,
            }
            for c in chunk
        ]
        headers = []
        if (page + 1) * self.page_size < len(history):
            url = f"{origin}/api/models/{repo.id}/commits/{head.id}?p={page + 1}"
            headers.append(("Link", f'<{url}>; rel="next"'))
        return _json_answer(items, headers=headers)

    def _tree(self, commit: _Commit, folder: str, recursive: bool) -> _Answer:
        prefix = f"{folder}/" if folder else ""
        if folder and not any(name.startswith(prefix) for name in commit.files):
            return _error(404, "EntryNotFound", f"{folder} does not exist on {commit.id}")
        entries: list[dict[str, Any]] = []
        folders: set[str] = set()
        for name, blob in commit.files.items():
            if not name.startswith(prefix):
                continue
            rest = name[len(prefix) :]
            if "/" in rest:
                parts = rest.split("/")[:-1]
                depth = len(parts) if recursive else 1
                for i in range(1, depth + 1):
                    folders.add(prefix + "/".join(parts[:i]))
                if not recursive:
                    continue
            entry: dict[str, Any] = {"type": "file", "oid": blob.oid, "size": len(blob.data), "path": name}
            if blob.lfs:
                entry["lfs"] = {"oid": blob.sha256, "size": len(blob.data), "pointerSize": 134}
            entries.append(entry)
        for path in folders:
            oid = hashlib.sha1(f"tree {commit.id} {path}".encode()).hexdigest()
            entries.append({"type": "directory", "oid": oid, "size": 0, "path": path})
        entries.sort(key=lambda e: e["path"])
        return _json_answer(entries)

    # -------------------------------------------------------------------------------------------- model info

    def _derived(self, repo: _Repo, commit: _Commit) -> dict[str, Any]:
        """What the Hub derives from a commit's files: card data, config subset, tags, library, pipeline
        (computed once per commit and set of extra tags, never mutated)."""
        cache_key = (repo.id, commit.id, repo.extra_tags)
        if cache_key not in self._derived_cache:
            self._derived_cache[cache_key] = self._derive(repo, commit)
        return self._derived_cache[cache_key]

    def _derive(self, repo: _Repo, commit: _Commit) -> dict[str, Any]:
        readme = commit.files.get("README.md")
        card = card_data(readme.data) if readme else None
        config: dict[str, Any] | None = None
        if "config.json" in commit.files:
            try:
                loaded = json.loads(commit.files["config.json"].data)
            except ValueError:
                loaded = None
            if isinstance(loaded, dict):
                keep = ("architectures", "model_type", "auto_map", "quantization_config")
                config = {k: loaded[k] for k in keep if k in loaded}
        card = card or {}
        library = card.get("library_name") or ("transformers" if config is not None else None)
        pipeline = card.get("pipeline_tag")
        architectures = (config or {}).get("architectures") or []
        if pipeline is None and isinstance(architectures, list):
            if any(str(a).endswith("ForCausalLM") for a in architectures):
                pipeline = "text-generation"
            elif any(str(a).endswith("ForMaskedLM") for a in architectures):
                pipeline = "fill-mask"
        tags: list[str] = list(repo.extra_tags)
        card_tags = card.get("tags")
        if isinstance(card_tags, list):
            tags += [str(t) for t in card_tags]
        elif isinstance(card_tags, str):
            tags.append(card_tags)
        if library:
            tags.append(str(library))
        if any(name.endswith(".safetensors") for name in commit.files):
            tags.append("safetensors")
        if config is not None and isinstance(config.get("model_type"), str):
            tags.append(config["model_type"])
        if pipeline:
            tags.append(str(pipeline))
        bases = card.get("base_model")
        for base in [bases] if isinstance(bases, str) else bases if isinstance(bases, list) else []:
            tags += [f"base_model:{base}", f"base_model:finetune:{base}"]
        if card.get("license"):
            tags.append(f"license:{card['license']}")
        tags.append("region:us")
        return {
            "cardData": card_data(readme.data) if readme else None,  # a copy of its own, not `card`
            "config": config,
            "tags": list(dict.fromkeys(tags)),
            "library_name": library,
            "pipeline_tag": pipeline,
        }

    def _siblings(self, commit: _Commit, blobs: bool) -> list[dict[str, Any]]:
        out = []
        for name, blob in commit.files.items():
            entry: dict[str, Any] = {"rfilename": name}
            if blobs:
                entry["size"] = len(blob.data)
                entry["blobId"] = blob.oid
                if blob.lfs:
                    entry["lfs"] = {"sha256": blob.sha256, "size": len(blob.data), "pointerSize": 134}
            out.append(entry)
        return out

    def _properties(self, repo: _Repo, commit: _Commit, blobs: bool) -> dict[str, Any]:
        derived = self._derived(repo, commit)
        return {
            "_id": repo.mongo_id,
            "id": repo.id,
            "modelId": repo.id,
            "author": repo.author,
            "sha": commit.id,
            "lastModified": commit.date,
            "createdAt": repo.created,
            "private": repo.private,
            "gated": repo.gated,
            "disabled": False,
            "downloads": repo.downloads,
            "downloadsAllTime": repo.downloads * 3,
            "likes": repo.likes,
            "trendingScore": 0,
            "tags": derived["tags"],
            "pipeline_tag": derived["pipeline_tag"],
            "library_name": derived["library_name"],
            "cardData": derived["cardData"],
            "config": derived["config"],
            "siblings": self._siblings(commit, blobs),
            "spaces": [],
            "usedStorage": sum(len(b.data) for b in commit.files.values()),
        }

    def _info(self, repo: _Repo, commit: _Commit, *, expand: list[str] | None, blobs: bool) -> dict[str, Any]:
        props = self._properties(repo, commit, blobs)
        if expand:
            return {"_id": props["_id"], "id": props["id"], **{k: props.get(k) for k in expand}}
        return {k: v for k, v in props.items() if v is not None or k in ("pipeline_tag", "library_name")}

    def _list_item(self, repo: _Repo, params: list[tuple[str, str]]) -> dict[str, Any]:
        props = self._properties(repo, repo.commits[-1], blobs=False)
        expand = [v for k, v in params if k in ("expand", "expand[]")]
        if expand:
            return {"_id": props["_id"], "id": props["id"], **{k: props.get(k) for k in expand}}
        keys = ["_id", "id", "likes", "trendingScore", "private", "downloads", "tags"]
        keys += [k for k in ("pipeline_tag", "library_name") if props[k] is not None]
        keys += ["createdAt", "modelId"]
        flags = {k: v.lower() in ("1", "true") for k, v in params}
        if flags.get("full"):
            keys += ["author", "sha", "lastModified", "gated", "disabled", "siblings"]
        if flags.get("cardData") and props["cardData"] is not None:
            keys.append("cardData")
        if flags.get("config") and props["config"] is not None:
            keys.append("config")
        return {k: props[k] for k in keys}

    def _list_models(self, query: list[tuple[str, str]], user: str | None, origin: str, raw_query: str) -> _Answer:
        params = dict(query)
        author = params.get("author", "").lower()
        search = params.get("search", "").lower()
        wanted_tags = [v for k, v in query if k == "filter"]
        gated = params.get("gated", "").lower()
        pipeline = params.get("pipeline_tag")
        chosen: list[_Repo] = []
        for repo in self._repos.values():
            if not self._visible(repo, user) or (author and repo.author.lower() != author):
                continue
            if search and search not in repo.id.lower():
                continue
            if gated in ("true", "false") and bool(repo.gated) != (gated == "true"):
                continue
            if pipeline or wanted_tags:
                derived = self._derived(repo, repo.commits[-1])
                if pipeline and derived["pipeline_tag"] != pipeline:
                    continue
                known = {*derived["tags"], derived["library_name"], derived["pipeline_tag"]}
                if any(tag not in known for tag in wanted_tags):
                    continue
            chosen.append(repo)
        sort = params.get("sort", "")
        descending = params.get("direction", "-1") != "1"

        def key(repo: _Repo) -> list[Any]:
            if sort in ("downloads", "likes", "trendingScore"):
                value = {"downloads": repo.downloads, "likes": repo.likes, "trendingScore": 0}[sort]
                return [-value if descending else value, repo.seq]
            if sort in ("lastModified", "createdAt"):
                stamp = repo.commits[-1].date if sort == "lastModified" else repo.created
                seconds = int(_parse_date(stamp).timestamp())
                return [-seconds if descending else seconds, repo.seq]
            if sort == "id":
                return [repo.id, repo.seq]
            return [repo.seq]

        ordered = sorted(chosen, key=key)
        cursor = params.get("cursor")
        if cursor:
            after = json.loads(base64.urlsafe_b64decode(cursor.encode()))
            ordered = [r for r in ordered if key(r) > after]
        limit = params.get("limit")
        size = max(1, min(1000, int(limit))) if limit else self.page_size
        page, rest = ordered[:size], ordered[size:]
        headers = []
        if rest and page:
            token = base64.urlsafe_b64encode(json.dumps(key(page[-1])).encode()).decode()
            kept = [(k, v) for k, v in query if k != "cursor"] + [("cursor", token)]
            headers.append(("Link", f'<{origin}/api/models?{urlencode(kept)}>; rel="next"'))
        return _json_answer([self._list_item(r, query) for r in page], headers=headers)

    # -------------------------------------------------------------------------------------------- files

    def _resolve_file(self, repo_id: str, revision: str, path: str, user: str | None, redirect: bool) -> _Answer:
        repo = self._find(repo_id, user)
        if isinstance(repo, _Answer):
            return repo
        if repo.gated and user != "owner":
            if user is None:
                message = (
                    f"Access to model {repo_id} is restricted. You must have access to it and be authenticated "
                    "to access it. Please log in."
                )
                return _error(401, "GatedRepo", message)
            message = (
                f"Access to model {repo_id} is restricted and you are not in the authorized list. "
                f"Visit {self.endpoint}/{repo_id} to ask for access."
            )
            return _error(403, "GatedRepo", message)
        commit = self._at(repo, revision)
        if isinstance(commit, _Answer):
            return commit
        commit_header = ("X-Repo-Commit", commit.id)
        blob = commit.files.get(path)
        if blob is None:
            return _error(404, "EntryNotFound", f"{path} does not exist on {revision}", [commit_header])
        if blob.lfs:
            location = f"{self.cdn_endpoint}/cdn/{blob.sha256}?filename={quote(path.rsplit('/', 1)[-1])}"
            headers = [
                commit_header,
                ("X-Linked-Etag", f'"{blob.sha256}"'),
                ("X-Linked-Size", str(len(blob.data))),
                ("ETag", f'"{blob.sha256}"'),
                ("Location", location),
                ("Content-Type", "text/plain; charset=utf-8"),
            ]
            return _Answer(302, headers, f"Found. Redirecting to {location}".encode())
        etag = ("ETag", f'"{blob.oid}"')
        if redirect and self.resolve_cache and commit.id != revision:
            origin_path = quote(f"/{repo_id}/resolve/{revision}/{path}", safe="")
            quoted_etag = quote(f'"{blob.oid}"')
            target = f"/api/resolve-cache/models/{repo_id}/{commit.id}/{quote(path)}?{origin_path}=&etag={quoted_etag}"
            headers = [commit_header, etag, ("Location", target), ("Content-Type", "text/plain; charset=utf-8")]
            return _Answer(307, headers, f"Temporary Redirect. Redirecting to {target}".encode())
        headers = [
            commit_header,
            etag,
            ("Accept-Ranges", "bytes"),
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Cache-Control", "public, max-age=31536000, immutable" if commit.id == revision else "no-cache"),
        ]
        return _Answer(200, headers, blob.data, rangeable=True)

    def _cdn(self, name: str) -> _Answer:
        with self._lock:
            blob = self._lfs.get(name)
        if blob is None:
            return _error(404, None, "NoSuchKey")
        filename = f"{blob.sha256[:12]}.bin"
        headers = [
            ("ETag", f'"{blob.sha256}"'),
            ("Accept-Ranges", "bytes"),
            ("Content-Type", "application/octet-stream"),
            ("Content-Disposition", f'inline; filename="{filename}";'),
        ]
        return _Answer(200, headers, blob.data, rangeable=True)


# ------------------------------------------------------------------------------------------------- population


@dataclass(frozen=True)
class PublishedRepo:
    """One repo `populate` published, as a test may assert against it."""

    repo: str
    kind: Kind  # "dflash", "dflash2", "speculators" (DFlash drafters) or "model" (anything else)
    gated: Gated
    commits: tuple[str, ...]  # oldest first; the last is main
    base_model: str | None  # the card's base_model (None: the card names none)
    base_published: bool  # whether base_model is a repo of the server
    broken: str | None = None  # why main's config.json is deliberately wrong (None: consistent)
    card_tags: tuple[str, ...] = ()  # the tags the card's front matter lists
    config_path: str | None = "config.json"  # None: the repo has no config.json
    retrained: bool = False  # a later commit changed the taps and the sliding window

    @property
    def author(self) -> str:
        return self.repo.split("/", 1)[0]

    @property
    def is_drafter(self) -> bool:
        return self.kind != "model"


@dataclass(frozen=True)
class Population:
    """What `populate` published: the authors' repos (creation order) and the targets (base models) their
    drafters name, from other orgs."""

    seed: int
    authors: tuple[str, ...]
    repos: tuple[PublishedRepo, ...]
    targets: tuple[PublishedRepo, ...]
    missing_bases: tuple[str, ...]  # base models cards name that the server does not have

    def repo(self, repo_id: str) -> PublishedRepo:
        for item in (*self.repos, *self.targets):
            if item.repo == repo_id:
                return item
        raise KeyError(repo_id)

    def of(self, author: str) -> tuple[PublishedRepo, ...]:
        return tuple(r for r in self.repos if r.author == author)

    @property
    def drafters(self) -> tuple[PublishedRepo, ...]:
        return tuple(r for r in self.repos if r.is_drafter)

    @property
    def broken(self) -> dict[str, str]:
        return {r.repo: r.broken for r in self.repos if r.broken is not None}

    @property
    def retrained(self) -> tuple[str, ...]:
        return tuple(r.repo for r in self.repos if r.retrained)

    @property
    def gated(self) -> tuple[str, ...]:
        return tuple(r.repo for r in (*self.repos, *self.targets) if r.gated)


AUTHORS = ("z-lab", "RedHatAI", "nvidia", "poolside", "someone-else")
_SHARES = {"z-lab": 0.35, "RedHatAI": 0.22, "nvidia": 0.18, "poolside": 0.10}  # someone-else: the rest


@dataclass(frozen=True)
class _Target:
    repo: str
    arch: str
    model_type: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    max_positions: int
    rope_theta: float
    tie: bool
    bos: int | None
    eos: int
    mask: int  # the mask id its drafters use (a free or reserved id below vocab)
    gated: Gated = False
    text_model_type: str | None = None  # a multimodal config: the text model under text_config

    @property
    def short(self) -> str:
        return self.repo.split("/", 1)[1]


# Targets the population's drafters are trained for (their configs as the model families publish them, sizes
# from the real releases). None of these names is a repo fixtures/ publishes, so both can share a server.
# fmt: off
_TARGETS = (
    # repo, architecture, model_type, layers, hidden, heads, kv heads, head_dim, intermediate, vocab, positions,
    # rope theta, tied embeddings, bos, eos, the mask id its drafters use
    _Target("Qwen/Qwen3-0.6B", "Qwen3ForCausalLM", "qwen3", 28, 1024, 16, 8, 128, 3072, 151936, 40960, 1e6, True,
            151643, 151645, 151669),
    _Target("Qwen/Qwen3-1.7B", "Qwen3ForCausalLM", "qwen3", 28, 2048, 16, 8, 128, 6144, 151936, 40960, 1e6, True,
            151643, 151645, 151669),
    _Target("Qwen/Qwen3-14B", "Qwen3ForCausalLM", "qwen3", 40, 5120, 40, 8, 128, 17408, 151936, 40960, 1e6, False,
            151643, 151645, 151669),
    _Target("Qwen/Qwen3-32B", "Qwen3ForCausalLM", "qwen3", 64, 5120, 64, 8, 128, 25600, 151936, 40960, 1e6, False,
            151643, 151645, 151669),
    _Target("Qwen/Qwen3-30B-A3B", "Qwen3MoeForCausalLM", "qwen3_moe", 48, 2048, 32, 4, 128, 6144, 151936, 40960,
            1e6, False, 151643, 151645, 151669),
    _Target("Qwen/Qwen3.5-9B", "Qwen3_5ForConditionalGeneration", "qwen3_5", 32, 4096, 16, 4, 256, 12288, 248320,
            262144, 1e7, False, None, 248044, 248077, text_model_type="qwen3_5_text"),
    _Target("meta-llama/Llama-3.1-8B-Instruct", "LlamaForCausalLM", "llama", 32, 4096, 32, 8, 128, 14336, 128256,
            131072, 500000.0, False, 128000, 128009, 128002, gated="manual"),
    _Target("meta-llama/Llama-3.3-70B-Instruct", "LlamaForCausalLM", "llama", 80, 8192, 64, 8, 128, 28672, 128256,
            131072, 500000.0, False, 128000, 128009, 128002, gated="manual"),
    _Target("google/gemma-3-12b-it", "Gemma3ForConditionalGeneration", "gemma3", 48, 3840, 16, 8, 256, 15360,
            262208, 131072, 1e6, False, 2, 106, 4, gated="manual", text_model_type="gemma3_text"),
    _Target("deepseek-ai/DeepSeek-V3.1", "DeepseekV3ForCausalLM", "deepseek_v3", 61, 7168, 128, 128, 128, 18432,
            129280, 163840, 10000.0, False, 0, 1, 1),
    _Target("mistralai/Mistral-Nemo-Instruct-2407", "MistralForCausalLM", "mistral", 40, 5120, 32, 8, 128, 14336,
            131072, 1024000, 1e6, False, 1, 2, 10),
)
# Named by a drafter's card, never published.
_MISSING_TARGET = _Target("Qwen/Qwen3-72B-Preview", "Qwen3ForCausalLM", "qwen3", 80, 8192, 64, 8, 128, 29568,
                          151936, 40960, 1e6, False, 151643, 151645, 151669)
# fmt: on

_BROKEN = (
    "tap-past-depth",
    "mask-out-of-vocab",
    "layer-types-length",
    "invalid-json",
    "aux-past-depth",
    "depth-mismatch",
)


def _dump(data: Any) -> bytes:
    return (json.dumps(data, indent=2) + "\n").encode()


def standard_taps(depth: int, count: int) -> list[int]:
    """The reference build_target_layer_ids (dflash_cfg.lint.rules.taps.standard_taps)."""
    if count == 1:
        return [depth // 2]
    start, end = 1, depth - 3
    return [int(round(start + (i * (end - start)) / (count - 1))) for i in range(count)]


def _trained_taps(rng: random.Random, depth: int, count: int) -> list[int]:
    """Distinct sorted taps inside the target, not the standard spread (as a retrain picks them)."""
    standard = standard_taps(depth, count)
    while True:
        taps = sorted(rng.sample(range(1, depth - 1), count))
        if taps != standard:
            return taps


def _target_config(t: _Target) -> dict[str, Any]:
    text: dict[str, Any] = {
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": t.bos,
        "eos_token_id": t.eos,
        "head_dim": t.head_dim,
        "hidden_act": "silu",
        "hidden_size": t.hidden,
        "initializer_range": 0.02,
        "intermediate_size": t.intermediate,
        "max_position_embeddings": t.max_positions,
        "model_type": t.text_model_type or t.model_type,
        "num_attention_heads": t.heads,
        "num_hidden_layers": t.layers,
        "num_key_value_heads": t.kv_heads,
        "rms_norm_eps": 1e-06,
        "rope_theta": t.rope_theta,
        "tie_word_embeddings": t.tie,
        "use_cache": True,
        "vocab_size": t.vocab,
    }
    if t.text_model_type is None:
        return {"architectures": [t.arch], **text, "torch_dtype": "bfloat16", "transformers_version": "4.51.0"}
    return {
        "architectures": [t.arch],
        "model_type": t.model_type,
        "text_config": text,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.57.0",
        "vision_config": {"hidden_size": 1152, "model_type": "siglip_vision_model", "num_hidden_layers": 27},
    }


def _card(meta: dict[str, Any] | None, title: str, body: str) -> bytes:
    text = f"# {title}\n\n{body}\n"
    if meta is not None:
        text = "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n\n" + text
    return text.encode()


def _safetensors(seed: str) -> bytes:
    """A valid safetensors file with no tensors (header only), different per repo."""
    header = json.dumps({"__metadata__": {"format": "pt", "seed": seed}}).encode()
    header += b" " * (-len(header) % 8)
    return len(header).to_bytes(8, "little") + header


_GITATTRIBUTES = b"".join(f"*{suffix} filter=lfs diff=lfs merge=lfs -text\n".encode() for suffix in LFS_SUFFIXES)


def _drafter_config(
    rng: random.Random, kind: Kind, t: _Target, base: str, *, layers: int, taps: list[int], window: int | None
) -> dict[str, Any]:
    """A consistent drafter config.json of `kind` for target `t` (named `base` in the card)."""
    sliding = window is not None
    if kind == "dflash2":
        layer_types = ["sliding_attention"] * layers
    elif sliding:
        layer_types = ["sliding_attention"] * (layers - 1) + ["full_attention"]
    else:
        layer_types = ["full_attention"] * layers
    decoder: dict[str, Any] = {
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": t.bos,
        "eos_token_id": t.eos,
        "head_dim": 128,
        "hidden_act": "silu",
        "hidden_size": t.hidden,
        "initializer_range": 0.02,
        "intermediate_size": t.intermediate,
        "layer_types": layer_types,
        "max_position_embeddings": t.max_positions,
        "max_window_layers": layers,
        "num_attention_heads": 32,
        "num_hidden_layers": layers,
        "num_key_value_heads": 8,
        "rms_norm_eps": 1e-06,
        "sliding_window": window,
        "tie_word_embeddings": False,
        "use_cache": True,
        "use_sliding_window": sliding,
        "vocab_size": t.vocab,
    }
    block = rng.choice((8, 16, 16))
    if kind == "speculators":
        decoder = {k: v for k, v in decoder.items() if k not in ("max_window_layers", "use_sliding_window")}
        decoder.update(model_type="llama", mlp_bias=False, pretraining_tp=1, pad_token_id=None)
        decoder["rope_parameters"] = {"rope_theta": t.rope_theta, "rope_type": "default"}
        return {
            "architectures": [rng.choice(("DFlashDraftModel", "DFlashSpeculator"))],
            "auto_map": {"": "config.DFlashSpeculatorConfig"},
            "aux_hidden_state_layer_ids": [tap + 1 for tap in taps],  # EAGLE semantics: the tap + 1
            "block_size": block,
            "draft_vocab_size": rng.choice((32000, t.vocab)),
            "dtype": "bfloat16",
            "mask_token_id": t.mask,
            "max_anchors": 3072,
            "sliding_window_non_causal": False,
            "speculators_config": {
                "algorithm": "dflash",
                "default_proposal_method": "greedy",
                "proposal_methods": [
                    {
                        "accept_tolerance": 0.0,
                        "proposal_type": "greedy",
                        "speculative_tokens": block - 1,
                        "verifier_accept_k": 1,
                    }
                ],
                "verifier": {"architectures": [t.arch], "name_or_path": base},
            },
            "speculators_model_type": "dflash",
            "speculators_version": rng.choice(("0.4.0", "0.5.0.dev163")),
            "target_hidden_size": None,
            "tie_word_embeddings": False,
            "transformer_layer_config": dict(sorted(decoder.items())),
            "transformers_version": "5.10.2",
        }
    data: dict[str, Any] = {"architectures": ["DFlash2DraftModel" if kind == "dflash2" else "DFlashDraftModel"]}
    data.update(decoder)
    data["model_type"] = "qwen3"
    data["num_target_layers"] = t.layers
    data["dtype"] = "bfloat16"
    legacy = kind == "dflash" and rng.random() < 0.6
    if kind == "dflash2":
        data["is_causal"] = False
        data["dflash_config"] = {
            "block_size": 8,
            "conv_group_size": 16,
            "conv_kernel_size": 2,
            "mask_token_id": t.mask,
            "selector_rank": 256,
            "selector_top_k": 16,
            "target_layer_ids": taps,
        }
        data["rope_parameters"] = {"rope_theta": t.rope_theta, "rope_type": "default"}
        data["transformers_version"] = "5.15.0"
    elif legacy:
        data["auto_map"] = {"AutoModel": "dflash.DFlashDraftModel"}
        data["block_size"] = block
        data["dflash_config"] = {"mask_token_id": t.mask, "target_layer_ids": taps}
        data["rope_scaling"] = None
        data["rope_theta"] = t.rope_theta
        data["transformers_version"] = rng.choice(("4.57.1", "4.57.3"))
    else:
        data["auto_map"] = {"AutoModel": "dflash.DFlashDraftModel"}
        data["dflash_config"] = {"block_size": block, "mask_token_id": t.mask, "target_layer_ids": taps}
        data["rope_parameters"] = {"rope_theta": t.rope_theta, "rope_type": "default"}
        data["transformers_version"] = rng.choice(("5.7.0", "5.10.2"))
    return dict(sorted(data.items()))


def _retrain(data: dict[str, Any], kind: Kind, taps: list[int], window: int) -> None:
    """What a retrain changes in a drafter config: its taps and its sliding window (nothing else)."""
    if kind == "speculators":
        data["aux_hidden_state_layer_ids"] = [tap + 1 for tap in taps]
        data["transformer_layer_config"]["sliding_window"] = window
    else:
        data["dflash_config"]["target_layer_ids"] = taps
        data["sliding_window"] = window


def _break(data: dict[str, Any], how: str, t: _Target) -> bytes:
    if how == "invalid-json":
        return _dump(data)[: len(_dump(data)) // 2]
    if how == "tap-past-depth":
        data["dflash_config"]["target_layer_ids"][-1] = t.layers + 2
    elif how == "mask-out-of-vocab":
        data["dflash_config"]["mask_token_id"] = t.vocab + 64
    elif how == "layer-types-length":
        data["layer_types"] = [*data["layer_types"], "full_attention"]
    elif how == "aux-past-depth":
        data["aux_hidden_state_layer_ids"][-1] = t.layers + 1  # the tap t.layers: one past the last layer
    elif how == "depth-mismatch":
        data["num_target_layers"] = t.layers + 8  # trained for a deeper sibling of the card's base
    return _dump(data)


def populate(hub: PublisherHub, seed: int = 0, count: int = 200) -> Population:
    """Publish at least `count` repos of the five AUTHORS (and the targets their drafters name, under the
    targets' own orgs): DFlash drafters (DFlashDraftModel), DFlash2 drafters, speculators-format DFlash drafters
    and plain models, with model cards, some gated, some with 2-4 commits. Deterministic for a given seed.

    Always included (so a small `count` has them too): a drafter retrained in its last commit (taps and sliding
    window changed; `retrained`), one of each deliberately broken config (`Population.broken`: a tap past the
    target's depth, a mask id past the vocabulary, more layer_types than layers, invalid JSON, a speculators aux
    id past the depth, a num_target_layers that is not the base's, the last one on a later commit only), a drafter
    whose card names a base the server does not have, drafters whose name does not say DFlash and plain models
    whose name does (some with a dflash tag), drafters with no tags or no card front matter, a repo with no
    config.json, gated drafters."""
    rng = random.Random(seed)
    existing = set(hub.repos())
    targets: list[PublishedRepo] = []
    for t in _TARGETS:
        if t.repo in existing:  # a second population on this hub: its targets are there already
            targets.append(PublishedRepo(t.repo, "model", t.gated, hub.commits(t.repo), None, False))
            continue
        files = {
            ".gitattributes": _GITATTRIBUTES,
            "config.json": _dump(_target_config(t)),
            "README.md": _card({"license": "apache-2.0", "library_name": "transformers"}, t.short, "A base model."),
            "model.safetensors": _safetensors(t.repo),
        }
        commit = hub.publish(t.repo, files, gated=t.gated)
        targets.append(PublishedRepo(t.repo, "model", t.gated, (commit,), None, False))

    quotas = {a: int(count * s) for a, s in _SHARES.items()}
    quotas["someone-else"] = max(0, count - sum(quotas.values()))
    plans: list[dict[str, Any]] = []
    # The cases every population has, whatever `count`.
    specials: list[dict[str, Any]] = [
        {"author": "z-lab", "kind": "dflash", "special": "retrain", "target": _TARGETS[2]},
        {"author": "someone-else", "kind": "dflash", "special": "missing-base", "target": _MISSING_TARGET},
        {"author": "nvidia", "kind": "dflash", "special": "no-dflash-name", "target": _TARGETS[6], "gated": "auto"},
        {"author": "nvidia", "kind": "model", "special": "dflash-named-model", "target": _TARGETS[3]},
        {"author": "someone-else", "kind": "model", "special": "no-config"},
        {"author": "poolside", "kind": "dflash", "special": "no-tags", "target": _TARGETS[10]},
        {"author": "RedHatAI", "kind": "speculators", "special": "gated", "target": _TARGETS[7], "gated": "manual"},
        {"author": "z-lab", "kind": "dflash2", "special": "plain-card", "target": _TARGETS[3]},
    ]
    for how in _BROKEN:
        kind: Kind = "speculators" if how == "aux-past-depth" else "dflash"
        specials.append({"author": "someone-else", "kind": kind, "special": "broken", "broken": how})
    for plan in specials:
        quotas[plan["author"]] -= 1
        plans.append(plan)
    kinds_by_author: dict[str, tuple[tuple[Kind, float], ...]] = {
        "z-lab": (("dflash", 0.72), ("dflash2", 0.18), ("model", 0.10)),
        "RedHatAI": (("speculators", 0.62), ("dflash", 0.13), ("model", 0.25)),
        "nvidia": (("dflash", 0.55), ("dflash2", 0.10), ("model", 0.35)),
        "poolside": (("dflash", 0.75), ("model", 0.25)),
        "someone-else": (("dflash", 0.45), ("speculators", 0.10), ("dflash2", 0.10), ("model", 0.35)),
    }
    for author in AUTHORS:
        choices = kinds_by_author[author]
        for _ in range(max(0, quotas[author])):
            kind = rng.choices([k for k, _ in choices], [w for _, w in choices])[0]
            plans.append({"author": author, "kind": kind, "special": None})
    rng.shuffle(plans)

    used: set[str] = {r.lower() for r in (*(t.repo for t in _TARGETS), *existing)}
    repos: list[PublishedRepo] = []
    for plan in plans:
        repos.append(_publish_planned(hub, rng, plan, used))
    return Population(
        seed=seed,
        authors=AUTHORS,
        repos=tuple(repos),
        targets=tuple(targets),
        missing_bases=(_MISSING_TARGET.repo,),
    )


_DRAFT_SUFFIXES = ("-DFlash", "-DFlash", "-DFlash-b16", "-DFlash-b8", "-dflash", "-DFlash-v2", "-DFlash-exp")
_SPEC_SUFFIXES = ("-speculator.dflash", "-speculator.dflash", "-dflash-speculator", "-FP8-speculator.dflash")
_PLAIN_DRAFT_SUFFIXES = ("-SpecDraft", "-draft", "-Drafter-v1", "-fastdraft", "-spec-head")
_MODEL_SUFFIXES = ("-Instruct-ft", "-AWQ", "-FP8", "-abliterated", "-math-sft", "-speculator.eagle3")


def _unique(name: str, used: set[str]) -> str:
    """`name`, or `name-rN` when a repo of that id (regardless of case, as the Hub compares them) exists."""
    candidate, n = name, 1
    while candidate.lower() in used:
        n += 1
        candidate = f"{name}-r{n}"
    used.add(candidate.lower())
    return candidate


def _publish_planned(hub: PublisherHub, rng: random.Random, plan: dict[str, Any], used: set[str]) -> PublishedRepo:
    author: str = plan["author"]
    kind: Kind = plan["kind"]
    special: str | None = plan["special"]
    t: _Target = plan.get("target") or rng.choice(_TARGETS)
    if kind == "model":
        return _publish_model(hub, rng, author, special, t, used)
    base = t.repo
    if special == "no-dflash-name" or (special is None and rng.random() < 0.15):
        suffix = rng.choice(_PLAIN_DRAFT_SUFFIXES)
    elif kind == "speculators":
        suffix = rng.choice(_SPEC_SUFFIXES)
    elif kind == "dflash2":
        suffix = rng.choice(("-DFlash2", "-DFlash2", "-dflash2-b8"))
    else:
        suffix = rng.choice(_DRAFT_SUFFIXES)
    repo = _unique(f"{author}/{t.short}{suffix}", used)
    layers = 5 if kind == "dflash2" else rng.choice((5, 5, 5, 4, 6, 8))
    count = rng.choice((5, 5, 6, 8)) if kind != "dflash2" else 5
    count = min(count, t.layers - 3)
    taps = (
        standard_taps(t.layers, count)
        if kind != "dflash2" and rng.random() < 0.8
        else _trained_taps(rng, t.layers, count)
    )
    window = rng.choice((2048, 4096, None)) if kind != "dflash2" else 2048
    if special == "retrain":
        window = 2048
    gated: Gated = plan.get("gated", False)
    if special is None and rng.random() < 0.08:
        gated = rng.choice(("auto", "manual"))
    card_tags: tuple[str, ...] = ()
    if special not in ("no-tags", "plain-card") and rng.random() > 0.15:
        card_tags = tuple(rng.sample(["dflash", "speculative-decoding", "draft-model", "block-diffusion"], 2))
        if kind == "speculators":
            card_tags = ("speculators", *card_tags)
    base_form: Any = base if rng.random() < 0.6 else [base]
    front: dict[str, Any] = {"base_model": base_form, "library_name": "transformers", "license": "mit"}
    if card_tags:
        front["tags"] = list(card_tags)
    meta: dict[str, Any] | None = front
    if special == "plain-card":
        meta = None  # a card with no front matter: no cardData, no base_model
    elif special is None and rng.random() < 0.05:
        meta = {"license": "mit", "tags": list(card_tags)} if card_tags else {"license": "mit"}  # names no base
    named_base = None if meta is None or "base_model" not in meta else base
    broken: str | None = plan.get("broken")
    data = _drafter_config(rng, kind, t, base, layers=layers, taps=taps, window=window)
    blurb = f"A {'DFlash2' if kind == 'dflash2' else 'DFlash'} drafter (block diffusion) for speculative decoding."
    files = {
        ".gitattributes": _GITATTRIBUTES,
        "README.md": _card(meta, repo.split("/", 1)[1], f"{blurb} Target: {base}."),
        "model.safetensors": _safetensors(repo),
        "config.json": _dump(data),
    }
    if kind == "dflash" and "auto_map" in data and rng.random() < 0.3:
        files["dflash.py"] = b"# modeling code of the DFlash drafter (placeholder)\nclass DFlashDraftModel:\n    pass\n"
    first_broken = broken if broken != "depth-mismatch" else None
    if first_broken:
        files["config.json"] = _break(json.loads(files["config.json"]), first_broken, t)
    commits = [hub.publish(repo, files, gated=gated, message="Upload DFlash drafter")]
    if special == "retrain":
        extra = 2
    elif broken == "depth-mismatch":
        extra = 1
    elif special in ("broken", "missing-base"):
        extra = 0
    else:
        extra = rng.choice((1, 2, 3)) if rng.random() < 0.25 else 0
    retrained = False
    for step in range(extra):
        last = step == extra - 1
        if last and window and (special == "retrain" or (special is None and rng.random() < 0.2)):
            _retrain(data, kind, _trained_taps(rng, t.layers, len(taps)), 4096 if window == 2048 else 2048)
            changed = {"config.json": _dump(data), "model.safetensors": _safetensors(f"{repo}-retrained")}
            commits.append(hub.publish(repo, changed, message="Retrain: new target layers and sliding window"))
            retrained = True
        elif last and broken == "depth-mismatch":
            changed = {"config.json": _break(data, broken, t)}
            commits.append(hub.publish(repo, changed, message="Update config for the deeper target"))
        elif rng.random() < 0.5:
            note = f"{blurb} Target: {base}.\n\nRevision {step + 2}: evaluation numbers added."
            commits.append(hub.publish(repo, {"README.md": _card(meta, repo.split("/", 1)[1], note)}))
        else:
            data["transformers_version"] = "5.12.0"
            commits.append(hub.publish(repo, {"config.json": _dump(data)}, message="Bump transformers_version"))
    return PublishedRepo(
        repo=repo,
        kind=kind,
        gated=gated,
        commits=tuple(commits),
        base_model=named_base,
        base_published=named_base is not None and named_base != _MISSING_TARGET.repo,
        broken=broken,
        card_tags=tuple(meta.get("tags", ())) if meta is not None else (),
        retrained=retrained,
    )


def _publish_model(
    hub: PublisherHub, rng: random.Random, author: str, special: str | None, t: _Target, used: set[str]
) -> PublishedRepo:
    """A repo that is no DFlash drafter: a finetune of a target, an EAGLE-3 speculator, a BERT, a notes repo."""
    flavour = rng.choice(("finetune", "finetune", "eagle3", "bert"))
    if special == "dflash-named-model":
        flavour = "dflash-named"
    if special == "no-config":
        flavour = "notes"
    meta: dict[str, Any] = {"license": "apache-2.0"}
    files: dict[str, bytes] = {".gitattributes": _GITATTRIBUTES}
    base: str | None = None
    if flavour in ("finetune", "dflash-named") or (flavour == "eagle3" and author != "RedHatAI"):
        if flavour == "dflash-named":
            name = f"{t.short}-DFlash-Target"  # a target served next to its drafter: says DFlash, is none
            meta["tags"] = ["dflash", "target-model"]
        elif flavour == "eagle3":
            name = f"{t.short}-EAGLE3"
            meta["tags"] = ["eagle3", "speculative-decoding"]
        else:
            name = t.short + rng.choice(_MODEL_SUFFIXES[:5])
        config = _target_config(t)
        if flavour == "eagle3":
            config = {
                "architectures": ["LlamaForCausalLMEagle3"],
                "model_type": "llama",
                "draft_vocab_size": 32000,
                "hidden_size": t.hidden,
                "num_hidden_layers": 1,
                "vocab_size": t.vocab,
                "torch_dtype": "bfloat16",
            }
        base = t.repo
        meta["base_model"] = base
        files["config.json"] = _dump(config)
        files["model.safetensors"] = _safetensors(f"{author}/{name}")
    elif flavour == "eagle3":
        name = f"{t.short}-speculator.eagle3"
        base = t.repo
        meta.update(base_model=base, tags=["speculators", "eagle3"])
        layer = {k: v for k, v in _target_config(t).items() if k not in ("architectures", "text_config")}
        files["config.json"] = _dump(
            {
                "architectures": ["Eagle3Speculator"],
                "draft_vocab_size": 32000,
                "norm_before_residual": True,
                "speculators_config": {
                    "algorithm": "eagle3",
                    "default_proposal_method": "greedy",
                    "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 3}],
                    "verifier": {"architectures": [t.arch], "name_or_path": base},
                },
                "speculators_model_type": "eagle3",
                "speculators_version": "0.2.0",
                "transformer_layer_config": {**layer, "model_type": "llama", "num_hidden_layers": 1},
                "transformers_version": "4.56.0",
            }
        )
        files["model.safetensors"] = _safetensors(f"{author}/{name}")
    elif flavour == "bert":
        name = rng.choice(("bert-base-uncased-ft", "dflash-router-bert", "reranker-bert-base", "bert-acceptance-probe"))
        meta.update(pipeline_tag="fill-mask", library_name="transformers")
        files["config.json"] = _dump(
            {
                "architectures": ["BertForMaskedLM"],
                "attention_probs_dropout_prob": 0.1,
                "hidden_act": "gelu",
                "hidden_size": 768,
                "intermediate_size": 3072,
                "max_position_embeddings": 512,
                "model_type": "bert",
                "num_attention_heads": 12,
                "num_hidden_layers": 12,
                "type_vocab_size": 2,
                "vocab_size": 30522,
            }
        )
        files["model.safetensors"] = _safetensors(f"{author}/{name}")
    else:
        name = rng.choice(("dflash-training-logs", "DFlash-eval-notes"))
        meta["tags"] = ["dflash"]
        files["results.md"] = b"| drafter | acceptance length |\n|---|---|\n| DFlash | 6.1 |\n"
    repo = _unique(f"{author}/{name}", used)
    files["README.md"] = _card(meta, name, "Not a DFlash drafter.")
    commits = [hub.publish(repo, files)]
    if rng.random() < 0.2:
        commits.append(hub.publish(repo, {"README.md": _card(meta, name, "Not a DFlash drafter. Updated.")}))
    return PublishedRepo(
        repo=repo,
        kind="model",
        gated=False,
        commits=tuple(commits),
        base_model=base,
        base_published=base is not None,
        card_tags=tuple(meta.get("tags", ())),
        config_path="config.json" if "config.json" in files else None,
    )


# ------------------------------------------------------------------------------------------------- fixtures

# The target each real drafter was published for, where fixtures/PROVENANCE.md names one.
FIXTURE_BASE_MODELS: dict[str, str] = {
    "z-lab/Qwen3.6-27B-DFlash": "Qwen/Qwen3.6-27B",
    "z-lab/gpt-oss-20b-DFlash": "openai/gpt-oss-20b",
    "RedHatAI/DeepSeek-V4-Flash-speculator.dflash": "deepseek-ai/DeepSeek-V4-Flash",
    "XiaomiMiMo/MiMo-V2.5-Pro-FP4-DFlash": "XiaomiMiMo/MiMo-V2.5-Pro",
    "z-lab/Qwen3-4B-DFlash-b16": "Qwen/Qwen3-4B",
    "z-lab/gemma-4-31B-it-DFlash": "google/gemma-4-31B-it",
}


@dataclass(frozen=True)
class PublishedFixtures:
    drafters: dict[str, str]  # repo -> its commit (main)
    targets: dict[str, str]  # repo -> its commit (main)
    base_models: dict[str, str]  # drafter repo -> the base_model its card names
    files: dict[str, str]  # drafter repo -> the path of its config in the repo


def _recorded_commits(root: Path) -> dict[str, str]:
    """fixtures/published.toml's commit of each drafter file (repo -> commit), where it records one."""
    with open(root / "published.toml", "rb") as f:
        entries = tomllib.load(f).get("drafter", [])
    return {e["repo"]: e["commit"] for e in entries if "commit" in e and not e.get("partial")}


def publish_fixtures(hub: PublisherHub, root: Path = FIXTURES, *, gated: Iterable[str] = ()) -> PublishedFixtures:
    """The real published drafters of root/upstream/ORG__NAME/ (every config.json there, not the
    config.partial.json copies: XiaomiMiMo's at dflash/config.json, as in its repo) byte for byte as ORG/NAME,
    with a model card whose base_model is FIXTURE_BASE_MODELS' (no base_model where PROVENANCE.md names none), at
    the commit fixtures/published.toml records for it where it records one; and every file of
    root/targets/ORG__NAME/ as ORG/NAME. `gated`: repos to publish gated ("auto")."""
    recorded = _recorded_commits(root)
    gate = set(gated)
    drafters: dict[str, str] = {}
    bases: dict[str, str] = {}
    paths: dict[str, str] = {}
    for folder in sorted((root / "upstream").iterdir()):
        configs = sorted(p for p in folder.rglob("config.json") if p.is_file())
        if not folder.is_dir() or not configs:
            continue
        repo = folder.name.replace("__", "/", 1)
        files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in configs}
        meta: dict[str, Any] = {"library_name": "transformers"}
        if repo in FIXTURE_BASE_MODELS:
            meta["base_model"] = FIXTURE_BASE_MODELS[repo]
            bases[repo] = FIXTURE_BASE_MODELS[repo]
        meta["tags"] = ["speculators", "dflash"] if "speculator" in repo else ["dflash", "speculative-decoding"]
        name = repo.split("/", 1)[1]
        files["README.md"] = _card(meta, name, "A DFlash drafter (published config.json, from fixtures/).")
        drafters[repo] = hub.publish(repo, files, gated=repo in gate or None, commit=recorded.get(repo))
        paths[repo] = next(iter(p for p in files if p.endswith("config.json")))
    targets: dict[str, str] = {}
    for folder in sorted((root / "targets").iterdir()):
        if not folder.is_dir():
            continue
        repo = folder.name.replace("__", "/", 1)
        files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
        targets[repo] = hub.publish(repo, files, gated=repo in gate or None)
    return PublishedFixtures(drafters, targets, bases, paths)


def use(hub: PublisherHub, monkeypatch: pytest.MonkeyPatch, *, token: bool = False) -> None:
    """Point huggingface_hub at `hub` for this test (HF_ENDPOINT), with its token or with none."""
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    if token:
        monkeypatch.setenv("HF_TOKEN", hub.token)
    else:
        monkeypatch.delenv("HF_TOKEN", raising=False)

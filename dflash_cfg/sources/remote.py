"""Model dirs on object storage and the Hub (`s3://`, `gs://`, `hf://`), through fsspec: the file-system
seam for everything that is not a local path (local paths keep going through sources/files.py).

What it offers is what the commands need and no more: list a prefix, stat one object (size and ETag),
read one object with a size limit, read byte ranges (safetensors headers: 8 bytes, then n, never a
whole shard), and the conditional put that write/remote.py builds compare-and-swap on.

Credentials and endpoints come from each ecosystem's own settings, read by its own library: for S3,
botocore's (the AWS_* environment, AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, AWS_PROFILE and the shared
config and credentials files); for GCS, gcsfs's (GOOGLE_APPLICATION_CREDENTIALS, gcloud's login,
STORAGE_EMULATOR_HOST); for the Hub, HF_ENDPOINT and HF_TOKEN. No message ever shows a secret.

An `hf://org/repo[@revision]` path is pinned to the commit its revision points at when it is first
resolved, so every file of one run is read at one commit, and `fix` knows which commit it read.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from dflash_cfg.errors import PathError, UsageError, causes, redact
from dflash_cfg.model import Url
from dflash_cfg.sources import listings
from dflash_cfg.sources.remote_cache import WHOLE

CONFIG = "config.json"
# Same as sources/files.py: hidden dirs and Hugging Face cache blobs are never searched.
SKIP_DIRS = {"blobs", "node_modules", "__pycache__"}
_SCHEMES = {"s3": "s3", "gs": "gcs", "gcs": "gcs", "hf": "hf"}
# scheme -> (module fsspec needs, the extra that installs it)
_NEEDS = {"s3": ("s3fs", "s3"), "gcs": ("gcsfs", "gcs"), "hf": ("huggingface_hub", None)}
_URL = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*)://(?P<rest>.*)$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
DEFAULT_TIMEOUT = 10.0  # seconds to connect, as for the Hub
# An overall deadline for each request (DFLASH_CFG_REMOTE_DEADLINE seconds; reads here, the rest in _call):
# botocore's read timeout is per socket read, so a server trickling one byte a second would otherwise hold a
# run forever.
DEADLINE_SETTING = "DFLASH_CFG_REMOTE_DEADLINE"
DEFAULT_DEADLINE = 60.0
_CHUNK = 64 * 1024
_QUIET = logging.NullHandler()  # one instance, so adding it again adds nothing


class RangeIgnored(Exception):
    """The store answered more bytes than the range asked for (it ignores Range)."""


def deadline() -> float:
    raw = os.environ.get(DEADLINE_SETTING, "")
    try:
        value = float(raw) if raw.strip() else DEFAULT_DEADLINE
    except ValueError:
        raise UsageError(f"{DEADLINE_SETTING}={raw!r}: expected a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise UsageError(f"{DEADLINE_SETTING}={raw!r}: expected a positive number of seconds")
    return value


def is_url(text: object) -> bool:
    """`s3://...`, `gs://...`, `hf://...`: a path this module reads (anything else is local)."""
    match = _URL.match(text) if isinstance(text, str) else None
    return match is not None and match["scheme"].lower() in _SCHEMES


def parse(text: str) -> Url:
    match = _URL.match(text)
    if match is None or match["scheme"].lower() not in _SCHEMES:
        raise UsageError(f"{text!r} is not an s3://, gs:// or hf:// path")
    scheme = _SCHEMES[match["scheme"].lower()]
    rest = match["rest"].strip("/")
    if not rest or "/../" in f"/{rest}/" or "/./" in f"/{rest}/":
        raise UsageError(f"{text!r}: expected {match['scheme']}://BUCKET/PREFIX (no empty, . or .. parts)")
    url = Url(scheme, rest)
    if scheme == "hf" and url.hub_repo is None:
        raise UsageError(f"{text!r}: expected hf://ORG/REPO[@REVISION][/PATH]")
    return url


# --- the file systems ----------------------------------------------------------------------------------

_lock = threading.Lock()
_filesystems: dict[tuple[str, ...], Any] = {}
# Bytes received from object storage and the Hub by this process, and the calls made to them (a listing, a stat,
# a GET: each one request to a store unless a listing runs to several pages); the bench reads both.
_received = [0]
_calls = [0]


def bytes_received() -> int:
    return _received[0]


def calls_made() -> int:
    return _calls[0]


def _called() -> None:
    with _lock:
        _calls[0] += 1


def _count(data: bytes) -> bytes:
    with _lock:
        _received[0] += len(data)
    return data


def _settings_key(scheme: str) -> tuple[str, ...]:
    # A new file system when the settings change (an API caller or a test switching endpoints or keys).
    names = {
        "s3": (
            "AWS_ENDPOINT_URL_S3",
            "AWS_ENDPOINT_URL",
            "AWS_PROFILE",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "AWS_DEFAULT_REGION",
            "AWS_REGION",
            "AWS_MAX_ATTEMPTS",
            "AWS_CONFIG_FILE",
            "AWS_SHARED_CREDENTIALS_FILE",
        ),
        "gcs": ("STORAGE_EMULATOR_HOST", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT"),
        "hf": ("HF_ENDPOINT", "HF_TOKEN", "HF_HUB_ETAG_TIMEOUT"),
    }[scheme]
    return (scheme, *(os.environ.get(n, "") for n in names))


def filesystem(scheme: str) -> Any:
    """The fsspec file system for a scheme, built from that ecosystem's standard settings."""
    deadline()  # a malformed DFLASH_CFG_REMOTE_DEADLINE is the user's one line, before any request
    key = _settings_key(scheme)
    with _lock:
        found = _filesystems.get(key)
    if found is not None:
        return found
    module, extra = _NEEDS[scheme]
    try:
        __import__(module)
    except ImportError:
        shown = "gs" if scheme == "gcs" else scheme
        raise UsageError(f"{shown}:// paths need the {module} package: pip install 'dflash-cfg[{extra}]'") from None
    fs = _build(scheme)
    with _lock:
        _filesystems[key] = fs
    return fs


def _build(scheme: str) -> Any:
    if scheme == "s3":
        import s3fs

        config: dict[str, Any] = {"connect_timeout": DEFAULT_TIMEOUT, "read_timeout": 3 * DEFAULT_TIMEOUT}
        if not os.environ.get("AWS_MAX_ATTEMPTS"):
            # One retry: an unreachable endpoint is one line after a few seconds, not after a minute.
            config["retries"] = {"max_attempts": 2, "mode": "standard"}
        # No listing cache: a fix and a verify in one process must see the object as it is now.
        # max_concurrency 1: a whole-object read is one GET (a larger value adds a HEAD to plan parallel parts).
        fs = s3fs.S3FileSystem(
            skip_instance_cache=True, use_listings_cache=False, config_kwargs=config, max_concurrency=1
        )
        fs.retries = 2  # s3fs's own retry loop, on top of botocore's
        return fs
    if scheme == "gcs":
        import gcsfs

        # gcsfs logs what it also raises or gets past: each retried request's traceback, and a warning per
        # request when it cannot ask the storage-layout API what kind of bucket it reads (no credentials for
        # that API, an emulator) and falls back to the JSON API. With no handler of the caller's own, Python
        # would print those records on stderr; a failure reaches the user as the one line explain() makes.
        logging.getLogger("gcsfs").addHandler(_QUIET)
        return gcsfs.GCSFileSystem(skip_instance_cache=True, use_listings_cache=False)
    from huggingface_hub import HfFileSystem

    from dflash_cfg.sources.hub import settings

    s = settings()
    return HfFileSystem(endpoint=s.endpoint, token=s.token or None, skip_instance_cache=True)


def secrets() -> list[str | None]:
    """What a message about a remote path must never show."""
    return [os.environ.get(n) for n in ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "HF_TOKEN")]


# --- hf:// pinned to a commit ----------------------------------------------------------------------------


def pin(url: Url) -> Url:
    """An hf:// path at the commit its revision (default main) points at now; other schemes as they are."""
    found = url.hub_repo
    if found is None:
        return url
    repo, revision, inside = found
    if revision is not None and _COMMIT.match(revision):
        return url
    from dflash_cfg.sources.hub import resolve_commit

    commit = resolve_commit(repo, revision or "main")
    return Url("hf", f"{repo}@{commit}" + (f"/{inside}" if inside else ""))


def hub_commit(url: Url) -> tuple[str, str] | None:
    """(repo, commit) of a pinned hf:// path."""
    found = url.hub_repo
    if found is None or found[1] is None or not _COMMIT.match(found[1]):
        return None
    return found[0], found[1]


# --- reading ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stat:
    kind: str  # "file" | "dir"
    size: int
    etag: str | None  # S3/GCS ETag (None when the store gives none)


def _call(fs: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """fs.method(...), held to the overall deadline (DFLASH_CFG_REMOTE_DEADLINE) on an asynchronous
    filesystem (s3fs, gcsfs): a listing, a HEAD or a put's answer trickled a byte at a time holds a run as
    long as a trickled read would (botocore's read timeout is per socket read). The deadline covers the
    filesystem's own retries."""
    coroutine = getattr(fs, "_" + method, None)
    if not getattr(fs, "async_impl", False) or coroutine is None:
        _called()
        return getattr(fs, method)(*args, **kwargs)
    return _in_time(fs, lambda: coroutine(*args, **kwargs))


def _in_time(fs: Any, start: Callable[[], Awaitable[Any]]) -> Any:
    """The awaitable `start` makes, run on the filesystem's loop and cancelled at the deadline (asyncio's
    TimeoutError, which explain() names)."""
    import asyncio

    from fsspec.asyn import sync

    seconds = deadline()
    _called()

    async def bounded() -> Any:
        return await asyncio.wait_for(start(), seconds)

    return sync(fs.loop, bounded)


async def _at_most(read: Callable[[int], Awaitable[bytes]], n: int) -> bytes:
    """At most n + 1 bytes of an answer's body, read a chunk at a time: one byte past `n` tells an answer longer
    than asked for, and nothing more of it is ever held."""
    chunks: list[bytes] = []
    got = 0
    while got <= n:
        chunk = await read(min(_CHUNK, n + 1 - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def probe(url: Url) -> str:
    """ "missing", "dir" or "file"."""
    fs = filesystem(url.scheme)
    try:
        info = _call(fs, "info", url.path)
    except FileNotFoundError:
        return "missing"
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line (see explain)
        raise PathError(explain(exc, url)) from None
    return "dir" if info.get("type") == "directory" else "file"


def stat(url: Url) -> Stat | None:
    fs = filesystem(url.scheme)
    try:
        info = _call(fs, "info", url.path)
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001
        raise PathError(explain(exc, url)) from None
    kind = "dir" if info.get("type") == "directory" else "file"
    etag = info.get("ETag") or info.get("etag")
    return Stat(kind, int(info.get("size") or 0), str(etag) if etag else None)


def discover(url: Url) -> list[Url]:
    """config.json objects under `url`: the object itself, or every one under the prefix (one listing)."""
    fs = filesystem(url.scheme)
    try:
        listed = _call(fs, "find", url.path, detail=True)
    except FileNotFoundError:
        listed = {}
    except Exception as exc:  # noqa: BLE001
        raise PathError(explain(exc, url)) from None
    base = url.path.rstrip("/")
    if base in listed and listed[base].get("type") != "directory":
        return [url]
    listings.remember(url, {k: v for k, v in listed.items() if k.startswith(base + "/")})
    found = []
    for key in sorted(listed):
        rel = key[len(base) + 1 :] if key.startswith(base + "/") else None
        if rel is None:
            continue
        *dirs, name = rel.split("/")
        if name == CONFIG and not any(d.startswith(".") or d in SKIP_DIRS for d in dirs):
            found.append(Url(url.scheme, key))
    if not found and not listed and probe(url) == "missing":
        raise PathError(_missing(url))
    return found


def _missing(url: Url) -> str:
    """What a path that is not there lacks. gcsfs answers a missing bucket as a missing object (S3's client
    names it), so on GCS the bucket is asked for once: a bucket that cannot be asked about (no permission
    for it) leaves the plain answer."""
    if url.scheme == "gcs" and "/" in url.path:
        try:
            bucket = probe(Url("gcs", url.path.split("/", 1)[0]))
        except PathError:
            bucket = "unknown"
        if bucket == "missing":
            return f"cannot read {url}: no such bucket"
    return f"path not found: {url}"


def listdir(url: Url) -> dict[str, int]:
    """Objects directly under `url` (name -> size); empty when there is none."""
    known = listings.sizes(url)
    if known is not None:
        return known
    fs = filesystem(url.scheme)
    try:
        entries = _call(fs, "ls", url.path, detail=True)
    except FileNotFoundError:
        return {}
    except Exception as exc:  # noqa: BLE001
        raise PathError(explain(exc, url)) from None
    return {
        e["name"].rstrip("/").rsplit("/", 1)[-1]: int(e.get("size") or 0)
        for e in entries
        if e.get("type") != "directory"
    }


def read(url: Url, limit: int) -> bytes:
    """The object's bytes, at most `limit` + 1 of them (as files.read: the caller reports an oversized one)."""
    got = read_optional(url, limit)
    if got is None:
        raise PathError(f"cannot read {url}: no such object")
    return got


def read_optional(url: Url, limit: int) -> bytes | None:
    if listings.absent(url):
        return None  # not in the listing this command made of its dir (a lock object, most often)
    kept = listings.kept(url, endpoint(url.scheme), 0, WHOLE, limit)
    if kept is not None:
        return kept
    fs = filesystem(url.scheme)
    deadline()  # a malformed setting is the user's one line, before any request
    try:
        if url.scheme == "hf":  # HfFileSystem reads through a file object, which needs the size first
            st = stat(url)
            if st is None:
                return None
            data = fs.cat_file(url.path, start=0, end=limit + 1) if st.size > limit else fs.cat_file(url.path)
            version = None  # a Hub path is pinned to a commit: nothing to cache by
        elif url.scheme == "s3":
            # One GET of at most limit + 1 bytes, read no further than that even when the store ignores
            # the Range: a huge object named like a config file is never downloaded.
            try:
                data, version = _get_s3(fs, url, 0, limit + 1, refuse_more=False)
            except Exception as exc:
                if _client_error(exc) != ("InvalidRange", 416):
                    raise
                # An empty object has no byte 0.
                data, version = _get_s3(fs, url, None, limit + 1, refuse_more=False)
        else:  # gcs: as for S3, one GET read no further than the limit, within the deadline
            data, version = _get_gcs(fs, url, 0, limit + 1, refuse_more=False)
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001
        raise PathError(explain(exc, url)) from None
    got = _count(bytes(data[: limit + 1]))
    if len(got) <= limit:  # the whole object
        listings.keep(url, endpoint(url.scheme), version, 0, WHOLE, got)
    return got


def read_ranges(ranges: Iterable[tuple[Url, int, int]]) -> list[bytes | BaseException]:
    """Each (url, start, length) read as one ranged request, all at once; a failure is returned in its
    place (the caller names the file)."""
    wanted = list(ranges)
    if not wanted:
        return []
    fs = filesystem(wanted[0][0].scheme)
    if wanted[0][0].scheme == "hf":
        # HfFileSystem has no ranged cat: a file opened without a cache sends exactly the range read.
        out: list[bytes | BaseException] = []
        for url, start, n in wanted:
            try:
                with fs.open(url.path, "rb", cache_type="none") as fh:
                    fh.seek(start)
                    got = _count(bytes(fh.read(n)))
                # A server that ignores Range (some mirrors) answers the whole file: take the range from it.
                out.append(got[start : start + n] if len(got) > n else got)
            except Exception as exc:  # noqa: BLE001 - returned in its place, as cat_ranges does
                out.append(exc)
        return out
    # One bounded GET per range, within the deadline; an answer longer than the range (a store that ignores
    # Range) is refused in its place, after reading one byte past it.
    get = _get_s3 if wanted[0][0].scheme == "s3" else _get_gcs
    found: list[bytes | BaseException] = []
    for url, start, n in wanted:
        kept = listings.kept(url, endpoint(url.scheme), start, n)
        if kept is not None:
            found.append(kept)
            continue
        try:
            data, version = get(fs, url, start, n, refuse_more=True)
        except Exception as exc:  # noqa: BLE001 - returned in its place, as cat_ranges does
            found.append(exc)
            continue
        found.append(_count(data))
        if len(data) == n:
            listings.keep(url, endpoint(url.scheme), version, start, n, data)
    return found


def _get_s3(fs: Any, url: Url, start: int | None, n: int, *, refuse_more: bool) -> tuple[bytes, str | None]:
    """At most `n` bytes of an S3 object from `start` (None: no Range header), within the deadline, and the
    version they are of (`_version`). With `refuse_more`, an answer longer than `n` raises RangeIgnored (at most
    n + 1 bytes are read)."""
    bucket, key, version = fs.split_path(url.path)
    extra: dict[str, str] = {} if version is None else {"VersionId": version}
    if start is not None:
        extra["Range"] = f"bytes={start}-{start + n - 1}"

    async def get() -> tuple[bytes, str | None]:
        answer = await fs._call_s3("get_object", Bucket=bucket, Key=key, **extra)
        body = answer["Body"]
        try:
            return await _at_most(body.read, n), listings.version("s3", answer)
        finally:
            body.close()

    data, version = _in_time(fs, get)
    return _no_more(data, n, refuse_more), version


def _no_more(data: bytes, n: int, refuse_more: bool) -> bytes:
    if refuse_more and len(data) > n:
        raise RangeIgnored(f"the store answered more than the {n} bytes asked for (it ignores Range)")
    return data[:n]


def _get_gcs(fs: Any, url: Url, start: int, n: int, *, refuse_more: bool) -> tuple[bytes, str | None]:
    """`_get_s3` for GCS. gcsfs reads a whole answer into memory whatever its Range asked for, so the GET is
    sent here, with gcsfs's own session, URL, headers and credentials, and its body read only as far as `n`.
    A zonal bucket is read by gcsfs itself, over gRPC: its downloader asks for the range and is sized to it."""
    from gcsfs.retry import retry_request, validate_response

    bucket = fs.split_path(url.path)[0]

    async def zonal() -> bool:
        known = getattr(fs, "_is_zonal_bucket", None)  # gcsfs's ExtendedGcsFileSystem only
        return bool(known is not None and await known(bucket))

    @retry_request(retries=2)  # as gcsfs retries its own requests (fewer: a deadline holds them all)
    async def ask(ranged: bool) -> tuple[int, bytes, str | None]:
        await fs._set_session()
        headers = fs._get_headers({"Range": f"bytes={start}-{start + n - 1}"} if ranged else None)
        params = fs._get_params({})
        async with fs.session.get(fs.url(url.path), params=params, headers=headers) as answer:
            if answer.status >= 400 and answer.status != 416:
                validate_response(answer.status, await answer.content.read(_CHUNK), url.path)
            if answer.status == 200 and start > 0:
                raise RangeIgnored(f"the store answered the whole object for bytes {start}- (it ignores Range)")
            data = await _at_most(answer.content.read, n)
            return answer.status, data, listings.version("gcs", {"generation": answer.headers.get("x-goog-generation")})

    async def get() -> tuple[bytes, str | None]:
        if await zonal():  # gcsfs's read names no version: listings.keep takes the listing's generation
            return bytes(await fs._cat_file(url.path, start=start, end=start + n)), None
        status, data, version = await ask(True)
        if status == 416 and start == 0:  # an empty object has no byte 0 to start a range at
            status, data, version = await ask(False)
        if status == 416:
            validate_response(status, data, url.path)
        return data, version

    data, version = _in_time(fs, get)
    return _no_more(data, n, refuse_more), version


def read_versioned(url: Url, limit: int) -> tuple[bytes, str] | None:
    """The object's bytes with the ETag they carry (None: no such object). The ETag is read before and
    after the bytes and must agree, so the pair is consistent without trusting the store's ETag shape."""
    for _ in range(3):
        before = stat(url)
        if before is None:
            return None
        if before.etag is None:
            raise PathError(f"{url}: the store gives no ETag, so a write could not be conditional")
        data = read(url, limit)
        after = stat(url)
        if after is not None and after.etag == before.etag:
            return data, before.etag
    raise PathError(f"{url} keeps changing while it is read; try again when writers are done")


class Conflict(Exception):
    """A conditional put whose condition failed: the object is not (or is no longer) the one expected.
    The client resends a put whose answer was lost, so a refusal may answer a resent put whose first
    copy was applied: only reading the object tells."""


def put(url: Url, data: bytes, *, if_match: str | None = None, if_none_match: bool = False) -> None:
    """PUT one object, conditionally: If-Match the ETag read, or If-None-Match: * for a new object.
    Raises Conflict when the store refuses the condition (412, or 409 for a conflicting concurrent put)."""
    fs = filesystem(url.scheme)
    condition: dict[str, str] = {}
    if if_match is not None:
        condition["IfMatch"] = if_match
    if if_none_match:
        condition["IfNoneMatch"] = "*"
    if url.scheme != "s3":
        raise UsageError(f"{url}: conditional writes are implemented for s3:// only")
    _require_conditional_put()
    try:
        # s3fs passes these straight to botocore's put_object: the lowest-level call that sends If-Match.
        _call(fs, "pipe_file", url.path, data, **condition)
    except FileExistsError:
        raise Conflict(str(url)) from None
    except Exception as exc:  # noqa: BLE001
        if _is_conflict(exc):
            raise Conflict(str(url)) from None
        raise PathError(explain(exc, url, "write")) from None


def _require_conditional_put() -> None:
    """Refuse to write at all with a botocore too old to send If-Match: an unconditional put could
    overwrite a concurrent repair."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("s3")
    members = model.operation_model("PutObject").input_shape.members
    if "IfMatch" not in members:
        import botocore

        raise UsageError(
            f"botocore {botocore.__version__} cannot send If-Match on a put, so a write could overwrite a "
            "concurrent one; upgrade it: pip install -U 'dflash-cfg[s3]'"
        )


# --- errors as one line ----------------------------------------------------------------------------------


def _client_error(exc: BaseException) -> tuple[str, int | None] | None:
    for e in causes(exc):
        response = getattr(e, "response", None)
        if isinstance(response, dict) and isinstance(response.get("Error"), dict):
            status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            return str(response["Error"].get("Code") or ""), status
    return None


def _is_conflict(exc: BaseException) -> bool:
    found = _client_error(exc)
    return found is not None and (
        found[0] in ("PreconditionFailed", "ConditionalRequestConflict") or found[1] in (409, 412)
    )


def endpoint(scheme: str) -> str:
    env = os.environ
    if scheme == "s3":
        return env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or "the AWS S3 endpoint"
    if scheme == "gcs":
        return env.get("STORAGE_EMULATOR_HOST") or "Google Cloud Storage"
    return (env.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


_ENDPOINT_SETTING = {
    "s3": "AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL",
    "gcs": "STORAGE_EMULATOR_HOST",
    "hf": "HF_ENDPOINT",
}


def explain(exc: BaseException, url: Url, doing: str = "read") -> str:
    """One line for a failure, naming the setting to check and never a secret."""
    where = endpoint(url.scheme)
    names = {type(e).__name__ for e in causes(exc)}
    found = _client_error(exc)
    code = found[0] if found else ""
    status = found[1] if found else None
    if "NoCredentialsError" in names or "PartialCredentialsError" in names:
        text = (
            f"cannot {doing} {url}: no AWS credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
            "or AWS_PROFILE)"
        )
    elif code in (
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "ExpiredToken",
        "InvalidToken",
        "TokenRefreshRequired",
    ):
        text = (
            f"cannot {doing} {url}: {where} refused the credentials ({code}); check the AWS credentials or AWS_PROFILE"
        )
    elif code in ("AccessDenied", "AllAccessDisabled") or status in (401, 403) or isinstance(exc, PermissionError):
        text = f"cannot {doing} {url}: access denied by {where}" + (f" ({code})" if code else "")
    elif code in ("NoSuchBucket",):
        text = f"cannot {doing} {url}: no such bucket"
    elif any(
        n in names
        for n in (
            "EndpointConnectionError",
            "ConnectionClosedError",
            "ClientConnectorError",
            "ConnectError",
            "ConnectTimeoutError",
            "ConnectionRefusedError",
            "ServerDisconnectedError",
        )
    ):
        text = f"cannot {doing} {url}: {where} is unreachable (check {_ENDPOINT_SETTING[url.scheme]} and the network)"
    elif "RangeIgnored" in names:
        text = f"cannot {doing} {url}: {where} answered more than the bytes asked for (it ignores Range); refused"
    # asyncio's TimeoutError (the deadline) is not the builtin one before Python 3.11: named, it is either.
    elif {"ReadTimeoutError", "TimeoutError"} & names or any(isinstance(e, TimeoutError) for e in causes(exc)):
        text = f"cannot {doing} {url}: no complete answer from {where} within the deadline ({DEADLINE_SETTING})"
    elif code:
        text = f"cannot {doing} {url}: {where} answered {code}" + (f" (HTTP {status})" if status else "")
    else:
        last = causes(exc)[-1]
        reason = " ".join(str(last).split()) or type(last).__name__
        text = f"cannot {doing} {url}: {type(last).__name__}: {reason}"
    return redact(text, secrets())

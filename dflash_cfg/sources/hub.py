"""All Hugging Face Hub access by repo id; with sources/remote.py (s3://, gs:// and hf:// paths, through
fsspec), the only modules that talk to the network.

Everything goes through huggingface_hub, so users get its cache, auth and mirrors. Its settings
(HF_ENDPOINT, HF_TOKEN, HF_HOME/HF_HUB_CACHE, HF_HUB_OFFLINE, HF_HUB_ETAG_TIMEOUT) are read here at
call time and passed explicitly, because huggingface_hub freezes them when it is first imported, which
transformers does long before a command knows it needs the Hub. They are read from this process's
environment, or from the environment a caller passes as a value (`environ`): preflight's is the launched
engine's, so the check asks the Hub as the engine would without changing ours.

A branch or tag is resolved to a commit once (one HEAD request, which also returns the file's git blob
id), and everything after uses the commit. A file already cached at a commit costs no request at all.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dflash_cfg.errors import HubError, HubUnreachable, PathError, causes, redact
from dflash_cfg.jsondoc.document import git_blob_sha1
from dflash_cfg.model import HubFile
from dflash_cfg.sources import files
from dflash_cfg.sources.atomic import replace_atomically
from dflash_cfg.sources.hfenv import import_hub, usable_url

CONFIG = "config.json"
COMMIT = re.compile(r"^[0-9a-f]{40}$")
# A commit id cut short, as git, the Hub's web pages and dflash-cfg's own messages print it (28cadb796e2f).
SHORT_COMMIT = re.compile(r"^[0-9a-f]{7,39}$")
DEFAULT_TIMEOUT = 10.0  # seconds per request; HF_HUB_ETAG_TIMEOUT overrides, as for huggingface_hub
_CACHE_REPO = re.compile(r"(?:^|/)models--([^/]+?)--([^/]+)/snapshots/([0-9a-f]{40})(?:/|$)")
_TRUE = {"1", "on", "yes", "true"}


@dataclass(frozen=True, kw_only=True)
class Settings:
    endpoint: str
    cache_dir: str
    token: str | None
    offline: bool
    timeout: float


def settings(offline: bool = False, environ: Mapping[str, str] | None = None) -> Settings:
    """The Hub settings of a process with the environment `environ` (None: this one's)."""
    env = os.environ if environ is None else environ
    home = env.get("HF_HOME") or os.path.join(
        env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    cache = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE") or os.path.join(home, "hub")
    try:
        timeout = float(env.get("HF_HUB_ETAG_TIMEOUT") or DEFAULT_TIMEOUT)
    except ValueError:
        raise HubError(f"HF_HUB_ETAG_TIMEOUT={env.get('HF_HUB_ETAG_TIMEOUT')!r} is not a number of seconds") from None
    return Settings(
        endpoint=(env.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/"),
        cache_dir=cache,
        token=env.get("HF_TOKEN") or None,
        offline=offline or any(env.get(v, "").lower() in _TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")),
        timeout=timeout,
    )


def repo_from_cache_path(path: Path) -> tuple[str, str] | None:
    """(repo, commit) when `path` lies in a Hugging Face cache snapshot (models--org--name/snapshots/<sha>)."""
    match = _CACHE_REPO.search(path.absolute().as_posix())
    return (f"{match[1]}/{match[2]}", match[3]) if match else None


def check_repo_id(repo: str) -> None:
    """Refuse a malformed repo id with one line, before huggingface_hub raises on it deep inside a call."""
    import_hub()
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo)
    except HFValidationError as exc:
        raise HubError(f"{repo!r} is not a Hub repo id (org/name): {' '.join(str(exc).split())}") from None


# git check-ref-format, plus what a path join must never see: a revision becomes a file name under
# refs/ in the cache, so `..`, a leading `/` or a `\\` would let a hostile value write outside it.
_BAD_REF = re.compile(r"\.\.|//|@\{|[\x00-\x20\x7f~^:?*\[\\\ud800-\udfff]|^[/.]|/\.|[/.]$|\.lock(/|$)|^@$|^-")


def check_revision(revision: str) -> None:
    """Refuse a revision that is not a git ref name or commit (from --revision, or from a lock file)."""
    if not revision or len(revision) > 255 or _BAD_REF.search(revision):
        raise HubError(f"revision {revision!r} is not a branch, tag or commit name (git ref-name rules)")


def cache_root(path: Path) -> Path | None:
    """The Hugging Face cache dir that holds `path` (the parent of its models--org--name dir), if any."""
    posix = path.absolute().as_posix()
    match = _CACHE_REPO.search(posix)
    return None if match is None else Path(posix[: match.start()] or "/")


def fetch_config(
    repo: str,
    revision: str,
    *,
    offline: bool = False,
    cache_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> HubFile:
    """config.json of `repo` at `revision`, with the commit it resolved to and its blob id (from
    `cache_dir` instead of the settings' cache when given: a cache a file was found in). `environ`: the
    environment the Hub settings are read from (None: this process's)."""
    check_repo_id(repo)
    check_revision(revision)
    s = settings(offline, environ)
    if cache_dir is not None:
        s = replace(s, cache_dir=str(cache_dir))
    revision = _expanded(repo, revision, s)
    if s.offline or COMMIT.match(revision):
        # Offline, a branch resolves to the commit dflash-cfg last saw for it online (its own record),
        # else to the cache's refs/ (what huggingface_hub last downloaded).
        recorded = _recorded_commit(repo, revision) if s.offline else None
        cached, problem = _from_cache(repo, recorded or revision, s)
        if cached is not None and recorded is not None:
            cached = HubFile(
                repo=repo, revision=revision, commit=cached.commit, blob_id=cached.blob_id, data=cached.data
            )
        elif cached is None and recorded is not None:
            cached, problem = _from_cache(repo, revision, s)
        if cached is not None:
            return cached
        if s.offline:
            raise HubError(
                problem
                or f"{repo}@{revision}: {CONFIG} is not in the local cache ({s.cache_dir}) and "
                "offline mode is on (--offline or HF_HUB_OFFLINE); run once online to cache it"
            )
    commit, blob_id = _resolve(repo, revision, s)
    return _download(repo, revision, commit, blob_id, s)


def resolve_commit(repo: str, revision: str) -> str:
    """The commit `revision` of `repo` points at now (one request; a commit id is returned as it is)."""
    check_repo_id(repo)
    check_revision(revision)
    if COMMIT.match(revision):
        return revision
    s = settings()
    if s.offline:
        raise HubError(
            f"hf://{repo}@{revision}: offline mode is on (--offline or HF_HUB_OFFLINE); hf:// paths need the Hub"
        )
    from huggingface_hub import HfApi

    try:
        info = HfApi(endpoint=s.endpoint, token=s.token or None).model_info(repo, revision=revision, timeout=s.timeout)
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line (see _explain)
        raise _explain(exc, repo, revision, s) from None
    commit = str(info.sha or "")
    if not COMMIT.match(commit):
        raise HubError(f"{s.endpoint} answered {repo}@{revision} without a commit id (40 hex digits)")
    return commit


def fetch_snapshot(
    repo: str, revision: str, extra: tuple[str, ...] = (), environ: Mapping[str, str] | None = None
) -> Path:
    """The snapshot dir of `repo` at `revision` in the cache, holding config.json and those of the
    `extra` files the repo has, downloaded at the resolved commit (no ref in the cache moves)."""
    from huggingface_hub import errors, hf_hub_download, try_to_load_from_cache

    found = fetch_config(repo, revision, environ=environ)
    s = settings(environ=environ)
    for name in extra:
        try:
            hf_hub_download(
                repo,
                name,
                revision=found.commit,
                cache_dir=s.cache_dir,
                token=s.token,
                endpoint=s.endpoint,
                etag_timeout=s.timeout,
            )
        except errors.EntryNotFoundError:
            continue  # optional: the repo does not have it
        except Exception as exc:  # noqa: BLE001 - every failure becomes one line (see _explain)
            raise _explain(exc, repo, revision, s) from None
    config = try_to_load_from_cache(repo, CONFIG, cache_dir=s.cache_dir, revision=found.commit)
    if not isinstance(config, str):
        raise HubError(f"{repo}@{found.commit[:12]}: {CONFIG} is not in the cache after downloading it")
    return Path(config).parent


def _from_cache(repo: str, revision: str, s: Settings) -> tuple[HubFile | None, str | None]:
    """The cached file, if present and still what the Hub served; else why not."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo, CONFIG, cache_dir=s.cache_dir, revision=revision)
    if not isinstance(found, str):
        return None, None
    path = Path(found)
    try:
        data = files.read(path)
    except PathError as exc:
        return None, f"cached copy: {exc}"
    commit, blob_id, actual = path.parent.name, os.path.basename(os.path.realpath(path)), git_blob_sha1(data)
    if actual != blob_id and len(blob_id) == 40:
        # Someone wrote through the snapshot symlink into the blob: it is no longer what the Hub served.
        return None, (
            f"the cached {CONFIG} of {repo}@{commit[:12]} was modified after download (git blob "
            f"{actual[:12]}, the Hub's is {blob_id[:12]}); run online to re-download it"
        )
    return HubFile(repo=repo, revision=revision, commit=commit, blob_id=blob_id, data=data), None


def _endpoint(s: Settings) -> None:
    """Before the first request: an endpoint that cannot be a URL is said plainly (it is only read then)."""
    if not usable_url(s.endpoint):
        raise HubError(f"HF_ENDPOINT={s.endpoint!r} is not an http(s) URL with a valid host and port")


def _resolve(repo: str, revision: str, s: Settings) -> tuple[str, str]:
    """One HEAD request: the commit `revision` points at and the file's blob id there."""
    _endpoint(s)
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    url = hf_hub_url(repo, CONFIG, revision=revision, endpoint=s.endpoint)
    try:
        meta = get_hf_file_metadata(url, token=s.token, timeout=s.timeout, endpoint=s.endpoint)
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line (see _explain)
        raise _explain(exc, repo, revision, s) from None
    if not meta.commit_hash or not meta.etag:
        raise HubError(f"{s.endpoint} did not answer like a Hugging Face Hub for {repo}@{revision} (no commit or etag)")
    commit = str(meta.commit_hash)
    if not COMMIT.match(commit):  # it names a snapshot dir and is written to refs/: never trust its shape
        raise HubError(f"{s.endpoint} answered {repo}@{revision} with a malformed commit id (not 40 hex digits)")
    return commit, str(meta.etag)


def _download(repo: str, revision: str, commit: str, blob_id: str, s: Settings) -> HubFile:
    from huggingface_hub import hf_hub_download

    for force in (False, True):
        try:
            path = hf_hub_download(
                repo,
                CONFIG,
                revision=commit,
                cache_dir=s.cache_dir,
                token=s.token,
                endpoint=s.endpoint,
                etag_timeout=s.timeout,
                force_download=force,
            )
            data = files.read(Path(str(path)))
        except PathError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise _explain(exc, repo, revision, s) from None
        # An LFS/Xet file's etag is a sha256, not a git blob id; a config.json never is one.
        if git_blob_sha1(data) == blob_id or len(blob_id) != 40:
            _remember_ref(repo, revision, commit, s)
            return HubFile(repo=repo, revision=revision, commit=commit, blob_id=blob_id, data=data)
    raise HubError(f"downloaded {CONFIG} of {repo}@{commit[:12]} does not match the Hub's blob id {blob_id[:12]}")


def _refs_root(repo: str) -> Path | None:
    """dflash-cfg's own record of branch -> commit for `repo`, beside its result cache."""
    from dflash_cfg.sources.cache import default_root

    root = default_root()
    return None if root is None else root / "hub-refs" / repo.replace("/", "--")


def _remember_ref(repo: str, revision: str, commit: str, s: Settings) -> None:
    """Record `revision -> commit` in dflash-cfg's own cache, so --offline finds the file by branch name.

    Never in the Hugging Face cache's refs/: the download is at a commit whose snapshot holds only
    config.json, and moving refs/main there would make an engine started later with HF_HUB_OFFLINE=1
    resolve a snapshot without weights. A lint must not change what an engine on the same host resolves.
    """
    root = _refs_root(repo)
    if revision == commit or root is None:
        return
    ref = root / revision
    if not os.path.abspath(ref).startswith(os.path.abspath(root) + os.sep):  # check_revision already refuses it
        return
    try:
        if files.read_optional(ref, 64) == commit.encode():
            return
        replace_atomically(ref, commit.encode(), make_parents=True)
    except (OSError, PathError):
        pass  # an unwritable cache still answers online; only --offline by branch name needs the record


def _expanded(repo: str, revision: str, s: Settings) -> str:
    """A short commit id as the full one of the cache's snapshots it begins (one only), else as given: a branch
    or tag may look like hex, and the Hub resolves those; a short id it cannot resolve is said by `_explain`."""
    if not SHORT_COMMIT.match(revision):
        return revision
    snapshots = Path(s.cache_dir) / f"models--{repo.replace('/', '--')}" / "snapshots"
    try:
        found = sorted(p.name for p in snapshots.iterdir() if COMMIT.match(p.name) and p.name.startswith(revision))
    except OSError:
        return revision
    return found[0] if len(found) == 1 else revision


def _recorded_commit(repo: str, revision: str) -> str | None:
    root = _refs_root(repo)
    if root is None or COMMIT.match(revision):
        return None
    try:
        found = files.read_optional(root / revision, 64)
    except PathError:
        return None
    text = found.decode("ascii", "replace").strip() if found else ""
    return text if COMMIT.match(text) else None


def _explain(exc: BaseException, repo: str, revision: str, s: Settings) -> HubError:
    """One failed request as one line."""
    from huggingface_hub import errors

    where = f"{repo}@{revision}"
    if isinstance(exc, errors.GatedRepoError):
        return HubError(f"{repo} is gated: accept its terms on the Hub and set HF_TOKEN to a token with access")
    if isinstance(exc, errors.RevisionNotFoundError):
        short = " (a short commit id is found only in the local cache: give all 40 hex digits)"
        return HubError(
            f"revision {revision!r} not found in {repo} (a branch, tag or commit of the repo)"
            + (short if SHORT_COMMIT.match(revision) else "")
        )
    if isinstance(exc, errors.EntryNotFoundError):  # RemoteEntryNotFoundError is a subclass
        return HubError(f"{where} has no {CONFIG}")
    if isinstance(exc, errors.RepositoryNotFoundError):
        auth = "HF_TOKEN is set: check it has access" if s.token else "if it is private, set HF_TOKEN"
        return HubError(f"repo {repo} not found on {s.endpoint} ({auth})")
    if isinstance(exc, errors.HfHubHTTPError):
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status in (401, 403):
            return HubError(f"{where}: access denied by {s.endpoint} (HTTP {status}); set HF_TOKEN")
        return HubError(f"{where}: {s.endpoint} answered HTTP {status}")
    if _is_timeout(exc):
        return HubError(f"{where}: no answer from {s.endpoint} within {s.timeout:g} s (HF_HUB_ETAG_TIMEOUT)")
    if _is_connection(exc):
        # No advice here: only a comparison has a cached copy to fall back on (commands/common.upstream_for).
        return HubUnreachable(f"hub unreachable at {s.endpoint} ({_reason(exc)})")
    return HubError(f"{where}: {type(exc).__name__}: {redact(_reason(exc), [s.token])}")


def _is_timeout(exc: BaseException) -> bool:
    return any("Timeout" in type(e).__name__ or isinstance(e, TimeoutError) for e in causes(exc))


def _is_connection(exc: BaseException) -> bool:
    names = ("ConnectError", "ConnectionError", "NetworkError", "RemoteProtocolError")
    return any(isinstance(e, (ConnectionError, OSError)) or type(e).__name__ in names for e in causes(exc))


def _reason(exc: BaseException) -> str:
    last: Any = causes(exc)[-1]
    return " ".join(str(last).split()) or type(last).__name__

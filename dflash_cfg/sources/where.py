"""Which config.json an engine would read for a model argument: a local path, or a Hub id resolved in
the local Hugging Face cache exactly as the engines resolve it (refs/<revision> -> snapshot), with no
network: the question the incident needed answered. For a launch (preflight), where that engine looks: its
working directory, its cache, and a container's bind mounts (`Lookup`)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from dflash_cfg.errors import HubError, LaunchError, PathError, WhereError
from dflash_cfg.model import Location, Url
from dflash_cfg.sources import files, remote, storage
from dflash_cfg.sources.hub import (
    COMMIT,
    check_repo_id,
    check_revision,
    fetch_snapshot,
    repo_from_cache_path,
    settings,
)

CONFIG = "config.json"


def locate(
    name: str,
    revision: str | None = None,
    cache_dir: str | None = None,
    environ: Mapping[str, str] | None = None,
    extra: tuple[str, ...] = (),
) -> Location:
    """A model argument as an engine sees it: an existing path wins over a Hub id, as in vLLM and SGLang.
    `cache_dir`: the Hugging Face hub cache the engine uses (preflight), else the one the Hub settings of
    `environ` name (None: this process's environment). `extra`: the files besides config.json the check reads
    (a target's tokenizer files), named in the advice to download them."""
    if remote.is_url(name):
        return _remote(name)
    path = Path(os.path.expanduser(name))  # ~unknown-user stays as written (Path.expanduser raises)
    kind = files.probe(path)
    if kind not in ("missing", "broken-link"):
        config = path / CONFIG if kind == "dir" else path
        if files.probe(config) in ("missing", "broken-link"):
            raise WhereError(f"{files.display(path)} has no {CONFIG}")
        cached = repo_from_cache_path(config)
        return _location(
            name, "local directory", config, cached[0] if cached else None, cached[1] if cached else None, None
        )
    missing = _missing(name, kind)
    if not is_hub_id(name):
        raise WhereError(f"{missing}, and {name!r} is not a Hub repo id (org/name)")
    try:
        check_repo_id(name)
    except HubError as exc:
        raise WhereError(f"{missing}, and {exc}") from None
    try:
        return _from_cache(name, revision or "main", cache_dir, environ, extra)
    except WhereError as exc:
        raise WhereError(f"{missing}; as a Hub repo id: {exc}") from None


def _missing(name: str, kind: str) -> str:
    """A model argument that names nothing here is first a missing path (a typo in a local path is the common
    case): said first, as the user wrote it, before what it would be as a Hub id."""
    return f"{'broken symlink' if kind == 'broken-link' else 'path not found'}: {files.display(name)}"


def download_advice(repo: str, revision: str, reads: tuple[str, ...], cache: str | None = None) -> str:
    """The `hf download` of just the files the check reads: a bare `hf download REPO` pulls the weights too
    (tens of GB for a target)."""
    words = ["hf", "download", repo, *dict.fromkeys(reads)]
    if revision != "main":
        words += ["--revision", revision]
    if cache is not None:
        words += ["--cache-dir", cache]
    return shlex.join(words)


def is_hub_id(name: str) -> bool:
    """Shaped like org/name and not a path (an existing path wins, as in the engines)."""
    return name.count("/") == 1 and not name.startswith((".", "/", "~")) and "\\" not in name


def model_dir(
    name: str,
    *,
    revision: str | None = None,
    offline: bool = False,
    extra: tuple[str, ...] = (),
    environ: Mapping[str, str] | None = None,
) -> storage.Where:
    """A model argument as a directory to read: an existing path as it is; an s3://, gs:// or hf:// path
    (hf:// pinned to a commit); a Hub id from the local cache, else fetched at a commit (config.json and
    the `extra` files it has) unless offline. `environ`: where the Hub settings are read (None: ours)."""
    if remote.is_url(name):
        return storage.locate(name)
    path = Path(os.path.expanduser(name))  # ~unknown-user stays as written (Path.expanduser raises)
    kind = files.probe(path)
    if kind not in ("missing", "broken-link") or not is_hub_id(name):
        return path
    try:
        check_repo_id(name)
    except HubError as exc:  # not a Hub id either: nothing to ask the cache or the Hub
        raise PathError(f"{_missing(name, kind)}, and {exc}") from None
    try:
        return locate(name, revision, environ=environ, extra=extra).model_dir
    except WhereError:
        if offline or settings(environ=environ).offline:
            raise
    try:
        return fetch_snapshot(name, revision or "main", extra, environ)
    except HubError as exc:
        # What the Hub said, after the missing path; never "use --offline": the cache was just asked.
        raise type(exc)(f"{_missing(name, kind)}; as a Hub repo id: {exc}") from None


def _from_cache(
    repo: str,
    revision: str,
    cache_dir: str | None = None,
    environ: Mapping[str, str] | None = None,
    extra: tuple[str, ...] = (),
) -> Location:
    from huggingface_hub import try_to_load_from_cache

    check_revision(revision)
    cache = cache_dir or settings(environ=environ).cache_dir
    found = try_to_load_from_cache(repo, CONFIG, cache_dir=cache, revision=revision)
    if not isinstance(found, str):
        what = "commit" if COMMIT.match(revision) else "revision"
        raise WhereError(
            f"{repo}@{revision}: no {CONFIG} for that {what} in the Hugging Face cache "
            f"({cache}); an engine would download it (download the files the check reads first: "
            f"`{download_advice(repo, revision, (CONFIG, *extra))}`), or pass a local path"
        )
    config = Path(found)
    return _location(repo, "Hugging Face cache", config, repo, config.parent.name, revision)


def _location(
    name: str, source: str, config: Path, repo: str | None, commit: str | None, revision: str | None
) -> Location:
    sha256, blob = files.hashes(config)  # the whole file, whatever its size
    return Location(
        name=name,
        source=source,
        config=config,
        resolved=Path(os.path.realpath(config)),
        repo=repo,
        commit=commit,
        revision=revision,
        sha256=sha256,
        git_blob_sha1=blob,
        is_link=os.path.islink(config),
    )


def _remote(name: str) -> Location:
    """An s3://, gs:// or hf:// model dir or config.json: the object an engine loading it would read."""
    where = storage.locate(name)
    assert isinstance(where, Url)
    kind = storage.probe(where)
    if kind == "missing":
        raise WhereError(f"{name}: no such object or prefix")
    config = where / CONFIG if kind == "dir" else where
    if storage.probe(config) != "file":
        raise WhereError(f"{name} has no {CONFIG}")
    sha256, blob = storage.hashes(config)
    pinned = remote.hub_commit(config)
    return Location(
        name=name,
        source="Hugging Face Hub" if pinned else "object storage",
        config=config,
        resolved=config,
        repo=pinned[0] if pinned else None,
        commit=pinned[1] if pinned else None,
        revision=config.hub_repo[1] if pinned is None and config.hub_repo else None,
        sha256=sha256,
        git_blob_sha1=blob,
        is_link=False,
    )


# --- where a launched engine looks (preflight) -----------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Lookup:
    """Where an engine resolves its model arguments: its working directory (relative to ours) and its Hugging
    Face hub cache (a container path under docker), with that cache as this host reads it.

    An engine in a container also has `to_host`, a container path as this host reads it through the bind
    mounts (LaunchError outside them), and `workdir`, its working directory (docker run -w). The caller binds
    `to_host` (launch/docker.py:host_path on the launch's container): mapping paths is the launch parser's
    knowledge, reading them is this module's."""

    cwd: str | None
    cache: str
    host_cache: str | None  # None: a container cache outside the mounts
    to_host: Callable[[str], str] | None = None
    workdir: str | None = None


def locate_for(lookup: Lookup, name: str, revision: str | None, extra: tuple[str, ...] = ()) -> Location:
    """A model argument found where the engine will find it: in its working directory or its Hugging Face
    cache, or through the container's bind mounts (a path) and its mounted cache (a Hub id). `extra`: the
    files besides config.json the check reads (a target's), named in the advice to download them."""
    if lookup.to_host is None:
        if remote.is_url(name):
            return locate(name, revision)
        path = name if lookup.cwd is None or name.startswith(("/", "~")) else lookup.cwd.rstrip("/") + "/" + name
        if files.probe(Path(path)) not in ("missing", "broken-link") or not is_hub_id(name):
            return locate(path, None)
        return locate(name, revision, lookup.cache, extra=extra)
    if name.startswith("/") or (lookup.workdir and _in_container(lookup.to_host, name)):
        return locate(lookup.to_host(name), None)
    if not is_hub_id(name):
        raise LaunchError(
            f"container model {name!r}: neither an absolute container path (or one under -w) nor a Hub id (org/name)"
        )
    return _from_container_cache(lookup.to_host, lookup.cache, name, revision or "main", extra)


def folder_for(lookup: Lookup, name: str) -> Path | None:
    """The directory a model argument names on this host, if it is one (not a Hub id in a cache)."""
    if lookup.to_host is not None:
        try:
            path = Path(lookup.to_host(name))
        except LaunchError:
            return None
    else:
        path = Path(name if lookup.cwd is None or name.startswith(("/", "~")) else f"{lookup.cwd}/{name}")
    return path if files.probe(path) == "dir" else None


def exists_for(lookup: Lookup, name: str) -> bool:
    """Whether a relative name is a path where the engine runs (vLLM: Path(name).exists() or is_symlink())."""
    if lookup.to_host is not None:
        return _in_container(lookup.to_host, name)
    return files.probe(Path(name if lookup.cwd is None else f"{lookup.cwd}/{name}")) != "missing"


def is_file_for(lookup: Lookup, name: str) -> bool:
    """Whether a model argument is a single file on this host, for an engine on this host (vLLM:
    os.path.isfile on the expanded name); an engine in a container is never asked."""
    if lookup.to_host is not None:
        return False
    name = os.path.expanduser(name)
    return files.probe(Path(name if lookup.cwd is None or name.startswith("/") else f"{lookup.cwd}/{name}")) == "file"


def _in_container(to_host: Callable[[str], str], name: str) -> bool:
    """A relative name that is a path in the container's working directory (an existing path wins over a
    Hub id, as in the engines); outside the mounts it is not known to exist."""
    try:
        return files.probe(Path(to_host(name))) not in ("missing", "broken-link")
    except LaunchError:
        return not is_hub_id(name)


def _from_container_cache(
    to_host: Callable[[str], str], cache: str, repo: str, revision: str, extra: tuple[str, ...]
) -> Location:
    from huggingface_hub import try_to_load_from_cache

    host = to_host(cache)
    found = try_to_load_from_cache(repo, CONFIG, cache_dir=host, revision=revision)
    if not isinstance(found, str):
        raise WhereError(
            f"{repo}@{revision}: no config.json in the container's Hugging Face cache {cache} (on this host"
            f" {host}); the engine would download it (download the files the check reads into that cache first:"
            f" `{download_advice(repo, revision, (CONFIG, *extra), host)}`), or mount a local path"
        )
    return locate(str(Path(found).parent), None)

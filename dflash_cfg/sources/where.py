"""Which config.json an engine would read for a model argument: a local path, or a Hub id resolved in
the local Hugging Face cache exactly as the engines resolve it (refs/<revision> -> snapshot), with no
network: the question the incident needed answered."""

from __future__ import annotations

import os
from pathlib import Path

from dflash_cfg.errors import HubError, WhereError
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


def locate(name: str, revision: str | None = None, cache_dir: str | None = None) -> Location:
    """A model argument as an engine sees it: an existing path wins over a Hub id, as in vLLM and SGLang.
    `cache_dir`: the Hugging Face hub cache the engine uses, when not dflash-cfg's own (preflight)."""
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
    if not is_hub_id(name):
        raise WhereError(f"{name!r} is neither an existing path nor a Hub repo id (org/name)")
    try:
        check_repo_id(name)
    except HubError as exc:
        raise WhereError(f"not an existing path, and {exc}") from None
    return _from_cache(name, revision or "main", cache_dir)


def is_hub_id(name: str) -> bool:
    """Shaped like org/name and not a path (an existing path wins, as in the engines)."""
    return name.count("/") == 1 and not name.startswith((".", "/", "~")) and "\\" not in name


def model_dir(
    name: str, *, revision: str | None = None, offline: bool = False, extra: tuple[str, ...] = ()
) -> storage.Where:
    """A model argument as a directory to read: an existing path as it is; an s3://, gs:// or hf:// path
    (hf:// pinned to a commit); a Hub id from the local cache, else fetched at a commit (config.json and
    the `extra` files it has) unless offline."""
    if remote.is_url(name):
        return storage.locate(name)
    path = Path(os.path.expanduser(name))  # ~unknown-user stays as written (Path.expanduser raises)
    if files.probe(path) not in ("missing", "broken-link") or not is_hub_id(name):
        return path
    try:
        return locate(name, revision).model_dir
    except WhereError:
        if offline or settings().offline:
            raise
    return fetch_snapshot(name, revision or "main", extra)


def _from_cache(repo: str, revision: str, cache_dir: str | None = None) -> Location:
    from huggingface_hub import try_to_load_from_cache

    check_revision(revision)
    cache = cache_dir or settings().cache_dir
    found = try_to_load_from_cache(repo, CONFIG, cache_dir=cache, revision=revision)
    if not isinstance(found, str):
        what = "commit" if COMMIT.match(revision) else "revision"
        raise WhereError(
            f"{repo}@{revision}: no {CONFIG} for that {what} in the Hugging Face cache "
            f"({cache}); an engine would download it (download it first, e.g. "
            f"`hf download {repo} --revision {revision}`), or pass a local path"
        )
    config = Path(found)
    return _location(repo, "Hugging Face cache", config, repo, config.parent.name, revision)


def _location(
    name: str, source: str, config: Path, repo: str | None, commit: str | None, revision: str | None
) -> Location:
    sha256, blob = files.hashes(config)  # the whole file, whatever its size
    return Location(
        name,
        source,
        config,
        Path(os.path.realpath(config)),
        repo,
        commit,
        revision,
        sha256,
        blob,
        os.path.islink(config),
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
        name,
        "Hugging Face Hub" if pinned else "object storage",
        config,
        config,
        pinned[0] if pinned else None,
        pinned[1] if pinned else None,
        config.hub_repo[1] if pinned is None and config.hub_repo else None,
        sha256,
        blob,
        False,
    )

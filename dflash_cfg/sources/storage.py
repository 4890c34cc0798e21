"""Read a file wherever it lives: a local path through sources/files.py (the one safe local reader), an
`s3://`, `gs://` or `hf://` path through sources/remote.py. The commands ask here, and do not care which."""

from __future__ import annotations

import hashlib
import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from dflash_cfg.errors import PathError
from dflash_cfg.jsondoc.document import MAX_BYTES
from dflash_cfg.model import Url, Where
from dflash_cfg.sources import files, listings, remote
from dflash_cfg.sources.cache import default_root
from dflash_cfg.sources.remote_cache import ContentCache

if TYPE_CHECKING:
    from typing_extensions import TypeIs

# A remote config.json is read whole to hash it; past this it is not a config file (verify, where).
MAX_REMOTE_HASH_BYTES = 64 * 1024 * 1024


def is_remote(where: object) -> TypeIs[Url]:
    return isinstance(where, Url)


def locate(text: str) -> Where:
    """A PATH argument as given: a URL of a supported scheme (hf:// pinned to a commit), else a local path."""
    if remote.is_url(text):
        return remote.pin(remote.parse(text))
    return Path(text).expanduser()


def probe(where: Where) -> files.Kind:
    if is_remote(where):
        kind = remote.probe(where)
        return "dir" if kind == "dir" else "file" if kind == "file" else "missing"
    return files.probe(where)


def discover(where: Where, unlisted: list[str] | None = None) -> list[Where]:
    if is_remote(where):
        return list(remote.discover(where))
    return list(files.discover(where, unlisted))


def read(where: Where, limit: int = MAX_BYTES) -> bytes:
    if is_remote(where):
        return remote.read(where, limit)
    return files.read(where, limit)


def read_optional(where: Where, limit: int = MAX_BYTES) -> bytes | None:
    if is_remote(where):
        return remote.read_optional(where, limit)
    return files.read_optional(where, limit)


def hashes(where: Where) -> tuple[str, str]:
    """sha256 and git blob sha1 of the whole file."""
    if not is_remote(where):
        return files.hashes(where)
    data = remote.read(where, MAX_REMOTE_HASH_BYTES)
    if len(data) > MAX_REMOTE_HASH_BYTES:
        raise PathError(f"{where} is larger than {MAX_REMOTE_HASH_BYTES} bytes: not a config file")
    return hashlib.sha256(data).hexdigest(), hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def display(where: Where) -> str:
    return str(where) if is_remote(where) else files.display(where)


def absolute(where: Where) -> Where:
    return where if is_remote(where) else Path(os.path.abspath(where))


def remembered_listings(*, cached: bool = False) -> AbstractContextManager[None]:
    """A remote tree listed once (sources/listings.py), with the content cache under the user's cache dir when
    `cached` (a check without --no-cache): objects the listing shows unchanged are not read again."""
    root = default_root() if cached else None
    return listings.remembered(ContentCache(root / "remote") if root is not None else None)

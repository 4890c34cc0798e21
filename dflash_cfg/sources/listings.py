"""What one command learnt from listing a remote prefix, and the bytes of the objects it names.

Inside `remembered`, the listing sources/remote.py's `discover` made of a prefix answers the later questions about
the dirs under it (which shards a dir holds, whether it has a lock object) without asking the store again: one
command's reads of one tree. Outside it, every question goes to the store.

A listing also names each object's version (S3's ETag, GCS's generation). With a content cache
(sources/remote_cache.py), an object whose bytes were read at that version before is read from there: a check of
an unchanged dir asks the store for its listing only, and a changed object is read again, alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dflash_cfg.model import Url
from dflash_cfg.sources.remote_cache import ContentCache, Key


@dataclass(frozen=True)
class Listed:
    size: int
    version: str | None  # what the listing says the object's bytes are (`version`); None: it says nothing


_memo: dict[Url, dict[str, Listed]] | None = None
_content: ContentCache | None = None


@contextmanager
def remembered(content: ContentCache | None = None) -> Iterator[None]:
    """Listings remembered inside the block; `content`: where the bytes of listed objects are kept. A block
    inside another shares the outer one's."""
    global _memo, _content
    outer, outer_content = _memo, _content
    if outer is None:
        _memo, _content = {}, content
    try:
        yield
    finally:
        _memo, _content = outer, outer_content


def version(scheme: str, info: Mapping[str, Any]) -> str | None:
    """The version of an object's bytes as a listing or a GET names it: S3's ETag, GCS's generation (a GCS ETag
    changes with the object's metadata too)."""
    if scheme == "s3":
        etag = info.get("ETag") or info.get("etag")
        return f"etag:{etag}" if etag else None
    if scheme == "gcs":
        generation = info.get("generation")
        return f"generation:{generation}" if generation else None
    return None


def remember(prefix: Url, objects: Mapping[str, Mapping[str, Any]]) -> None:
    """Every object under `prefix`, listed completely (key -> its listing entry), each under its dir."""
    memo = _memo
    if memo is None:
        return
    for key, info in objects.items():
        if info.get("type") != "directory":
            folder, _, name = key.rpartition("/")
            memo.setdefault(Url(prefix.scheme, folder), {})[name] = Listed(
                int(info.get("size") or 0), version(prefix.scheme, info)
            )


def _listed(url: Url) -> Listed | None:
    memo = _memo
    return None if memo is None else memo.get(url.parent, {}).get(url.name)


def sizes(folder: Url) -> dict[str, int] | None:
    """The objects directly under `folder` (name -> size) as listed; None: not listed in this block."""
    memo = _memo
    if memo is None or folder not in memo:
        return None
    return {name: listed.size for name, listed in memo[folder].items()}


def absent(url: Url) -> bool:
    """Whether the listing of `url`'s dir shows no such object."""
    memo = _memo
    return memo is not None and url.parent in memo and url.name not in memo[url.parent]


def kept(url: Url, endpoint: str, start: int, length: int, limit: int | None = None) -> bytes | None:
    """The bytes of `url` (from `start`, `length` of them, or WHOLE) the content cache holds at the version the
    listing gave; None when it holds none. With `limit`, an object listed larger than it is never taken whole."""
    listed, content = _listed(url), _content
    if content is None or listed is None or listed.version is None:
        return None
    if limit is not None and listed.size > limit:
        return None
    return content.get(Key(endpoint=endpoint, path=url.path, version=listed.version, start=start, length=length))


def keep(url: Url, endpoint: str, answered: str | None, start: int, length: int, data: bytes) -> None:
    """Keep bytes a GET read, under the version the GET answered with. A GCS server that names none (an
    emulator; GCS itself sends x-goog-generation) leaves the listing's: a generation is never reused, so bytes
    kept under it while the object was being rewritten are never asked for again. An S3 ETag is reused (it is
    the bytes' MD5 when the object goes back to them), so there only the GET's own counts."""
    content = _content
    if content is None:
        return
    listed = _listed(url)
    as_of = answered if answered is not None or url.scheme != "gcs" else listed.version if listed else None
    if as_of is not None:
        content.put(Key(endpoint=endpoint, path=url.path, version=as_of, start=start, length=length), data)

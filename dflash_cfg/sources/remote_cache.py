"""Bytes read from object storage, kept on disk under the version the store gave them.

A warm check of an unchanged `s3://` or `gs://` dir needs to ask the store one thing: the listing, which already
carries every object's version (S3's ETag, GCS's generation). config.json and the shard headers are then read from
here, keyed by that version, and an object whose version changed is read again, alone.

An entry is stored under the version the GET that read it answered with, never the listing's: an object rewritten
between the listing and the GET is stored under its new version, so a version always names the bytes it was read
with. The key holds the store's endpoint too (two S3-compatible stores may both have a bucket `models`), the
object, the version and the byte range; the file holds the key before the bytes and is used only when it names
exactly the key asked for. Like the transformers-view cache (sources/cache.py), it can only make a check faster:
anything unreadable, foreign or truncated is a miss, and an OS error on write leaves the read uncached.

Layout: ``$XDG_CACHE_HOME/dflash-cfg/remote/<sha256 of the key>`` (one flat directory, as sources/cache.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from dflash_cfg.errors import PathError
from dflash_cfg.sources import files
from dflash_cfg.sources.atomic import replace_atomically

FORMAT = 1
# A config.json or a safetensors header is far below this; a bigger range is read from the store each time.
MAX_ENTRY_BYTES = 16 << 20
WHOLE = -1  # the range of an entry that holds the whole object


@dataclass(frozen=True, kw_only=True)
class Key:
    endpoint: str  # the store's API endpoint, as remote.endpoint names it
    path: str  # bucket/key
    version: str  # "etag:..." (S3) or "generation:..." (GCS)
    start: int
    length: int  # WHOLE: the whole object

    def line(self) -> bytes:
        fields = [FORMAT, self.endpoint, self.path, self.version, self.start, self.length]
        return json.dumps(fields, separators=(",", ":")).encode("utf-8")


@dataclass(frozen=True)
class ContentCache:
    root: Path

    def _file(self, key: Key) -> Path:
        return self.root / hashlib.sha256(key.line()).hexdigest()

    def get(self, key: Key) -> bytes | None:
        try:
            data = files.read_optional(self._file(key), MAX_ENTRY_BYTES + 4096)
        except PathError:
            return None
        if data is None:
            return None
        head, newline, body = data.partition(b"\n")
        if not newline or head != key.line():
            return None
        if key.length != WHOLE and len(body) != key.length:
            return None  # a range is stored only when it was read in full
        return body

    def put(self, key: Key, data: bytes) -> None:
        if len(data) > MAX_ENTRY_BYTES or (key.length != WHOLE and len(data) != key.length):
            return
        with contextlib.suppress(OSError):
            replace_atomically(self._file(key), key.line() + b"\n" + data, make_parents=True)

"""The content cache of remote reads (sources/remote_cache.py) can only make a check faster: an entry is used only
when it names exactly the key asked for and holds all its bytes; anything else is a miss, and a cache that
cannot be written leaves the read uncached. The requests it spares a check are counted in test_stores.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dflash_cfg.sources.remote_cache import MAX_ENTRY_BYTES, WHOLE, ContentCache, Key

KEY = Key(endpoint="http://127.0.0.1:9000", path="models/d/config.json", version='etag:"abc"', start=0, length=WHOLE)
RANGE = Key(endpoint=KEY.endpoint, path="models/d/model.safetensors", version='etag:"def"', start=8, length=5)


def test_an_entry_reads_back_under_its_key_only(tmp_path: Path) -> None:
    cache = ContentCache(tmp_path / "remote")
    cache.put(KEY, b'{"a": 1}\n')
    cache.put(RANGE, b"12345")
    assert cache.get(KEY) == b'{"a": 1}\n' and cache.get(RANGE) == b"12345"
    for other in (
        replace(KEY, endpoint="http://other:9000"),  # another store with a bucket of that name
        replace(KEY, version='etag:"changed"'),
        replace(KEY, length=9),
    ):
        assert cache.get(other) is None


def test_a_foreign_truncated_or_empty_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ContentCache(tmp_path)
    cache.put(KEY, b"{}")
    cache.put(RANGE, b"12345")
    [whole] = [p for p in tmp_path.iterdir() if p.read_bytes().endswith(b"{}")]
    [ranged] = [p for p in tmp_path.iterdir() if p != whole]
    ranged.write_bytes(ranged.read_bytes()[:-1])  # a range short of its length
    assert cache.get(RANGE) is None
    for foreign in (b"", b"no newline at all", KEY.line().replace(b"abc", b"abd") + b"\n{}"):
        whole.write_bytes(foreign)
        assert cache.get(KEY) is None
    whole.unlink()
    whole.mkdir()  # a dir where the entry should be
    assert cache.get(KEY) is None


def test_what_is_not_stored(tmp_path: Path) -> None:
    cache = ContentCache(tmp_path)
    cache.put(RANGE, b"1234")  # a range read short: the object ended, or the store answered less
    cache.put(KEY, b"x" * (MAX_ENTRY_BYTES + 1))
    assert list(tmp_path.iterdir()) == []


def test_a_file_where_the_cache_dir_should_be_leaves_the_read_uncached(tmp_path: Path) -> None:
    (tmp_path / "remote").write_text("not a dir")
    cache = ContentCache(tmp_path / "remote")
    cache.put(KEY, b"{}")
    assert cache.get(KEY) is None and (tmp_path / "remote").read_text() == "not a dir"

"""Tensor names, shapes and dtypes of a checkpoint, read from safetensors headers only.

Rules compare config.json against the weights (fc.weight in-features vs len(target_layer_ids)·hidden,
layer count, head sizes), and all of that is in the header. A safetensors file is
`u64 little-endian header length` + `header JSON` + tensor bytes, so we read 8 + n bytes per file and
never touch the data: a multi-GB shard costs one open and two reads. Stdlib only on purpose, so the
linter does not pull in safetensors/numpy/torch just to look at shapes.

In a git clone of a Hub repo made without Git LFS (or with GIT_LFS_SKIP_SMUDGE=1, as CI checkouts often
are), each weights file is a Git LFS pointer: a small text file naming the real file's sha256 and size.
Those are recognised exactly as the Git LFS spec defines them and returned as pointers, not read as
safetensors; a file that starts like one but breaks the spec is an error like any unreadable shard.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import struct
from pathlib import Path
from typing import Any

from dflash_cfg.errors import WeightsError
from dflash_cfg.model import LfsPointer, Tensor, Url, Weights
from dflash_cfg.sources import files, remote

INDEX_NAME = "model.safetensors.index.json"
SUFFIX = ".safetensors"

# Same cap as the safetensors reference implementation (MAX_HEADER_SIZE): a real header for even a
# huge model is a few MB, so anything larger is corruption or a hostile file, not worth allocating.
MAX_HEADER_BYTES = 100_000_000
# An index is a flat name -> file map; the same cap keeps a bogus "index" from being slurped whole.
MAX_INDEX_BYTES = MAX_HEADER_BYTES

_LENGTH = struct.Struct("<Q")
_MAX_DIM = 2**64 - 1

# Git LFS pointer files (git-lfs docs/spec.md): UTF-8 lines "{key} {value}\n", LF only, one space, keys of
# [a-z0-9.-], `version` first and the other keys sorted, `oid sha256:{64 hex}` and `size {bytes}` required,
# the whole file under 1024 bytes. Versions: the public one, and the pre-release one git-lfs still reads.
LFS_VERSIONS = ("https://git-lfs.github.com/spec/v1", "https://hawser.github.com/spec/v1")
LFS_MAX_BYTES = 1023
# Every pointer starts so. As a safetensors header length these 8 bytes are ~8e18, far past
# MAX_HEADER_BYTES, so no readable safetensors file is mistaken for a pointer.
_LFS_START = b"version "
_LFS_KEY = re.compile(r"[a-z0-9.-]+")
_LFS_OID = re.compile(r"sha256:[0-9a-f]{64}")
_LFS_SIZE = re.compile(r"0|[1-9][0-9]{0,18}")  # a decimal byte count; git-lfs reads it as an int64 (< 2**63)


# --- pure parsing ------------------------------------------------------------------------------


def _header_length(prefix: bytes, file: str) -> int:
    if len(prefix) < _LENGTH.size:
        raise WeightsError(f"{file}: too short for a safetensors file ({len(prefix)} bytes, need at least 8)")
    (n,) = _LENGTH.unpack_from(prefix)
    if n > MAX_HEADER_BYTES:
        raise WeightsError(
            f"{file}: header length {n} exceeds the {MAX_HEADER_BYTES}-byte limit (corrupt or not safetensors)"
        )
    return int(n)


def _tensor(name: str, entry: Any, file: str) -> Tensor:
    if not isinstance(entry, dict):
        raise WeightsError(f"{file}: header entry {name!r} is not an object")
    shape = entry.get("shape")
    # bool is an int subclass; a shape of [true] is malformed, not [1].
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise WeightsError(f"{file}: tensor {name!r} has no valid shape (need a list of non-negative ints)")
    if any(d > _MAX_DIM for d in shape):  # safetensors stores sizes as u64; larger is not a real tensor
        raise WeightsError(f"{file}: tensor {name!r} has a dimension past 2**64")
    dtype = entry.get("dtype")
    if not isinstance(dtype, str):
        raise WeightsError(f"{file}: tensor {name!r} has no string dtype")
    return Tensor(name=name, shape=tuple(shape), dtype=dtype, file=file)


def parse_header(data: bytes, file: str) -> tuple[Tensor, ...]:
    """Tensors described by a safetensors header, sorted by name.

    `data` is the first 8 bytes (little-endian header length n) followed by at least n header
    bytes; anything after the header is ignored so callers may pass a longer prefix of the file.
    """
    n = _header_length(data, file)
    available = len(data) - _LENGTH.size
    if n > available:
        raise WeightsError(f"{file}: header length {n} runs past the end of the data ({available} bytes)")
    raw = data[_LENGTH.size : _LENGTH.size + n]
    try:
        header = json.loads(raw.decode("utf-8"))
    # ValueError covers JSONDecodeError and int-digit limits; RecursionError covers deep nesting.
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise WeightsError(f"{file}: header is not UTF-8 JSON ({_one_line(exc)})") from None
    if not isinstance(header, dict):
        raise WeightsError(f"{file}: header is a JSON {type(header).__name__}, expected an object")
    tensors = [_tensor(name, entry, file) for name, entry in header.items() if name != "__metadata__"]
    return tuple(sorted(tensors, key=lambda t: t.name))


def parse_lfs_pointer(data: bytes, file: str) -> LfsPointer:
    """The Git LFS pointer file `data`, checked against the spec (canonical encoding, extension keys
    allowed). Raises WeightsError naming what is wrong."""

    def bad(reason: str) -> WeightsError:
        return WeightsError(f"{file}: starts like a Git LFS pointer but is not a valid one ({reason})")

    if len(data) > LFS_MAX_BYTES:
        raise bad(f"{len(data)} bytes; a pointer file is under 1024")
    if b"\r" in data:
        raise bad("a CR byte; pointer lines end in LF only")
    if not data.endswith(b"\n"):
        raise bad("its last line has no LF")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise bad("not UTF-8") from None
    keys: list[str] = []
    values: dict[str, str] = {}
    for number, line in enumerate(text[:-1].split("\n"), 1):
        key, space, value = line.partition(" ")
        if not space or not _LFS_KEY.fullmatch(key) or not value or value.startswith(" "):
            raise bad(f"line {number} is not `key value`")
        keys.append(key)
        values[key] = value
    if keys[0] != "version":
        raise bad("the first line is not `version`")
    if values["version"] not in LFS_VERSIONS:
        raise bad(f"unknown version {json.dumps(values['version'])}")
    rest = keys[1:]
    if "version" in rest or any(a >= b for a, b in itertools.pairwise(rest)):
        raise bad("keys after `version` are not sorted, or repeat")
    if "oid" not in values or "size" not in values:
        raise bad("no `oid` or no `size` line")
    if not _LFS_OID.fullmatch(values["oid"]):
        raise bad("oid is not sha256: and 64 lowercase hex digits")
    if not _LFS_SIZE.fullmatch(values["size"]) or int(values["size"]) >= 2**63:
        raise bad("size is not a decimal byte count")
    extensions = tuple(k for k in rest if k not in ("oid", "size"))
    return LfsPointer(file, values["oid"].removeprefix("sha256:"), int(values["size"]), extensions)


def parse_index(data: bytes, file: str = INDEX_NAME) -> dict[str, str]:
    """The weight_map (tensor name -> shard file name) of a sharded-checkpoint index."""
    try:
        index = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise WeightsError(f"{file}: not UTF-8 JSON ({_one_line(exc)})") from None
    if not isinstance(index, dict):
        raise WeightsError(f"{file}: expected a JSON object with a weight_map")
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, dict):
        raise WeightsError(f"{file}: weight_map is missing or not an object")
    if not weight_map:
        raise WeightsError(f"{file}: weight_map is empty, so no shard can be found")
    for name, shard in weight_map.items():
        # Shards are siblings of the index; a path would let an index point reads anywhere on disk.
        if not isinstance(shard, str) or not _is_plain_name(shard):
            raise WeightsError(f"{file}: weight_map[{name!r}] is not a plain shard file name: {shard!r}")
    return weight_map


def _is_plain_name(name: str) -> bool:
    return name not in ("", ".", "..") and "/" not in name and "\\" not in name and "\0" not in name


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


# --- file access (the only effects) ------------------------------------------------------------


def _os_error(file: str, exc: OSError) -> WeightsError:
    if isinstance(exc, FileNotFoundError):
        # Most often a dangling Hugging Face snapshot link whose blob was never downloaded.
        return WeightsError(f"{file}: missing (or a broken symlink)")
    if isinstance(exc, files.NotRegularFile):
        return WeightsError(f"{file}: not a regular file")
    if isinstance(exc, PermissionError):
        return WeightsError(f"{file}: permission denied")
    return WeightsError(f"{file}: cannot read ({exc.strerror or _one_line(exc)})")


def read_shard(path: Path) -> tuple[Tensor, ...] | LfsPointer:
    """Tensors of one safetensors file, reading only its 8 + n header bytes; or the Git LFS pointer
    file standing in its place."""
    file = path.name
    try:
        # Size from the open descriptor, so it is the file we actually read, not a swapped path.
        with files.open_regular(path) as (fd, size):
            prefix = files.read_exact(fd, _LENGTH.size)
            if prefix == _LFS_START:
                if size > LFS_MAX_BYTES:
                    raise WeightsError(
                        f"{file}: starts like a Git LFS pointer but is {size} bytes (a pointer file is under 1024)"
                    )
                # One byte more than a pointer may have, so a file grown since fstat is still refused.
                return parse_lfs_pointer(prefix + files.read_exact(fd, LFS_MAX_BYTES + 1 - len(prefix)), file)
            n = _header_length(prefix, file)
            # Check before reading so a lying length never drives a large allocation.
            if _LENGTH.size + n > size:
                raise WeightsError(f"{file}: header length {n} runs past the end of the file ({size} bytes)")
            body = files.read_exact(fd, n)
    except OSError as exc:
        raise _os_error(file, exc) from None
    return parse_header(prefix + body, file)


def read_header(path: Path) -> tuple[Tensor, ...]:
    """Tensors of one safetensors file, reading only its 8 + n header bytes."""
    got = read_shard(path)
    if isinstance(got, LfsPointer):
        raise WeightsError(f"{path.name}: a Git LFS pointer file, not safetensors")
    return got


def _read_small(path: Path, limit: int) -> bytes:
    try:
        with files.open_regular(path) as (fd, size):
            if size > limit:
                raise WeightsError(f"{path.name}: {size} bytes is too large (limit {limit})")
            return files.read_exact(fd, size)
    except OSError as exc:
        raise _os_error(path.name, exc) from None


def _shard_names(model_dir: Path) -> tuple[str, ...] | LfsPointer | None:
    """Shard file names to read: those listed in the index if there is one, else every *.safetensors
    directly in model_dir. None when there are no weights at all; the index's pointer when the index
    itself is a Git LFS pointer file."""
    index_path = model_dir / INDEX_NAME
    # lexists, not exists: a dangling index link should be reported, not silently ignored.
    if os.path.lexists(index_path):
        data = _read_small(index_path, MAX_INDEX_BYTES)
        if data.startswith(_LFS_START):
            return parse_lfs_pointer(data, INDEX_NAME)
        weight_map = parse_index(data)
        return tuple(sorted(set(weight_map.values())))
    try:
        entries = list(os.scandir(model_dir))
    except OSError as exc:
        raise _os_error(model_dir.name or str(model_dir), exc) from None
    # Directories are skipped; everything else (links, even dangling ones) is read so that a broken
    # download surfaces as an error instead of a checkpoint that silently lacks a shard.
    names = sorted(e.name for e in entries if e.name.endswith(SUFFIX) and not _is_dir(e))
    return tuple(names) or None


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def lfs_dir(model_dir: Path) -> str | None:
    """model_dir relative to the git work tree holding it, as git-lfs matches paths ("" at its top), or
    None when no parent has a .git (a dir, or a file in worktrees and submodules)."""
    try:
        here = model_dir.resolve()
    except (OSError, RuntimeError):
        return None
    for top in (here, *here.parents):
        if os.path.lexists(top / ".git"):
            inside = here.relative_to(top).as_posix()
            return "" if inside == "." else inside
    return None


def read_weights(model_dir: Path) -> Weights | None:
    """Names, shapes and dtypes of every tensor in model_dir's safetensors checkpoint, or None if
    it has no safetensors files. Files that are Git LFS pointers are returned as pointers, unread.
    Raises WeightsError on unreadable or malformed files."""
    names = _shard_names(model_dir)
    if names is None:
        return None
    if isinstance(names, LfsPointer):
        # Which shards an engine would load is in the index, which is not here: nothing else is read.
        return Weights(files=(), tensors=(), pointers=(names,), lfs_dir=lfs_dir(model_dir))
    tensors: list[Tensor] = []
    pointers: list[LfsPointer] = []
    read: list[str] = []
    for name in names:
        got = read_shard(model_dir / name)
        if isinstance(got, LfsPointer):
            pointers.append(got)
        else:
            read.append(name)
            tensors.extend(got)
    return Weights(
        files=tuple(read),
        tensors=tuple(sorted(tensors, key=lambda t: (t.name, t.file))),
        pointers=tuple(pointers),
        lfs_dir=lfs_dir(model_dir) if pointers else None,
    )


def read_weights_remote(model_dir: Url) -> Weights | None:
    """read_weights for a model dir on object storage or the Hub: one listing, then for every shard one
    ranged read of its first 8 bytes and one of its n header bytes (each round for all shards at once),
    so the bytes read are the headers and nothing of the tensors."""
    listed = remote.listdir(model_dir)
    if INDEX_NAME in listed:
        if listed[INDEX_NAME] > MAX_INDEX_BYTES:
            raise WeightsError(f"{INDEX_NAME}: {listed[INDEX_NAME]} bytes is too large (limit {MAX_INDEX_BYTES})")
        data = remote.read(model_dir / INDEX_NAME, MAX_INDEX_BYTES)
        if data.startswith(_LFS_START):
            return Weights(files=(), tensors=(), pointers=(parse_lfs_pointer(data, INDEX_NAME),), lfs_dir=None)
        names = tuple(sorted(set(parse_index(data).values())))
    else:
        names = tuple(sorted(n for n in listed if n.endswith(SUFFIX)))
    if not names:
        return None
    for name in names:
        if name not in listed:
            raise WeightsError(f"{name}: missing (named by {INDEX_NAME}, not in {model_dir})")
        if listed[name] < _LENGTH.size:
            raise WeightsError(f"{name}: too short for a safetensors file ({listed[name]} bytes, need at least 8)")

    def fetched(results: list[bytes | BaseException], wanted: tuple[str, ...]) -> list[bytes]:
        out = []
        for name, got in zip(wanted, results, strict=True):
            if isinstance(got, BaseException):
                raise WeightsError(f"{name}: cannot read ({remote.explain(got, model_dir / name)})")
            out.append(got)
        return out

    prefixes = fetched(remote.read_ranges((model_dir / n, 0, _LENGTH.size) for n in names), names)
    pointers: list[LfsPointer] = []
    lengths: dict[str, int] = {}
    for name, prefix in zip(names, prefixes, strict=True):
        size = listed[name]
        if prefix == _LFS_START:
            if size > LFS_MAX_BYTES:
                raise WeightsError(
                    f"{name}: starts like a Git LFS pointer but is {size} bytes (a pointer file is under 1024)"
                )
            pointers.append(parse_lfs_pointer(remote.read(model_dir / name, LFS_MAX_BYTES), name))
            continue
        n = _header_length(prefix, name)
        if _LENGTH.size + n > size:
            raise WeightsError(f"{name}: header length {n} runs past the end of the file ({size} bytes)")
        lengths[name] = n
    read = tuple(n for n in names if n in lengths)
    bodies = fetched(remote.read_ranges((model_dir / n, _LENGTH.size, lengths[n]) for n in read), read)
    tensors: list[Tensor] = []
    for name, prefix, body in zip(
        read, (p for n, p in zip(names, prefixes, strict=True) if n in lengths), bodies, strict=True
    ):
        tensors.extend(parse_header(prefix + body, name))
    return Weights(
        files=read,
        tensors=tuple(sorted(tensors, key=lambda t: (t.name, t.file))),
        pointers=tuple(pointers),
        lfs_dir=None,
    )

"""Tensor names, shapes and dtypes of a checkpoint, read from safetensors headers only.

Rules compare config.json against the weights (fc.weight in-features vs len(target_layer_ids)·hidden,
layer count, head sizes), and all of that is in the header. A safetensors file is
`u64 little-endian header length` + `header JSON` + tensor bytes, so we read 8 + n bytes per file and
never touch the data: a multi-GB shard costs one open and two reads. Stdlib only on purpose, so the
linter does not pull in safetensors/numpy/torch just to look at shapes.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

from dflash_cfg.errors import WeightsError
from dflash_cfg.model import Tensor, Weights
from dflash_cfg.sources import files

INDEX_NAME = "model.safetensors.index.json"
SUFFIX = ".safetensors"

# Same cap as the safetensors reference implementation (MAX_HEADER_SIZE): a real header for even a
# huge model is a few MB, so anything larger is corruption or a hostile file, not worth allocating.
MAX_HEADER_BYTES = 100_000_000
# An index is a flat name -> file map; the same cap keeps a bogus "index" from being slurped whole.
MAX_INDEX_BYTES = MAX_HEADER_BYTES

_LENGTH = struct.Struct("<Q")
_MAX_DIM = 2**64 - 1


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


def read_header(path: Path) -> tuple[Tensor, ...]:
    """Tensors of one safetensors file, reading only its 8 + n header bytes."""
    file = path.name
    try:
        # Size from the open descriptor, so it is the file we actually read, not a swapped path.
        with files.open_regular(path) as (fd, size):
            prefix = files.read_exact(fd, _LENGTH.size)
            n = _header_length(prefix, file)
            # Check before reading so a lying length never drives a large allocation.
            if _LENGTH.size + n > size:
                raise WeightsError(f"{file}: header length {n} runs past the end of the file ({size} bytes)")
            body = files.read_exact(fd, n)
    except OSError as exc:
        raise _os_error(file, exc) from None
    return parse_header(prefix + body, file)


def _read_small(path: Path, limit: int) -> bytes:
    try:
        with files.open_regular(path) as (fd, size):
            if size > limit:
                raise WeightsError(f"{path.name}: {size} bytes is too large (limit {limit})")
            return files.read_exact(fd, size)
    except OSError as exc:
        raise _os_error(path.name, exc) from None


def _shard_names(model_dir: Path) -> tuple[str, ...] | None:
    """Shard file names to read: those listed in the index if there is one, else every *.safetensors
    directly in model_dir. None when there are no weights at all."""
    index_path = model_dir / INDEX_NAME
    # lexists, not exists: a dangling index link should be reported, not silently ignored.
    if os.path.lexists(index_path):
        weight_map = parse_index(_read_small(index_path, MAX_INDEX_BYTES))
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


def read_weights(model_dir: Path) -> Weights | None:
    """Names, shapes and dtypes of every tensor in model_dir's safetensors checkpoint, or None if
    it has no safetensors files. Raises WeightsError on unreadable or malformed files."""
    names = _shard_names(model_dir)
    if names is None:
        return None
    tensors = [t for name in names for t in read_header(model_dir / name)]
    return Weights(files=names, tensors=tuple(sorted(tensors, key=lambda t: (t.name, t.file))))

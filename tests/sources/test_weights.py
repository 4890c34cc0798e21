"""dflash_cfg.sources.weights against real safetensors files on disk (written with safetensors itself, or
byte by byte for files safetensors would refuse to write)."""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from checkpoints import drafter_shapes, save

from dflash_cfg.model import LfsPointer
from dflash_cfg.sources.weights import (
    INDEX_NAME,
    Tensor,
    Weights,
    WeightsError,
    lfs_dir,
    parse_header,
    parse_lfs_pointer,
    read_header,
    read_shard,
    read_weights,
)

HIDDEN, K, HEADS, KV_HEADS, HEAD_DIM, INTER, LAYERS = 32, 3, 4, 2, 8, 64, 5


def drafter(prefix: str = "") -> dict[str, tuple[int, ...]]:
    return drafter_shapes(
        hidden=HIDDEN, heads=HEADS, kv=KV_HEADS, head_dim=HEAD_DIM, inter=INTER, layers=LAYERS, taps=K, prefix=prefix
    )


def raw_header(header: object) -> bytes:
    body = json.dumps(header).encode()
    return struct.pack("<Q", len(body)) + body


def write_raw(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# --- well-formed checkpoints -------------------------------------------------------------------


def test_single_file_drafter(tmp_path: Path) -> None:
    shapes = drafter()
    save(tmp_path / "model.safetensors", shapes)

    w = read_weights(tmp_path)

    assert w is not None
    assert w.files == ("model.safetensors",)
    assert [t.name for t in w.tensors] == sorted(shapes)
    assert {t.name: t.shape for t in w.tensors} == shapes
    assert {t.dtype for t in w.tensors} == {"F16"}
    assert {t.file for t in w.tensors} == {"model.safetensors"}
    assert w.layer_indices() == (0, 1, 2, 3, 4)
    assert w.get("fc.weight") == Tensor("fc.weight", (HIDDEN, K * HIDDEN), "F16", "model.safetensors")
    assert w.get("layers.3.self_attn.k_proj.weight") is not None
    assert w.get("k_norm.weight") is not None  # suffix on a component boundary
    assert w.get("orm.weight") is None  # not on a component boundary
    assert w.get("embed_tokens.weight") is None
    assert w.get("lm_head.weight") is None


def test_prefixed_names(tmp_path: Path) -> None:
    save(tmp_path / "model.safetensors", drafter("model."))

    w = read_weights(tmp_path)

    assert w is not None
    assert w.layer_indices() == (0, 1, 2, 3, 4)
    fc = w.get("fc.weight")
    assert fc is not None and fc.name == "model.fc.weight" and fc.shape == (HIDDEN, K * HIDDEN)
    # The final norm, not a deeper tensor sharing the suffix.
    norm = w.get("norm.weight")
    assert norm is not None and norm.name == "model.norm.weight"


def test_get_prefers_exact_then_shortest() -> None:
    def t(name: str) -> Tensor:
        return Tensor(name, (1,), "BF16", "a.safetensors")

    w = Weights(("a.safetensors",), (t("a.b.norm.weight"), t("model.norm.weight"), t("norm.weight")))
    assert w.get("norm.weight") == t("norm.weight")
    w = Weights(("a.safetensors",), (t("a.b.norm.weight"), t("model.norm.weight")))
    assert w.get("norm.weight") == t("model.norm.weight")


def test_layer_indices_only_counts_layers_components() -> None:
    names = [
        "model.layers.10.mlp.up_proj.weight",
        "layers.2.x",
        "sublayers.7.x",  # "layers" must be a whole component
        "layers.x.y",
        "layers.3",  # no trailing component
        "layers.02.x",
    ]
    w = Weights(("a",), tuple(Tensor(n, (1,), "F32", "a") for n in sorted(names)))
    assert w.layer_indices() == (2, 10)


def test_bf16_and_metadata(tmp_path: Path) -> None:
    # numpy has no bfloat16, so write the header by hand; __metadata__ must not become a tensor.
    header = {
        "__metadata__": {"format": "pt"},
        "fc.weight": {"dtype": "BF16", "shape": [4, 12], "data_offsets": [0, 96]},
        "norm.weight": {"dtype": "BF16", "shape": [4], "data_offsets": [96, 104]},
    }
    write_raw(tmp_path / "model.safetensors", raw_header(header) + bytes(104))

    w = read_weights(tmp_path)

    assert w is not None
    assert [(t.name, t.shape, t.dtype) for t in w.tensors] == [
        ("fc.weight", (4, 12), "BF16"),
        ("norm.weight", (4,), "BF16"),
    ]


def test_sharded_with_index(tmp_path: Path) -> None:
    shapes = drafter()
    names = sorted(shapes)
    first = {n: shapes[n] for n in names if not n.startswith("layers.")}
    second = {n: shapes[n] for n in names if n.startswith("layers.")}
    save(tmp_path / "model-00001-of-00002.safetensors", first)
    save(tmp_path / "model-00002-of-00002.safetensors", second)
    # A stray file not in the index must be ignored when an index exists.
    save(tmp_path / "stray.safetensors", {"junk.weight": (1,)})
    weight_map = {n: "model-00001-of-00002.safetensors" for n in first}
    weight_map |= {n: "model-00002-of-00002.safetensors" for n in second}
    (tmp_path / INDEX_NAME).write_text(json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map}))

    w = read_weights(tmp_path)

    assert w is not None
    assert w.files == ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    assert {t.name: t.shape for t in w.tensors} == shapes
    assert all(t.file == weight_map[t.name] for t in w.tensors)
    assert w.get("junk.weight") is None
    assert w.layer_indices() == (0, 1, 2, 3, 4)


def test_multiple_files_without_index_not_recursive(tmp_path: Path) -> None:
    save(tmp_path / "b.safetensors", {"layers.1.x.weight": (2,)})
    save(tmp_path / "a.safetensors", {"layers.0.x.weight": (2,)})
    (tmp_path / "sub").mkdir()
    save(tmp_path / "sub" / "c.safetensors", {"layers.9.x.weight": (2,)})
    (tmp_path / "dir.safetensors").mkdir()  # a directory with the suffix is not a file to read
    (tmp_path / "config.json").write_text("{}")

    w = read_weights(tmp_path)

    assert w is not None
    assert w.files == ("a.safetensors", "b.safetensors")
    assert w.layer_indices() == (0, 1)


def test_no_safetensors_returns_none(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "pytorch_model.bin").write_bytes(b"\0" * 16)
    assert read_weights(tmp_path) is None


def test_hugging_face_cache_symlinks(tmp_path: Path) -> None:
    # HF cache layout: snapshots/<rev>/<name> -> ../../blobs/<hash>. The reported file is the link name.
    blobs = tmp_path / "blobs"
    snap = tmp_path / "snapshots" / "abc123"
    blobs.mkdir()
    snap.mkdir(parents=True)
    save(blobs / "deadbeef", {"fc.weight": (HIDDEN, K * HIDDEN)})
    (blobs / "cafef00d").write_text(json.dumps({"weight_map": {"fc.weight": "model.safetensors"}}))
    (snap / "model.safetensors").symlink_to("../../blobs/deadbeef")

    w = read_weights(snap)
    assert w is not None and w.files == ("model.safetensors",)
    assert w.tensors == (Tensor("fc.weight", (HIDDEN, K * HIDDEN), "F16", "model.safetensors"),)

    (snap / INDEX_NAME).symlink_to("../../blobs/cafef00d")
    w = read_weights(snap)
    assert w is not None and w.files == ("model.safetensors",)


def test_huge_sparse_shard_reads_only_header(tmp_path: Path) -> None:
    # One 4 GiB BF16 tensor ([65536, 32768] · 2 bytes) plus slack: the file is 8 GiB, but sparse, so it
    # uses no disk. Reading must touch only the header.
    nbytes = 65536 * 32768 * 2
    header = {"fc.weight": {"dtype": "BF16", "shape": [65536, 32768], "data_offsets": [0, nbytes]}}
    path = write_raw(tmp_path / "model.safetensors", raw_header(header))
    os.truncate(path, 8 * 1024**3)

    w = read_weights(tmp_path)

    assert w is not None
    assert w.tensors == (Tensor("fc.weight", (65536, 32768), "BF16", "model.safetensors"),)


# --- hostile input -----------------------------------------------------------------------------


BAD_HEADERS: list[tuple[str, bytes, str]] = [
    ("empty", b"", "too short"),
    ("three-bytes", b"\x01\x02\x03", "too short"),
    ("length-past-end", struct.pack("<Q", 1000) + b"{}", "past the end"),
    ("length-2**63", struct.pack("<Q", 2**63) + b"{}", "limit"),
    ("length-just-over-cap", struct.pack("<Q", 100_000_001) + b"{}", "limit"),
    ("zero-length", struct.pack("<Q", 0), "not UTF-8 JSON"),
    ("not-json", struct.pack("<Q", 9) + b"not json!", "not UTF-8 JSON"),
    ("not-utf8", struct.pack("<Q", 3) + b'"\xff"', "not UTF-8 JSON"),
    ("deep-nesting", struct.pack("<Q", 200_000) + b"[" * 200_000, "not UTF-8 JSON"),
    ("json-list", raw_header([1, 2]), "expected an object"),
    ("entry-not-object", raw_header({"a": [1]}), "not an object"),
    ("shape-negative", raw_header({"a": {"dtype": "F16", "shape": [2, -1]}}), "shape"),
    ("shape-string", raw_header({"a": {"dtype": "F16", "shape": [2, "3"]}}), "shape"),
    ("shape-float", raw_header({"a": {"dtype": "F16", "shape": [2.0]}}), "shape"),
    ("shape-bool", raw_header({"a": {"dtype": "F16", "shape": [True]}}), "shape"),
    ("shape-not-list", raw_header({"a": {"dtype": "F16", "shape": 4}}), "shape"),
    ("shape-missing", raw_header({"a": {"dtype": "F16"}}), "shape"),
    ("dtype-missing", raw_header({"a": {"shape": [1]}}), "dtype"),
    ("dtype-int", raw_header({"a": {"dtype": 16, "shape": [1]}}), "dtype"),
]


@pytest.mark.parametrize("data, expected", [c[1:] for c in BAD_HEADERS], ids=[c[0] for c in BAD_HEADERS])
def test_parse_header_rejects(data: bytes, expected: str) -> None:
    with pytest.raises(WeightsError, match=expected) as info:
        parse_header(data, "x.safetensors")
    assert str(info.value).startswith("x.safetensors: ")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("data, expected", [c[1:] for c in BAD_HEADERS], ids=[c[0] for c in BAD_HEADERS])
def test_read_weights_rejects_bad_file(tmp_path: Path, data: bytes, expected: str) -> None:
    write_raw(tmp_path / "model.safetensors", data)
    with pytest.raises(WeightsError, match=expected) as info:
        read_weights(tmp_path)
    assert str(info.value).startswith("model.safetensors: ")


def test_parse_header_ignores_trailing_bytes() -> None:
    data = raw_header({"a": {"dtype": "F32", "shape": []}}) + b"tensor bytes"
    assert parse_header(data, "f") == (Tensor("a", (), "F32", "f"),)


def _index(tmp_path: Path, index: object) -> None:
    save(tmp_path / "model-00001-of-00001.safetensors", {"fc.weight": (2, 6)})
    (tmp_path / INDEX_NAME).write_text(json.dumps(index))


def _bad_index_text(tmp_path: Path) -> None:
    (tmp_path / INDEX_NAME).write_text("{not json")


def _weight_map_not_dict(tmp_path: Path) -> None:
    _index(tmp_path, {"weight_map": ["fc.weight"]})


def _weight_map_missing(tmp_path: Path) -> None:
    _index(tmp_path, {"metadata": {}})


def _weight_map_empty(tmp_path: Path) -> None:
    _index(tmp_path, {"weight_map": {}})


def _index_is_list(tmp_path: Path) -> None:
    _index(tmp_path, [])


def _shard_is_path(tmp_path: Path) -> None:
    _index(tmp_path, {"weight_map": {"fc.weight": "../elsewhere/model.safetensors"}})


def _shard_not_str(tmp_path: Path) -> None:
    _index(tmp_path, {"weight_map": {"fc.weight": 1}})


def _shard_missing(tmp_path: Path) -> None:
    _index(
        tmp_path,
        {
            "weight_map": {
                "fc.weight": "model-00001-of-00001.safetensors",
                "norm.weight": "model-00002-of-00002.safetensors",
            }
        },
    )


def _dangling_symlink(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").symlink_to(tmp_path / "blobs" / "never-downloaded")


def _dangling_index_symlink(tmp_path: Path) -> None:
    save(tmp_path / "model.safetensors", {"fc.weight": (2, 6)})
    (tmp_path / INDEX_NAME).symlink_to(tmp_path / "blobs" / "never-downloaded")


def _fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "model.safetensors")


BAD_DIRS: list[tuple[str, Callable[[Path], None], str]] = [
    ("index-not-json", _bad_index_text, f"{INDEX_NAME}: not UTF-8 JSON"),
    ("index-is-list", _index_is_list, "expected a JSON object"),
    ("weight-map-not-dict", _weight_map_not_dict, "weight_map is missing or not an object"),
    ("weight-map-missing", _weight_map_missing, "weight_map is missing or not an object"),
    ("weight-map-empty", _weight_map_empty, "weight_map is empty"),
    ("shard-is-path", _shard_is_path, "not a plain shard file name"),
    ("shard-not-str", _shard_not_str, "not a plain shard file name"),
    ("shard-missing", _shard_missing, "model-00002-of-00002.safetensors: missing"),
    ("dangling-symlink", _dangling_symlink, "model.safetensors: missing"),
    ("dangling-index-symlink", _dangling_index_symlink, f"{INDEX_NAME}: missing"),
    ("fifo", _fifo, "model.safetensors: not a regular file"),
]


@pytest.mark.parametrize("build, expected", [c[1:] for c in BAD_DIRS], ids=[c[0] for c in BAD_DIRS])
def test_read_weights_rejects_bad_dir(tmp_path: Path, build: Callable[[Path], None], expected: str) -> None:
    build(tmp_path)
    with pytest.raises(WeightsError, match=expected) as info:
        read_weights(tmp_path)
    assert "\n" not in str(info.value)


def test_missing_model_dir(tmp_path: Path) -> None:
    with pytest.raises(WeightsError, match="missing"):
        read_weights(tmp_path / "nope")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read a mode-000 file anyway")
@pytest.mark.parametrize("name", ["model.safetensors", INDEX_NAME], ids=["shard", "index"])
def test_unreadable_file(tmp_path: Path, name: str) -> None:
    save(tmp_path / "model.safetensors", {"fc.weight": (2, 6)})
    if name == INDEX_NAME:
        (tmp_path / INDEX_NAME).write_text(json.dumps({"weight_map": {"fc.weight": "model.safetensors"}}))
    target = tmp_path / name
    target.chmod(0)
    try:
        with pytest.raises(WeightsError, match=f"{name}: permission denied"):
            read_weights(tmp_path)
    finally:
        target.chmod(0o644)  # so pytest can clean up tmp_path


def test_read_header_directly(tmp_path: Path) -> None:
    path = tmp_path / "x.safetensors"
    save(path, {"a": (1, 2)}, dtype=np.float32)
    assert read_header(path) == (Tensor("a", (1, 2), "F32", "x.safetensors"),)


# --- Git LFS pointer files (a clone without `git lfs pull`) -----------------------------------

OID = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393"  # the Git LFS spec's example
POINTER = f"version https://git-lfs.github.com/spec/v1\noid sha256:{OID}\nsize 12345\n".encode()


def pointer(size: int, oid: str = OID) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n".encode()


def test_pointer_as_git_lfs_writes_it() -> None:
    assert len(POINTER) == 130  # what `git lfs pointer` writes for a 5-digit size
    assert parse_lfs_pointer(POINTER, "model.safetensors") == LfsPointer("model.safetensors", OID, 12345)


@pytest.mark.parametrize(
    "data, expected",
    [
        pytest.param(POINTER.replace(b"git-lfs.github.com", b"hawser.github.com"), 12345, id="pre-release-version"),
        pytest.param(pointer(0), 0, id="size-zero"),
        pytest.param(pointer(2**63 - 1), 2**63 - 1, id="size-int64-max"),
    ],
)
def test_pointer_accepted(data: bytes, expected: int) -> None:
    assert parse_lfs_pointer(data, "f").size == expected


def test_pointer_with_extensions() -> None:
    # Extension lines (ext-{priority}-{name}) sort before oid; the size may then be of a transformed file.
    data = POINTER.replace(b"oid ", b"ext-0-foo sha256:" + b"0" * 64 + b"\noid ")
    got = parse_lfs_pointer(data, "f")
    assert (got.oid, got.size, got.extensions) == (OID, 12345, ("ext-0-foo",))


BAD_POINTERS: list[tuple[str, bytes, str]] = [
    ("crlf", POINTER.replace(b"\n", b"\r\n"), "CR byte"),
    ("no-final-newline", POINTER[:-1], "no LF"),
    (
        "keys-unsorted",
        POINTER.replace(b"oid sha256:" + OID.encode() + b"\nsize 12345", b"size 12345\noid sha256:" + OID.encode()),
        "sorted",
    ),
    ("key-repeated", POINTER + b"size 12345\n", "sorted"),
    (
        "version-not-first",
        b"oid sha256:" + OID.encode() + b"\nversion https://git-lfs.github.com/spec/v1\n",
        "first line",
    ),
    ("version-unknown", POINTER.replace(b"spec/v1", b"spec/v2"), "unknown version"),
    ("version-case", POINTER.replace(b"git-lfs.github.com", b"Git-LFS.github.com"), "unknown version"),
    ("oid-short", pointer(1, OID[:63]), "oid"),
    ("oid-uppercase", pointer(1, OID.upper()), "oid"),
    ("oid-md5", POINTER.replace(b"sha256:", b"md5:"), "oid"),
    ("size-negative", pointer(-1), "size"),
    ("size-leading-zero", pointer(1).replace(b"size 1", b"size 01"), "size"),
    ("size-hex", pointer(1).replace(b"size 1", b"size 0x1"), "size"),
    ("size-past-int64", pointer(2**63), "size"),
    ("size-missing", POINTER.replace(b"size 12345\n", b""), "no `oid` or no `size`"),
    ("two-spaces", POINTER.replace(b"size 12345", b"size  12345"), "line 3"),
    ("blank-line", POINTER + b"\n", "line 4"),
    ("key-uppercase", POINTER.replace(b"size", b"Size"), "line 3"),
    ("not-utf8", POINTER.replace(b"size 12345", b"size \xff"), "not UTF-8"),
    ("too-long", POINTER + b"x-pad " + b"a" * 1000 + b"\n", "under 1024"),
]


@pytest.mark.parametrize("data, expected", [c[1:] for c in BAD_POINTERS], ids=[c[0] for c in BAD_POINTERS])
def test_malformed_pointer_is_an_error(tmp_path: Path, data: bytes, expected: str) -> None:
    with pytest.raises(WeightsError, match=expected) as info:
        parse_lfs_pointer(data, "model.safetensors")
    assert str(info.value).startswith("model.safetensors: starts like a Git LFS pointer but is not a valid one (")
    if not data.startswith(b"version "):
        return  # the reader takes only files that start like a pointer for one
    # Through the reader too: an unreadable shard, never a pointer nor a header-length error.
    write_raw(tmp_path / "model.safetensors", data)
    with pytest.raises(WeightsError, match="starts like a Git LFS pointer") as read:
        read_weights(tmp_path)
    assert "\n" not in str(read.value)


def test_large_file_starting_like_a_pointer(tmp_path: Path) -> None:
    path = write_raw(tmp_path / "model.safetensors", POINTER + b"\0" * 4096)
    with pytest.raises(WeightsError, match=r"is 4226 bytes \(a pointer file is under 1024\)"):
        read_shard(path)


def test_real_safetensors_is_never_a_pointer(tmp_path: Path) -> None:
    save(tmp_path / "model.safetensors", {"fc.weight": (2, 6)})
    assert isinstance(read_shard(tmp_path / "model.safetensors"), tuple)


def test_read_header_refuses_a_pointer(tmp_path: Path) -> None:
    path = write_raw(tmp_path / "model.safetensors", POINTER)
    assert read_shard(path) == LfsPointer("model.safetensors", OID, 12345)
    with pytest.raises(WeightsError, match="a Git LFS pointer file, not safetensors"):
        read_header(path)


def test_all_shards_pointers(tmp_path: Path) -> None:
    names = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    (tmp_path / INDEX_NAME).write_text(json.dumps({"weight_map": {"fc.weight": names[1], "norm.weight": names[0]}}))
    write_raw(tmp_path / names[0], pointer(100))
    write_raw(tmp_path / names[1], pointer(200))

    w = read_weights(tmp_path)

    assert w is not None
    assert (w.files, w.tensors) == ((), ())
    assert w.pointers == (LfsPointer(names[0], OID, 100), LfsPointer(names[1], OID, 200))


def test_real_and_pointer_shards(tmp_path: Path) -> None:
    shapes = drafter()
    first = {n: s for n, s in shapes.items() if not n.startswith("layers.")}
    save(tmp_path / "model-00001-of-00002.safetensors", first)
    write_raw(tmp_path / "model-00002-of-00002.safetensors", pointer(4096))
    weight_map = {n: "model-00001-of-00002.safetensors" for n in first}
    weight_map |= {n: "model-00002-of-00002.safetensors" for n in shapes if n not in first}
    (tmp_path / INDEX_NAME).write_text(json.dumps({"weight_map": weight_map}))

    w = read_weights(tmp_path)

    assert w is not None
    assert w.files == ("model-00001-of-00002.safetensors",)
    assert {t.name for t in w.tensors} == set(first)
    assert w.pointers == (LfsPointer("model-00002-of-00002.safetensors", OID, 4096),)


def test_index_itself_a_pointer(tmp_path: Path) -> None:
    write_raw(tmp_path / INDEX_NAME, pointer(30_000))
    write_raw(tmp_path / "model-00001-of-00001.safetensors", pointer(100))
    w = read_weights(tmp_path)
    assert w is not None
    assert (w.files, w.tensors, w.pointers) == ((), (), (LfsPointer(INDEX_NAME, OID, 30_000),))


def test_pointer_in_a_hugging_face_cache_layout(tmp_path: Path) -> None:
    # Read through a snapshot symlink like any shard; the pointer is named by the link.
    (tmp_path / "blobs").mkdir()
    write_raw(tmp_path / "blobs" / "abc", POINTER)
    (tmp_path / "model.safetensors").symlink_to(tmp_path / "blobs" / "abc")
    w = read_weights(tmp_path)
    assert w is not None and w.pointers == (LfsPointer("model.safetensors", OID, 12345),)


def _outside_any_work_tree(path: Path) -> bool:
    return not any((p / ".git").exists() for p in (path.resolve(), *path.resolve().parents))


def test_lfs_dir(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    (clone / "dflash").mkdir(parents=True)
    (clone / ".git").mkdir()
    assert lfs_dir(clone) == ""
    assert lfs_dir(clone / "dflash") == "dflash"
    # A worktree or submodule has a .git file; a symlinked model dir is matched where it really is.
    (tmp_path / "wt" / "a" / ".b").mkdir(parents=True)
    (tmp_path / "wt" / ".git").write_text("gitdir: /elsewhere\n")
    assert lfs_dir(tmp_path / "wt" / "a" / ".b") == "a/.b"
    (tmp_path / "link").symlink_to(clone / "dflash")
    assert lfs_dir(tmp_path / "link") == "dflash"
    if _outside_any_work_tree(tmp_path):
        assert lfs_dir(tmp_path) is None


def test_lfs_dir_recorded_only_with_pointers(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    save(tmp_path / "model.safetensors", {"fc.weight": (2, 6)})
    w = read_weights(tmp_path)
    assert w is not None and w.lfs_dir is None
    write_raw(tmp_path / "model.safetensors", POINTER)
    w = read_weights(tmp_path)
    assert w is not None and w.lfs_dir == ""

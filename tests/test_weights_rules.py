"""DF500-DF505 through the real CLI: real safetensors checkpoints (written with safetensors.numpy) next to a
drafter config.json that does or does not describe them.

One case per rule (and a consistent checkpoint) is a row of test_rule_cases.py; these tests check what a
row does not: messages, several findings at once, sharded and huge checkpoints, exit codes."""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from checkpoints import HEAD_DIM, HEADS, HIDDEN, KV, LAYERS, TAPS, published_b16, save, small_config, small_shapes
from helpers import FIXTURES, Result


def write_config(directory: Path, cfg: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
    return directory


def drafter(
    tmp_path: Path,
    cfg: dict[str, Any] | None = None,
    tensors: dict[str, tuple[int, ...]] | None = None,
    name: str = "drafter",
) -> Path:
    directory = write_config(tmp_path / name, cfg if cfg is not None else small_config())
    save(directory / "model.safetensors", tensors if tensors is not None else small_shapes())
    return directory


def run_json(dflash: Callable[..., Result], *args: str | Path) -> tuple[Result, list[dict[str, Any]]]:
    result = dflash("check", *args, "--format", "json")
    assert result.out, result.err
    doc = result.json()
    assert len(doc["files"]) == 1, doc
    return result, doc["files"][0]["findings"]


def only(findings: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    return [f for f in findings if f["rule"].startswith(prefix)]


def pairs(findings: list[dict[str, Any]], prefix: str = "DF5") -> list[tuple[str, str]]:
    return sorted((f["rule"], f["pointer"]) for f in only(findings, prefix))


# --- a consistent checkpoint -----------------------------------------------------------------------------


def test_consistent_checkpoint_has_no_finding(dflash: Callable[..., Result], tmp_path: Path) -> None:
    result, findings = run_json(dflash, drafter(tmp_path))
    assert findings == []
    assert result.err == ""
    assert result.code == 0


def test_consistent_checkpoint_bf16_and_prefixed_names(dflash: Callable[..., Result], tmp_path: Path) -> None:
    # safetensors.numpy cannot write bfloat16; F32 + a "model." prefix exercise the same header paths.
    directory = write_config(tmp_path / "d", small_config())
    save(directory / "model.safetensors", small_shapes(prefix="model."), dtype=np.float32)
    _, findings = run_json(dflash, directory)
    assert only(findings, "DF5") == []


def test_prefixed_names_still_checked(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = write_config(tmp_path / "d", small_config())
    save(directory / "model.safetensors", small_shapes(prefix="model.", kv=1))
    _, findings = run_json(dflash, directory)
    assert pairs(findings) == [("DF503", "/num_key_value_heads")] * 2


def test_no_checkpoint_no_weight_findings(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = write_config(tmp_path / "d", small_config())
    _, findings = run_json(dflash, directory)
    assert only(findings, "DF5") == []


# --- DF501: fc width ------------------------------------------------------------------------------------


def test_df501_fc_for_eight_taps(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = run_json(dflash, drafter(tmp_path, tensors=small_shapes(taps=8)))
    assert pairs(findings) == [("DF501", "/dflash_config/target_layer_ids")]
    (f,) = only(findings, "DF501")
    assert f["severity"] == "error"
    assert "512" in f["message"] and "8 taps' worth" in f["message"]
    assert "5 taps × 64 = 320" in f["message"]
    assert "model.safetensors" in f["message"]
    assert f["line"] is not None  # located on the target_layer_ids in the file


def test_df501_top_level_taps_pointer(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = small_config()
    del cfg["dflash_config"]["target_layer_ids"]
    cfg["target_layer_ids"] = list(TAPS)
    _, findings = run_json(dflash, drafter(tmp_path, cfg, small_shapes(taps=3)))
    assert pairs(findings) == [("DF501", "/target_layer_ids")]


def test_df501_width_not_a_multiple(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = run_json(dflash, drafter(tmp_path, tensors=small_shapes(fc_in=300)))
    (f,) = only(findings, "DF501")
    assert "300" in f["message"] and "taps' worth" not in f["message"]


def test_df501_output_width(dflash: Callable[..., Result], tmp_path: Path) -> None:
    tensors = small_shapes()
    tensors["fc.weight"] = (32, 320)
    _, findings = run_json(dflash, drafter(tmp_path, tensors=tensors))
    assert pairs(findings) == [("DF501", "/hidden_size")]


def test_df501_target_hidden_size(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = small_config(target_hidden_size=128)
    _, ok = run_json(dflash, drafter(tmp_path, cfg, small_shapes(fc_in=5 * 128), name="ok"))
    assert only(ok, "DF501") == []
    _, bad = run_json(dflash, drafter(tmp_path, cfg, small_shapes(), name="bad"))
    (f,) = only(bad, "DF501")
    assert "5 taps × 128 = 640" in f["message"]


# --- DF502: layer count ---------------------------------------------------------------------------------


def test_df502_extra_layer(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = run_json(dflash, drafter(tmp_path, tensors=small_shapes(layers=6)))
    assert pairs(findings) == [("DF502", "/num_hidden_layers")]
    (f,) = only(findings, "DF502")
    assert f["severity"] == "error"
    assert "0..5" in f["message"] and "5" in f["message"]


def test_df502_missing_layer(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = run_json(dflash, drafter(tmp_path, tensors=small_shapes(layers=4)))
    assert pairs(findings) == [("DF502", "/num_hidden_layers")]
    assert "0..3" in only(findings, "DF502")[0]["message"]


def test_df502_gap(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = run_json(dflash, drafter(tmp_path, tensors=small_shapes(layers=[0, 1, 2, 4, 5])))
    (f,) = only(findings, "DF502")
    assert "0, 1, 2, 4, 5" in f["message"]


# --- DF503: layer shapes --------------------------------------------------------------------------------


def test_df503_k_proj_with_one_kv_head(dflash: Callable[..., Result], tmp_path: Path) -> None:
    tensors = small_shapes()
    for i in range(LAYERS):
        tensors[f"layers.{i}.self_attn.k_proj.weight"] = (1 * HEAD_DIM, HIDDEN)
    _, findings = run_json(dflash, drafter(tmp_path, tensors=tensors))
    assert pairs(findings) == [("DF503", "/num_key_value_heads")]
    (f,) = only(findings, "DF503")
    assert f["severity"] == "error"
    assert "layers.0.self_attn.k_proj.weight" in f["message"]
    assert "[16, 64]" in f["message"] and "[32, 64]" in f["message"]


def test_df503_kv_heads_both_projections(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = run_json(dflash, drafter(tmp_path, tensors=small_shapes(kv=1)))
    assert pairs(findings) == [("DF503", "/num_key_value_heads")] * 2
    assert {"k_proj" in f["message"] or "v_proj" in f["message"] for f in findings} == {True}


def test_df503_head_dim(dflash: Callable[..., Result], tmp_path: Path) -> None:
    # Config says 8 heads × 8 = 64, the checkpoint has 4 heads × 16 = 64: projections agree, only the
    # q/k norms (one weight per head_dim) show the difference.
    cfg = small_config(num_attention_heads=8, num_key_value_heads=4, head_dim=8)
    _, findings = run_json(dflash, drafter(tmp_path, cfg, small_shapes()))
    assert pairs(findings) == [("DF503", "/head_dim")] * 2
    assert {m["message"].split(" is ")[0] for m in findings} == {
        "layers.0.self_attn.q_norm.weight",
        "layers.0.self_attn.k_norm.weight",
    }


def test_df503_head_dim_default_like_mistake(dflash: Callable[..., Result], tmp_path: Path) -> None:
    # head_dim 128 written where the checkpoint has 16: every attention tensor disagrees.
    _, findings = run_json(dflash, drafter(tmp_path, small_config(head_dim=128), small_shapes()))
    got = pairs(findings)
    assert ("DF503", "/head_dim") in got
    assert set(got) == {("DF503", "/head_dim"), ("DF503", "/num_attention_heads"), ("DF503", "/num_key_value_heads")}
    assert len(got) == 6  # q, k, v, o, q_norm, k_norm


def test_df503_intermediate_size(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = run_json(dflash, drafter(tmp_path, small_config(intermediate_size=256), small_shapes()))
    assert pairs(findings) == [("DF503", "/intermediate_size")] * 3
    assert {f["message"].split(" is ")[0].rsplit(".", 2)[-2] for f in findings} == {"gate_proj", "up_proj", "down_proj"}


def test_df503_kv_missing_from_config_still_checks_k_and_v(dflash: Callable[..., Result], tmp_path: Path) -> None:
    # 1 KV head in the checkpoint fits neither kv = heads (4) nor Qwen3Config's default (32). Which key the
    # finding points at is left open here (see the Qwen3Config-defaults test below).
    cfg = small_config()
    del cfg["num_key_value_heads"]
    _, findings = run_json(dflash, drafter(tmp_path, cfg, small_shapes(kv=1)))
    shape_findings = only(findings, "DF503")
    assert sorted(f["message"].split(" is ")[0] for f in shape_findings) == [
        "layers.0.self_attn.k_proj.weight",
        "layers.0.self_attn.v_proj.weight",
    ]


def test_df503_missing_head_dim_does_not_hide_mlp_mismatch(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = small_config(intermediate_size=256)
    del cfg["head_dim"]
    _, findings = run_json(dflash, drafter(tmp_path, cfg, small_shapes()))
    assert pairs(findings).count(("DF503", "/intermediate_size")) == 3


@pytest.mark.parametrize(
    ("missing", "ckpt", "pointer"),
    [
        pytest.param("head_dim", {}, "/head_dim", id="head_dim-default-128"),
        pytest.param("num_key_value_heads", {"kv": HEADS}, "/num_key_value_heads", id="kv-default-32"),
    ],
)
def test_df503_absent_field_checked_at_qwen3config_default(
    dflash: Callable[..., Result], tmp_path: Path, missing: str, ckpt: dict[str, int], pointer: str
) -> None:
    cfg = small_config()
    del cfg[missing]
    _, findings = run_json(dflash, drafter(tmp_path, cfg, small_shapes(kv=ckpt.get("kv", KV))))
    assert ("DF010", f"/{missing}") in pairs(findings, "DF0")  # reported as missing today
    assert ("DF503", pointer) in pairs(findings)


def test_several_defects_at_once(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = run_json(dflash, drafter(tmp_path, tensors=small_shapes(taps=8, layers=6, inter=96)))
    got = pairs(findings)
    assert ("DF501", "/dflash_config/target_layer_ids") in got
    assert ("DF502", "/num_hidden_layers") in got
    assert got.count(("DF503", "/intermediate_size")) == 3


# --- sharded checkpoints --------------------------------------------------------------------------------


def sharded(tmp_path: Path, tensors: dict[str, tuple[int, ...]], cfg: dict[str, Any] | None = None) -> Path:
    directory = write_config(tmp_path / "sharded", cfg if cfg is not None else small_config())
    names = sorted(tensors)
    first = {n: tensors[n] for n in names if not n.startswith(("layers.3.", "layers.4.", "layers.5.", "fc."))}
    second = {n: tensors[n] for n in names if n not in first}
    files = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    save(directory / files[0], first)
    save(directory / files[1], second)
    weight_map = {n: files[0] for n in first} | {n: files[1] for n in second}
    index = {"metadata": {"total_size": 0}, "weight_map": dict(sorted(weight_map.items()))}
    (directory / "model.safetensors.index.json").write_text(json.dumps(index, indent=2), encoding="utf-8")
    return directory


def test_sharded_consistent(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = run_json(dflash, sharded(tmp_path, small_shapes()))
    assert findings == []


def test_sharded_defects_across_shards(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = run_json(dflash, sharded(tmp_path, small_shapes(taps=8, layers=6)))
    assert pairs(findings) == [("DF501", "/dflash_config/target_layer_ids"), ("DF502", "/num_hidden_layers")]
    (fc,) = only(findings, "DF501")
    assert "model-00002-of-00002.safetensors" in fc["message"]


def test_sharded_index_names_a_missing_shard(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = sharded(tmp_path, small_shapes())
    (directory / "model-00002-of-00002.safetensors").unlink()
    _, findings = run_json(dflash, directory)
    assert pairs(findings) == [("DF500", "")]
    assert "model-00002-of-00002.safetensors" in findings[0]["message"]


def test_stray_file_beside_an_index_is_ignored(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = sharded(tmp_path, small_shapes())
    (directory / "leftover.safetensors").write_bytes(b"xyz")  # not in the index, never loaded by engines
    _, findings = run_json(dflash, directory)
    assert only(findings, "DF5") == []


# --- DF500: unreadable checkpoints ----------------------------------------------------------------------


def test_df500_three_byte_file_keeps_config_findings(dflash: Callable[..., Result], tmp_path: Path) -> None:
    # The config itself is broken too (6 layer_types for 5 layers): that must still be reported.
    cfg = small_config(layer_types=["full_attention"] * 6)
    directory = write_config(tmp_path / "d", cfg)
    (directory / "model.safetensors").write_bytes(b"\x01\x02\x03")
    result, findings = run_json(dflash, directory)
    rules = {f["rule"] for f in findings}
    assert "DF500" in rules and "DF201" in rules
    assert only(findings, "DF50") == [f for f in findings if f["rule"] == "DF500"]  # no DF501-503 on no data
    (df500,) = only(findings, "DF500")
    assert df500["severity"] == "error" and df500["pointer"] == ""
    assert "model.safetensors" in df500["message"] and "too short" in df500["message"]
    assert result.err == ""


def test_df500_exit_code_is_1(dflash: Callable[..., Result], tmp_path: Path) -> None:
    # Regression: at HEAD f6e764b cli.run dropped main(standalone_mode=False)'s return value -> exit 0.
    directory = write_config(tmp_path / "d", small_config())
    (directory / "model.safetensors").write_bytes(b"\x01\x02\x03")
    result, findings = run_json(dflash, directory)
    assert [f["rule"] for f in findings] == ["DF500"]
    assert result.code == 1


def test_weight_error_exit_code_is_1(dflash: Callable[..., Result], tmp_path: Path) -> None:
    result, findings = run_json(dflash, drafter(tmp_path, tensors=small_shapes(taps=8)))
    assert only(findings, "DF501")
    assert result.code == 1


def test_df500_fifo_does_not_block(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = write_config(tmp_path / "d", small_config())
    os.mkfifo(directory / "model.safetensors")
    _, findings = run_json(dflash, directory)
    (f,) = only(findings, "DF500")
    assert "not a regular file" in f["message"]


def test_df500_header_length_lies(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = write_config(tmp_path / "d", small_config())
    (directory / "model.safetensors").write_bytes(struct.pack("<Q", 10_000) + b"{}")
    _, findings = run_json(dflash, directory)
    (f,) = only(findings, "DF500")
    assert "past the end" in f["message"]


def test_skipped_config_never_opens_its_shards(dflash: Callable[..., Result], tmp_path: Path) -> None:
    """A target-model config in the tree is skipped, and its (here corrupt) shards are not read."""
    target = tmp_path / "tree" / "target"
    target.mkdir(parents=True)
    (target / "config.json").write_text(json.dumps({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}))
    (target / "model.safetensors").write_bytes(b"\x01\x02\x03")
    drafter(tmp_path / "tree", name="drafter", tensors=small_shapes(taps=8))
    result = dflash("check", tmp_path / "tree", "--format", "json")
    doc = result.json()
    by_kind = {f["kind"]: f for f in doc["files"]}
    assert by_kind["skipped"]["findings"] == []
    assert [x["rule"] for x in by_kind["dflash"]["findings"]] == ["DF501"]


def test_each_drafter_in_a_tree_gets_its_own_checkpoint(dflash: Callable[..., Result], tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    drafter(tree, name="a-good")
    drafter(tree, name="b-bad", tensors=small_shapes(layers=6))
    doc = dflash("check", tree, "--format", "json").json()
    found = {Path(f["path"]).parent.name: [x["rule"] for x in f["findings"]] for f in doc["files"]}
    assert found == {"a-good": [], "b-bad": ["DF502"]}


# --- a huge sparse shard --------------------------------------------------------------------------------


def write_sparse_checkpoint(path: Path, tensors: dict[str, tuple[int, ...]], size: int = 8 * 1024**3) -> Path:
    """A valid BF16 safetensors header for `tensors`, data offsets laid out back to back, then the file
    extended (sparse, no disk used) to `size` bytes."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name in sorted(tensors):
        nbytes = int(np.prod(tensors[name])) * 2
        header[name] = {"dtype": "BF16", "shape": list(tensors[name]), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    body = json.dumps(header, separators=(",", ":")).encode()
    body += b" " * (-len(body) % 8)  # safetensors pads the header to 8 bytes
    assert 8 + len(body) + offset <= size
    path.write_bytes(struct.pack("<Q", len(body)) + body)
    os.truncate(path, size)
    return path


def b16_shapes(*, taps: int = 5, kv: int = 8) -> dict[str, tuple[int, ...]]:
    """The published Qwen3-4B-DFlash-b16 shapes (2560 wide, 32/8 heads of 128, MLP 9728, 5 layers)."""
    return small_shapes(hidden=2560, heads=32, kv=kv, head_dim=128, inter=9728, layers=5, taps=taps)


def test_huge_sparse_shard_with_published_config(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = write_config(tmp_path / "b16", published_b16())
    shard = write_sparse_checkpoint(directory / "model.safetensors", b16_shapes())
    assert shard.stat().st_size == 8 * 1024**3
    _, findings = run_json(dflash, directory)
    assert only(findings, "DF5") == []


def test_huge_sparse_shard_defects_still_found(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = write_config(tmp_path / "b16", published_b16())
    write_sparse_checkpoint(directory / "model.safetensors", b16_shapes(taps=8, kv=4))
    _, findings = run_json(dflash, directory)
    assert pairs(findings) == [("DF501", "/dflash_config/target_layer_ids")] + [("DF503", "/num_key_value_heads")] * 2
    (fc,) = only(findings, "DF501")
    assert "20480" in fc["message"] and "5 taps × 2560 = 12800" in fc["message"]


def test_huge_sparse_sharded_checkpoint(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = write_config(tmp_path / "b16", published_b16())
    tensors = b16_shapes()
    layers = {n: s for n, s in tensors.items() if n.startswith("layers.")}
    rest = {n: s for n, s in tensors.items() if n not in layers}
    write_sparse_checkpoint(directory / "model-00001-of-00002.safetensors", layers)
    write_sparse_checkpoint(directory / "model-00002-of-00002.safetensors", rest, size=4 * 1024**3)
    weight_map = {n: "model-00001-of-00002.safetensors" for n in layers} | {
        n: "model-00002-of-00002.safetensors" for n in rest
    }
    (directory / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    _, findings = run_json(dflash, directory)
    assert only(findings, "DF5") == []


# --- text output -----------------------------------------------------------------------------------------


def test_text_output_names_rule_and_pointer(dflash: Callable[..., Result], tmp_path: Path) -> None:
    result = dflash("check", drafter(tmp_path, tensors=small_shapes(taps=8)))
    assert "error DF501 fc-width /dflash_config/target_layer_ids" in result.out
    assert "1 error" in result.out


# --- DF504/DF505: a git clone without `git lfs pull` ------------------------------------------------------


def lfs_pointer(size: int) -> bytes:
    """The Git LFS pointer file a clone without LFS has in place of a file of `size` bytes."""
    oid = hashlib.sha256(b"%d" % size).hexdigest()
    return b"version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n" % (oid.encode(), size)


def clone(tmp_path: Path, cfg: dict[str, Any] | None = None, subdir: str = "") -> Path:
    """A work tree (its .git is all git-lfs needs to match paths) with the drafter config at `subdir`."""
    top = tmp_path / "clone"
    (top / ".git").mkdir(parents=True)
    return write_config(top / subdir if subdir else top, cfg if cfg is not None else small_config())


def real_size(tensors: dict[str, tuple[int, ...]], tmp_path: Path) -> int:
    """The size of the F16 safetensors file of `tensors` (what the pointer of the real file records)."""
    return save(tmp_path / "sizing" / "model.safetensors", tensors).stat().st_size


# The small drafter's parameters as DF505 counts them: fc 5×64×64; per layer q, o 4×16×64 and k, v 2×16×64,
# up and down 64×128 each, two norms of 64; the final norm.
SMALL_COUNTED = 5 * 64 * 64 + 5 * (2 * 4 * 16 * 64 + 2 * 2 * 16 * 64 + 2 * 64 * 128 + 2 * 64) + 64
SMALL_BOUND = SMALL_COUNTED // 2  # 4 bits each


def test_lfs_pointer_is_one_info_not_df500(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = clone(tmp_path)
    size = real_size(small_shapes(), tmp_path)
    (directory / "model.safetensors").write_bytes(lfs_pointer(size))
    result, findings = run_json(dflash, directory)
    assert [(f["rule"], f["severity"], f["pointer"]) for f in findings] == [("DF504", "info", "")]
    (f,) = findings
    assert f["name"] == "weights-lfs-pointer"
    assert f["message"] == (
        f"model.safetensors is a Git LFS pointer file, not the weights ({size / 1000:.1f} kB on the LFS server), "
        'so it was not read; to check it, run `git lfs pull --include "*.safetensors"` in the clone'
    )
    assert result.code == 0
    assert dflash("check", directory, "--strict").code == 0  # information never fails a gate


def test_pull_names_the_subdir_of_a_bigger_repo(dflash: Callable[..., Result], tmp_path: Path) -> None:
    # MiMo's layout: the drafter in dflash/ of the target's repo. A bare *.safetensors would pull the target.
    directory = clone(tmp_path, subdir="dflash")
    (directory / "model.safetensors").write_bytes(lfs_pointer(400_000))
    (directory.parent / "model-00001-of-00099.safetensors").write_bytes(lfs_pointer(10**10))  # the target's
    _, findings = run_json(dflash, directory)
    (f,) = only(findings, "DF5")
    assert 'run `git lfs pull --include "dflash/*.safetensors"` in the clone' in f["message"]


def test_not_in_a_work_tree(dflash: Callable[..., Result], tmp_path: Path) -> None:
    if any((p / ".git").exists() for p in (tmp_path.resolve(), *tmp_path.resolve().parents)):
        pytest.skip("the test's tmp dir is inside a git work tree")
    directory = write_config(tmp_path / "copied", small_config())
    (directory / "model.safetensors").write_bytes(lfs_pointer(400_000))
    _, findings = run_json(dflash, directory)
    (f,) = only(findings, "DF5")
    assert "in no git work tree: run `git lfs pull` in the clone they came from" in f["message"]


def test_path_git_lfs_cannot_match_literally(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = clone(tmp_path, subdir="a,b[1]")
    (directory / "model.safetensors").write_bytes(lfs_pointer(400_000))
    _, findings = run_json(dflash, directory)
    (f,) = only(findings, "DF5")
    assert f["message"].endswith("run `git lfs pull` in the clone")


def lfs_sharded(tmp_path: Path, real: tuple[str, ...] = (), tensors: dict[str, tuple[int, ...]] | None = None) -> Path:
    """sharded() in a clone, then every shard not in `real` replaced by its pointer file."""
    directory = sharded(tmp_path / "clone", tensors if tensors is not None else small_shapes())
    (tmp_path / "clone" / ".git").mkdir()
    for shard in sorted(directory.glob("*.safetensors")):
        if shard.name not in real:
            shard.write_bytes(lfs_pointer(shard.stat().st_size))
    return directory


def test_sharded_all_pointers_index_real(dflash: Callable[..., Result], tmp_path: Path) -> None:
    result, findings = run_json(dflash, lfs_sharded(tmp_path))
    assert [f["rule"] for f in findings] == ["DF504"]
    message = findings[0]["message"]
    assert message.startswith(
        "2 weight files are Git LFS pointer files, not the weights "
        "(model-00001-of-00002.safetensors, model-00002-of-00002.safetensors; "
    )
    assert 'run `git lfs pull --include "sharded/*.safetensors"` in the clone' in message
    assert result.code == 0


def test_real_shard_checked_pointer_shard_reported(dflash: Callable[..., Result], tmp_path: Path) -> None:
    # Shard 2 (fc and layers 3..5) is real and has fc for 8 taps; shard 1 (layers 0..2) is a pointer.
    directory = lfs_sharded(tmp_path, real=("model-00002-of-00002.safetensors",), tensors=small_shapes(taps=8))
    result, findings = run_json(dflash, directory)
    # DF501 from the real shard; no DF502 for layers 0..2 being absent (they are in the pointer); no DF505.
    assert pairs(findings) == [("DF501", "/dflash_config/target_layer_ids"), ("DF504", "")]
    (info,) = only(findings, "DF504")
    assert info["message"].startswith("model-00001-of-00002.safetensors is a Git LFS pointer file")
    assert "so it was not read (the other weight file was)" in info["message"]
    assert 'git lfs pull --include "sharded/model-00001-of-00002.safetensors"' in info["message"]
    assert result.code == 1


def test_real_shard_with_a_layer_past_the_depth(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = lfs_sharded(tmp_path, real=("model-00002-of-00002.safetensors",), tensors=small_shapes(layers=6))
    _, findings = run_json(dflash, directory)
    (f,) = only(findings, "DF502")
    assert f["message"] == (
        "num_hidden_layers is 5 but the shards that were read have layers 5..5 (the LFS pointer shards were not read)"
    )


def test_index_a_pointer_too(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = lfs_sharded(tmp_path)
    index = directory / "model.safetensors.index.json"
    index.write_bytes(lfs_pointer(index.stat().st_size))
    result, findings = run_json(dflash, directory)
    assert [f["rule"] for f in findings] == ["DF504"]
    message = findings[0]["message"]
    assert message.startswith("model.safetensors.index.json is a Git LFS pointer file")
    assert '--include "sharded/model.safetensors.index.json,sharded/*.safetensors"' in message
    assert result.code == 0


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(lfs_pointer(1).replace(b"\n", b"\r\n"), id="crlf"),
        pytest.param(lfs_pointer(1).replace(b"size 1", b"size one"), id="size-not-decimal"),
        pytest.param(lfs_pointer(1)[:-1], id="truncated"),
    ],
)
def test_malformed_pointer_stays_df500(dflash: Callable[..., Result], tmp_path: Path, data: bytes) -> None:
    directory = clone(tmp_path)
    (directory / "model.safetensors").write_bytes(data)
    result, findings = run_json(dflash, directory)
    assert [(f["rule"], f["severity"]) for f in findings] == [("DF500", "error")]
    assert "starts like a Git LFS pointer but is not a valid one" in findings[0]["message"]
    assert "header length" not in findings[0]["message"]
    assert result.code == 1


def test_df505_pointer_far_too_small(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = clone(tmp_path)
    (directory / "model.safetensors").write_bytes(lfs_pointer(1000))
    result, findings = run_json(dflash, directory)
    assert pairs(findings) == [("DF504", ""), ("DF505", "")]
    (f,) = only(findings, "DF505")
    assert f["severity"] == "error" and f["name"] == "weights-too-small"
    assert f["message"].startswith(
        f"the LFS pointer records 1000 bytes of weights (1.0 kB), but the config's shapes need at least "
        f"{SMALL_COUNTED} parameters (fc 20480, 5 × attention 12288, 5 × (MLP 16384 + norms 128), norm 64): "
        f"{SMALL_BOUND} bytes"
    )
    assert f["message"].endswith("even at 4 bits each")
    assert result.code == 1


def test_df505_bound_is_exact(dflash: Callable[..., Result], tmp_path: Path) -> None:
    assert SMALL_BOUND < real_size(small_shapes(), tmp_path) // 4  # the real F16 file is over 4 times larger
    at = clone(tmp_path / "at")
    (at / "model.safetensors").write_bytes(lfs_pointer(SMALL_BOUND))
    assert only(run_json(dflash, at)[1], "DF505") == []
    under = clone(tmp_path / "under")
    (under / "model.safetensors").write_bytes(lfs_pointer(SMALL_BOUND - 1))
    assert len(only(run_json(dflash, under)[1], "DF505")) == 1


def test_df505_sums_the_shards(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = clone(tmp_path)
    (directory / "model-00001-of-00002.safetensors").write_bytes(lfs_pointer(SMALL_BOUND // 2))
    (directory / "model-00002-of-00002.safetensors").write_bytes(lfs_pointer(SMALL_BOUND - SMALL_BOUND // 2))
    assert only(run_json(dflash, directory)[1], "DF505") == []
    (directory / "model-00002-of-00002.safetensors").write_bytes(lfs_pointer(10))
    (f,) = only(run_json(dflash, directory)[1], "DF505")
    assert f["message"].startswith("the 2 LFS pointers record")


def test_df505_quantized_config_allows_one_bit(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = small_config(quantization_config={"quant_method": "aqlm", "bits": 2})
    directory = clone(tmp_path, cfg)
    (directory / "model.safetensors").write_bytes(lfs_pointer(SMALL_COUNTED // 8))
    assert only(run_json(dflash, directory)[1], "DF505") == []
    (directory / "model.safetensors").write_bytes(lfs_pointer(SMALL_COUNTED // 8 - 1))
    (f,) = only(run_json(dflash, directory)[1], "DF505")
    assert f["message"].endswith("even at 1 bit each")


def test_df505_not_with_a_real_shard(dflash: Callable[..., Result], tmp_path: Path) -> None:
    # The real shard's tensors are checked directly; the pointer's size alone proves nothing.
    directory = lfs_sharded(tmp_path, real=("model-00002-of-00002.safetensors",))
    (directory / "model-00001-of-00002.safetensors").write_bytes(lfs_pointer(10))
    assert only(run_json(dflash, directory)[1], "DF505") == []


def test_df505_counts_only_what_the_file_states(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = small_config()
    for key in ("head_dim", "intermediate_size", "num_hidden_layers"):
        del cfg[key]
    directory = clone(tmp_path, cfg)
    (directory / "model.safetensors").write_bytes(lfs_pointer(10))
    (f,) = only(run_json(dflash, directory)[1], "DF505")
    assert "at least 20544 parameters (fc 20480, 0 × attention 0, 0 × (MLP 0 + norms 128), norm 64)" in f["message"]


UPSTREAMS = [
    "z-lab__Qwen3-4B-DFlash-b16",
    "z-lab__Qwen3.5-4B-DFlash",
    "z-lab__Qwen3.6-27B-DFlash",
    "z-lab__Qwen3.8-27B-DFlash2",
    "z-lab__Muse-Glimmer-30B-DFlash2",
    "XiaomiMiMo__MiMo-V2.5-Pro-FP4-DFlash/dflash",
]


@pytest.mark.parametrize("name", UPSTREAMS)
def test_df505_never_trips_on_a_published_drafter(dflash: Callable[..., Result], tmp_path: Path, name: str) -> None:
    """Each published config with a pointer the size of its real shapes packed at 4 bits (the BF16 file
    is 4 times larger): no DF505. The same config with a 100 MB pointer: DF505."""
    cfg = json.loads((FIXTURES / "upstream" / name / "config.json").read_text(encoding="utf-8"))
    shapes = small_shapes(
        hidden=cfg["hidden_size"],
        heads=cfg["num_attention_heads"],
        kv=cfg["num_key_value_heads"],
        head_dim=cfg["head_dim"],
        inter=cfg["intermediate_size"],
        layers=cfg["num_hidden_layers"],
        taps=len(cfg["dflash_config"]["target_layer_ids"]),
    )
    parameters = sum(int(np.prod(s)) for s in shapes.values())
    directory = clone(tmp_path, cfg)
    (directory / "model.safetensors").write_bytes(lfs_pointer(parameters // 2))
    _, findings = run_json(dflash, directory)
    assert [f["rule"] for f in only(findings, "DF5")] == ["DF504"]
    (directory / "model.safetensors").write_bytes(lfs_pointer(10**8))
    _, findings = run_json(dflash, directory)
    assert [f["rule"] for f in only(findings, "DF5")] == ["DF504", "DF505"]


def test_lfs_text_output_says_it_once(dflash: Callable[..., Result], tmp_path: Path) -> None:
    directory = lfs_sharded(tmp_path)
    result = dflash("check", directory)
    assert result.out.count("DF504") == 1
    assert "info DF504 weights-lfs-pointer" in result.out
    assert "error" not in result.out.replace("0 errors", "")
    assert result.code == 0

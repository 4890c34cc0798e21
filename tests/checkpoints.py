"""Real safetensors checkpoints shaped like z-lab's DFlash drafters (single, sharded, sparse, or a clone's Git
LFS pointer in their place), and a small drafter config that matches `small_shapes()`, for the weights tests
and the rule-case table."""

from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path
from typing import Any

import numpy as np
from helpers import FIXTURES
from safetensors.numpy import save_file


def drafter_shapes(
    *,
    hidden: int,
    heads: int,
    kv: int,
    head_dim: int,
    inter: int,
    layers: int | list[int],
    taps: int,
    fc_in: int | None = None,
    prefix: str = "",
) -> dict[str, tuple[int, ...]]:
    """Tensor names and shapes of a z-lab DFlash checkpoint (no embed_tokens, no lm_head)."""
    out: dict[str, tuple[int, ...]] = {
        "fc.weight": (hidden, fc_in if fc_in is not None else taps * hidden),
        "hidden_norm.weight": (hidden,),
        "norm.weight": (hidden,),
    }
    for i in range(layers) if isinstance(layers, int) else layers:
        p = f"layers.{i}."
        out |= {
            p + "self_attn.q_proj.weight": (heads * head_dim, hidden),
            p + "self_attn.k_proj.weight": (kv * head_dim, hidden),
            p + "self_attn.v_proj.weight": (kv * head_dim, hidden),
            p + "self_attn.o_proj.weight": (hidden, heads * head_dim),
            p + "self_attn.q_norm.weight": (head_dim,),
            p + "self_attn.k_norm.weight": (head_dim,),
            p + "mlp.gate_proj.weight": (inter, hidden),
            p + "mlp.up_proj.weight": (inter, hidden),
            p + "mlp.down_proj.weight": (hidden, inter),
            p + "input_layernorm.weight": (hidden,),
            p + "post_attention_layernorm.weight": (hidden,),
        }
    return {prefix + k: v for k, v in out.items()}


def save(path: Path, tensors: dict[str, tuple[int, ...]], dtype: Any = np.float16) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file({k: np.zeros(v, dtype=dtype) for k, v in tensors.items()}, str(path), metadata={"format": "pt"})
    return path


def save_sparse(path: Path, tensors: dict[str, tuple[int, ...]], size: int) -> Path:
    """A valid BF16 safetensors header for `tensors`, data offsets laid out back to back, then the file
    extended (sparse, no disk used) to `size` bytes: a published drafter's size without its bytes."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name in sorted(tensors):
        nbytes = int(np.prod(tensors[name])) * 2
        header[name] = {"dtype": "BF16", "shape": list(tensors[name]), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    body = json.dumps(header, separators=(",", ":")).encode()
    body += b" " * (-len(body) % 8)  # safetensors pads the header to 8 bytes
    assert 8 + len(body) + offset <= size
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<Q", len(body)) + body)
    os.truncate(path, size)
    return path


SHARDS = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
# What goes into the second shard: fc and the deeper layers, so a defect of either shows up across shards.
SECOND_SHARD = ("layers.3.", "layers.4.", "layers.5.", "fc.")


def save_sharded(
    directory: Path, tensors: dict[str, tuple[int, ...]], dtype: Any = np.float16, sparse: int | None = None
) -> Path:
    """`tensors` in two shards (SHARDS) and the model.safetensors.index.json naming each tensor's shard."""
    second = {n: s for n, s in tensors.items() if n.startswith(SECOND_SHARD)}
    first = {n: s for n, s in tensors.items() if n not in second}
    for name, part in zip(SHARDS, (first, second), strict=True):
        if sparse is None:
            save(directory / name, part, dtype)
        else:
            save_sparse(directory / name, part, sparse)
    weight_map = {n: SHARDS[0] for n in first} | {n: SHARDS[1] for n in second}
    index = {"metadata": {"total_size": 0}, "weight_map": dict(sorted(weight_map.items()))}
    (directory / "model.safetensors.index.json").write_text(json.dumps(index, indent=2), encoding="utf-8")
    return directory


def lfs_pointer(size: int) -> bytes:
    """The Git LFS pointer file a clone without `git lfs pull` has in place of a file of `size` bytes."""
    oid = hashlib.sha256(b"%d" % size).hexdigest()
    return b"version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n" % (oid.encode(), size)


# A small drafter, shaped like z-lab's: 5 layers, 5 taps, GQA 4/2, head_dim 16.
HIDDEN, HEADS, KV, HEAD_DIM, INTER, LAYERS = 64, 4, 2, 16, 128, 5
TAPS = [1, 9, 17, 25, 33]


def published_b16() -> dict[str, Any]:
    data = json.loads(
        (FIXTURES / "upstream" / "z-lab__Qwen3-4B-DFlash-b16" / "config.json").read_text(encoding="utf-8")
    )
    assert isinstance(data, dict)
    return data


def small_config(**changes: Any) -> dict[str, Any]:
    """The published b16 config with the sizes shrunk to match `shapes()`; everything else as published."""
    cfg = published_b16()
    cfg.update(
        hidden_size=HIDDEN,
        num_attention_heads=HEADS,
        num_key_value_heads=KV,
        head_dim=HEAD_DIM,
        intermediate_size=INTER,
        num_hidden_layers=LAYERS,
        layer_types=["full_attention"] * LAYERS,
        max_window_layers=LAYERS,
    )
    cfg["dflash_config"] = dict(cfg["dflash_config"], target_layer_ids=list(TAPS))
    cfg["block_size"] = 16
    cfg["dflash_config"]["block_size"] = 16  # silence DF121 (info) so the clean case has no finding at all
    cfg.update(changes)
    return cfg


def small_shapes(
    *,
    hidden: int = HIDDEN,
    heads: int = HEADS,
    kv: int = KV,
    head_dim: int = HEAD_DIM,
    inter: int = INTER,
    layers: int | list[int] = LAYERS,
    taps: int = len(TAPS),
    fc_in: int | None = None,
    prefix: str = "",
) -> dict[str, tuple[int, ...]]:
    return drafter_shapes(
        hidden=hidden,
        heads=heads,
        kv=kv,
        head_dim=head_dim,
        inter=inter,
        layers=layers,
        taps=taps,
        fc_in=fc_in,
        prefix=prefix,
    )


def drafter_dir(
    tmp_path: Path, config: bytes | None = None, shapes: dict[str, tuple[int, ...]] | None = None, weights: bool = True
) -> Path:
    """A small drafter model dir, tmp_path/drafter: config.json (the small config's, or `config`) and (unless
    `weights` is false) one safetensors shard, of the small config's shapes or `shapes`."""
    folder = tmp_path / "drafter"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_bytes(config if config is not None else json.dumps(small_config()).encode())
    if weights:
        save(folder / "model.safetensors", shapes if shapes is not None else small_shapes())
    return folder

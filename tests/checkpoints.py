"""Real safetensors checkpoints shaped like z-lab's DFlash drafters, for the weights tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
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

"""What the launch parser's tests (test_launch.py, test_launch_shapes.py) share: the speculative configs of
the launch lines they parse, and the fields of a parsed Launch each line is held to (_fields, with _vllm and
_sglang building the expected fields of a vLLM or an SGLang DFlash launch)."""

from __future__ import annotations

from typing import Any

from dflash_cfg.model import Launch

ISSUE = '{"method": "dflash", "model": "z-lab/Qwen3.6-27B-DFlash", "num_speculative_tokens": 15}'
SPEC_8B = '{"method": "dflash", "model": "z-lab/Qwen3-8B-DFlash-b16", "num_speculative_tokens": 15}'
SGLANG_8B = [
    "--speculative-algorithm", "DFLASH",
    "--speculative-draft-model-path", "z-lab/Qwen3-8B-DFlash-b16",
    "--speculative-num-draft-tokens", "16",
]  # fmt: skip


def _fields(launch: Launch) -> dict[str, Any]:
    return {
        "engine": launch.engine,
        "target": launch.target,
        "target_revision": launch.target_revision,
        "drafter": launch.drafter,
        "drafter_revision": launch.drafter_revision,
        "method": launch.method,
        "num_speculative_tokens": launch.num_speculative_tokens,
        "num_draft_tokens": launch.num_draft_tokens,
        "tensor_parallel_size": launch.tensor_parallel_size,
    }


def _vllm(
    target: str = "Qwen/Qwen3-8B", drafter: str | None = "z-lab/Qwen3-8B-DFlash-b16", **kw: Any
) -> dict[str, Any]:
    method = "dflash" if drafter is not None else None
    tokens = 15 if drafter is not None else None
    fields = dict(
        engine="vllm",
        target=target,
        target_revision=None,
        drafter=drafter,
        drafter_revision=None,
        method=method,
        num_speculative_tokens=tokens,
        num_draft_tokens=None,
        tensor_parallel_size=1,
    )
    fields.update(kw)
    return fields


def _sglang(
    target: str = "Qwen/Qwen3-8B", drafter: str | None = "z-lab/Qwen3-8B-DFlash-b16", **kw: Any
) -> dict[str, Any]:
    fields = dict(
        engine="sglang",
        target=target,
        target_revision=None,
        drafter=drafter,
        drafter_revision=None,
        method="DFLASH" if drafter is not None else None,
        num_speculative_tokens=None,
        num_draft_tokens=16 if drafter is not None else None,
        tensor_parallel_size=1,
    )
    fields.update(kw)
    return fields

"""The engine releases a finding holds for (`Finding.engines`), as the text formats say them."""

from __future__ import annotations

from dflash_cfg.model import Finding, Requirement


def label(engines: tuple[Requirement, ...]) -> str:
    """(vllm>=0.34.0,) -> "vLLM 0.34.0 and later"; (vllm<0.34.0, sglang) -> "vLLM before 0.34.0, SGLang"."""
    return ", ".join(r.said for r in engines)


def message(x: Finding) -> str:
    """The finding's message, with the releases it holds for when it does not hold for every engine."""
    return f"{x.message} [{label(x.engines)}]" if x.engines else x.message

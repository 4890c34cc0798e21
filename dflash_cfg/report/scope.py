"""The engine releases a finding holds for (`Finding.engines`), as the text formats say them."""

from __future__ import annotations

from dflash_cfg.model import Finding, display, requirement

_SAID = {">=": "{} {} and later", "<": "{} before {}", "==": "{} {}"}


def label(engines: tuple[str, ...]) -> str:
    """("vllm>=0.34.0",) -> "vLLM 0.34.0 and later"; ("vllm<0.34.0", "sglang") -> "vLLM before 0.34.0, SGLang"."""
    said = []
    for text in engines:
        found = requirement(text)
        if found is None:
            said.append(text)
            continue
        name, op, version = found
        shown = display(name)
        said.append(_SAID[op].format(shown, version) if op else shown)
    return ", ".join(said)


def message(x: Finding) -> str:
    """The finding's message, with the releases it holds for when it does not hold for every engine."""
    return f"{x.message} [{label(x.engines)}]" if x.engines else x.message

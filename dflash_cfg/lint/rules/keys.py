"""DF011-DF012: keys no engine reads, from the keys each engine release was recorded reading (lint.key_reads)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import cast

from dflash_cfg.jsondoc.pointer import last, parent, pointer
from dflash_cfg.lint.engines import sglang, vllm
from dflash_cfg.lint.key_reads import Reader, closest, readers, recorded
from dflash_cfg.lint.rules.base import ENGINE_FORMAT, Context, rule, show
from dflash_cfg.model import NAMES, Engine, Problem, Requirement, Severity

# The engines that serve a z-lab-format drafter: a key both read concerns whatever serves the file.
_SERVING = ("vllm", "sglang")


def _releases(engines: Sequence[Reader]) -> str:
    """ "vLLM 0.33.0 and 0.34.0, SGLang 0.5.23" for the readers given, engine by engine."""
    by: dict[str, list[str]] = {}
    for engine, release in engines:
        by.setdefault(engine, []).append(release)
    return ", ".join(f"{NAMES.get(cast(Engine, e), e)} {' and '.join(rs)}" for e, rs in by.items())


def show_key(name: str, limit: int = 80) -> str:
    """A key of the file as a message names it: a hostile key may be huge."""
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _dotted(pointer: str) -> str:
    """ "/dflash_config/layer_types" as messages name keys: "dflash_config.layer_types"."""
    return pointer.removeprefix("/").replace("/", ".")


def _keys(ctx: Context) -> Iterator[tuple[str, str]]:
    """The file's keys where the engines look for them, the top level and dflash_config: (pointer, as named)."""
    yield from ((pointer(k), k) for k in ctx.data)
    if isinstance(ctx.data.get("dflash_config"), dict):
        yield from ((pointer("dflash_config", k), f"dflash_config.{k}") for k in ctx.data["dflash_config"])


def _present(ctx: Context, where: str) -> bool:
    block = ctx.data if parent(where) == "" else ctx.data.get("dflash_config")
    return isinstance(block, dict) and last(where) in block


def _uses(ctx: Context, where: str) -> str:
    """What the engines take instead of a key the file lacks: the config class's value where it is known."""
    values = ctx.effective.values or {}
    if parent(where) == "" and last(where) in values:
        return f"{show(values[last(where)])} ({ctx.effective.through}'s)"
    return "their default"


@rule(
    "DF011",
    "key-not-read",
    Severity.INFO,
    kinds=ENGINE_FORMAT,
    reads=(vllm.CONFIG_JSON_KEYS, sglang.CONFIG_JSON_KEYS),
    severities=(Severity.WARNING,),
)
def key_not_read(ctx: Context) -> Iterator[Problem]:
    """A key of the top level or of ``dflash_config`` that no engine release reads.

    Which keys an engine reads is recorded by running its own config code on every fixture drafter (attribute and
    item reads on the config objects and dicts it is handed, and the keys the config class it loads the file
    through takes; ``dflash_cfg/lint/engine_keys.py``, made by ``./dev engines --keys`` and held to the installed
    engines by the engine suite). A key none of them reads is information: a training setting, a key of another
    framework, a leftover ("ignored by vLLM 0.33.0 and 0.34.0, SGLang 0.5.23"). A warning when its name is close to
    a key an engine reads that the file lacks: the same key at the other DFlash place (``layer_types`` inside
    ``dflash_config``, ``swa_window_size`` at the top level), another spelling convention (``slidingWindow``), or a
    typo of eight letters or more (``target_layers_ids``); the message names the key the engines read and what
    they use instead. The warning concerns the engines that read that key (``[SGLang]`` when only SGLang does): a
    gate fails on it where one of them serves the drafter. Keys of other objects (``rope_parameters``,
    ``quantization_config``) are not judged: an engine may read them by iterating, which is not recorded.

    Fail: ``"dflash_config": {"target_layers_ids": [1, 16, 31, 46, 61], ...}`` without ``target_layer_ids``
    Fail (info): ``"dflash_config": {"num_anchors": 512, ...}`` (a training setting)
    Pass: every key some engine reads
    """
    known = recorded(_SERVING)
    for where, name in _keys(ctx):
        if readers(where):
            continue
        meant = closest(where)
        if meant is not None and not _present(ctx, meant):
            who = [r for r in readers(meant) if r[0] in _SERVING]
            engines = sorted({e for e, _ in who})
            scope = () if set(engines) >= set(_SERVING) or not engines else tuple(Requirement(e) for e in engines)
            yield Problem(
                pointer=where,
                message=f"{show_key(name)} is read by no engine: {_releases(who)} read {_dotted(meant)}"
                f", which the file lacks, and use {_uses(ctx, meant)}",
                severity=Severity.WARNING,
                engines=scope,
            )
        elif meant is not None:
            yield Problem(
                pointer=where,
                message=f"{show_key(name)} is ignored by {_releases(known)}: they read "
                f"{_dotted(meant)}, which the file has too",
            )
        else:
            yield Problem(pointer=where, message=f"{show_key(name)} is ignored by {_releases(known)}")


RULES = (key_not_read,)

"""DF011-DF012: keys no engine reads, from the keys each engine release was recorded reading and the keys its source
reads (lint.key_reads)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import cast

from dflash_cfg.jsondoc.pointer import last, parent, pointer
from dflash_cfg.lint.engines import ENGINE_ORDER, sglang, vllm
from dflash_cfg.lint.key_reads import Reader, SourceRead, closest, readers, recorded, source_reads
from dflash_cfg.lint.rules.base import ENGINE_FORMAT, Context, rule, show
from dflash_cfg.model import NAMES, Engine, Problem, Requirement, Severity

# The engines that serve a z-lab-format drafter: a key both read concerns whatever serves the file.
_SERVING = ENGINE_ORDER


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


# How much of an engine's condition a message quotes: its innermost test, cut to this many characters.
_CONDITION = 60


def _where_read(pointer: str, engines: Sequence[str]) -> str | None:
    """ "by SGLang 0.5.23 in sglang/...:is_nemotron_35_draft_config when bool(...)": who reads `pointer` in the
    source, for the read that asks least of the file (unconditional first, then the fewest and shortest tests), and
    the other releases that read it elsewhere; None when the source of `engines` reads it nowhere."""
    found = [(r, read) for r, read in source_reads(pointer) if r[0] in engines]
    if not found:
        return None

    def asks(read: SourceRead) -> tuple[int, int, str]:
        cond = read[2]
        return (cond.count("; ") + 1 if cond else 0, len(cond), read[0])

    citation, _, cond = min((read for _, read in found), key=asks)
    # The releases that read it the same way (a citation tagged with its release is the same code), then the others,
    # each in engine then release order as source_reads gives them.
    same = list(dict.fromkeys(r for r, (c, _, k) in found if c.split("@")[0] == citation.split("@")[0] and k == cond))
    others = [r for r in dict.fromkeys(r for r, _ in found) if r not in same]
    first, _, more = cond.partition("; ")
    shown = first if len(first) <= _CONDITION else first[: _CONDITION - 1] + "…"
    when = f" when {shown}{'; …' if more else ''}" if cond else ""
    also = f"; also by {_releases(others)}" if others else ""
    return f"by {_releases(same)} in {citation}{when}{also}"


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
    item reads on the config objects and dicts it is handed, and the keys the config class it loads the file through
    takes; ``dflash_cfg/lint/engine_keys.py``, made by ``./dev engines --keys`` and held to the installed engines by
    the engine suite). Those runs reach only the code the fixture drafters lead to on CPU, so the engines'
    DFlash-family source is read too (``dflash_cfg/lint/engine_source_keys.py``, made by
    ``tools/engines/source_keys.py`` and held to the installed engines the same way): every read the code spells out,
    with the function and the condition it sits under. A key neither names is information: a training setting, a key
    of another framework, a leftover ("ignored by vLLM 0.33.0 and 0.34.0, SGLang 0.5.23"). A key only the source
    names is never called ignored: an engine uses it on a path the runs did not take (a GPU-only speculator, a check
    for another layout); the info says which engine reads it, in which function and under which condition (its
    innermost test), so that whoever would delete it can see whether their deployment takes that path, and no
    warning either (the code asks for it where it is). A warning when the name of a key nobody reads is close to a
    key an engine reads that the file lacks: the same key at the other DFlash place (``layer_types`` inside
    ``dflash_config``, ``swa_window_size`` at the top level), another spelling convention (``slidingWindow``), or a
    typo of eight letters or more (``target_layers_ids``); the message names the key the engines read and what they
    use instead. The warning concerns the engines that read that key (``[SGLang]`` when only SGLang does): a gate
    fails on it where one of them serves the drafter. Keys of other objects (``rope_parameters``,
    ``quantization_config``) are not judged: an engine may read them by iterating, which is not recorded.

    Fail: ``"dflash_config": {"target_layers_ids": [1, 16, 31, 46, 61], ...}`` without ``target_layer_ids``
    Fail (info): ``"dflash_config": {"num_anchors": 512, ...}`` (a training setting)
    Fail (info): ``"has_lm_head": false`` (read by SGLang only while it tells the Nemotron-3.5 layout apart)
    Pass: every key some engine reads
    """
    known = recorded(_SERVING)
    # Whose source can read this file: speculators reads its own format only.
    sources = (*_SERVING, "speculators") if ctx.kind == "speculators" else _SERVING
    for where, name in _keys(ctx):
        if readers(where):
            continue
        # Read where the recorded runs did not go: calling it ignored would invite deleting a key an engine uses.
        source = _where_read(where, sources)
        if source is not None:
            yield Problem(
                pointer=where, message=f"{show_key(name)} is read only where the recorded runs do not go: {source}"
            )
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

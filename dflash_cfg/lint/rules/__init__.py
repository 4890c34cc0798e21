"""The rule catalogue: an explicit registry, in catalogue order (one module per family or decade)."""

from __future__ import annotations

from collections.abc import Iterable

from dflash_cfg.lint.releases import Change
from dflash_cfg.lint.rules import (
    architecture,
    attention,
    dflash2,
    engine,
    file,
    integrity,
    keys,
    launch,
    launch_vllm,
    mask,
    modules,
    published,
    sizes,
    speculators,
    taps,
    target,
    transformers_view,
    upstream,
    weights,
)
from dflash_cfg.lint.rules.base import Context, Rule
from dflash_cfg.model import RuleDoc

ALL: tuple[Rule, ...] = (
    *file.RULES,  # DF00x-DF010
    *keys.RULES,  # DF011
    *taps.RULES,  # DF10x
    *mask.RULES,  # DF11x
    *sizes.RULES,  # DF12x
    *architecture.RULES,  # DF13x
    *dflash2.RULES,  # DF14x
    *modules.RULES,  # DF15x
    *speculators.RULES,  # DF16x
    *attention.RULES,  # DF2xx
    *transformers_view.RULES,  # DF3xx
    *target.RULES,  # DF4xx
    *weights.RULES,  # DF5xx
    *upstream.RULES,  # DF601-DF603
    *published.RULES,  # DF604-DF607
    *integrity.RULES,  # DF7xx
    *sorted((*launch.RULES, *launch_vllm.RULES), key=lambda r: r.id),  # DF8xx, in id order
    *engine.RULES,  # DF9xx
)
REGISTRY: dict[str, Rule] = {r.id: r for r in ALL}


def changes(rules: Iterable[Rule] = ALL) -> tuple[tuple[Change, tuple[str, ...]], ...]:
    """Each engine release change the rules declare (`since`/`until`), with the ids of the rules declaring it,
    in catalogue order: what the release report says the rules know of a release."""
    found: dict[Change, list[str]] = {}
    for r in rules:
        for change in r.changes:
            found.setdefault(change, []).append(r.id)
    return tuple((change, tuple(ids)) for change, ids in found.items())


CHANGES = changes()


def catalogue(rules: Iterable[Rule] = ALL) -> tuple[RuleDoc, ...]:
    """The rules' documentation as values, in the order given: what the renderers take (report/ never sees a
    Rule). Made on demand, not at import: each doc describes its engine reads with their cited lines."""
    return tuple(r.documented() for r in rules)


__all__ = ["ALL", "CHANGES", "REGISTRY", "Context", "Rule", "catalogue", "changes"]

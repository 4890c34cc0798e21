"""The rule catalogue: an explicit registry, in catalogue order."""

from __future__ import annotations

from dflash_cfg.lint.rules import (
    attention,
    dflash,
    file,
    integrity,
    launch_rules,
    target_rules,
    transformers_view,
    upstream_rules,
    weights_rules,
)
from dflash_cfg.lint.rules.base import Context, Rule

ALL: tuple[Rule, ...] = (
    *file.RULES,
    *dflash.RULES,
    *attention.RULES,
    *transformers_view.RULES,
    *target_rules.RULES,
    *weights_rules.RULES,
    *upstream_rules.RULES,
    *integrity.RULES,
    *launch_rules.RULES,
)
REGISTRY: dict[str, Rule] = {r.id: r for r in ALL}

__all__ = ["ALL", "REGISTRY", "Context", "Rule"]

"""where: which config.json an engine would read for a model argument."""

from __future__ import annotations

from dflash_cfg.model import Location
from dflash_cfg.sources.where import locate


def where(model: str, revision: str | None = None) -> Location:
    return locate(model, revision)

"""where: which config.json an engine would read for a model argument."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from dflash_cfg.model import Location
from dflash_cfg.sources.where import locate


def where(model: str, revision: str | None = None) -> Location:
    """The location, its symlink target said the way its config path is: relative to the working directory
    when the config path is (a relative HF_HUB_CACHE, a relative model dir), as the user named it."""
    found = locate(model, revision)
    if isinstance(found.config, Path) and not found.config.is_absolute() and isinstance(found.resolved, Path):
        return replace(found, resolved=Path(os.path.relpath(found.resolved)))
    return found

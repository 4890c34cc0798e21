"""diff: one drafter config against its upstream copy, field by field, raw and through the engine's
config class."""

from __future__ import annotations

import os
from pathlib import Path

from dflash_cfg.commands.common import Views, named_upstream, one_config, project_entry, upstream_for
from dflash_cfg.errors import UsageError
from dflash_cfg.jsondoc.document import git_blob_sha1, parse
from dflash_cfg.lint.compare import compare
from dflash_cfg.lint.rules.upstream import show_compared
from dflash_cfg.model import DiffResult, HubOptions
from dflash_cfg.sources import storage
from dflash_cfg.sources.views import transformers_version


def diff(path_arg: str, hub: HubOptions) -> DiffResult:
    path = one_config(path_arg)
    shown_path = as_given(path, path_arg)
    local = storage.read(path)
    mine = parse(local)
    if not isinstance(mine.data, dict):
        raise UsageError(f"{shown_path} is not a JSON object; run `dflash-cfg check {shown_path}` to see why")
    named, _ = named_upstream(hub, project_entry(path), hub.offline)  # as `check` compares it
    upstream = upstream_for(path, named or hub)
    theirs = parse(upstream.data)
    if not isinstance(theirs.data, dict):
        raise UsageError(f"upstream {upstream.repo}@{upstream.commit[:12]} config.json is not a JSON object")
    views = Views()
    mine_view, theirs_view = views.of(mine), views.of(theirs)
    rows = compare(
        mine.data, theirs.data, mine_view.values if mine_view else None, theirs_view.values if theirs_view else None
    )
    shown = tuple((show_compared(r.local), show_compared(r.local_effective), show_compared(r.upstream)) for r in rows)
    return DiffResult(
        path=shown_path,
        local=local,
        git_blob_sha1=git_blob_sha1(local),
        upstream=upstream,
        rows=rows,
        transformers_version=transformers_version(),
        shown=shown,
    )


def as_given(path: storage.Where, given: str) -> str:
    """The file's path as the user named it: relative to the working directory when they gave a relative
    path (`models/d` -> `models/d/config.json`), absolute when they gave an absolute one; a URL as it is."""
    if storage.is_remote(path) or os.path.isabs(given):
        return storage.display(path)
    return storage.display(Path(os.path.relpath(path)))

"""dflash-cfg: lint and repair the config.json of DFlash speculative-decoding drafters.

The public API is this module: `check`, `diff`, `fix` and `verify`, returning the frozen values the
JSON output serialises: a thin layer over the functions of `dflash_cfg.commands` the CLI calls. Every
submodule is private: its names may change between releases.

    import dflash_cfg
    report = dflash_cfg.check(["/models/Qwen3.6-27B-DFlash"], target="/models/Qwen3.6-27B")
    if report.worst() is dflash_cfg.Severity.ERROR: ...
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from dflash_cfg.version import __version__

if TYPE_CHECKING:
    from dflash_cfg.model import DiffResult, FixResult, HubOptions, Plan, Report, Verification

__all__ = [
    "DflashCfgError",
    "DiffResult",
    "FileReport",
    "Finding",
    "Fix",
    "FixResult",
    "HubOptions",
    "PatchOp",
    "Plan",
    "Report",
    "Severity",
    "Verification",
    "__version__",
    "check",
    "diff",
    "fix",
    "verify",
]

Path = str | os.PathLike[str]


def _hub(hub: HubOptions | None, from_hub: str | None, revision: str | None, offline: bool) -> HubOptions | None:
    """The comparison with upstream: `hub` whole, else made from the keyword arguments it stands for
    (`from_hub`, `revision`, `offline`), which callers written before `hub` pass and which keep working."""
    from dflash_cfg.errors import UsageError
    from dflash_cfg.model import HubOptions

    if hub is not None:
        if from_hub or revision:
            raise UsageError("pass hub, or from_hub and revision: not both")
        return hub
    if from_hub is None:
        if revision:
            raise UsageError("revision needs from_hub")
        return None
    return HubOptions(from_hub or None, revision, offline)


def check(
    paths: Sequence[Path],
    *,
    target: Path | None = None,
    select: str | None = None,
    ignore: str | None = None,
    hub: HubOptions | None = None,
    from_hub: str | None = None,
    revision: str | None = None,
    offline: bool = False,
    expect_sha256: str | None = None,
    use_cache: bool = True,
    config: Path | None = None,
    isolated: bool = False,
    fail_on: str | None = None,
    gate: bool = False,
    engines: Sequence[str] = (),
    min_severity: str = "info",
) -> Report:
    """Lint each drafter config.json under `paths` (model dirs, files, trees, or Hub ids).

    `select`/`ignore`: comma-separated rule ids or prefixes. `hub`: compare with upstream
    (`HubOptions(repo, revision, offline)`; repo None infers it from a cache snapshot path or the lock);
    `from_hub` ("" infers the repo) and `revision` say the same as separate arguments. `offline`: answer
    every Hub question from the local cache (the project's upstreams too). The project config (dflash-cfg.toml or
    [tool.dflash-cfg]) is found from the first path unless `config` names one or `isolated` is set.
    `fail_on` ("error" or "warning") and `gate` decide `Report.fail_on`/`Report.gate`, which the CLI's
    exit code follows. `engines` ("vllm", "sglang", "mlx", "reference"; default: the project's `engines`) says
    what serves the drafters: a finding about other engines only fails nothing. `min_severity` ("info",
    "warning", "error") leaves the less severe findings out (`Report.hidden` counts them). Raises DflashCfgError (with
    `exit_code`) for a usage or environment problem;
    files that cannot be read, a path that leads to no config.json while others do, and an upstream a file has
    of its own (the project config's) that cannot be read are listed in `Report.errors`.
    """
    from dflash_cfg.commands.check import check as run
    from dflash_cfg.commands.check import check_options

    options = check_options(
        paths,
        target=target,
        select=select,
        ignore=ignore,
        hub=_hub(hub, from_hub, revision, offline),
        expect_sha256=expect_sha256,
        use_cache=use_cache,
        offline=offline,
        config=config,
        isolated=isolated,
        fail_on=fail_on,
        gate=gate,
        engines=engines,
        min_severity=min_severity,
    )
    return run(options)


def diff(
    path: Path,
    from_hub: str = "",
    *,
    revision: str | None = None,
    offline: bool = False,
    hub: HubOptions | None = None,
) -> DiffResult:
    """Field-by-field comparison of one drafter config with its upstream copy: `hub`, else the repo `from_hub`
    ("" infers it) at `revision`."""
    from dflash_cfg.commands.diff import diff as run

    found = _hub(hub, from_hub, revision, offline)
    assert found is not None  # from_hub is never None here: "" infers the repo
    return run(os.fspath(path), found)


def fix(
    paths: Sequence[Path],
    *,
    hub: HubOptions | None = None,
    from_hub: str | None = None,
    revision: str | None = None,
    offline: bool = False,
    only_critical: bool = False,
    target: Path | None = None,
    min_severity: str = "info",
    confirm: Callable[[Plan], bool] | None = None,
    backup: bool = True,
    record_lock: bool = True,
) -> Iterator[FixResult]:
    """Repair each path's config.json (a tree: each one under it), one result per file as it is done; with `hub`
    (or `from_hub`), from upstream (no repo: the project config's `upstream`, else where the file lives). Raises
    DflashCfgError at the first path that cannot be done.

    `confirm(plan)` decides on each change (default: write it); return False for a dry run.
    """
    from dflash_cfg.commands.fix import fix_each, fix_options

    options = fix_options(
        hub=_hub(hub, from_hub, revision, offline),
        only_critical=only_critical,
        target=target,
        min_severity=min_severity,
    )
    return fix_each(
        [os.fspath(p) for p in paths],
        options,
        confirm or (lambda _plan: True),
        backup=backup,
        record_lock=record_lock,
    )


def verify(path: Path, *, expect_sha256: str | None = None) -> Verification:
    """Is the config.json still the file dflash-cfg last wrote there (or the one with this sha256)?"""
    from dflash_cfg.commands.verify import verify as run

    return run(os.fspath(path), expect_sha256)


# The value types load on first use, so `import dflash_cfg` stays cheap.
_LAZY = {
    "DflashCfgError": "dflash_cfg.errors",
    "FileReport": "dflash_cfg.model",
    "Finding": "dflash_cfg.model",
    "Fix": "dflash_cfg.model",
    "PatchOp": "dflash_cfg.model",
    "Report": "dflash_cfg.model",
    "Severity": "dflash_cfg.model",
    "DiffResult": "dflash_cfg.model",
    "FixResult": "dflash_cfg.model",
    "HubOptions": "dflash_cfg.model",
    "Plan": "dflash_cfg.model",
    "Verification": "dflash_cfg.model",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dflash_cfg' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)

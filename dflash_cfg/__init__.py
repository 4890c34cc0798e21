"""dflash-cfg: lint and repair the config.json of DFlash speculative-decoding drafters.

The public API is this module: `check`, `diff`, `fix` and `verify`, returning the frozen values the
JSON output serialises. The CLI calls these same functions. Every submodule is private: its names may
change between releases.

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
    from dflash_cfg.model import DiffResult, FixResult, Plan, Report, Verification

__all__ = [
    "DflashCfgError",
    "DiffResult",
    "FileReport",
    "Finding",
    "Fix",
    "FixResult",
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


def _hub(from_hub: str | None, revision: str | None, offline: bool) -> Any:
    from dflash_cfg.commands.common import HubOptions
    from dflash_cfg.errors import UsageError

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
) -> Report:
    """Lint each drafter config.json under `paths` (model dirs, files, trees, or Hub ids).

    `select`/`ignore`: comma-separated rule ids or prefixes. `from_hub`: compare with this Hub repo
    ("" infers it from a cache snapshot path or the lock). The project config (dflash-cfg.toml or
    [tool.dflash-cfg]) is found from the first path unless `config` names one or `isolated` is set.
    `fail_on` ("error" or "warning") and `gate` decide `Report.fail_on`/`Report.gate`, which the CLI's
    exit code follows. `engines` ("vllm", "sglang", "mlx", "reference"; default: the project's `engines`) says
    what serves the drafters: a finding about other engines only fails nothing. Raises DflashCfgError (with
    `exit_code`) for a usage or environment problem;
    files that cannot be read are listed in `Report.errors`.
    """
    from dflash_cfg.commands.check import CheckOptions
    from dflash_cfg.commands.check import check as run
    from dflash_cfg.model import Severity

    if fail_on not in (None, "error", "warning"):
        from dflash_cfg.errors import UsageError

        raise UsageError(f'fail_on must be "error" or "warning", not {fail_on!r}')
    options = CheckOptions(
        paths=tuple(os.fspath(p) for p in paths),
        target=None if target is None else os.fspath(target),
        select=select,
        ignore=ignore,
        hub=_hub(from_hub, revision, offline),
        expect_sha256=expect_sha256,
        no_cache=not use_cache,
        offline=offline,
        config=None if config is None else os.fspath(config),
        isolated=isolated,
        fail_on=None if fail_on is None else Severity[fail_on.upper()],
        gate=gate,
        engines=tuple(engines),
    )
    return run(options)


def diff(path: Path, from_hub: str = "", *, revision: str | None = None, offline: bool = False) -> DiffResult:
    """Field-by-field comparison of one drafter config with its upstream copy ("" infers the repo)."""
    from dflash_cfg.commands.diff import diff as run

    return run(os.fspath(path), _hub(from_hub, revision, offline))


def fix(
    paths: Sequence[Path],
    *,
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
    """Repair each path's config.json, one result per path as it is done.

    `confirm(plan)` decides on each change (default: write it); return False for a dry run.
    """
    from dflash_cfg.commands.fix import FixOptions, fix_each
    from dflash_cfg.model import Severity

    options = FixOptions(
        path="",
        hub=_hub(from_hub, revision, offline),
        only_critical=only_critical,
        target=None if target is None else os.fspath(target),
        min_severity=Severity[min_severity.upper()],
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
    "Plan": "dflash_cfg.model",
    "Verification": "dflash_cfg.model",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dflash_cfg' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)

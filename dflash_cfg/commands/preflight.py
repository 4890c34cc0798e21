"""preflight: read an engine launch command, find its drafter and target on this machine, and check
them (with the launch's own arguments) before the engine starts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dflash_cfg.commands.check import CheckOptions, check
from dflash_cfg.commands.common import HubOptions
from dflash_cfg.errors import LaunchError, UsageError
from dflash_cfg.lint.launch import Launch, parse_launch
from dflash_cfg.model import Report, Severity
from dflash_cfg.sources.where import Location, locate


@dataclass(frozen=True)
class Preflight:
    launch: Launch
    drafter: Location
    target: Location
    report: Report


def run(
    argv: Sequence[str],
    hub: HubOptions | None = None,
    no_cache: bool = False,
    *,
    offline: bool = False,
    config: str | None = None,
    isolated: bool = False,
    fail_on: Severity | None = None,
) -> Preflight:
    """A gate: warnings fail unless the project relaxes it, and the drafter is compared with its upstream
    whenever the repo can be known (--from-hub, the project config, a cache snapshot, the lock)."""
    try:
        launch = parse_launch(argv)
    except LaunchError as exc:  # said with what it is about
        raise LaunchError(f"launch command: {exc}") from None
    if launch.drafter is None:
        raise UsageError(f"the {launch.engine} command has no speculative drafter model: nothing to preflight")
    if launch.method is None and "dflash" not in launch.drafter.lower():
        raise UsageError(
            f"the {launch.engine} command names no speculative method and its drafter "
            f"{launch.drafter!r} does not say dflash: is this a DFlash launch?"
        )
    drafter = locate(launch.drafter, launch.drafter_revision)
    target = locate(launch.target, launch.target_revision)
    options = CheckOptions(
        (str(drafter.config),),
        str(target.model_dir),
        hub=hub,
        no_cache=no_cache,
        launch=launch,
        offline=offline,
        config=config,
        isolated=isolated,
        fail_on=fail_on,
        gate=True,
    )
    report = check(options)
    return Preflight(launch, drafter, target, report)

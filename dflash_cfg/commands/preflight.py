"""preflight: read an engine launch command, find its drafter and target on this machine, and check
them (with the launch's own arguments) before the engine starts."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from dflash_cfg.commands.check import CheckOptions, check
from dflash_cfg.commands.common import HubOptions
from dflash_cfg.errors import Documented, LaunchError, PathError, UsageError, WhereError
from dflash_cfg.launch import host_path, hub_cache, parse_launch
from dflash_cfg.lint.engine_reads import EngineCheck
from dflash_cfg.model import Container, Launch, Location, Preflight, Severity
from dflash_cfg.sources import files
from dflash_cfg.sources.project import resolve as resolve_project
from dflash_cfg.sources.where import locate


def run(
    argv: Sequence[str],
    hub: HubOptions | None = None,
    no_cache: bool = False,
    *,
    offline: bool = False,
    config: str | None = None,
    isolated: bool = False,
    fail_on: Severity | None = None,
    engine_check: bool = True,
) -> Preflight:
    """A gate: warnings fail unless the project relaxes it, and the drafter is compared with its upstream
    whenever the repo can be known (--from-hub, the project config, a cache snapshot, the lock)."""
    try:
        launch = parse_launch(argv, read_config)
    except LaunchError as exc:  # said with what it is about
        raise LaunchError(f"launch command: {exc}") from None
    if launch.drafter is None:
        raise UsageError(f"the {launch.engine} command has no speculative drafter model: nothing to preflight")
    if launch.method is None and "dflash" not in launch.drafter.lower():
        raise UsageError(
            f"the {launch.engine} command names no speculative method and its drafter "
            f"{launch.drafter!r} does not say dflash: is this a DFlash launch?"
        )
    try:
        drafter = _locate(launch, launch.drafter, launch.drafter_revision)
        target = _locate(launch, launch.target, launch.target_revision)
    except LaunchError as exc:
        raise LaunchError(f"launch command: {exc}") from None
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
        engine=_engine_step(launch, drafter, target, engine_check, config, isolated),
    )
    report = check(options)
    return Preflight(launch, drafter, target, report)


def _engine_step(
    launch: Launch, drafter: Location, target: Location, wanted: bool, config: str | None, isolated: bool
) -> EngineCheck | None:
    """The launch's own engine's answer (commands/engine_check), unless --no-engine-check or the project's
    `engine-check = false` turns the step off."""
    if not wanted or not resolve_project(Path(str(drafter.config)), config, isolated).engine_check:
        return None
    from dflash_cfg.commands import engine_check

    return engine_check.run(launch, drafter, target)


def execute(launch: Launch) -> NoReturn:
    """Replace this process with exactly the program that was checked (--exec), with the command's
    `NAME=value` assignments applied as a shell would."""
    sys.stdout.flush()  # the report is out before the engine takes over the process
    sys.stderr.flush()
    program = list(launch.command)
    try:
        os.execvpe(program[0], program, {**os.environ, **dict(launch.environment)})
    except OSError as exc:  # the report is out already: the reason goes to stderr only
        raise Documented(UsageError(f"cannot run {program[0]!r}: {exc.strerror or exc}")) from None


CONFIG_MAX_BYTES = 1024 * 1024  # an engine's YAML config is a few hundred bytes


def read_config(path: str) -> Any:
    """The YAML of an engine's `--config FILE` (a path on this host), as the engines load it."""
    import yaml

    try:
        raw = files.read(Path(path), CONFIG_MAX_BYTES)
    except PathError as exc:
        raise LaunchError(f"--config {path!r}: {exc}") from None
    if len(raw) > CONFIG_MAX_BYTES:
        raise LaunchError(f"--config {path!r}: larger than {CONFIG_MAX_BYTES} bytes, not an engine config")
    try:
        return yaml.safe_load(raw.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
        raise LaunchError(f"--config {path!r}: not YAML ({' '.join(str(exc).split())[:160]})") from None


def _locate(launch: Launch, name: str, revision: str | None) -> Location:
    """A model argument found where the engine will find it: on this host, or through the container's
    bind mounts (a path) and its mounted Hugging Face cache (a Hub id)."""
    if launch.container is None:
        return locate(name, revision)
    if name.startswith("/"):
        return locate(host_path(launch.container, name), None)
    if name.count("/") != 1 or name.startswith((".", "~")):
        raise LaunchError(f"container model {name!r}: neither an absolute container path nor a Hub id (org/name)")
    return _from_container_cache(launch.container, name, revision or "main")


def _from_container_cache(container: Container, repo: str, revision: str) -> Location:
    from huggingface_hub import try_to_load_from_cache

    cache = hub_cache(container)
    host = host_path(container, cache)
    found = try_to_load_from_cache(repo, "config.json", cache_dir=host, revision=revision)
    if not isinstance(found, str):
        raise WhereError(
            f"{repo}@{revision}: no config.json in the container's Hugging Face cache {cache} (on this host"
            f" {host}); the engine would download it (download it into that cache first), or mount a local path"
        )
    return locate(str(Path(found).parent), None)

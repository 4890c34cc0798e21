"""preflight: read an engine launch command, find its drafter and target on this machine, and check
them (with the launch's own arguments) before the engine starts."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import NoReturn

from dflash_cfg.commands.check import CheckOptions, check
from dflash_cfg.errors import Documented, HubError, LaunchError, NotADrafter, PathError, UsageError, WhereError
from dflash_cfg.launch import host_path, hub_cache, parse_launch
from dflash_cfg.launch.environment import (
    ENGINE_VARIABLES,
    HUB_VARIABLES,
    container_environment,
    engine_environment,
    hub_cache_dir,
    refuse_other_hub,
)
from dflash_cfg.launch.shell import words
from dflash_cfg.launch.speculators import served_speculators
from dflash_cfg.model import EngineCheck, EngineStep, HubOptions, Launch, Location, Preflight, Severity
from dflash_cfg.sources import files, remote, storage
from dflash_cfg.sources.cache import default_root
from dflash_cfg.sources.launch_files import read_config, read_env_file, read_launch
from dflash_cfg.sources.project import resolve as resolve_project
from dflash_cfg.sources.target import TARGET_FILES
from dflash_cfg.sources.where import Lookup, exists_for, folder_for, is_file_for, locate_for


def launch_argv(
    command: Sequence[str], launch_file: str | None, launch_env: str | None, environ: Mapping[str, str]
) -> list[str]:
    """The launch to check: the words after `--`, or the command line written once elsewhere, as `sh` splits it:
    in a file (--launch-file: a ConfigMap key mounted into the pod) or an environment variable (--launch-env:
    one the pod's spec sets from the same ConfigMap), the text the engine's container runs."""
    if launch_file is not None:
        return list(words(read_launch(launch_file), f"--launch-file {launch_file}"))
    if launch_env is not None:
        if launch_env not in environ:
            raise UsageError(f"--launch-env {launch_env}: the variable is not set")
        return list(words(environ[launch_env], f"--launch-env {launch_env}"))
    return list(command)


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
    try:
        lookup, env = _where(launch)
        launch = replace(launch, engine_env=tuple((k, env[k]) for k in ENGINE_VARIABLES if k in env))
        launch = _served_speculators(launch, lookup)
    except LaunchError as exc:
        raise type(exc)(f"launch command: {exc}") from None
    if launch.drafter is None:
        raise UsageError(f"the {launch.engine} command has no speculative drafter model: nothing to preflight")
    # No method and no "dflash" in the drafter's path is still a DFlash launch for vLLM 0.34 (the drafter's class
    # declares its method): the drafter's config decides (`_drafter`), and DF803 says what vLLM 0.33 makes of it.
    try:
        drafter = _drafter(launch, lookup)
        target = locate_for(lookup, launch.target, launch.target_revision, TARGET_FILES)
    except LaunchError as exc:  # NotADrafter keeps its exit code
        raise type(exc)(f"launch command: {exc}") from None
    engine, step = _engine_step(launch, drafter, target, engine_check, config, isolated, no_cache)
    # The rules of the release the launch runs (lint.releases): the one that answered, else its metadata, which
    # the step already surveyed when it found no engine in the launch's interpreter (not read twice).
    absent = step.status == "skipped" and step.python is not None
    launch = replace(launch, engine_version=step.version or (None if absent else _installed(launch, no_cache)))
    options = CheckOptions(
        paths=(str(drafter.config),),
        target=str(target.model_dir),
        hub=hub,
        no_cache=no_cache,
        launch=launch,
        offline=offline,
        config=config,
        isolated=isolated,
        fail_on=fail_on,
        gate=True,
        engine=engine,
        hub_environ=_hub_environ(env, lookup.host_cache),
    )
    return Preflight(launch=launch, drafter=drafter, target=target, report=check(options), engine_step=step)


def _installed(launch: Launch, no_cache: bool) -> str | None:
    from dflash_cfg.commands import engine_check

    return engine_check.installed(launch, cwd=launch.cwd, cache=None if no_cache else default_root())


def _engine_step(
    launch: Launch,
    drafter: Location,
    target: Location,
    wanted: bool,
    config: str | None,
    isolated: bool,
    no_cache: bool,
) -> tuple[EngineCheck | None, EngineStep]:
    """The launch's own engine's answer (commands/engine_check), unless --no-engine-check or the project's
    `engine-check = false` turns the step off; --no-cache asks the engine even when its answer is cached."""
    if not wanted:
        return None, EngineStep(status="skipped", engine=launch.engine, reason="turned off by --no-engine-check")
    if isinstance(drafter.config, Path):
        project = resolve_project(drafter.config, config, isolated)
        if not project.engine_check:
            where = f" in {files.display(project.source)}" if project.source is not None else ""
            return None, EngineStep(
                status="skipped", engine=launch.engine, reason=f"turned off by engine-check = false{where}"
            )
    from dflash_cfg.commands import engine_check

    # The directory the launch runs in (env -C, uv run --directory, ...) is where `uv run` finds its venv.
    return engine_check.run(launch, drafter, target, cwd=launch.cwd, cache=None if no_cache else default_root())


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


def _served_speculators(launch: Launch, lookup: Lookup) -> Launch:
    """`vllm serve SPEC_DIR`: vLLM reads the served model's config.json first and, for a speculators-format
    drafter, serves its verifier with it as the drafter (launch/speculators.py). A model that cannot be
    read here is left to the target's own lookup, which reports it."""
    if launch.engine != "vllm" or remote.is_url(launch.target):
        return launch  # vLLM skips the detection for object storage
    if is_file_for(lookup, launch.target):
        return launch  # a single-file checkpoint (vLLM: os.path.isfile)
    from dflash_cfg.jsondoc.document import MAX_BYTES, parse

    try:
        found = locate_for(lookup, launch.target, launch.target_revision)
        data = parse(storage.read(found.config, MAX_BYTES)).data
    except (WhereError, PathError, HubError, LaunchError):
        return launch
    return served_speculators(launch, data, lambda name: exists_for(lookup, name))


def _drafter(launch: Launch, lookup: Lookup) -> Location:
    """The drafter's config.json, which must be a drafter's: a target, a repo root whose drafter is in a
    subfolder, or another kind of model fails the gate, naming what is there and where drafters are."""
    assert launch.drafter is not None
    try:
        found = locate_for(lookup, launch.drafter, launch.drafter_revision)
    except WhereError as exc:
        folder = folder_for(lookup, launch.drafter)
        if folder is None or not (hint := _drafters_under(folder)):
            raise
        raise NotADrafter(f"{exc}; {hint}") from None
    from dflash_cfg.jsondoc.document import MAX_BYTES, parse
    from dflash_cfg.lint.linter import classify

    try:
        kind, why = classify(parse(storage.read(found.config, MAX_BYTES)), True)
    except (PathError, HubError):
        return found  # check reports what is wrong with the file itself
    if kind == "skipped":
        hint = _drafters_under(found.config.parent) if isinstance(found.config, Path) else ""
        raise NotADrafter(
            f"the drafter {launch.drafter!r} is {why.removeprefix('not a DFlash drafter ').strip('()') or why}"
            f" at {storage.display(found.config)}, not a DFlash drafter config"
            + (f"; {hint}" if hint else "; the engine would load it as the drafter and fail or draft nothing")
        )
    return found


def _drafters_under(folder: Path) -> str:
    """Where the drafters below `folder` are (two levels down), said for a message; "" if none."""
    from dflash_cfg.jsondoc.document import parse
    from dflash_cfg.lint.linter import classify

    found: list[str] = []
    for config in sorted([*folder.glob("*/config.json"), *folder.glob("*/*/config.json")])[:200]:
        try:
            if classify(parse(files.read(config, 1024 * 1024)), True)[0] != "skipped":
                found.append(files.display(config.parent))
        except (PathError, ValueError):
            continue
    if not found:
        return ""
    shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    return f"the drafter is probably {shown} (pass that directory)"


def _where(launch: Launch) -> tuple[Lookup, dict[str, str]]:
    """Where the engine resolves its model arguments, and the environment it runs with (a container's own)."""
    env = engine_environment(launch, os.environ)
    if launch.cwd is not None and files.probe(Path(launch.cwd)) != "dir":
        raise LaunchError(f"the command runs in {launch.cwd!r}, which is not a directory here")
    if launch.container is None:
        refuse_other_hub(launch.engine, env)
        cache = hub_cache_dir(env, launch.cwd)
        return Lookup(cwd=launch.cwd, cache=cache, host_cache=cache), env
    texts = [(path, read_env_file(launch.cwd, path)) for path in launch.container.env_files]
    inside = container_environment(launch.container, env, texts)
    refuse_other_hub(launch.engine, inside)
    cache = hub_cache(launch.container, inside)
    to_host = partial(host_path, launch.container)
    try:
        host: str | None = to_host(cache)
    except LaunchError:
        host = None
    return Lookup(
        cwd=launch.cwd, cache=cache, host_cache=host, to_host=to_host, workdir=launch.container.workdir
    ), inside


def _hub_environ(env: Mapping[str, str], host_cache: str | None) -> dict[str, str]:
    """The environment the check reads its Hub settings from (sources/hub.py:settings), so that it talks to
    the Hub (the upstream comparison) as the engine would: the engine's endpoint, token and offline switch
    (unset when the engine has none), its cache as this host reads it, and ours for the rest (the request
    timeout). A value passed to the check: this process's environment is never changed."""
    hub = {name: value for name, value in os.environ.items() if name not in HUB_VARIABLES}
    hub.update((name, env[name]) for name in HUB_VARIABLES if name in env)
    if host_cache is not None:
        hub["HF_HUB_CACHE"] = host_cache
    return hub

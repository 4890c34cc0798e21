"""preflight: read an engine launch command, find its drafter and target on this machine, and check
them (with the launch's own arguments) before the engine starts."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NoReturn

from dflash_cfg.commands.check import CheckOptions, check
from dflash_cfg.commands.common import HubOptions
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
from dflash_cfg.launch.speculators import served_speculators
from dflash_cfg.lint.engine_reads import EngineCheck
from dflash_cfg.model import Container, EngineStep, Launch, Location, Preflight, Severity
from dflash_cfg.sources import files, remote, storage
from dflash_cfg.sources.cache import default_root
from dflash_cfg.sources.launch_files import read_config, read_env_file
from dflash_cfg.sources.project import resolve as resolve_project
from dflash_cfg.sources.where import is_hub_id, locate


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
        where = _where(launch)
        launch = replace(launch, engine_env=tuple((k, where.env[k]) for k in ENGINE_VARIABLES if k in where.env))
        launch = _served_speculators(launch, where)
    except LaunchError as exc:
        raise type(exc)(f"launch command: {exc}") from None
    if launch.drafter is None:
        raise UsageError(f"the {launch.engine} command has no speculative drafter model: nothing to preflight")
    # No method and no "dflash" in the drafter's path is still a DFlash launch for vLLM 0.34 (the drafter's class
    # declares its method): the drafter's config decides (`_drafter`), and DF803 says what vLLM 0.33 makes of it.
    try:
        drafter = _drafter(launch, where)
        target = _locate(launch, where, launch.target, launch.target_revision)
    except LaunchError as exc:  # NotADrafter keeps its exit code
        raise type(exc)(f"launch command: {exc}") from None
    engine, step = _engine_step(launch, drafter, target, engine_check, config, isolated, no_cache)
    # The rules of the release the launch runs (lint.releases): the one that answered, else its metadata, which
    # the step already surveyed when it found no engine in the launch's interpreter (not read twice).
    absent = step.status == "not-run" and step.python is not None
    launch = replace(launch, engine_version=step.version or (None if absent else _installed(launch, no_cache)))
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
        engine=engine,
    )
    with _hub_environment(where):
        report = check(options)
    return Preflight(launch, drafter, target, report, step)


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
        return None, EngineStep("not-run", launch.engine, reason="turned off by --no-engine-check")
    if isinstance(drafter.config, Path):
        project = resolve_project(drafter.config, config, isolated)
        if not project.engine_check:
            where = f" in {files.display(project.source)}" if project.source is not None else ""
            return None, EngineStep("not-run", launch.engine, reason=f"turned off by engine-check = false{where}")
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


def _served_speculators(launch: Launch, where: _Where) -> Launch:
    """`vllm serve SPEC_DIR`: vLLM reads the served model's config.json first and, for a speculators-format
    drafter, serves its verifier with it as the drafter (launch/speculators.py). A model that cannot be
    read here is left to the target's own lookup, which reports it."""
    if launch.engine != "vllm" or remote.is_url(launch.target):
        return launch  # vLLM skips the detection for object storage
    if launch.container is None:
        name = os.path.expanduser(launch.target)
        local = Path(name if where.cwd is None or name.startswith("/") else f"{where.cwd}/{name}")
        if files.probe(local) == "file":
            return launch  # a single-file checkpoint (vLLM: os.path.isfile)
    from dflash_cfg.jsondoc.document import MAX_BYTES, parse

    try:
        found = _locate(launch, where, launch.target, launch.target_revision)
        data = parse(storage.read(found.config, MAX_BYTES)).data
    except (WhereError, PathError, HubError, LaunchError):
        return launch
    return served_speculators(launch, data, lambda name: _exists(launch, where, name))


def _exists(launch: Launch, where: _Where, name: str) -> bool:
    """Whether a relative name is a path where the engine runs (vLLM: Path(name).exists() or is_symlink())."""
    if launch.container is not None:
        return _in_container(launch.container, name)
    return files.probe(Path(name if where.cwd is None else f"{where.cwd}/{name}")) != "missing"


def _drafter(launch: Launch, where: _Where) -> Location:
    """The drafter's config.json, which must be a drafter's: a target, a repo root whose drafter is in a
    subfolder, or another kind of model fails the gate, naming what is there and where drafters are."""
    assert launch.drafter is not None
    try:
        found = _locate(launch, where, launch.drafter, launch.drafter_revision)
    except WhereError as exc:
        folder = _folder(launch, where, launch.drafter)
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


def _folder(launch: Launch, where: _Where, name: str) -> Path | None:
    """The directory a drafter argument names on this host, if it is one (not a Hub id in a cache)."""
    if launch.container is not None:
        try:
            path = Path(host_path(launch.container, name))
        except LaunchError:
            return None
    else:
        path = Path(name if where.cwd is None or name.startswith(("/", "~")) else f"{where.cwd}/{name}")
    return path if files.probe(path) == "dir" else None


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


@dataclass(frozen=True)
class _Where:
    """Where the engine resolves its model arguments: its working directory (relative to ours), the
    environment it runs with, and its Hugging Face hub cache (a container path under docker)."""

    cwd: str | None
    env: dict[str, str]
    cache: str
    host_cache: str | None  # the cache as this host reads it (None: a container cache outside the mounts)


def _where(launch: Launch) -> _Where:
    env = engine_environment(launch, os.environ)
    if launch.cwd is not None and files.probe(Path(launch.cwd)) != "dir":
        raise LaunchError(f"the command runs in {launch.cwd!r}, which is not a directory here")
    if launch.container is None:
        refuse_other_hub(launch.engine, env)
        cache = hub_cache_dir(env, launch.cwd)
        return _Where(launch.cwd, env, cache, cache)
    texts = [(path, read_env_file(launch.cwd, path)) for path in launch.container.env_files]
    inside = container_environment(launch.container, env, texts)
    refuse_other_hub(launch.engine, inside)
    cache = hub_cache(launch.container, inside)
    try:
        host: str | None = host_path(launch.container, cache)
    except LaunchError:
        host = None
    return _Where(launch.cwd, inside, cache, host)


@contextmanager
def _hub_environment(where: _Where) -> Iterator[None]:
    """The check talks to the Hub (the upstream comparison) as the engine would: its endpoint, token,
    offline switch and cache, for the duration of the check."""
    changes: dict[str, str | None] = {name: where.env.get(name) for name in HUB_VARIABLES}
    if where.host_cache is not None:
        changes["HF_HUB_CACHE"] = where.host_cache
    saved = {name: os.environ.get(name) for name in changes}
    try:
        _apply(changes)
        yield
    finally:
        _apply(saved)


def _apply(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _locate(launch: Launch, where: _Where, name: str, revision: str | None) -> Location:
    """A model argument found where the engine will find it: in its working directory or its Hugging Face
    cache, or through the container's bind mounts (a path) and its mounted cache (a Hub id)."""
    if launch.container is None:
        if remote.is_url(name):
            return locate(name, revision)
        path = name if where.cwd is None or name.startswith(("/", "~")) else where.cwd.rstrip("/") + "/" + name
        if files.probe(Path(path)) not in ("missing", "broken-link") or not is_hub_id(name):
            return locate(path, None)
        return locate(name, revision, where.cache)
    container = launch.container
    if name.startswith("/") or (container.workdir and _in_container(container, name)):
        return locate(host_path(container, name), None)
    if not is_hub_id(name):
        raise LaunchError(
            f"container model {name!r}: neither an absolute container path (or one under -w) nor a Hub id (org/name)"
        )
    return _from_container_cache(container, where.cache, name, revision or "main")


def _in_container(container: Container, name: str) -> bool:
    """A relative name that is a path in the container's working directory (an existing path wins over a
    Hub id, as in the engines); outside the mounts it is not known to exist."""
    try:
        return files.probe(Path(host_path(container, name))) not in ("missing", "broken-link")
    except LaunchError:
        return not is_hub_id(name)


def _from_container_cache(container: Container, cache: str, repo: str, revision: str) -> Location:
    from huggingface_hub import try_to_load_from_cache

    host = host_path(container, cache)
    found = try_to_load_from_cache(repo, "config.json", cache_dir=host, revision=revision)
    if not isinstance(found, str):
        raise WhereError(
            f"{repo}@{revision}: no config.json in the container's Hugging Face cache {cache} (on this host"
            f" {host}); the engine would download it (download it into that cache first), or mount a local path"
        )
    return locate(str(Path(found).parent), None)

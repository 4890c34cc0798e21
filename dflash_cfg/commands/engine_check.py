"""preflight's engine step: run the launch's own engine (its adapter, in the launch's interpreter) on the drafter
with the launch's settings, and hand its answer to the DF90x rules.

The interpreter is the one the launch would start: `python -m sglang.launch_server` that python; `vllm serve`
the interpreter of vllm's shebang; through `uv run` the project's environment; `env`/`NAME=value` wrappers
apply their PATH. A `docker run` launch runs its engine inside the image, which is not run here.

An answer (a read or a refusal) is kept in dflash-cfg's cache (sources/engine_cache.py), keyed by everything
it depends on, so that relaunching the same launch costs one short survey of the interpreter, not the engine's
import again.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from pathlib import Path

from dflash_cfg.launch.wrappers import PYTHON, basename, unwrap
from dflash_cfg.model import ASSIGNMENT, EngineCheck, EngineRecord, EngineStatus, EngineStep, Launch, Location
from dflash_cfg.sources import adapters
from dflash_cfg.sources.adapters import NO_RECORD, Request
from dflash_cfg.sources.engine_cache import EngineCache, key
from dflash_cfg.sources.interpreters import NotRun, engine_timeout, launch_python, uv_python


def interpreter(launch: Launch, cwd: str | None = None) -> str | NotRun:
    """The python the launch's engine runs in, or why it cannot be known or run here."""
    if launch.container is not None:
        return NotRun(f"the launch runs its engine inside the image {launch.container.image}, not run here")
    cwd = os.path.join(os.getcwd(), cwd) if cwd else os.getcwd()
    outer = tuple(launch.command)
    head = unwrap(outer)
    command = head.command
    synthesized = command[:2] == ("python", "-m") and outer[len(outer) - len(command) :] != command
    prefix = outer[: len(outer) - len(command) + (2 if synthesized else 0)]
    environment = {} if head.env_cleared else dict(launch.environment)
    environment.update(t.split("=", 1) for t in prefix if ASSIGNMENT.fullmatch(t))  # type: ignore[misc]
    for name, value in head.env:  # env NAME=value / env -u NAME: the PATH the engine's program is found on
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    names = [basename(t) for t in prefix]
    for i, name in enumerate(names[:-1]):
        if name == "uv" and prefix[i + 1] == "run":
            return _uv(prefix[i + 2 :], environment, cwd)
    if "torchrun" in names:
        return launch_python(("torchrun",), environment, cwd)
    pythons = [t for t in prefix if PYTHON.fullmatch(basename(t))]
    if synthesized and pythons:  # python -m torch.distributed.run -m <engine module>
        return launch_python((pythons[-1],), environment, cwd)
    return launch_python(command, environment, cwd)


def _uv(options: tuple[str, ...], environment: Mapping[str, str], cwd: str) -> str | NotRun:
    project = None
    for i, token in enumerate(options):
        for name in ("--project", "--directory"):
            if token == name and i + 1 < len(options):
                project = options[i + 1]
            elif token.startswith(name + "="):
                project = token.split("=", 1)[1]
        if token in ("--with", "--isolated") or token.startswith("--with="):
            return NotRun("uv run builds a temporary environment for this launch (--with/--isolated), not run here")
    return uv_python(project, environment, cwd, active="--active" in options)


# An engine's official image tagged with its release: vllm/vllm-openai:v0.34.0, lmsysorg/sglang:v0.5.23-cu129.
_IMAGE_RELEASE = re.compile(r"(?:^|/)(?:vllm-openai|vllm|sglang)(?:-[\w.-]+)?:v?(\d+\.\d+(?:\.\d+)?)(?:$|[-+.])")


def installed(launch: Launch, *, cwd: str | None = None, cache: Path | None = None) -> str | None:
    """The release of the launch's engine where the launch runs it, from package metadata (nothing imports the
    engine): the interpreter's survey (kept in the cache like the answers), or the release an official image's
    tag names for a `docker run` launch. None: not known here."""
    if launch.container is not None:
        found = _IMAGE_RELEASE.search(launch.container.image)
        image_engine = "sglang" if "sglang" in launch.container.image.lower() else "vllm"
        return found.group(1) if found is not None and image_engine == launch.engine else None
    python = interpreter(launch, cwd)
    if isinstance(python, NotRun):
        return None
    survey = EngineCache(cache).survey(python)
    return survey.versions.get(launch.engine) if survey is not None and launch.engine in survey.engines else None


def run(
    launch: Launch, drafter: Location, target: Location, *, cwd: str | None = None, cache: Path | None = None
) -> tuple[EngineCheck, EngineStep]:
    """The launch's engine's answer on this drafter (or notes saying why there is none) for the rules, and
    what the step did for the report. With a `cache` root (sources.cache.default_root; None: --no-cache), an
    answer the same engine gave for the same files, installation and launch is taken from there."""
    started = time.monotonic()
    if not isinstance(drafter.model_dir, Path) or not isinstance(target.model_dir, Path):
        reason = "the engine check runs on local files only"
        return EngineCheck(notes=(reason,)), EngineStep(status="skipped", engine=launch.engine, reason=reason)
    python = interpreter(launch, cwd)
    if isinstance(python, NotRun):
        # A container is worth saying (its engine exists, elsewhere); an engine not installed on the host
        # that checks (a CI runner, a laptop) is the common case, and the static rules are the check there.
        notes = (python.reason,) if launch.container is not None else ()
        return EngineCheck(notes=notes), EngineStep(status="skipped", engine=launch.engine, reason=python.reason)
    # Which engines `python` imports and what is installed there (the cache key's part): one short process,
    # or none while what it said before still stands.
    store = EngineCache(cache)
    found = store.survey(python)
    if found is None:
        reason = f"{python} does not run as a Python interpreter"
        return EngineCheck(), EngineStep(status="skipped", engine=launch.engine, python=python, reason=reason)
    if launch.engine not in found.engines:
        reason = f"{python} cannot import {launch.engine}"
        return EngineCheck(), EngineStep(status="skipped", engine=launch.engine, python=python, reason=reason)
    tokens = launch.num_speculative_tokens if launch.engine == "vllm" else launch.num_draft_tokens
    spec = {"method": launch.method} if launch.engine == "vllm" and launch.method else None
    request = Request(
        drafter=str(drafter.model_dir),
        target=str(target.model_dir),
        num_speculative_tokens=tokens,
        tensor_parallel_size=launch.tensor_parallel_size,
        speculative_config=spec,
        pipeline_parallel_size=launch.pipeline_parallel_size,
        max_model_len=launch.max_model_len,
    )
    digest = key(launch.engine, python, found.installation, request) if cache is not None else None
    record = store.get(digest, launch.engine) if digest is not None else None
    cached = record is not None
    if record is None:
        [record] = adapters.run(python, launch.engine, [request], timeout=engine_timeout(ENGINE_TIMEOUT))
        if digest is not None:
            store.put(digest, record)
    return EngineCheck(records=(record,)), step(record, python, time.monotonic() - started, cached)


def step(record: EngineRecord, python: str, seconds: float, cached: bool) -> EngineStep:
    """The report's account of an engine's record."""
    if record.failed is not None:
        status: EngineStatus = "timeout" if record.failed.startswith(NO_RECORD) else "failed"
        reason = " ".join(str(record.failed).split())[:300]
    elif record.refused is not None:
        status, reason = "refused", f"{record.refused.type}: {' '.join(record.refused.message.split())[:300]}"
    else:
        status, reason = "ran", None
    return EngineStep(
        status=status,
        engine=record.engine,
        version=record.version,
        python=record.python or python,
        seconds=round(seconds, 3),
        reason=reason,
        cached=cached,
    )


# An engine import costs 6-12 s here; a cold disk cache can take a minute. Past this the step gives up (info);
# $DFLASH_CFG_ENGINE_TIMEOUT sets another limit.
ENGINE_TIMEOUT = 120.0

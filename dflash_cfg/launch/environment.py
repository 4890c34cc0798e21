"""The environment and working directory the engine runs with, as a launch's wrappers set them, and where
its Hugging Face hub cache is then (huggingface_hub/constants.py reads it at import).

Pure but for the password database (a home directory): the caller's environment and the text of any
`docker run --env-file` come in as values. The
variables that decide which file an engine loads for a Hub id: HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE,
HF_HOME, XDG_CACHE_HOME and HOME (the cache), and VLLM_USE_MODELSCOPE / SGLANG_USE_MODELSCOPE (another
hub altogether, refused).
"""

from __future__ import annotations

import os
import pwd
import re
from collections.abc import Mapping

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch.argv import quote
from dflash_cfg.model import Container, Launch

# The variables that decide where a Hub id is read from (see the module docstring).
CACHE_VARIABLES = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME")
# Variables the check itself uses when it talks to the Hub (upstream comparison): the engine's, not ours.
HUB_VARIABLES = ("HF_ENDPOINT", "HF_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
# Engine variables that change what the engine accepts from a drafter (the launch rules read them).
ENGINE_VARIABLES = (
    "VLLM_USE_V2_MODEL_RUNNER",
    "SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION",
    "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN",
)
_MODELSCOPE = {"vllm": "VLLM_USE_MODELSCOPE", "sglang": "SGLANG_USE_MODELSCOPE"}
_VARIABLE = re.compile(r"\$(\w+|\{[^}]*\})")


def engine_environment(launch: Launch, base: Mapping[str, str]) -> dict[str, str]:
    """The environment the launched program (the engine, or the docker client) gets: `base` (ours)
    unless `env -i` cleared it, with the wrappers' variables set and unset in order."""
    env = {} if launch.env_cleared else dict(base)
    for name, value in launch.env:
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def container_environment(
    container: Container, client: Mapping[str, str], env_files: list[tuple[str, str]]
) -> dict[str, str]:
    """The container's variables: each --env-file (path, text) in order, then -e, which wins; `-e NAME`
    and a bare `NAME` line take the docker client's value and are left out when it has none."""
    env: dict[str, str] = {}
    for path, text in env_files:
        for number, line in enumerate(text.splitlines(), start=1):
            line = line.lstrip()
            if not line or line.startswith("#"):
                continue
            name, eq, value = line.partition("=")
            if not name or any(c.isspace() for c in name):
                raise LaunchError(f"docker run --env-file {quote(path)}:{number}: not NAME=value")
            _set(env, name, value if eq else client.get(name))
    for name, maybe in container.environment:
        _set(env, name, maybe if maybe is not None else client.get(name))
    return env


def _set(env: dict[str, str], name: str, value: str | None) -> None:
    if value is None:
        env.pop(name, None)
    else:
        env[name] = value


def refuse_other_hub(engine: str, env: Mapping[str, str]) -> None:
    """An engine told to load model ids from ModelScope reads no Hugging Face cache: nothing here says
    which file it loads."""
    name = _MODELSCOPE[engine]
    if env.get(name, "").strip().lower() in ("1", "true"):
        raise LaunchError(f"{name}={env[name]}: the engine loads model ids from ModelScope, not checked here")


def hub_cache_dir(env: Mapping[str, str], cwd: str | None) -> str:
    """The hub cache huggingface_hub uses in a process with environment `env` and working directory `cwd`
    (relative to ours): HF_HUB_CACHE, else HUGGINGFACE_HUB_CACHE, else HF_HOME/hub, else
    $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub; `~` and `$VAR` expanded in `env`."""
    for name in CACHE_VARIABLES:
        if env.get(name) == "":
            raise LaunchError(
                f"{name} is set empty for the engine: its Hugging Face cache would be its working directory"
            )
    if "HF_HUB_CACHE" in env:
        cache = env["HF_HUB_CACHE"]
    elif "HUGGINGFACE_HUB_CACHE" in env:
        cache = env["HUGGINGFACE_HUB_CACHE"]
    else:
        home = env.get("HF_HOME")
        if home is None:
            xdg = env.get("XDG_CACHE_HOME") or _home(env) + "/.cache"
            home = xdg.rstrip("/") + "/huggingface"
        cache = _expand(home, env).rstrip("/") + "/hub"
    cache = _expand(cache, env)
    if cwd is not None and not cache.startswith("/"):
        cache = cwd.rstrip("/") + "/" + cache
    return cache


def _home(env: Mapping[str, str]) -> str:
    # os.path.expanduser: $HOME, else the user's entry in the password database.
    return env.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir


def _expand(path: str, env: Mapping[str, str]) -> str:
    """os.path.expandvars(os.path.expanduser(path)) in the environment `env` (unknown variables stay)."""
    if path == "~" or path.startswith("~/"):
        path = _home(env).rstrip("/") + path[1:]

    def variable(match: re.Match[str]) -> str:
        name = match[1].strip("{}")
        return env.get(name, match[0])

    return _VARIABLE.sub(variable, path)

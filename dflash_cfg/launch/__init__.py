"""Read a vLLM or SGLang launch command: the target, the drafter and the drafts per step it asks for.

`dflash-cfg preflight -- <launch command>` checks a launch against the drafter's config.json (spec 4.3:
vLLM `num_speculative_tokens` = block_size - 1, SGLang `--speculative-num-draft-tokens` = block_size).
This package only reads the argv. It never imports vLLM or SGLang (neither is a dependency) and touches
nothing: argv in, `model.Launch` out, and `LaunchError` for anything it cannot read with confidence. A wrong
guess here would make preflight check a launch the engine will not run, so refusing beats guessing.

Where each part lives:
  - wrappers.py: the command head (NAME=value, env, nohup, numactl, uv run, torchrun, python -m, `serve`);
  - docker.py: `docker run` (options, mounts, image) and container paths mapped to the host;
  - flags.py: the engines' entry modules and option tables (`VLLM`, `SGLANG`);
  - argv.py: the scan of the engine arguments (and the unknown-option rule), shared helpers and messages;
  - vllm.py, sglang.py: each engine's forms and values;
  - configfile.py: an engine's `--config FILE` merged with the command line;
  - speculators.py: `vllm serve SPEC_DIR`, a speculators-format drafter served as the model (its verifier
    becomes the target), given the served model's config;
  - environment.py: the environment and working directory the wrappers give the engine, and the Hugging
    Face cache it then reads (used by preflight, which supplies this process's environment).

tests/engines/test_launch_differential.py holds this reading against vLLM's and SGLang's own argument
parsing on generated lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch.argv import ConfigReader, Context, show
from dflash_cfg.launch.docker import host_path, hub_cache
from dflash_cfg.launch.flags import API_SERVER, SGLANG_SERVER, VLLM_CLI
from dflash_cfg.launch.sglang import sglang_launch
from dflash_cfg.launch.vllm import vllm_launch
from dflash_cfg.launch.wrappers import PYTHON, Head, basename, python_module, subcommand, unwrap
from dflash_cfg.model import Container, Launch

__all__ = ["ConfigReader", "host_path", "hub_cache", "parse_launch"]


def parse_launch(argv: Sequence[str], read_config: ConfigReader | None = None) -> Launch:
    """Find the engine, target, drafter and drafts per step in a launch command (argv, already unquoted).

    `read_config(path)` returns the parsed YAML of a `--config FILE` (the path as this host sees it, after
    the container's mounts); without it a `--config` is refused, so that this function alone stays pure.
    """
    args = tuple(argv)
    if not args:
        raise LaunchError("empty launch command")
    head = unwrap(args)
    command, container = head.command, head.container
    if not command:
        raise LaunchError("no command after the environment assignments")
    if container is not None and container.entrypoint_known is False:
        # The vllm/vllm-openai images start `vllm serve` (recent) or the api_server module (older): read
        # the arguments both ways and accept only what both read alike.
        serve = _engine(args, ("vllm", "serve", *command), container, read_config)
        assert serve is not None
        api = _engine(args, ("python3", "-m", API_SERVER, *command), container, read_config, quiet=True)
        if api is None or _fields(api) != _fields(serve):
            raise LaunchError(
                f"{container.image}: the entrypoint of this image tag is 'vllm serve' or the api_server module"
                " (which ignores a positional model) depending on its version, and the two read these"
                " arguments differently; pass the model with --model, or the program with --entrypoint"
            )
        return _with_head(serve, head)
    launch = _engine(args, command, container, read_config)
    assert launch is not None
    return _with_head(launch, head)


def _with_head(launch: Launch, head: Head) -> Launch:
    return replace(launch, env=head.env, env_cleared=head.env_cleared, cwd=head.cwd)


def _engine(
    argv: tuple[str, ...],
    command: Sequence[str],
    container: Container | None,
    read_config: ConfigReader | None,
    quiet: bool = False,
) -> Launch | None:
    """The engine command (the program and its arguments, wrappers removed) read; quiet: None on error."""
    try:
        context = Context(argv, container, read_config)
        cmd = tuple(command)
        program = basename(cmd[0])
        if program == "vllm":
            return vllm_launch(context, cmd[subcommand(cmd, 1, "vllm") :], serve=True)
        if program == "sglang":
            return sglang_launch(context, cmd[subcommand(cmd, 1, "sglang") :], serve=True)
        if PYTHON.fullmatch(program):
            module, rest = python_module(cmd, 1)
            if module == API_SERVER:
                return vllm_launch(context, cmd[rest:], serve=False)
            if module == VLLM_CLI:
                return vllm_launch(context, cmd[subcommand(cmd, rest, f"python -m {VLLM_CLI}") :], serve=True)
            if module == SGLANG_SERVER:
                return sglang_launch(context, cmd[rest:], serve=False)
        raise LaunchError(f"not a vLLM or SGLang launch command: {show(cmd)}")
    except LaunchError:
        if quiet:
            return None
        raise


def _fields(launch: Launch) -> tuple[Any, ...]:
    return (
        launch.target,
        launch.target_revision,
        launch.drafter,
        launch.drafter_revision,
        launch.method,
        launch.num_speculative_tokens,
        launch.tensor_parallel_size,
        launch.config_file,
    )

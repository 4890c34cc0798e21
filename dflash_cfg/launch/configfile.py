"""An engine's `--config FILE` (YAML): its options merged with the command line, as each engine merges
them, the command line winning.

vLLM (`FlexibleArgumentParser._pull_args_from_config`) inserts them after the model and before the other
options; SGLang (`ConfigArgumentMerger`) before every option. `--config=FILE` is refused (neither engine
loads the file written that way), as is a second `--config`. The file is read through the injected
`read_config` (argv.ConfigReader), at its host path when the engine runs in a container.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch.argv import Context, json_kind, quote
from dflash_cfg.launch.docker import host_path
from dflash_cfg.launch.flags import SGLANG

# vLLM's `--model M` or `--model=M` (the one option its parser moves before the config file's options).
MODEL_OPTION = re.compile(r"--model(=.+)?", re.DOTALL)


def _config_path(context: Context, option: str, path: str) -> str:
    """The `--config FILE` as this host reads it (through the container's mounts)."""
    if context.read_config is None:
        raise LaunchError(f"{option}: options in {quote(path)} cannot be checked without reading the file")
    return path if context.container is None else host_path(context.container, path)


def _config_index(args: list[str], engine: str) -> int | None:
    """Where `--config FILE` stands; the engines read the file only from the two words `--config FILE`."""
    if args.count("--config") > 1:
        raise LaunchError(f"--config: given more than once; {engine} accepts one config file")
    for token in args:
        if token.startswith("--config="):
            raise LaunchError(
                f"{quote(token, 60)}: {engine} loads a config file only from '--config FILE' (two words);"
                " written with '=' the file is not read, so write '--config FILE'"
            )
    if "--config" not in args:
        return None
    index = args.index("--config")
    if index == len(args) - 1:
        raise LaunchError("--config: no config file given")
    return index


def vllm_config(context: Context, args: list[str], *, serve: bool) -> tuple[list[str], str | None]:
    """FlexibleArgumentParser._pull_args_from_config: the YAML's options inserted where vLLM puts them
    (after the model, before the other command-line options, so that the command line wins)."""
    index = _config_index(args, "vLLM")
    if index is None:
        return args, None
    file = args[index + 1]
    if file.split(".")[-1] not in ("yaml", "yml"):
        raise LaunchError(f"--config {quote(file)}: vLLM reads only .yaml or .yml config files")
    data = context.read_config(_config_path(context, "--config", file))  # type: ignore[misc]
    config = _vllm_config_args(file, data)
    rest = args[:index] + args[index + 2 :]
    if serve:
        # parse_args first moves the first --model to the front (as the positional), then pulls the file.
        model_at = next((k for k, a in enumerate(rest) if MODEL_OPTION.fullmatch(a)), None)
        if model_at is not None:
            if rest[model_at] == "--model":
                if model_at + 1 >= len(rest) or rest[model_at + 1].startswith("-"):
                    raise LaunchError("--model: expects a value")
                rest = [rest[model_at + 1], *rest[:model_at], *rest[model_at + 2 :]]
            else:
                rest = [rest[model_at].removeprefix("--model="), *rest[:model_at], *rest[model_at + 1 :]]
        if rest and not rest[0].startswith("-"):
            # The positional model wins over the file's `model` (serve.py: model_tag replaces model).
            return [rest[0], *_without_model(config), *rest[1:]], file
        if "--model" not in config:
            raise LaunchError(f"vllm serve: no model given, neither as the positional nor in {quote(file)}")
        return [*config, *rest], file
    if rest and not rest[0].startswith("-"):
        return [rest[0], *config, *rest[1:]], file
    return [*config, *rest], file


def _vllm_config_args(file: str, data: Any) -> list[str]:
    """FlexibleArgumentParser.load_config_file: each key becomes `--key` (booleans as flags, lists as
    several values, mappings as JSON)."""
    if not isinstance(data, dict):
        raise LaunchError(f"--config {quote(file)}: expected a mapping of option names, got {json_kind(data)}")
    args: list[str] = []
    for key, value in data.items():
        option = "--" + str(key)
        if isinstance(value, bool):
            if value:  # False adds `--no-KEY` when vLLM has it: a flag either way, no value read here
                args.append(option)
        elif isinstance(value, list):
            if value:
                args += [option, *(str(item) for item in value)]
        elif isinstance(value, dict):
            args += [option, _json(file, key, value)]
        else:
            args += [option, str(value)]
    return args


def _json(file: str, key: Any, value: dict[Any, Any]) -> str:
    """A mapping value as the engines pass it on (JSON); a date, set or bytes inside is not JSON."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError, RecursionError) as error:
        raise LaunchError(f"--config {quote(file)}: {quote(str(key))}: not JSON ({error})") from None


def _without_model(config: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for k, token in enumerate(config):
        if skip:
            skip = False
            continue
        if token == "--model" and k + 1 < len(config):
            skip = True
            continue
        out.append(token)
    return out


def sglang_config(context: Context, args: list[str]) -> tuple[list[str], str | None]:
    """server_args_config_parser.ConfigArgumentMerger: the YAML's options go before every command-line
    option (the command line wins); keys are used as written, `--KEY`."""
    index = _config_index(args, "SGLang")
    if index is None:
        return args, None
    file = args[index + 1]
    if not file.lower().endswith((".yaml", ".yml")):
        raise LaunchError(f"--config {quote(file)}: SGLang reads only .yaml or .yml config files")
    data = context.read_config(_config_path(context, "--config", file))  # type: ignore[misc]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise LaunchError(f"--config {quote(file)}: expected a mapping of option names, got {json_kind(data)}")
    config: list[str] = []
    for key, value in data.items():
        option = "--" + str(key)
        if "_" in option and option.replace("_", "-") in SGLANG:
            raise LaunchError(
                f"--config {quote(file)}: key {quote(str(key))}: SGLang versions differ on '_' in config keys;"
                f" write {option.replace('_', '-')[2:]}"
            )
        if isinstance(value, bool):
            if value:
                config.append(option)
        elif isinstance(value, list):
            if value:
                config += [option, *(str(item) for item in value)]
        elif isinstance(value, dict):
            config += [option, _json(file, key, value)]
        else:
            config += [option, str(value)]
    return [*config, *args[:index], *args[index + 2 :]], file

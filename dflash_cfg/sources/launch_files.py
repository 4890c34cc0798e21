"""The files a launch command names, read as the engine and its wrappers read them: an engine's `--config` YAML
and a `docker run --env-file`; and the launch itself, written once as a command line (`preflight --launch-file`).

Both are user input that reaches the parser before anything is checked, so each read is bounded: in bytes, and
for the YAML also once its aliases are expanded (a few-hundred-byte alias bomb otherwise expands to gigabytes
in the engines' own code, which walks the file to turn it into arguments). Every refusal is one LaunchError
line naming the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dflash_cfg.errors import LaunchError, PathError
from dflash_cfg.sources import files

CONFIG_MAX_BYTES = 1024 * 1024  # an engine's YAML config is a few hundred bytes
# Bounds on the YAML once its aliases are expanded.
CONFIG_MAX_NODES = 100_000
CONFIG_MAX_DEPTH = 64
ENV_FILE_MAX_BYTES = 1024 * 1024
LAUNCH_MAX_BYTES = 256 * 1024  # a launch line is a few hundred bytes; a ConfigMap value is at most 1 MiB


def read_launch(path: str) -> str:
    """The text of a launch written once (a ConfigMap key mounted as a file), for launch/shell.py to split."""
    try:
        raw = files.read(Path(path), LAUNCH_MAX_BYTES + 1)
    except PathError as exc:
        raise LaunchError(f"--launch-file {path!r}: {exc}") from None
    if len(raw) > LAUNCH_MAX_BYTES:
        raise LaunchError(f"--launch-file {path!r}: larger than {LAUNCH_MAX_BYTES} bytes, not a launch line")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise LaunchError(f"--launch-file {path!r}: not UTF-8 text") from None


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
        loader = yaml.SafeLoader(raw.decode("utf-8"))
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _bounded(path, node)
            data = loader.construct_document(node)
            _printable_ints(path, data)
            return data
        finally:
            loader.dispose()
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
        raise LaunchError(f"--config {path!r}: not YAML ({' '.join(str(exc).split())[:160]})") from None
    except (IndexError, KeyError, AttributeError):
        # PyYAML's constructor of a tagged scalar it cannot read: `!!float ''` (IndexError), `!!bool maybe`
        # (KeyError), `!!timestamp x` (AttributeError).
        raise LaunchError(
            f"--config {path!r}: a value does not fit its tag (!!float, !!int, !!bool or !!timestamp), not YAML"
        ) from None
    except ValueError as exc:  # e.g. an integer over Python's 4300-digit conversion limit
        raise LaunchError(f"--config {path!r}: a value cannot be read ({' '.join(str(exc).split())[:160]})") from None


def _printable_ints(path: str, data: Any) -> None:
    """Refuse an integer the engines could not turn back into an argument: a hexadecimal, octal or binary
    one is read past Python's 4300-digit limit (no limit for those bases), and str() then raises."""
    stack = [data]
    while stack:  # the tree is bounded already (_bounded); a recursive alias is refused there
        value = stack.pop()
        if isinstance(value, int) and not isinstance(value, bool):
            try:
                str(value)
            except ValueError:
                raise LaunchError(
                    f"--config {path!r}: an integer of more than 4300 digits, not an option value"
                ) from None
        elif isinstance(value, dict):
            stack += [*value.keys(), *value.values()]
        elif isinstance(value, (list, tuple, set)):
            stack += list(value)


def _bounded(path: str, root: Any) -> None:
    """Refuse a YAML document whose alias-expanded tree is too large or too deep, or refers to itself."""
    import yaml

    count = 0
    stack: list[tuple[Any, int, tuple[int, ...]]] = [(root, 1, ())]
    while stack:
        node, depth, ancestors = stack.pop()
        count += 1
        if count > CONFIG_MAX_NODES:
            raise LaunchError(
                f"--config {path!r}: more than {CONFIG_MAX_NODES} values once its aliases are expanded"
                " (an alias bomb?), not an engine config"
            )
        if depth > CONFIG_MAX_DEPTH:
            raise LaunchError(f"--config {path!r}: nested deeper than {CONFIG_MAX_DEPTH} levels, not an engine config")
        if id(node) in ancestors:
            raise LaunchError(f"--config {path!r}: a recursive alias (a value that contains itself)")
        inner = (*ancestors, id(node))
        if isinstance(node, yaml.SequenceNode):
            stack += [(child, depth + 1, inner) for child in node.value]
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack += [(key, depth + 1, inner), (value, depth + 1, inner)]


def read_env_file(cwd: str | None, path: str) -> str:
    """A docker --env-file, read where the docker client reads it (its working directory)."""
    full = Path(path) if cwd is None or path.startswith("/") else Path(cwd) / path
    try:
        raw = files.read(full, ENV_FILE_MAX_BYTES)
        if len(raw) > ENV_FILE_MAX_BYTES:
            raise LaunchError(f"docker run --env-file {path!r}: larger than {ENV_FILE_MAX_BYTES} bytes")
        return raw.decode("utf-8")
    except PathError as exc:
        raise LaunchError(f"docker run --env-file {path!r}: {exc}") from None
    except UnicodeDecodeError:
        raise LaunchError(f"docker run --env-file {path!r}: not UTF-8 text") from None

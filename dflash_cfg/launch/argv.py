"""The one walk over an engine's arguments (`scan`), and the helpers and messages every part of the
parser shares.

Options the engine tables (flags.py) do not list are skipped. The rule for the tokens after one (`--foo x`):
an unknown option may be a flag or take values, so the bare tokens right after it are read as its values
whenever they cannot be the model, which is always for SGLang and the api_server (their model is an option)
and, for `vllm serve`, once the model is fixed (a positional already seen, or `--model` anywhere). Before
that, `vllm serve --foo x` is ambiguous and raises LaunchError naming `--foo`: put the model right after
`serve`. A bare token that is not the model and follows no such option is an error, as in the engines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch.flags import API_SERVER, FLAG, MANY, SPEC_CONFIG, TP
from dflash_cfg.model import Container, Launched

# argparse reads "-1" or "-0.5" as a value, not an option, when no option looks like a number.
_NEGATIVE = re.compile(r"-[0-9]+(\.[0-9]*)?|-\.[0-9]+")
_DIGITS = re.compile(r"[0-9]{1,18}")

# Reads the YAML of an engine's `--config FILE` (the path as this host sees it): injected, so that the
# parser itself never opens a file.
ConfigReader = Callable[[str], Any]


@dataclass(frozen=True)
class Context:
    """What every part of one parse may need besides the engine's arguments."""

    argv: tuple[str, ...]  # the whole command as given
    container: Container | None
    read_config: ConfigReader | None


@dataclass(frozen=True)
class Args:
    """What one scan of the engine arguments found."""

    options: dict[str, list[tuple[str, str]]]  # canonical name -> [(option as written, value)] in order
    dotted: list[tuple[str, str, str]]  # (option base as written, dotted key path, value), vLLM only
    positional: str | None  # the model positional (`vllm serve`)


def _is_option(token: str) -> bool:
    return token.startswith("-") and len(token) > 1 and not _NEGATIVE.fullmatch(token)


def scan(args: Sequence[str], table: dict[str, tuple[str, int]], *, engine: Launched, positional: bool) -> Args:
    """Walk the engine arguments once. `positional`: a bare token may be the model (`vllm serve`)."""
    options: dict[str, list[tuple[str, str]]] = {}
    dotted: list[tuple[str, str, str]] = []
    model: str | None = None
    # `vllm serve` moves the first `--model` to the positional before parsing, wherever it stands.
    model_fixed = positional and any(a == "--model" or a.startswith("--model=") for a in args)
    pending: str | None = None  # option whose values the following bare tokens are
    pending_known = False  # ... and whether it is a known nargs="+" option rather than an unknown one
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":  # argparse: everything after is positional
            for rest in args[i:]:
                model = _positional(rest, model, model_fixed, positional, engine)
                model_fixed = True
            break
        if not _is_option(token):
            if pending is not None:
                if not (pending_known or model_fixed or not positional):
                    raise LaunchError(
                        f"{pending}: cannot tell whether {quote(token)} is its value or the model to serve"
                        " (dflash-cfg does not know this option); put the model right after 'serve' or"
                        " pass --model"
                    )
                continue
            model = _positional(token, model, model_fixed, positional, engine)
            model_fixed = True
            continue
        pending = None
        name, eq, inline = token.partition("=")
        value: str | None = inline if eq else None
        if engine == "vllm" and name.startswith("--"):
            # FlexibleArgumentParser: `_` and `-` are alike in a name, up to the first dot.
            head, dot, tail = name.partition(".")
            name = head.replace("_", "-") + dot + tail
        if engine == "vllm" and "." in name:
            # A dotted JSON option always takes the next token, whatever it looks like.
            if value is None:
                if i >= len(args):
                    raise LaunchError(f"{name}: expects a value")
                value = args[i]
                i += 1
            base, _, key = name.partition(".")
            if table.get(base, ("", 0))[0] == SPEC_CONFIG:
                dotted.append((base, key, value))
            continue
        if engine == "vllm" and name.startswith("-O") and name not in table:
            # -O3, -O=3, -Odecode stand alone; `-O 3` or older `-O '{"level": 3}'` take the next token.
            if token == "-O" and i < len(args) and not _is_option(args[i]):
                i += 1
            continue
        canonical, arity = table.get(name, ("", -1))
        if arity == FLAG:
            if canonical:  # a flag whose presence is read
                options.setdefault(canonical, []).append((name, ""))
            continue
        if arity == -1 or (arity == MANY and value is None):  # unknown, or nargs="+" without `=`
            if value is None:
                pending, pending_known = token, arity == MANY
            continue
        if value is None:
            if i >= len(args) or _is_option(args[i]):
                raise LaunchError(f"{name}: expects a value")
            value = args[i]
            i += 1
        if canonical:
            options.setdefault(canonical, []).append((name, value))
    return Args(options=options, dotted=dotted, positional=model)


def _positional(token: str, model: str | None, model_fixed: bool, positional: bool, engine: Launched) -> str:
    if not positional:
        if engine == "vllm":
            raise LaunchError(
                f"unexpected argument {quote(token)}: {API_SERVER} ignores a positional model; pass --model"
            )
        raise LaunchError(f"unexpected argument {quote(token)}: SGLang takes the model as --model-path")
    if model is not None:
        raise LaunchError(f"unexpected argument {quote(token)}: vllm serve takes one model, already {quote(model)}")
    if model_fixed:
        raise LaunchError(f"unexpected argument {quote(token)}: the model is already given with --model")
    return token


def last(found: Args, canonical: str) -> tuple[str, str] | None:
    values = found.options.get(canonical)
    return values[-1] if values else None


def positive_int(option: str, text: str) -> int:
    if not _DIGITS.fullmatch(text) or int(text) < 1:
        raise LaunchError(f"{option}: expected a positive integer, got {quote(text)}")
    return int(text)


def size(found: Args, canonical: str) -> int:
    """A parallel size option's value (the last given), 1 when the launch does not give it."""
    option = last(found, canonical)
    return 1 if option is None else positive_int(*option)


def tensor_parallel(found: Args) -> int:
    return size(found, TP)


def named(option: str, text: str) -> str:
    # An empty model or drafter would make preflight look for "" on the Hub or in the working directory.
    if not text:
        raise LaunchError(f"{option}: empty model name or path")
    return text


# --- messages -------------------------------------------------------------------------------------


def json_kind(value: Any) -> str:
    kinds = {list: "a list", dict: "an object", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return kinds.get(type(value), type(value).__name__)


def quote(text: str, limit: int = 80) -> str:
    # repr keeps a message on one line whatever the token holds (JSON often spans lines).
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def show(tokens: Sequence[str]) -> str:
    head = " ".join(quote(t, 40) if not re.fullmatch(r"[\w@%+=:,./-]+", t) else t for t in tokens[:3])
    return head + (" ..." if len(tokens) > 3 else "")

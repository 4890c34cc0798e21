"""Read a vLLM or SGLang launch command: the target, the drafter and the drafts per step it asks for.

`dflash-cfg preflight -- <launch command>` checks a launch against the drafter's config.json (spec 4.3:
vLLM `num_speculative_tokens` = block_size - 1, SGLang `--speculative-num-draft-tokens` = block_size).
This module only reads the argv. It never imports vLLM or SGLang (neither is a dependency) and touches
nothing: argv in, `Launch` out, and `LaunchError` for anything it cannot read with confidence. A wrong
guess here would make preflight check a launch the engine will not run, so refusing beats guessing.

Forms accepted, as read in the engines' own sources:

vLLM (`vllm/utils/argparse_utils.py` FlexibleArgumentParser, `vllm/engine/arg_utils.py`,
`vllm/entrypoints/openai/cli_args.py` make_arg_parser, `vllm/entrypoints/cli/{main,serve}.py`):
  - `vllm serve MODEL ...` (any path to a `vllm` executable) and `python -m vllm.entrypoints.cli.main serve`;
    the model is the positional, or `--model M` / `--model=M`, which the parser moves to the positional
    (the first `--model` is the one used).
  - `python -m vllm.entrypoints.openai.api_server --model M`: that `__main__` never copies the positional
    `model_tag` into `model`, so there the model must come from `--model`.
  - Option names may use `_` for `-` (`--tensor_parallel_size`); `--opt value` and `--opt=value` are alike.
  - `--speculative-config`/`-sc` takes JSON (keys `method`, `model`, `num_speculative_tokens`, `revision`
    of `SpeculativeConfig`, `vllm/config/speculative.py`). Dotted `--speculative-config.KEY VALUE` (or
    `-sc.KEY=VALUE`) options are gathered into one dict, each VALUE read as JSON and else kept as a string.
    The parser appends that dict after everything else, so it *replaces* a JSON `--speculative-config`
    rather than merging with it, and `-sc.` and `--speculative-config.` spellings make two dicts of which
    one is dropped: both mixes are refused here instead of reproducing a silent loss.
  - `--spec-method/--spec-model/--spec-tokens` (vllm #42476) fill the same three keys; setting a key both
    ways is refused by vLLM ("mutually exclusive"), and so here.
  - `--tensor-parallel-size`/`-tp`, `--revision` (the string "None" means unset, vLLM's nullable_str).
  - `method` may be absent: vLLM detects DFlash from the drafter name or config; it stays None here.
    A served model that is itself a `speculators` checkpoint is swapped for its verifier inside vLLM,
    which no argv shows; preflight has to read that config.
SGLang (`python/sglang/srt/server_args.py`, `python/sglang/launch_server.py`, `python/sglang/cli/serve.py`):
  - `python -m sglang.launch_server --model-path M ...` and `sglang serve [M] ...`; `sglang serve` takes
    a positional model only as its first argument (after dropping `--model-type X`) and turns it into a
    leading `--model-path`, so an explicit `--model-path` wins over it.
  - `--model-path`/`--model`, `--revision`, `--speculative-algorithm`, `--speculative-draft-model-path`/
    `--speculative-draft-model`, `--speculative-draft-model-revision`, `--speculative-num-draft-tokens`,
    `--tp-size`/`--tensor-parallel-size`, and `--tp`, which argparse accepts as the unique prefix of
    `--tp-size` (abbreviations in general are not resolved here).
Both: leading `NAME=value` assignments and `env [-i] [-u NAME] NAME=value ...` are skipped; `--config FILE`
(options read from YAML) is refused, since a pure parser cannot see them.

Options this module does not know are skipped. The rule for the tokens after one (`--foo x`): an unknown
option may be a flag or take values, so the bare tokens right after it are read as its values whenever
they cannot be the model, which is always for SGLang and the api_server (their model is an option) and,
for `vllm serve`, once the model is fixed (a positional already seen, or `--model` anywhere). Before that,
`vllm serve --foo x` is ambiguous and raises LaunchError naming `--foo`: put the model right after
`serve`. A bare token that is not the model and follows no such option is an error, as in the engines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from dflash_cfg.errors import LaunchError

Engine = Literal["vllm", "sglang"]

# Canonical names for the options whose values are read; an empty name means "known, value ignored".
MODEL = "model"
REVISION = "revision"
TP = "tp"
CONFIG = "config"
SPEC_CONFIG = "spec_config"
SPEC_METHOD = "spec_method"
SPEC_MODEL = "spec_model"
SPEC_TOKENS = "spec_tokens"
ALGORITHM = "algorithm"
DRAFT = "draft"
DRAFT_REVISION = "draft_revision"
DRAFT_TOKENS = "draft_tokens"

# Arity: FLAG takes nothing, VALUE exactly one token, MANY every bare token that follows (nargs="+").
FLAG, VALUE, MANY = 0, 1, 2

# Only common options whose arity is not in doubt are listed: a flag listed as taking a value would
# swallow the model that follows it. Everything else goes through the unknown-option rule.
_VLLM: dict[str, tuple[str, int]] = {
    "--model": (MODEL, VALUE),
    "--revision": (REVISION, VALUE),
    "--tensor-parallel-size": (TP, VALUE),
    "-tp": (TP, VALUE),
    "--speculative-config": (SPEC_CONFIG, VALUE),
    "-sc": (SPEC_CONFIG, VALUE),
    "--spec-method": (SPEC_METHOD, VALUE),
    "--spec-model": (SPEC_MODEL, VALUE),
    "--spec-tokens": (SPEC_TOKENS, VALUE),
    "--config": (CONFIG, VALUE),
    **{
        name: ("", VALUE)
        for name in (
            "--tokenizer",
            "--tokenizer-revision",
            "--code-revision",
            "--tokenizer-mode",
            "--host",
            "--port",
            "--max-model-len",
            "--gpu-memory-utilization",
            "--dtype",
            "--kv-cache-dtype",
            "--max-num-seqs",
            "--max-num-batched-tokens",
            "--pipeline-parallel-size",
            "-pp",
            "--data-parallel-size",
            "-dp",
            "--quantization",
            "--attention-backend",
            "--download-dir",
            "--load-format",
            "--seed",
            "--block-size",
            "--chat-template",
            "--tool-call-parser",
            "--reasoning-parser",
            "--compilation-config",
            "-cc",
            "--hf-overrides",
            "--limit-mm-per-prompt",
            "--uvicorn-log-level",
            "--distributed-executor-backend",
            "--api-server-count",
            "-asc",
            "--generation-config",
        )
    },
    "--served-model-name": ("", MANY),
    "--cudagraph-capture-sizes": ("", MANY),
    **{
        name: ("", FLAG)
        for name in (
            "--trust-remote-code",
            "--enforce-eager",
            "--enable-prefix-caching",
            "--no-enable-prefix-caching",
            "--enable-chunked-prefill",
            "--no-enable-chunked-prefill",
            "--disable-log-stats",
            "--disable-log-requests",
            "--enable-log-requests",
            "--enable-auto-tool-choice",
            "--headless",
            "--enable-expert-parallel",
            "--async-scheduling",
            "--no-async-scheduling",
            "--grpc",
        )
    },
}

_SGLANG: dict[str, tuple[str, int]] = {
    "--model-path": (MODEL, VALUE),
    "--model": (MODEL, VALUE),
    "--revision": (REVISION, VALUE),
    "--tp-size": (TP, VALUE),
    "--tensor-parallel-size": (TP, VALUE),
    "--tp": (TP, VALUE),
    "--speculative-algorithm": (ALGORITHM, VALUE),
    "--speculative-draft-model-path": (DRAFT, VALUE),
    "--speculative-draft-model": (DRAFT, VALUE),
    "--speculative-draft-model-revision": (DRAFT_REVISION, VALUE),
    "--speculative-num-draft-tokens": (DRAFT_TOKENS, VALUE),
    "--config": (CONFIG, VALUE),
    **{
        name: ("", VALUE)
        for name in (
            "--model-type",
            "--tokenizer-path",
            "--host",
            "--port",
            "--mem-fraction-static",
            "--context-length",
            "--dtype",
            "--kv-cache-dtype",
            "--quantization",
            "--dp-size",
            "--dp",
            "--pp-size",
            "--attention-backend",
            "--speculative-num-steps",
            "--speculative-eagle-topk",
            "--speculative-dflash-draft-window-size",
            "--chunked-prefill-size",
            "--max-running-requests",
            "--cuda-graph-max-bs",
            "--served-model-name",
            "--log-level",
            "--load-format",
            "--tool-call-parser",
            "--reasoning-parser",
            "--chat-template",
            "--api-key",
            "--nnodes",
            "--node-rank",
            "--dist-init-addr",
            "--page-size",
            "--json-model-override-args",
        )
    },
    **{
        name: ("", FLAG)
        for name in (
            "--trust-remote-code",
            "--enable-torch-compile",
            "--disable-radix-cache",
            "--disable-cuda-graph",
            "--enable-dp-attention",
            "--skip-server-warmup",
            "--enable-metrics",
        )
    },
}

API_SERVER = "vllm.entrypoints.openai.api_server"
VLLM_CLI = "vllm.entrypoints.cli.main"
SGLANG_SERVER = "sglang.launch_server"

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
_PYTHON = re.compile(r"python[0-9.]*")
# argparse reads "-1" or "-0.5" as a value, not an option, when no option looks like a number.
_NEGATIVE = re.compile(r"-[0-9]+(\.[0-9]*)?|-\.[0-9]+")
_DIGITS = re.compile(r"[0-9]{1,18}")
# CPython interpreter switches that take no argument (python --help); X and W take one.
_PY_FLAGS = frozenset("bBdEhiIOPqRsSuvVx")


@dataclass(frozen=True)
class Launch:
    engine: Engine
    target: str  # model path or Hub id of the target
    target_revision: str | None
    drafter: str | None  # drafter path or Hub id (None if the command has no speculative drafter)
    drafter_revision: str | None
    method: str | None  # vLLM speculative method ("dflash"...) / SGLang algorithm ("DFLASH"...), as given
    num_speculative_tokens: int | None  # vLLM: speculative_config.num_speculative_tokens
    num_draft_tokens: int | None  # SGLang: --speculative-num-draft-tokens
    tensor_parallel_size: int  # default 1
    argv: tuple[str, ...]  # the command as given

    @property
    def environment(self) -> tuple[tuple[str, str], ...]:
        """The leading `NAME=value` assignments (shell syntax, applied by the shell to the program)."""
        return tuple((t.split("=", 1)[0], t.split("=", 1)[1]) for t in self.argv[: _assignments(self.argv)])

    @property
    def command(self) -> tuple[str, ...]:
        """What --exec runs: the program that was parsed (or `env`, as given) and its arguments."""
        return self.argv[_assignments(self.argv) :]


@dataclass(frozen=True)
class _Args:
    """What one scan of the engine arguments found."""

    options: dict[str, list[tuple[str, str]]]  # canonical name -> [(option as written, value)] in order
    dotted: list[tuple[str, str, str]]  # (option base as written, dotted key path, value), vLLM only
    positional: str | None  # the model positional (`vllm serve`)


def parse_launch(argv: Sequence[str]) -> Launch:
    """Find the engine, target, drafter and drafts per step in a launch command (argv, already unquoted)."""
    args = tuple(argv)
    start = _skip_environment(args)
    if start >= len(args):
        raise LaunchError("empty launch command" if not args else "no command after the environment assignments")
    program = _basename(args[start])
    if program == "vllm":
        return _vllm(args, _subcommand(args, start + 1, "vllm"), serve=True)
    if program == "sglang":
        return _sglang(args, _subcommand(args, start + 1, "sglang"), serve=True)
    if _PYTHON.fullmatch(program):
        module, rest = _python_module(args, start + 1)
        if module == API_SERVER:
            return _vllm(args, rest, serve=False)
        if module == VLLM_CLI:
            return _vllm(args, _subcommand(args, rest, f"python -m {VLLM_CLI}"), serve=True)
        if module == SGLANG_SERVER:
            return _sglang(args, rest, serve=False)
    raise LaunchError(f"not a vLLM or SGLang launch command: {_show(args[start:])}")


# --- command head ---------------------------------------------------------------------------------


def _basename(token: str) -> str:
    return token.replace("\\", "/").rsplit("/", 1)[-1]


def _assignments(args: Sequence[str]) -> int:
    """How many leading tokens are shell `NAME=value` assignments."""
    i = 0
    while i < len(args) and _ASSIGNMENT.fullmatch(args[i]):
        i += 1
    return i


def _skip_environment(args: tuple[str, ...]) -> int:
    """Index of the program after `NAME=value` assignments and `env [options] NAME=value ...`."""
    i = 0
    while i < len(args):
        if _ASSIGNMENT.fullmatch(args[i]):
            i += 1
        elif _basename(args[i]) == "env":
            i += 1
            while i < len(args):
                token = args[i]
                if _ASSIGNMENT.fullmatch(token) or token in ("-i", "--ignore-environment", "-", "-0", "--null"):
                    i += 1
                elif token in ("-u", "--unset", "-C", "--chdir"):
                    i += 2
                elif token.startswith(("--unset=", "--chdir=")) or (token[:2] in ("-u", "-C") and len(token) > 2):
                    i += 1
                else:
                    i += token == "--"
                    break
        else:
            break
    return i


def _subcommand(args: tuple[str, ...], i: int, program: str) -> int:
    """Index after `serve`, the only subcommand that launches a server."""
    if i >= len(args):
        raise LaunchError(f"{program}: no subcommand; expected '{program} serve ...'")
    if args[i] != "serve":
        raise LaunchError(f"{program} {_show(args[i : i + 1])}: not a server launch; expected '{program} serve ...'")
    return i + 1


def _python_module(args: tuple[str, ...], i: int) -> tuple[str | None, int]:
    """The module of `python [switches] -m MODULE ...` and the index after it; None for a script or -c."""
    while i < len(args):
        token = args[i]
        if not token.startswith("-") or token.startswith("--") or token == "-":
            return None, i
        cluster = token[1:]
        for k, switch in enumerate(cluster):
            if switch in _PY_FLAGS:
                continue
            if switch in "XW":  # -X opt / -Xopt
                i += 1 if k + 1 < len(cluster) else 2
                break
            if switch == "m":  # -m module / -mmodule, possibly after flags: -um module
                module = cluster[k + 1 :]
                if module:
                    return module, i + 1
                if i + 1 >= len(args):
                    raise LaunchError("python -m: no module given")
                return args[i + 1], i + 2
            return None, i  # -c and anything else: not a module launch
        else:
            i += 1
    return None, i


# --- argument scan --------------------------------------------------------------------------------


def _is_option(token: str) -> bool:
    return token.startswith("-") and len(token) > 1 and not _NEGATIVE.fullmatch(token)


def _scan(args: Sequence[str], table: dict[str, tuple[str, int]], *, engine: Engine, positional: bool) -> _Args:
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
                        f"{pending}: cannot tell whether {_quote(token)} is its value or the model to serve"
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
    return _Args(options=options, dotted=dotted, positional=model)


def _positional(token: str, model: str | None, model_fixed: bool, positional: bool, engine: Engine) -> str:
    if not positional:
        if engine == "vllm":
            raise LaunchError(
                f"unexpected argument {_quote(token)}: {API_SERVER} ignores a positional model; pass --model"
            )
        raise LaunchError(f"unexpected argument {_quote(token)}: SGLang takes the model as --model-path")
    if model is not None:
        raise LaunchError(f"unexpected argument {_quote(token)}: vllm serve takes one model, already {_quote(model)}")
    if model_fixed:
        raise LaunchError(f"unexpected argument {_quote(token)}: the model is already given with --model")
    return token


def _last(found: _Args, canonical: str) -> tuple[str, str] | None:
    values = found.options.get(canonical)
    return values[-1] if values else None


def _refuse_config(found: _Args) -> None:
    if (config := _last(found, CONFIG)) is not None:
        raise LaunchError(
            f"{config[0]}: options in {_quote(config[1])} cannot be checked; put them on the command line"
        )


def _positive_int(option: str, text: str) -> int:
    if not _DIGITS.fullmatch(text) or int(text) < 1:
        raise LaunchError(f"{option}: expected a positive integer, got {_quote(text)}")
    return int(text)


def _tensor_parallel(found: _Args) -> int:
    tp = _last(found, TP)
    return 1 if tp is None else _positive_int(*tp)


# --- vLLM -----------------------------------------------------------------------------------------


def _vllm(argv: tuple[str, ...], start: int, *, serve: bool) -> Launch:
    found = _scan(argv[start:], _VLLM, engine="vllm", positional=serve)
    _refuse_config(found)
    if serve:
        models = found.options.get(MODEL)
        if found.positional is not None:
            target = _named("vllm serve: the model", found.positional)
        elif models:
            target = _named(*models[0])
        else:
            raise LaunchError("vllm serve: no model given; expected 'vllm serve MODEL ...' or --model MODEL")
    else:
        model = _last(found, MODEL)
        if model is None:
            raise LaunchError(f"--model: required with python -m {API_SERVER} (it ignores a positional model)")
        target = _named(*model)
    revision = _last(found, REVISION)
    spec, spec_option = _speculative_config(found)
    return Launch(
        engine="vllm",
        target=target,
        target_revision=None if revision is None else _nullable(revision[1]),
        drafter=_spec_str(spec, "model", spec_option),
        drafter_revision=_spec_str(spec, "revision", spec_option),
        method=_spec_str(spec, "method", spec_option),
        num_speculative_tokens=_spec_tokens(spec, spec_option),
        num_draft_tokens=None,
        tensor_parallel_size=_tensor_parallel(found),
        argv=argv,
    )


def _named(option: str, text: str) -> str:
    # An empty model or drafter would make preflight look for "" on the Hub or in the working directory.
    if not text:
        raise LaunchError(f"{option}: empty model name or path")
    return text


def _nullable(text: str) -> str | None:
    # vLLM's nullable_str / optional_type: "" and "None" mean unset.
    return None if text in ("", "None") else text


def _speculative_config(found: _Args) -> tuple[dict[str, Any] | None, str]:
    """The speculative_config dict vLLM builds, and the option to name in messages about it."""
    full = _last(found, SPEC_CONFIG)
    bases = sorted({base for base, _, _ in found.dotted})
    if len(bases) > 1:
        raise LaunchError(
            f"{bases[0]}.KEY and {bases[1]}.KEY both given: vLLM keeps one of the two dicts and drops the"
            " other; use one spelling"
        )
    if full is not None and bases:
        raise LaunchError(
            f"{full[0]}: given both as JSON and as dotted {bases[0]}.KEY options; vLLM keeps only the dotted"
            " keys and drops the JSON, so pass one form"
        )
    spec: dict[str, Any] | None = None
    option = full[0] if full is not None else (bases[0] if bases else "--speculative-config")
    if full is not None and _nullable(full[1]) is not None:
        parsed = _json(full[0], full[1])
        if parsed is not None and not isinstance(parsed, dict):
            raise LaunchError(f"{full[0]}: expected a JSON object, got {_json_kind(parsed)}")
        spec = parsed
    if bases:
        spec = {}
        for _, key, text in found.dotted:
            _merge(spec, _nested(key, text))
    if spec is not None:
        # create_speculative_config normalises `-` to `_` in keys (`num-speculative-tokens`).
        spec = {str(key).replace("-", "_"): value for key, value in spec.items()}
    for canonical, key in ((SPEC_METHOD, "method"), (SPEC_MODEL, "model"), (SPEC_TOKENS, "num_speculative_tokens")):
        alias = _last(found, canonical)
        if alias is None:
            continue
        if spec is None:
            spec = {}
        if key in spec:
            raise LaunchError(f"{alias[0]} and {option}['{key}'] are both given; vLLM refuses them together")
        spec[key] = _positive_int(*alias) if canonical == SPEC_TOKENS else alias[1]
    return spec, option


def _json(option: str, text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise LaunchError(f"{option}: JSON nested too deeply") from None
    except json.JSONDecodeError as error:
        raise LaunchError(
            f"{option}: not valid JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    except ValueError as error:  # e.g. an integer longer than Python's int-string limit
        raise LaunchError(f"{option}: not valid JSON ({error})") from None


def _json_kind(value: Any) -> str:
    kinds = {list: "a list", dict: "an object", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return kinds.get(type(value), type(value).__name__)


def _describe(value: Any) -> str:
    # Scalars are shown as JSON would spell them; a list or object is only named (it may be large).
    if isinstance(value, str):
        return f"the string {_quote(value)}"
    if isinstance(value, (int, float, bool)):
        return _quote(json.dumps(value))[1:-1]
    return _json_kind(value)


def _nested(key: str, text: str) -> dict[str, Any]:
    """One dotted option as a dict, the way FlexibleArgumentParser builds it."""
    keys = key.split(".")
    value: Any
    if keys[-1].endswith("+"):  # `--json-arg.key+ a,b` appends list elements
        keys[-1] = keys[-1][:-1]
        value = text.split(",")
    else:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            value = text
    for part in reversed(keys):
        value = {part: value}
    result: dict[str, Any] = value
    return result


def _merge(original: dict[str, Any], update: dict[str, Any]) -> None:
    # As FlexibleArgumentParser's recursive_dict_update: dicts merge, lists extend, the rest is replaced.
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(original.get(key), dict):
            _merge(original[key], value)
        elif isinstance(value, list) and isinstance(original.get(key), list):
            original[key] = original[key] + value
        else:
            original[key] = value


def _spec_str(spec: dict[str, Any] | None, key: str, option: str) -> str | None:
    value = None if spec is None else spec.get(key)
    if value == "" and key == "model":
        raise LaunchError(f"{option}: model is empty")
    if value is None or isinstance(value, str):
        return value
    raise LaunchError(f"{option}: {key} must be a string, got {_describe(value)}")


def _spec_tokens(spec: dict[str, Any] | None, option: str) -> int | None:
    value = None if spec is None else spec.get("num_speculative_tokens")
    if value is None:
        return None
    # SpeculativeConfig: `num_speculative_tokens: int = Field(gt=0)`; a JSON true is not a count.
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise LaunchError(f"{option}: num_speculative_tokens must be a positive integer, got {_describe(value)}")
    return value


# --- SGLang ---------------------------------------------------------------------------------------


def _sglang(argv: tuple[str, ...], start: int, *, serve: bool) -> Launch:
    rest = list(argv[start:])
    positional: str | None = None
    if serve:
        # cli/serve.py drops `--model-type X` first, then reads a leading bare token as `--model-path`.
        first = _first_after_model_type(rest)
        if first < len(rest) and not rest[first].startswith("-"):
            positional = rest.pop(first)
    found = _scan(rest, _SGLANG, engine="sglang", positional=False)
    _refuse_config(found)
    model = _last(found, MODEL)
    if model is not None:
        target = _named(*model)
    elif positional is not None:
        target = _named("sglang serve: the model", positional)
    else:
        raise LaunchError("--model-path: required; no model given to SGLang")
    revision = _last(found, REVISION)
    algorithm = _last(found, ALGORITHM)
    draft = _last(found, DRAFT)
    draft_revision = _last(found, DRAFT_REVISION)
    draft_tokens = _last(found, DRAFT_TOKENS)
    return Launch(
        engine="sglang",
        target=target,
        target_revision=None if revision is None else revision[1],
        drafter=None if draft is None else _named(*draft),
        drafter_revision=None if draft_revision is None else draft_revision[1],
        method=None if algorithm is None else algorithm[1],
        num_speculative_tokens=None,
        num_draft_tokens=None if draft_tokens is None else _positive_int(*draft_tokens),
        tensor_parallel_size=_tensor_parallel(found),
        argv=argv,
    )


def _first_after_model_type(args: list[str]) -> int:
    """Index of the first argument that is not `--model-type X` / `--model-type=X`."""
    i = 0
    while i < len(args):
        if args[i] == "--model-type":
            i += 2
        elif args[i].startswith("--model-type="):
            i += 1
        else:
            break
    return i


# --- messages -------------------------------------------------------------------------------------


def _quote(text: str, limit: int = 80) -> str:
    # repr keeps a message on one line whatever the token holds (JSON often spans lines).
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def _show(tokens: Sequence[str]) -> str:
    head = " ".join(_quote(t, 40) if not re.fullmatch(r"[\w@%+=:,./-]+", t) else t for t in tokens[:3])
    return head + (" ..." if len(tokens) > 3 else "")

"""A vLLM launch: the target, the drafter and the drafts per step (`num_speculative_tokens`).

Forms accepted, as read in vLLM's own sources (`vllm/utils/argparse_utils.py` FlexibleArgumentParser,
`vllm/engine/arg_utils.py`, `vllm/entrypoints/openai/cli_args.py` make_arg_parser,
`vllm/entrypoints/cli/{main,serve}.py`); the option table is `flags.VLLM`:
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
  - `--tensor-parallel-size`/`-tp`, `--pipeline-parallel-size`/`-pp`, `--revision` (the string "None" means
    unset, vLLM's nullable_str), `--max-model-len` (human-readable: `32k`, `32K`, `25.6k`; `-1`/`auto` leave
    it to the target; a length too large for vLLM to read is refused, as vLLM refuses the launch).
  - `method` may be absent: vLLM detects DFlash from the drafter name or config; it stays None here.
    A served model that is itself a `speculators` checkpoint is swapped for its verifier inside vLLM,
    which no argv shows: preflight reads that config and speculators.py rewrites the launch.
  - vLLM before 0.8: `--speculative-model`, `--num-speculative-tokens`,
    `--speculative-draft-tensor-parallel-size`.
  - `draft_tensor_parallel_size` (or the old flag) must be 1 or the tensor-parallel size, as vLLM demands.
  - vLLM refuses `vllm serve --opt ... --served-model-name ...` with no model first; so does this parser.
  - `--config FILE`: configfile.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch.argv import (
    Args,
    Context,
    json_kind,
    last,
    named,
    positive_int,
    quote,
    scan,
    size,
    tensor_parallel,
)
from dflash_cfg.launch.configfile import MODEL_OPTION, vllm_config
from dflash_cfg.launch.flags import (
    API_SERVER,
    DRAFT_TP,
    EXECUTOR,
    MAX_LEN,
    MODEL,
    OLD_MODEL,
    OLD_TOKENS,
    PP,
    REVISION,
    SPEC_CONFIG,
    SPEC_METHOD,
    SPEC_MODEL,
    SPEC_TOKENS,
    VLLM,
)
from dflash_cfg.model import Launch


def vllm_launch(context: Context, args: Sequence[str], *, serve: bool) -> Launch:
    """`args`: what follows `serve` (or the api_server module)."""
    engine_args = list(args)
    if serve:
        _served_model_name_first(engine_args)
    engine_args, config_file = vllm_config(context, engine_args, serve=serve)
    found = scan(engine_args, VLLM, engine="vllm", positional=serve)
    if serve:
        models = found.options.get(MODEL)
        if found.positional is not None:
            target = named("vllm serve: the model", found.positional)
        elif models:
            target = named(*models[0])
        else:
            raise LaunchError("vllm serve: no model given; expected 'vllm serve MODEL ...' or --model MODEL")
    else:
        model = last(found, MODEL)
        if model is None:
            raise LaunchError(f"--model: required with python -m {API_SERVER} (it ignores a positional model)")
        target = named(*model)
    revision = last(found, REVISION)
    spec, spec_option = _speculative_config(found)
    tp = tensor_parallel(found)
    _same_draft_tp(found, spec, spec_option, tp)
    executor = last(found, EXECUTOR)
    return Launch(
        engine="vllm",
        target=target,
        target_revision=None if revision is None else _nullable(revision[1]),
        drafter=_spec_str(spec, "model", spec_option),
        drafter_revision=_spec_str(spec, "revision", spec_option),
        method=_spec_str(spec, "method", spec_option),
        num_speculative_tokens=_spec_tokens(spec, spec_option),
        num_draft_tokens=None,
        tensor_parallel_size=tp,
        argv=context.argv,
        config_file=config_file,
        container=context.container,
        max_model_len=_max_model_len(last(found, MAX_LEN)),
        pipeline_parallel_size=size(found, PP),
        distributed_executor_backend=None if executor is None else executor[1],
        speculative_config=tuple((str(k), json.dumps(v, sort_keys=True)) for k, v in (spec or {}).items()),
    )


_HUMAN_INT = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
# CPython's default limit on the digits of an int read from text or written as text (sys.int_info): vLLM's int()
# refuses a longer number, and a length past it could not even be printed in vLLM's refusal (or in ours).
_MAX_DIGITS = 4300
_PAST_DIGITS = 10**_MAX_DIGITS


def _max_model_len(option: tuple[str, str] | None) -> int | None:
    """vllm/utils/argparse_utils.py human_readable_int_or_auto: `1k` is 1,000, `1K` 1,024 (no decimals), `-1` or
    `auto` (None here) leave the length to the target's config. A length vLLM cannot read (a decimal suffix
    past a float's range: its int(inf) raises; more digits than int() reads) is refused, as vLLM refuses the
    launch; one it reads, however long, is kept: vLLM refuses it too, as longer than the model's length."""
    if option is None:
        return None
    name, text = option
    value = text.strip()
    if value == "-1" or value.lower() == "auto":
        return None
    match = _HUMAN_INT.fullmatch(value)
    length = None
    if match is not None:
        number, suffix = match.groups()
        if suffix.islower():
            scaled = float(number) * 1000 ** " kmgt".index(suffix)
            length = int(scaled) if scaled != float("inf") else _PAST_DIGITS
        elif "." not in number:
            length = _digits(number) * 1024 ** " KMGT".index(suffix)
    elif re.fullmatch(r"\d+", value):
        length = _digits(value)
    if length is None:
        raise LaunchError(f"{name}: expected a length such as 32768, 32k or 32K, got {quote(text)}")
    if length >= _PAST_DIGITS:
        raise LaunchError(f"{name}: {quote(text, 40)} is too large a length for vLLM to read; it refuses the launch")
    return length


def _digits(text: str) -> int:
    return int(text) if len(text) <= _MAX_DIGITS else _PAST_DIGITS


_SERVED_NAME = re.compile(r"--served[-_]model[-_]name(=.+)?", re.DOTALL)
_CONFIG_OPTION = re.compile(r"--config(=.+)?", re.DOTALL)


def _served_model_name_first(args: list[str]) -> None:
    """FlexibleArgumentParser.parse_args refuses `vllm serve --opt ... --served-model-name ...` without a
    model first (after moving `--model` to the front): `--served-model-name` takes one or more values and
    would swallow a model that follows it."""
    if any(MODEL_OPTION.fullmatch(a) for a in args) or any(_CONFIG_OPTION.fullmatch(a) for a in args):
        return
    if args and args[0].startswith("-") and any(_SERVED_NAME.fullmatch(a) for a in args):
        raise LaunchError(
            "vllm serve: with --served-model-name the model must come first, 'vllm serve MODEL"
            " --served-model-name NAME ...' (vLLM refuses this order: the names take every word that follows)"
        )


def _same_draft_tp(found: Args, spec: dict[str, Any] | None, option: str, tp: int) -> None:
    """A draft tensor-parallel size vLLM refuses is refused here. vLLM accepts only 1 or the target's size
    (vllm/config/speculative.py:SpeculativeConfig._verify_and_get_draft_tp); the DFlash drafter's attention
    layers are built with the TP group's world size either way (get_tensor_model_parallel_world_size in
    vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3Attention.__init__), so DF802 checks the target's size."""
    draft = last(found, DRAFT_TP)
    value = positive_int(*draft) if draft is not None else None
    name = draft[0] if draft is not None else f"{option}['draft_tensor_parallel_size']"
    if value is None and spec is not None and spec.get("draft_tensor_parallel_size") is not None:
        raw = spec["draft_tensor_parallel_size"]
        if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
            raise LaunchError(f"{name}: expected a positive integer, got {_describe(raw)}")
        value = raw
    if value is not None and value not in (1, tp):
        raise LaunchError(
            f"{name} {value}: vLLM accepts only 1 or the tensor-parallel size {tp} and refuses this launch"
        )


def _speculative_config(found: Args) -> tuple[dict[str, Any] | None, str]:
    """The speculative_config dict vLLM builds, and the option to name in messages about it."""
    full = last(found, SPEC_CONFIG)
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
            raise LaunchError(f"{full[0]}: expected a JSON object, got {json_kind(parsed)}")
        spec = parsed
    if bases:
        spec = {}
        for _, key, text in found.dotted:
            _merge(spec, _nested(key, text))
    if spec is not None:
        # create_speculative_config normalises `-` to `_` in keys (`num-speculative-tokens`).
        spec = {str(key).replace("-", "_"): value for key, value in spec.items()}
    old = [(o, k) for o, k in ((OLD_MODEL, "model"), (OLD_TOKENS, "num_speculative_tokens")) if last(found, o)]
    if old:
        # vLLM before 0.8 built the speculative config from these; later versions refuse them.
        if spec is not None or any(last(found, c) for c in (SPEC_METHOD, SPEC_MODEL, SPEC_TOKENS)):
            raise LaunchError(
                f"{last(found, old[0][0])[0]}: the options of vLLM before 0.8 mixed with {option} or --spec-*;"  # type: ignore[index]
                " no vLLM reads both"
            )
        spec = {}
        for canonical, key in old:
            name, text = last(found, canonical)  # type: ignore[misc]
            if canonical == OLD_TOKENS:
                spec[key] = positive_int(name, text)
            elif _nullable(text) is not None:
                spec[key] = named(name, text)
        option = "--speculative-model"
    for canonical, key in ((SPEC_METHOD, "method"), (SPEC_MODEL, "model"), (SPEC_TOKENS, "num_speculative_tokens")):
        alias = last(found, canonical)
        if alias is None:
            continue
        if spec is None:
            spec = {}
        if key in spec:
            raise LaunchError(f"{alias[0]} and {option}['{key}'] are both given; vLLM refuses them together")
        spec[key] = positive_int(*alias) if canonical == SPEC_TOKENS else alias[1]
    return spec, option


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


def _nullable(text: str) -> str | None:
    # vLLM's nullable_str / optional_type: "" and "None" mean unset.
    return None if text in ("", "None") else text


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


def _describe(value: Any) -> str:
    # Scalars are shown as JSON would spell them; a list or object is only named (it may be large).
    if isinstance(value, str):
        return f"the string {quote(value)}"
    if isinstance(value, (int, float, bool)):
        return quote(json.dumps(value))[1:-1]
    return json_kind(value)

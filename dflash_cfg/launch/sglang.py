"""An SGLang launch: the target, the drafter and the drafts per step (`--speculative-num-draft-tokens`).

Forms accepted, as read in SGLang's own sources (`python/sglang/srt/server_args.py`,
`python/sglang/launch_server.py`, `python/sglang/cli/serve.py`); the option table is `flags.SGLANG`:
  - `python -m sglang.launch_server --model-path M ...` and `sglang serve [M] ...`; `sglang serve` takes
    a positional model only as its first argument (after dropping `--model-type X`) and turns it into a
    leading `--model-path`, so an explicit `--model-path` wins over it.
  - `--model-path`/`--model`, `--revision`, `--speculative-algorithm`, `--speculative-draft-model-path`/
    `--speculative-draft-model`, `--speculative-draft-model-revision`, `--speculative-num-draft-tokens`
    (or its DFLASH alias `--speculative-dflash-block-size`, which must agree with it),
    `--speculative-draft-window-size` (DF808 holds it against the block size),
    `--tp-size`/`--tensor-parallel-size`, and `--tp`, which argparse accepts as the unique prefix of
    `--tp-size` (abbreviations in general are not resolved here); `--json-model-override-args`, which SGLang sets
    on the drafter's config too (DF814).
  - `--config FILE`: configfile.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch.argv import Args, Context, last, named, positive_int, quote, scan, size, tensor_parallel
from dflash_cfg.launch.configfile import sglang_config
from dflash_cfg.launch.flags import (
    ALGORITHM,
    ATTENTION,
    ATTN_CP,
    ATTN_DP,
    CONTEXT_LENGTH,
    DFLASH_BLOCK,
    DP,
    DP_ATTENTION,
    DP_LM_HEAD,
    DRAFT,
    DRAFT_ATTENTION,
    DRAFT_REVISION,
    DRAFT_TOKENS,
    DRAFT_WINDOW,
    MODEL,
    MODEL_OVERRIDES,
    PP,
    PREFILL_ATTENTION,
    REVISION,
    SGLANG,
)
from dflash_cfg.model import Launch


def sglang_launch(context: Context, args: Sequence[str], *, serve: bool) -> Launch:
    rest = list(args)
    if serve:
        # cli/serve.py drops `--model-type X` first, then reads a leading bare token as a leading
        # `--model-path` (so that an explicit --model-path later wins).
        first = _first_after_model_type(rest)
        if first < len(rest) and not rest[first].startswith("-"):
            rest = ["--model-path", rest.pop(first), *rest]
    rest, config_file = sglang_config(context, rest)
    found = scan(rest, SGLANG, engine="sglang", positional=False)
    model = last(found, MODEL)
    if model is None:
        raise LaunchError("--model-path: required; no model given to SGLang")
    target = named(*model)
    revision = last(found, REVISION)
    algorithm = last(found, ALGORITHM)
    draft = last(found, DRAFT)
    draft_revision = last(found, DRAFT_REVISION)
    draft_tokens = last(found, DRAFT_TOKENS)
    tokens = None if draft_tokens is None else positive_int(*draft_tokens)
    block = last(found, DFLASH_BLOCK)
    if block is not None and algorithm is not None and algorithm[1].upper() == "DFLASH":
        # speculative_hook._handle_dflash: the block size stands for the draft tokens, and both must agree.
        block_size = positive_int(*block)
        if tokens is not None and tokens != block_size:
            raise LaunchError(
                f"{draft_tokens[0]} {tokens} and {block[0]} {block_size} differ; SGLang refuses them together"  # type: ignore[index]
            )
        tokens = block_size
    window = last(found, DRAFT_WINDOW)
    length = last(found, CONTEXT_LENGTH)
    return Launch(
        engine="sglang",
        target=target,
        target_revision=None if revision is None else revision[1],
        drafter=None if draft is None else named(*draft),
        drafter_revision=None if draft_revision is None else draft_revision[1],
        method=None if algorithm is None else algorithm[1],
        num_speculative_tokens=None,
        num_draft_tokens=tokens,
        tensor_parallel_size=tensor_parallel(found),
        argv=context.argv,
        config_file=config_file,
        container=context.container,
        # speculative_hook.handle_speculative_decoding refuses a window <= 0.
        draft_window_size=None if window is None else positive_int(*window),
        pipeline_parallel_size=size(found, PP),
        attention_dp_size=_attention_dp(found),
        dp_lm_head=last(found, DP_LM_HEAD) is not None,
        attention_cp_size=size(found, ATTN_CP),
        model_overrides=_overrides(last(found, MODEL_OVERRIDES)),
        draft_attention_backend=_draft_attention(found),
        context_length=None if length is None else positive_int(*length),
    )


def _draft_attention(found: Args) -> tuple[str, str] | None:
    """The draft attention backend the command line names, as _resolve_dflash_draft_attention_backend takes it
    (before its fallbacks): --speculative-draft-attention-backend, else the server's prefill backend
    (--prefill-attention-backend, else --attention-backend); with the option that named it. None: none named."""
    for name in (DRAFT_ATTENTION, PREFILL_ATTENTION, ATTENTION):
        given = last(found, name)
        if given is not None:
            return given
    return None


def _overrides(given: tuple[str, str] | None) -> tuple[tuple[str, str], ...]:
    """`--json-model-override-args` as SGLang reads it (json.loads, then each key of the object set on the config):
    each key with its value as JSON. SGLang applies it to the drafter's config as well as the target's."""
    if given is None:
        return ()
    option, text = given
    try:
        value = json.loads(text)
    except ValueError:
        raise LaunchError(f"{option}: not JSON ({quote(text)}); SGLang refuses the launch") from None
    if not isinstance(value, dict):
        raise LaunchError(f"{option}: {quote(text)} is not a JSON object; SGLang refuses the launch")
    return tuple((key, json.dumps(item, sort_keys=True)) for key, item in value.items())


def _attention_dp(found: Args) -> int:
    """parallel_hook.handle_deprecated_dp_attention: `--dp-size N --enable-dp-attention` is `--attn-dp-size N`,
    unless --attn-dp-size is given (other than 1)."""
    explicit = size(found, ATTN_DP)
    if explicit != 1 or last(found, DP_ATTENTION) is None:
        return explicit
    return size(found, DP)


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

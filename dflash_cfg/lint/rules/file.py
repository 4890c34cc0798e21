"""File rules: what the bytes say before any DFlash meaning is read into them."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from dflash_cfg.jsondoc.document import MAX_BYTES, ParseProblem
from dflash_cfg.lint import schema
from dflash_cfg.lint.engines import transformers
from dflash_cfg.lint.rules.base import Context, as_int, is_int, rule, show
from dflash_cfg.model import Fix, PatchOp, Problem, Severity


def _messages(ctx: Context, render: Mapping[str, Callable[[ParseProblem], str]]) -> Iterator[Problem]:
    """The parse problems this rule reports, in its words; each keeps the parser's position."""
    for p in ctx.doc.problems:
        if p.what in render:
            fix = Fix(_FIXES[p.what], edits=p.edits) if p.edits else None
            yield Problem(pointer=p.pointer, message=render[p.what](p), fix=fix, at=p.at)


_FIXES = {"utf8-bom": "strip the UTF-8 byte-order mark"}


@rule("DF001", "invalid-json", Severity.ERROR, "bytes", reads=(transformers.CONFIG_JSON,))
def invalid_json(ctx: Context) -> Iterator[Problem]:
    """The file is not JSON: a syntax error, an empty file, or a truncated one.

    Both engines load config.json through transformers, which raises "not a valid JSON file", so the
    server does not start (or, worse, a download script that wrote half a file leaves the previous
    model's config in use elsewhere). Reported with the decoder's line and column.

    Fail: ``{"architectures": ["DFlashDraftModel"],`` (cut off)
    Pass: any complete JSON object.
    """
    return _messages(
        ctx,
        {
            "too-large": lambda p: f"file is over {MAX_BYTES} bytes; a drafter config.json is a few KB (not parsed)",
            "empty": lambda p: "file is empty",
            "whitespace": lambda p: "file holds only whitespace",
            "truncated": lambda p: f"file is truncated: {p.detail}",
            "syntax": lambda p: f"invalid JSON: {p.detail}",
            "too-deep": lambda p: "invalid JSON: nesting too deep to parse",
            "bad-literal": lambda p: f"invalid JSON: {p.detail}",
        },
    )


@rule("DF002", "duplicate-key", Severity.ERROR, "bytes", reads=(transformers.CONFIG_JSON_DUPLICATE_KEYS,))
def duplicate_key(ctx: Context) -> Iterator[Problem]:
    """An object has the same key twice.

    transformers' ``json.loads`` silently keeps the last value, so the value a reviewer reads at the
    top of the file may not be the one the engines draft with.

    Fail: ``{"sliding_window": 2048, ..., "sliding_window": null}``
    Pass: every key once per object.
    """
    return _messages(
        ctx,
        {
            "duplicate-key": lambda p: (
                f"duplicate key {show(p.detail)} (first at line {p.first[0] if p.first else '?'}): json.load and "
                "transformers silently keep this last value"
            )
        },
    )


@rule("DF003", "encoding", Severity.ERROR, "bytes", reads=(transformers.CONFIG_JSON,), fix=True)
def encoding(ctx: Context) -> Iterator[Problem]:
    """The file is not plain UTF-8: a byte-order mark, UTF-16/32, or invalid UTF-8 bytes.

    transformers opens config.json as UTF-8 and parses it with ``json.loads``, which rejects a BOM
    ("Unexpected UTF-8 BOM"); bytes that are not UTF-8 fail to decode. Either way the engines do not
    start. The safe fix strips a UTF-8 BOM; other encodings need re-saving by hand.

    Fail: ``EF BB BF {"architectures": ...}``
    Pass: UTF-8 without a BOM.
    """
    return _messages(
        ctx,
        {
            "utf8-bom": lambda p: (
                "file starts with a UTF-8 byte-order mark: Python's json.loads and transformers reject it "
                "('Unexpected UTF-8 BOM'), so engines fail to load the config"
            ),
            "other-bom": lambda p: (
                f"file is {p.detail} (byte-order mark found); config.json must be UTF-8, re-save it as UTF-8 "
                "without a BOM"
            ),
            "not-utf8": lambda p: f"not valid UTF-8: {p.detail}; re-save the file as UTF-8",
        },
    )


@rule("DF004", "non-finite-number", Severity.ERROR, "bytes", reads=(transformers.CONFIG_JSON_NUMBERS,))
def non_finite(ctx: Context) -> Iterator[Problem]:
    """A number is NaN, Infinity or overflows to infinity (``1e400``).

    Python's json, which transformers parses the file with, accepts these and hands the engines a NaN or
    an infinity: no trained value is one. They are not JSON either, so other tools reject the file.

    Fail: ``"rms_norm_eps": NaN``
    Pass: ``"rms_norm_eps": 1e-06``
    """
    return _messages(
        ctx,
        {
            "non-finite": lambda p: (
                f"non-finite number {p.detail}: not JSON; Python reads it as a float, other parsers reject the file"
            )
        },
    )


@rule("DF005", "not-an-object", Severity.ERROR, "bytes", reads=(transformers.CONFIG_JSON,))
def not_an_object(ctx: Context) -> Iterator[Problem]:
    """The top level of config.json is not a JSON object.

    It has no ``model_type``, so transformers' ``AutoConfig`` raises and the engines do not start.

    Fail: ``[{"architectures": ["DFlashDraftModel"]}]``
    Pass: ``{"architectures": ["DFlashDraftModel"], ...}``
    """
    return _messages(ctx, {"not-an-object": lambda p: f"top level is {p.detail}, not an object"})


def _as_bool(value: Any) -> bool | None:
    # vLLM's bool(is_causal) and SGLang's truthiness read 0 and 1 as false and true.
    return bool(value) if is_int(value) and value in (0, 1) else None


# Values of the wrong JSON type that every engine reads as meant, checked by running the pinned vLLM and SGLang
# (dflash_cfg.pinned; tests/engines/test_truth.py): SGLang int()s num_target_layers and block_size, which vLLM does not
# read; both read is_causal, and dflash_config's causal and use_swa, by truthiness. Elsewhere a wrong type
# stays an error: the config class refuses "2048" or 2048.0 for sliding_window, SGLang refuses a string
# mask_token_id or attention_sink_bias 0, vLLM a string tap.
COERCED: dict[str, Callable[[Any], Any]] = {
    "/num_target_layers": as_int,
    "/dflash_config/num_target_layers": as_int,
    "/block_size": as_int,
    "/dflash_config/block_size": as_int,
    "/is_causal": _as_bool,
    "/dflash_config/causal": _as_bool,
    "/dflash_config/use_swa": _as_bool,
}


# Wrong types an engine's own code fails on, where no rule owns the key (checked by running the pinned vLLM and
# SGLang): RoPE builds base ** (arange / dim) from a string theta (TypeError).
REFUSED_TYPE: dict[str, str] = {"/rope_theta": "vLLM and SGLang"}


def _head_dim_missing(data: dict[str, Any]) -> str:
    """Both engines derive hidden_size // num_attention_heads (checked by running them): the trained value only
    where the drafter kept that convention, which the Qwen3-family drafters (head_dim 128) often do not."""
    hidden, heads = data.get("hidden_size"), data.get("num_attention_heads")
    if is_int(hidden) and is_int(heads) and heads > 0:
        derived = f"hidden_size / num_attention_heads = {hidden // heads}"
    else:
        derived = "hidden_size / num_attention_heads"
    return (
        f"head_dim is missing: vLLM and SGLang use {derived}, whatever the drafter was trained with; "
        "take it from upstream"
    )


def _window_unread(data: dict[str, Any]) -> bool:
    """MiMo-style: dflash_config.use_swa with a swa_window_size and no layer_types. vLLM takes the window from
    swa_window_size and SGLang runs every layer full, so neither reads the top-level sliding_window (checked by
    running them: any value there leaves both as they were)."""
    block = data.get("dflash_config")
    if not isinstance(block, dict) or "layer_types" in data:
        return False
    swa = block.get("swa_window_size")
    return block.get("use_swa") in (True, 1) and is_int(swa) and swa > 0


def _at(data: dict[str, Any], ptr: str) -> Any:
    """The value at one of COERCED's pointers (top level or directly in dflash_config)."""
    parts = ptr.strip("/").split("/")
    block: Any = data
    for part in parts:
        block = block.get(part) if isinstance(block, dict) else None
    return block


def _coerced(data: dict[str, Any], kind: str, ptr: str) -> Any:
    """The value the engines read at `ptr` when they coerce it into one the schema accepts, else None."""
    coerce = COERCED.get(ptr)
    value = coerce(_at(data, ptr)) if coerce is not None else None
    if value is None:
        return None
    fixed = copy.deepcopy(data)
    parent = fixed if ptr.count("/") == 1 else fixed["dflash_config"]
    parent[ptr.rsplit("/", 1)[1]] = value
    return value if all(p != ptr for p, _ in schema.validate(fixed, kind)) else None


@rule("DF010", "schema", Severity.ERROR, own_check=True, severities=(Severity.WARNING,), fix=True)
def schema_violation(ctx: Context) -> Iterator[Problem]:
    """A field has the wrong type or range for a DFlash drafter config (JSON Schema in ``schemas/``).

    Also reports a missing shape field (hidden_size, num_hidden_layers, heads, head_dim,
    intermediate_size, vocab_size) that the config class registered for the file's ``model_type`` would
    otherwise fill with a silent default (``Qwen3Config``: ``hidden_size`` 4096, ``num_key_value_heads``
    32). Validated with jsonschema, Draft 2020-12; the v1 schema for ``DFlashDraftModel``, the DFlash2
    schema for ``DFlash2DraftModel``.

    A check of dflash-cfg's own, not an engine read: the schema is stricter than any one engine so that a
    wrong type is caught even where an engine would coerce it. Where every engine coerces the value and
    reads it as meant (checked by running {vLLM} and {SGLang}: ``"36"`` or ``36.0`` for
    ``num_target_layers``, ``"16"`` or ``16.0`` for ``block_size``, ``0``/``1`` for ``is_causal``), the
    finding is a warning about portability, with a safe fix that writes the value as the type the schema
    asks for; elsewhere it is an error (the config class refuses ``"2048"`` and ``2048.0`` for
    ``sliding_window``, SGLang a string ``mask_token_id``, vLLM a string tap). What each engine does with a
    key is in the rule that owns the key (DF103 taps, DF112 mask id, DF121 block size, DF212, ...).

    Fail: ``"sliding_window": "2048"`` (a string)
    Warn: ``"num_target_layers": "36"``; ``"is_causal": 0``
    Pass: ``"sliding_window": 2048``
    """
    for ptr, message in schema.validate(ctx.data, ctx.kind):
        value = _coerced(ctx.data, ctx.kind, ptr)
        if value is None and ptr == "/sliding_window" and _window_unread(ctx.data):
            yield Problem(
                pointer=ptr,
                message=f"{message}; not read here: vLLM takes dflash_config.swa_window_size and SGLang, without "
                "layer_types, runs every layer full",
                severity=Severity.WARNING,
            )
        elif value is None and ptr == "/head_dim" and "is missing" in message:
            yield Problem(pointer=ptr, message=_head_dim_missing(ctx.data))
        elif value is None:
            refused = REFUSED_TYPE.get(ptr) if "is not of type" in message else None
            yield Problem(pointer=ptr, message=f"{message}: {refused} refuse the file" if refused else message)
        else:
            yield Problem(
                pointer=ptr,
                message=f"{message}; vLLM and SGLang read it as {show(value)}, other loaders may not",
                fix=Fix(f"write it as {show(value)}", (PatchOp("replace", ptr, value),)),
                severity=Severity.WARNING,
            )


RULES = (invalid_json, duplicate_key, encoding, non_finite, not_an_object, schema_violation)

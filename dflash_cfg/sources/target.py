"""The target model as the drafter sees it: depth, width, vocabulary and its control tokens.

A DFlash drafter has no embeddings or LM head of its own; it borrows the target's, reads hidden states
of target layers and fills its block with `mask_token_id`. So `--target DIR` is read here into one
frozen `Target` that the DF4xx rules compare the drafter against.

Parsing is pure (bytes or dicts in, values out); only `load_target` and `read_tokenizer_json` touch the
file system. Anything malformed raises `TargetError`, including the optional tokenizer and generation
files: the user asked for a cross-check, and skipping a broken file would report a clean bill of health
that was never checked.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dflash_cfg.errors import PathError, TargetError
from dflash_cfg.jsondoc.document import json_type
from dflash_cfg.model import AddedToken, Target, Url, sglang_context_length
from dflash_cfg.sources import files, remote, storage

CONFIG = "config.json"
GENERATION_CONFIG = "generation_config.json"
TOKENIZER_CONFIG = "tokenizer_config.json"
TOKENIZER_JSON = "tokenizer.json"
# What a target dir is read for (tokenizer.json is large: used when present, never fetched for this).
TARGET_FILES = (GENERATION_CONFIG, TOKENIZER_CONFIG)

# The tokenizer_config keys whose tokens the model treats as control tokens. `mask_token` is kept apart
# (Target.mask_token): it is the *expected* drafter mask, not a collision to warn about.
_TOKENIZER_SPECIALS = ("eos_token", "bos_token", "pad_token")
_GENERATION_SPECIALS = ("eos_token_id", "bos_token_id", "pad_token_id")
# int() would also accept " 5", "+5", "1_000" and non-ASCII digits; token ids are plain decimal.
_ID_KEY = re.compile(r"[0-9]{1,18}")  # and no id has more digits than an int64
# Real tokenizer.json files are 10-35 MB; far larger is a wrong or hostile file, not worth loading.
MAX_FILE_BYTES = 256 * 1024 * 1024


# --- small typed accessors ------------------------------------------------------------------------


def _show(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _bad(source: str, key: str, expected: str, value: object) -> TargetError:
    return TargetError(
        f"{source}: {key} must be {expected}, got {_show(value)} ({json_type(value)}); "
        "fix or re-download the target's file, or pass the right --target"
    )


def _opt_int(obj: dict[str, Any], key: str, source: str, where: str = "") -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    # bool is an int subclass in Python; `true` for a layer count is a broken file, not 1.
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(source, where + key, "an integer", value)
    if value < 1:
        raise _bad(source, where + key, "a positive integer", value)
    return value


def _opt_str(obj: dict[str, Any], key: str, source: str, where: str = "") -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _bad(source, where + key, "a string", value)
    return value


def _token_ids(value: object, source: str, key: str) -> list[int]:
    """An `*_token_id` value: null, an int, or (eos in newer configs) a list of ints."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    out: list[int] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int):
            raise _bad(source, key, "an integer or a list of integers", value)
        # -1 is an old "unset" sentinel (early LLaMA configs' pad_token_id); it names no token.
        if item >= 0:
            out.append(item)
    return out


# --- pure parsers -----------------------------------------------------------------------------------


def parse_json_object(data: bytes, source: str) -> dict[str, Any]:
    """Decode one file; `source` (its path) is only used in messages."""
    if not data.strip():
        raise TargetError(f"{source}: empty file; re-download it or pass the right --target")
    try:
        obj = json.loads(data)
    except json.JSONDecodeError as exc:
        raise TargetError(
            f"{source}: not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg}); "
            "re-download it or pass the right --target"
        ) from None
    except (UnicodeDecodeError, RecursionError) as exc:
        raise TargetError(
            f"{source}: not readable as JSON ({type(exc).__name__}); re-download it or pass the right --target"
        ) from None
    except ValueError as exc:  # an integer past Python's digit limit: no real config holds one
        raise TargetError(
            f"{source}: not readable as JSON ({str(exc).splitlines()[0]}); re-download it or pass the right --target"
        ) from None
    if not isinstance(obj, dict):
        raise TargetError(
            f"{source}: expected a JSON object at the top level, got {json_type(obj)}; "
            "re-download it or pass the right --target"
        )
    return obj


@dataclass(frozen=True, kw_only=True)
class ConfigFacts:
    model_type: str | None
    num_hidden_layers: int | None
    hidden_size: int | None
    vocab_size: int | None
    special_ids: tuple[tuple[str, int], ...]
    context_length: tuple[int, str] | None = None


def parse_config(cfg: dict[str, Any], source: str) -> ConfigFacts:
    # Composite (VL) models keep the language model in text_config; a drafter taps and embeds through
    # that model, so its values win. A non-dict text_config is some other convention: ignore it.
    text = cfg.get("text_config")
    text = text if isinstance(text, dict) else None

    def pick_int(key: str) -> int | None:
        if text is not None:
            value = _opt_int(text, key, source, "text_config.")
            if value is not None:
                return value
        return _opt_int(cfg, key, source)

    model_type = _opt_str(text, "model_type", source, "text_config.") if text is not None else None
    if model_type is None:
        model_type = _opt_str(cfg, "model_type", source)

    specials: list[tuple[str, int]] = []
    for obj, prefix in ((cfg, "config."), (text, "config.text_config.")):
        if obj is None:
            continue
        # Every *_token_id is a control token (eos/bos/pad, image/video/vision_start in VL models).
        for key, value in obj.items():
            if key.endswith("_token_id"):
                where = prefix[len("config.") :] + key
                specials += [(prefix + key, i) for i in _token_ids(value, source, where)]

    # SGLang derives a model's context length from its text config (ModelConfig.hf_text_config).
    model = text if text is not None else cfg
    rope = model.get("rope_scaling") or model.get("rope_parameters")
    return ConfigFacts(
        model_type=model_type,
        num_hidden_layers=pick_int("num_hidden_layers"),
        hidden_size=pick_int("hidden_size"),
        vocab_size=pick_int("vocab_size"),
        special_ids=tuple(specials),
        context_length=sglang_context_length(model, rope),
    )


def parse_generation_config(gen: dict[str, Any], source: str) -> tuple[tuple[str, int], ...]:
    # generation_config.json is what generate() stops on; it often lists more eos ids than config.json.
    return tuple(
        ("generation_config." + key, i) for key in _GENERATION_SPECIALS for i in _token_ids(gen.get(key), source, key)
    )


def _token_content(value: object, source: str, key: str) -> str | None:
    """A tokenizer_config token: a string, or the older serialised form {"content": str, ...}."""
    if value is None:
        return None
    if isinstance(value, dict):
        value = value.get("content")
        key += ".content"
    if not isinstance(value, str):
        raise _bad(source, key, 'a string or {"content": string}', value)
    return value


def _added_token(entry: object, token_id: int, source: str, where: str) -> AddedToken:
    if not isinstance(entry, dict):
        raise _bad(source, where, "an object", entry)
    content = entry.get("content")
    if not isinstance(content, str):
        raise _bad(source, where + ".content", "a string", content)
    special = entry.get("special", False)
    if not isinstance(special, bool):
        raise _bad(source, where + ".special", "a boolean", special)
    return AddedToken(token_id, content, special)


@dataclass(frozen=True)
class TokenizerConfigFacts:
    added_tokens: tuple[AddedToken, ...]
    specials: tuple[tuple[str, str], ...]  # (key, content) for eos/bos/pad
    mask_token: str | None


def parse_tokenizer_config(tc: dict[str, Any], source: str) -> TokenizerConfigFacts:
    decoder = tc.get("added_tokens_decoder")
    added: list[AddedToken] = []
    if decoder is not None:
        if not isinstance(decoder, dict):
            raise _bad(source, "added_tokens_decoder", "an object keyed by token id", decoder)
        for key, entry in decoder.items():
            where = f"added_tokens_decoder[{json.dumps(key)}]"
            if not _ID_KEY.fullmatch(key):
                raise TargetError(
                    f"{source}: {where}: key is not a token id (a non-negative integer); "
                    "fix or re-download the target's tokenizer_config.json"
                )
            added.append(_added_token(entry, int(key), source, where))
    specials: list[tuple[str, str]] = []
    for key in _TOKENIZER_SPECIALS:
        content = _token_content(tc.get(key), source, key)
        if content is not None:
            specials.append((key, content))
    return TokenizerConfigFacts(
        added_tokens=tuple(added),
        specials=tuple(specials),
        mask_token=_token_content(tc.get("mask_token"), source, "mask_token"),
    )


@dataclass(frozen=True)
class TokenizerJsonFacts:
    added_tokens: tuple[AddedToken, ...]
    base_vocab_size: int | None
    # Only the strings asked for: the full vocab (150k-250k entries) is not kept past parsing.
    vocab_ids: tuple[tuple[str, int], ...]


def parse_tokenizer_json(data: bytes, source: str, wanted: frozenset[str] = frozenset()) -> TokenizerJsonFacts:
    tok = parse_json_object(data, source)
    raw_added = tok.get("added_tokens")
    added: list[AddedToken] = []
    if raw_added is not None:
        if not isinstance(raw_added, list):
            raise _bad(source, "added_tokens", "an array", raw_added)
        for n, entry in enumerate(raw_added):
            where = f"added_tokens[{n}]"
            if not isinstance(entry, dict):
                raise _bad(source, where, "an object", entry)
            token_id = entry.get("id")
            if isinstance(token_id, bool) or not isinstance(token_id, int) or token_id < 0:
                raise _bad(source, where + ".id", "a non-negative integer", token_id)
            added.append(_added_token(entry, token_id, source, where))

    model = tok.get("model")
    if model is not None and not isinstance(model, dict):
        raise _bad(source, "model", "an object", model)
    vocab = model.get("vocab") if model is not None else None
    base: int | None = None
    found: dict[str, int] = {}
    if isinstance(vocab, dict):  # BPE / WordPiece / WordLevel: {token: id}
        base = len(vocab)
        for text in wanted:
            token_id = vocab.get(text)
            if isinstance(token_id, int) and not isinstance(token_id, bool):
                found[text] = token_id
    elif isinstance(vocab, list):  # Unigram: [[token, score], ...], the id is the position
        base = len(vocab)
        for i, item in enumerate(vocab):
            if isinstance(item, list) and item and isinstance(item[0], str) and item[0] in wanted:
                found.setdefault(item[0], i)
    elif vocab is not None:
        raise _bad(source, "model.vocab", "an object or an array", vocab)
    return TokenizerJsonFacts(tuple(added), base, tuple(sorted(found.items())))


def _merge_added(
    groups: list[tuple[str, tuple[AddedToken, ...]]],
) -> tuple[AddedToken, ...]:
    by_id: dict[int, tuple[AddedToken, str]] = {}
    for source, tokens in groups:
        for tok in tokens:
            seen = by_id.get(tok.id)
            if seen is None:
                by_id[tok.id] = (tok, source)
                continue
            old, old_source = seen
            # Two files naming one id differently means the tokenizer the target runs with is unknown;
            # any verdict about the mask id would rest on a guess.
            if old.content != tok.content:
                raise TargetError(
                    f"{source}: token {tok.id} is {json.dumps(tok.content)} but {old_source} says "
                    f"{json.dumps(old.content)}; the target's tokenizer files disagree, re-download them"
                )
            # Either file calling it special is enough to treat it as a control token.
            by_id[tok.id] = (AddedToken(tok.id, tok.content, old.special or tok.special), old_source)
    return tuple(tok for _, (tok, _src) in sorted(by_id.items()))


def build_target(
    path: str,
    files: tuple[str, ...],
    config: ConfigFacts,
    generation: tuple[tuple[str, int], ...] = (),
    tokenizer_config: TokenizerConfigFacts | None = None,
    tokenizer_json: TokenizerJsonFacts | None = None,
    tokenizer_config_source: str = TOKENIZER_CONFIG,
    tokenizer_json_source: str = TOKENIZER_JSON,
) -> Target:
    groups: list[tuple[str, tuple[AddedToken, ...]]] = []
    # tokenizer.json first: it is what fast tokenizers load, so its wording leads in conflict messages.
    if tokenizer_json is not None:
        groups.append((tokenizer_json_source, tokenizer_json.added_tokens))
    if tokenizer_config is not None:
        groups.append((tokenizer_config_source, tokenizer_config.added_tokens))
    added = _merge_added(groups)

    ids: dict[str, int] = {}
    for tok in added:  # sorted by id, so the lowest id wins if a string is added twice
        ids.setdefault(tok.content, tok.id)
    if tokenizer_json is not None:
        for text, token_id in tokenizer_json.vocab_ids:
            ids.setdefault(text, token_id)

    specials = set(config.special_ids) | set(generation)
    mask: tuple[str, int | None] | None = None
    if tokenizer_config is not None:
        # A string that resolves to no id names nothing the model could collide with; drop it.
        specials |= {("tokenizer_config." + k, ids[c]) for k, c in tokenizer_config.specials if c in ids}
        if tokenizer_config.mask_token is not None:
            mask = (tokenizer_config.mask_token, ids.get(tokenizer_config.mask_token))

    return Target(
        path=path,
        model_type=config.model_type,
        num_hidden_layers=config.num_hidden_layers,
        hidden_size=config.hidden_size,
        vocab_size=config.vocab_size,
        special_ids=tuple(sorted(specials)),
        added_tokens=added,
        base_vocab_size=tokenizer_json.base_vocab_size if tokenizer_json is not None else None,
        mask_token=mask,
        files=files,
        context_length=config.context_length,
    )


# --- the edge: file reading ---------------------------------------------------------------------------


def _read(path: storage.Where) -> bytes:
    if storage.is_remote(path):
        data = remote.read(path, MAX_FILE_BYTES)
        if len(data) > MAX_FILE_BYTES:
            raise TargetError(
                f"{path}: too large for a config or tokenizer file (limit {MAX_FILE_BYTES}); pass the right --target"
            )
        return data
    try:
        with files.open_regular(path) as (fd, size):
            if size > MAX_FILE_BYTES:
                raise TargetError(
                    f"{path}: {size} bytes is too large for a config or tokenizer file "
                    f"(limit {MAX_FILE_BYTES}); pass the right --target"
                )
            return files.read_exact(fd, size)
    except files.NotRegularFile:
        raise TargetError(f"{path}: not a regular file; pass the right --target") from None
    except OSError as exc:
        raise TargetError(
            f"{path}: cannot read ({exc.strerror or type(exc).__name__}); "
            "check the file (a broken symlink?) or pass the right --target"
        ) from None


def _is_drafter(cfg: dict[str, Any]) -> bool:
    archs = cfg.get("architectures")
    names = [a for a in archs if isinstance(a, str)] if isinstance(archs, list) else []
    return (
        "dflash_config" in cfg
        or cfg.get("speculators_model_type") is not None
        or any("dflash" in name.lower() for name in names)
    )


def _present(path: storage.Where) -> bool:
    # A dangling symlink (half-downloaded HF cache blob) must be read and fail, not be skipped as absent.
    try:
        return storage.probe(path) != "missing"
    except PathError as exc:
        raise TargetError(f"{exc}; pass the right --target") from None


def read_tokenizer_json(path: storage.Where, wanted: frozenset[str] = frozenset()) -> TokenizerJsonFacts:
    """Read tokenizer.json (10+ MB for Qwen) on its own, so it can later be made lazy or streamed."""
    return parse_tokenizer_json(_read(path), str(path), wanted)


def load_target(path: Path | str | Url) -> Target:
    """Read a target model dir (or its config.json) and the optional tokenizer/generation files beside it."""
    given = str(path) if storage.is_remote(path) else os.fspath(path)
    p: storage.Where = path if storage.is_remote(path) else Path(given)
    try:
        config_path = p / CONFIG if storage.probe(p) == "dir" else p
        found = storage.probe(config_path)
    except PathError as exc:
        raise TargetError(f"{exc}; pass the right --target") from None
    if found != "file":
        raise TargetError(
            f"target config not found: {config_path}; pass --target the target model directory containing config.json"
        )
    base = config_path.parent
    names = [config_path.name]

    raw_config = parse_json_object(_read(config_path), str(config_path))
    if _is_drafter(raw_config):
        # Its depth and width are the drafter's own: checking against them would "confirm" wrong values.
        raise TargetError(
            f"{config_path} is a DFlash drafter's config, not a target model's; pass the target the drafter serves"
        )
    config = parse_config(raw_config, str(config_path))

    generation: tuple[tuple[str, int], ...] = ()
    gen_path = base / GENERATION_CONFIG
    if _present(gen_path):
        generation = parse_generation_config(parse_json_object(_read(gen_path), str(gen_path)), str(gen_path))
        names.append(GENERATION_CONFIG)

    tokenizer_config: TokenizerConfigFacts | None = None
    tc_path = base / TOKENIZER_CONFIG
    if _present(tc_path):
        tokenizer_config = parse_tokenizer_config(parse_json_object(_read(tc_path), str(tc_path)), str(tc_path))
        names.append(TOKENIZER_CONFIG)

    tokenizer_json: TokenizerJsonFacts | None = None
    tj_path = base / TOKENIZER_JSON
    if _present(tj_path):
        wanted: set[str] = set()
        if tokenizer_config is not None:
            wanted |= {content for _, content in tokenizer_config.specials}
            if tokenizer_config.mask_token is not None:
                wanted.add(tokenizer_config.mask_token)
        tokenizer_json = read_tokenizer_json(tj_path, frozenset(wanted))
        names.append(TOKENIZER_JSON)

    return build_target(
        given,
        tuple(names),
        config,
        generation,
        tokenizer_config,
        tokenizer_json,
        tokenizer_config_source=str(tc_path),
        tokenizer_json_source=str(tj_path),
    )

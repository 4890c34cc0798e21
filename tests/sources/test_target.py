"""load_target on real target configs and on small tokenizer files written here; hostile inputs; and what
`check --target` says when the target cannot be read."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, Result, write_config

from dflash_cfg.errors import TargetError
from dflash_cfg.model import AddedToken, Target
from dflash_cfg.sources.target import load_target

TARGETS = FIXTURES / "targets"


def _write(path: Path, obj: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2), encoding="utf-8")
    return path


def _error(path: Path | str) -> str:
    with pytest.raises(TargetError) as info:
        load_target(path)
    message = str(info.value)
    assert "\n" not in message
    return message


# --- real target configs --------------------------------------------------------------------------


def config_only(tmp_path: Path, name: str) -> Path:
    """A target dir holding only the real config.json: what the config alone gives, without the tokenizer or
    generation files that sit beside it in some fixture dirs."""
    directory = tmp_path / name
    directory.mkdir()
    (directory / "config.json").write_bytes((TARGETS / name / "config.json").read_bytes())
    return directory


@pytest.mark.parametrize(
    ("name", "model_type", "layers", "hidden", "vocab"),
    [
        pytest.param("Qwen__Qwen3-4B", "qwen3", 36, 2560, 151936, id="qwen3-4b"),
        pytest.param("Qwen__Qwen3-8B", "qwen3", 36, 4096, 151936, id="qwen3-8b"),
        pytest.param("Qwen__Qwen3.6-27B", "qwen3_5_text", 64, 5120, 248320, id="qwen3.6-27b-composite"),
        pytest.param("openai__gpt-oss-20b", "gpt_oss", 24, 2880, 201088, id="gpt-oss-20b"),
    ],
)
def test_real_targets(name: str, model_type: str, layers: int, hidden: int, vocab: int, tmp_path: Path) -> None:
    directory = config_only(tmp_path, name)
    t = load_target(directory)
    assert (t.model_type, t.num_hidden_layers, t.hidden_size, t.vocab_size) == (
        model_type,
        layers,
        hidden,
        vocab,
    )
    assert t.path == str(directory)
    assert t.files == ("config.json",)
    assert t.added_tokens == () and t.base_vocab_size is None and t.mask_token is None
    # Passing the config.json file itself gives the same facts.
    assert load_target(directory / "config.json").special_ids == t.special_ids


def test_real_composite_special_ids(tmp_path: Path) -> None:
    directory = config_only(tmp_path, "Qwen__Qwen3.6-27B")
    t = load_target(directory)
    assert t.special_ids == (
        ("config.image_token_id", 248056),
        ("config.text_config.bos_token_id", 248044),
        ("config.text_config.eos_token_id", 248044),  # text_config.pad_token_id is null: no entry
        ("config.video_token_id", 248057),
        ("config.vision_end_token_id", 248054),
        ("config.vision_start_token_id", 248053),
    )
    assert t.named_special(248044) == ("config.text_config.bos_token_id", "config.text_config.eos_token_id")
    assert t.named_special(248070) == ()


def test_real_gpt_oss_special_ids(tmp_path: Path) -> None:
    directory = config_only(tmp_path, "openai__gpt-oss-20b")
    assert load_target(directory).special_ids == (
        ("config.eos_token_id", 200002),
        ("config.pad_token_id", 199999),
    )


# --- tokenizer files --------------------------------------------------------------------------------

CONFIG = {
    "model_type": "qwen3",
    "num_hidden_layers": 4,
    "hidden_size": 64,
    "vocab_size": 16,
    "eos_token_id": 5,
}
TOKENIZER_JSON = {
    "version": "1.0",
    "added_tokens": [
        {"id": 5, "content": "<|endoftext|>", "special": True, "lstrip": False, "normalized": False},
        {"id": 6, "content": "<think>", "special": False, "lstrip": False, "normalized": True},
    ],
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "Ġthe": 3, "<pad>": 4}, "merges": []},
}
TOKENIZER_CONFIG = {
    "added_tokens_decoder": {
        "5": {"content": "<|endoftext|>", "special": True},
        "7": {"content": "<|MASK|>", "special": True},
    },
    "eos_token": "<|endoftext|>",
    # The older serialised form of a special token.
    "bos_token": {"__type": "AddedToken", "content": "<think>", "lstrip": False},
    "pad_token": "<pad>",  # only in the base vocab
    "unk_token": None,
    "mask_token": "<|MASK|>",
}


@pytest.fixture()
def tokenizer_dir(tmp_path: Path) -> Path:
    _write(tmp_path / "config.json", CONFIG)
    _write(tmp_path / "tokenizer.json", TOKENIZER_JSON)
    _write(tmp_path / "tokenizer_config.json", TOKENIZER_CONFIG)
    _write(tmp_path / "generation_config.json", {"eos_token_id": [5, 6], "bos_token_id": 6, "pad_token_id": None})
    return tmp_path


def test_tokenizer_files(tokenizer_dir: Path) -> None:
    t = load_target(tokenizer_dir)
    assert t.files == ("config.json", "generation_config.json", "tokenizer_config.json", "tokenizer.json")
    assert t.added_tokens == (
        AddedToken(5, "<|endoftext|>", True),
        AddedToken(6, "<think>", False),
        AddedToken(7, "<|MASK|>", True),
    )
    assert t.base_vocab_size == 5
    assert t.mask_token == ("<|MASK|>", 7)
    assert t.special_ids == (
        ("config.eos_token_id", 5),
        ("generation_config.bos_token_id", 6),
        ("generation_config.eos_token_id", 5),
        ("generation_config.eos_token_id", 6),
        ("tokenizer_config.bos_token", 6),
        ("tokenizer_config.eos_token", 5),
        ("tokenizer_config.pad_token", 4),
    )
    assert t.token(7) == AddedToken(7, "<|MASK|>", True)
    assert t.token(3) is None  # base vocab entries are not added tokens
    assert t.named_special(5) == (
        "config.eos_token_id",
        "generation_config.eos_token_id",
        "tokenizer_config.eos_token",
    )
    assert t.named_special(7) == ()


def test_config_file_path_reads_files_beside_it(tokenizer_dir: Path) -> None:
    by_dir = load_target(tokenizer_dir)
    by_file = load_target(tokenizer_dir / "config.json")
    assert by_file.path == str(tokenizer_dir / "config.json")
    assert (by_file.files, by_file.special_ids, by_file.added_tokens, by_file.mask_token) == (
        by_dir.files,
        by_dir.special_ids,
        by_dir.added_tokens,
        by_dir.mask_token,
    )


def test_tokenizer_config_alone(tmp_path: Path) -> None:
    _write(tmp_path / "config.json", CONFIG)
    _write(tmp_path / "tokenizer_config.json", TOKENIZER_CONFIG | {"mask_token": {"content": "<|MASK|>"}})
    t = load_target(tmp_path)
    assert t.files == ("config.json", "tokenizer_config.json")
    assert t.base_vocab_size is None
    assert t.mask_token == ("<|MASK|>", 7)
    # "<pad>" and "<think>" live only in tokenizer.json, which is absent: no id, so no entry.
    assert t.special_ids == (("config.eos_token_id", 5), ("tokenizer_config.eos_token", 5))


def test_unresolved_mask_token(tmp_path: Path) -> None:
    _write(tmp_path / "config.json", CONFIG)
    _write(tmp_path / "tokenizer_config.json", {"mask_token": "<|NOPE|>"})
    assert load_target(tmp_path).mask_token == ("<|NOPE|>", None)


def test_unigram_vocab_list(tmp_path: Path) -> None:
    _write(tmp_path / "config.json", CONFIG)
    _write(
        tmp_path / "tokenizer.json",
        {
            "added_tokens": [],
            "model": {"type": "Unigram", "vocab": [["<pad>", 0.0], ["</s>", 0.0], ["▁a", -2.5]]},
        },
    )
    _write(tmp_path / "tokenizer_config.json", {"eos_token": "</s>", "pad_token": "<pad>"})
    t = load_target(tmp_path)
    assert t.base_vocab_size == 3
    assert ("tokenizer_config.eos_token", 1) in t.special_ids
    assert ("tokenizer_config.pad_token", 0) in t.special_ids


def test_special_flag_merges_and_negative_id_ignored(tmp_path: Path) -> None:
    # -1 is the old "unset" sentinel (early LLaMA pad_token_id): it names no token.
    _write(tmp_path / "config.json", CONFIG | {"pad_token_id": -1})
    _write(tmp_path / "tokenizer.json", {"added_tokens": [{"id": 9, "content": "<x>", "special": False}]})
    _write(
        tmp_path / "tokenizer_config.json",
        {"added_tokens_decoder": {"9": {"content": "<x>", "special": True}}},
    )
    t = load_target(tmp_path)
    assert t.added_tokens == (AddedToken(9, "<x>", True),)
    assert t.special_ids == (("config.eos_token_id", 5),)


def test_text_config_string_is_ignored(tmp_path: Path) -> None:
    _write(tmp_path / "config.json", CONFIG | {"text_config": "see elsewhere"})
    t = load_target(tmp_path)
    assert (t.model_type, t.num_hidden_layers, t.hidden_size, t.vocab_size) == ("qwen3", 4, 64, 16)


def test_text_config_falls_back_to_top_level(tmp_path: Path) -> None:
    _write(
        tmp_path / "config.json",
        {"model_type": "vl", "hidden_size": 8, "text_config": {"num_hidden_layers": 3, "vocab_size": None}},
    )
    t = load_target(tmp_path)
    assert (t.model_type, t.num_hidden_layers, t.hidden_size, t.vocab_size) == ("vl", 3, 8, None)


# --- hostile inputs --------------------------------------------------------------------------------


def test_missing_dir(tmp_path: Path) -> None:
    message = _error(tmp_path / "nope")
    assert message.startswith("target config not found: ") and "nope" in message


def test_dir_without_config(tmp_path: Path) -> None:
    assert _error(tmp_path).startswith(f"target config not found: {tmp_path / 'config.json'}")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"", "empty file", id="empty"),
        pytest.param(b"  \n", "empty file", id="whitespace"),
        pytest.param(b'{"num_hidden_layers": 3', "not valid JSON (line 1", id="truncated"),
        pytest.param(b"[1, 2]", "expected a JSON object at the top level, got an array", id="top-level-list"),
        pytest.param(b'{"a": "\xff"}', "not readable as JSON", id="bad-utf8"),
        pytest.param(b"[" * 100_000, "not readable as JSON", id="deep-nesting"),
    ],
)
def test_broken_config_json(tmp_path: Path, data: bytes, expected: str) -> None:
    (tmp_path / "config.json").write_bytes(data)
    message = _error(tmp_path)
    assert message.startswith(f"{tmp_path / 'config.json'}: ") and expected in message


@pytest.mark.parametrize(
    ("config", "key"),
    [
        pytest.param({"num_hidden_layers": "64"}, "num_hidden_layers", id="layers-string"),
        pytest.param({"num_hidden_layers": True}, "num_hidden_layers", id="layers-bool"),
        pytest.param({"hidden_size": 5120.0}, "hidden_size", id="hidden-float"),
        pytest.param({"vocab_size": 0}, "vocab_size", id="vocab-zero"),
        pytest.param({"text_config": {"num_hidden_layers": "64"}}, "text_config.num_hidden_layers", id="text-layers"),
        pytest.param({"text_config": {"model_type": 3}}, "text_config.model_type", id="text-model-type"),
        pytest.param({"model_type": ["qwen3"]}, "model_type", id="model-type-list"),
        pytest.param({"eos_token_id": [1, "2"]}, "eos_token_id", id="eos-list-string"),
        pytest.param({"eos_token_id": False}, "eos_token_id", id="eos-bool"),
        pytest.param({"text_config": {"pad_token_id": {}}}, "text_config.pad_token_id", id="text-pad-object"),
        pytest.param({"image_token_id": "<image>"}, "image_token_id", id="image-string"),
    ],
)
def test_wrong_typed_config_values(tmp_path: Path, config: dict[str, Any], key: str) -> None:
    _write(tmp_path / "config.json", config)
    message = _error(tmp_path)
    assert message.startswith(f"{tmp_path / 'config.json'}: {key} must be ")


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        pytest.param("tokenizer.json", b'{"model": {"vocab": {"a": 0', "not valid JSON", id="tokenizer-truncated"),
        pytest.param("tokenizer.json", b'{"model": {"vocab": 3}}', "model.vocab must be", id="vocab-number"),
        pytest.param(
            "tokenizer.json",
            b'{"added_tokens": [{"id": "5", "content": "x"}]}',
            "added_tokens[0].id",
            id="id-string",
        ),
        pytest.param("tokenizer.json", b'{"added_tokens": ["x"]}', "added_tokens[0] must be", id="added-not-object"),
        pytest.param(
            "tokenizer_config.json",
            b'{"added_tokens_decoder": {"abc": {"content": "x", "special": true}}}',
            'added_tokens_decoder["abc"]: key is not a token id',
            id="decoder-key-not-int",
        ),
        pytest.param(
            "tokenizer_config.json",
            b'{"added_tokens_decoder": {"-3": {"content": "x"}}}',
            "key is not a token id",
            id="decoder-key-negative",
        ),
        pytest.param(
            "tokenizer_config.json",
            b'{"added_tokens_decoder": {"3": {"content": "x", "special": "yes"}}}',
            'added_tokens_decoder["3"].special must be a boolean',
            id="decoder-special-string",
        ),
        pytest.param("tokenizer_config.json", b'{"eos_token": 5}', "eos_token must be", id="eos-token-int"),
        pytest.param(
            "tokenizer_config.json",
            b'{"mask_token": {"content": null}}',
            "mask_token.content",
            id="mask-no-content",
        ),
        pytest.param("tokenizer_config.json", b"", "empty file", id="tokenizer-config-empty"),
        pytest.param("generation_config.json", b'"eos"', "got a string", id="generation-not-object"),
        pytest.param("generation_config.json", b'{"eos_token_id": [1, null]}', "eos_token_id", id="generation-eos"),
    ],
)
def test_broken_optional_files(tmp_path: Path, name: str, content: bytes, expected: str) -> None:
    _write(tmp_path / "config.json", CONFIG)
    (tmp_path / name).write_bytes(content)
    message = _error(tmp_path)
    assert message.startswith(f"{tmp_path / name}: ") and expected in message


def test_tokenizer_files_disagree(tmp_path: Path) -> None:
    _write(tmp_path / "config.json", CONFIG)
    _write(tmp_path / "tokenizer.json", {"added_tokens": [{"id": 7, "content": "<a>", "special": True}]})
    _write(
        tmp_path / "tokenizer_config.json",
        {"added_tokens_decoder": {"7": {"content": "<b>", "special": True}}},
    )
    message = _error(tmp_path)
    assert "tokenizer_config.json: token 7" in message and "tokenizer.json" in message


def test_dangling_symlink_is_an_error(tmp_path: Path) -> None:
    # A half-downloaded HF cache leaves symlinks to missing blobs; that must not pass as "no tokenizer".
    _write(tmp_path / "config.json", CONFIG)
    os.symlink(tmp_path / "blobs" / "missing", tmp_path / "tokenizer.json")
    message = _error(tmp_path)
    assert message.startswith(f"{tmp_path / 'tokenizer.json'}: cannot read")


def test_optional_file_that_is_a_directory(tmp_path: Path) -> None:
    _write(tmp_path / "config.json", CONFIG)
    (tmp_path / "generation_config.json").mkdir()
    assert "not a regular file" in _error(tmp_path)


def test_target_is_frozen(tokenizer_dir: Path) -> None:
    t = load_target(tokenizer_dir)
    with pytest.raises(AttributeError):
        t.hidden_size = 1  # type: ignore[misc]
    assert isinstance(t, Target)


# --- through the CLI: --target errors are one line and exit 2 ---------------------------------------------

B16 = FIXTURES / "upstream" / "z-lab__Qwen3-4B-DFlash-b16" / "config.json"


def drafter_dir(tmp_path: Path) -> Path:
    return write_config(tmp_path / "drafter", raw=B16.read_bytes()).parent


def test_cli_missing_target_dir_exits_2_with_one_line(dflash: Callable[..., Result], tmp_path: Path) -> None:
    missing = tmp_path / "no-such-target"
    result = dflash("check", drafter_dir(tmp_path), "--target", missing, "--format", "json")
    assert result.code == 2
    assert json.loads(result.out)["errors"] == [result.err.strip().removeprefix("dflash-cfg: error: ")]
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("dflash-cfg: error: --target:")
    assert str(missing) in lines[0]


def test_cli_target_dir_without_config_exits_2(dflash: Callable[..., Result], tmp_path: Path) -> None:
    empty = tmp_path / "empty-target"
    _write(empty / "tokenizer_config.json", {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"})
    result = dflash("check", drafter_dir(tmp_path), "--target", empty)
    assert result.code == 2
    assert len(result.err.splitlines()) == 1 and "config.json" in result.err


def test_cli_broken_target_tokenizer_exits_2(dflash: Callable[..., Result], tmp_path: Path) -> None:
    target = config_only(tmp_path, "Qwen__Qwen3-4B")
    (target / "tokenizer_config.json").write_text("{not json", encoding="utf-8")
    result = dflash("check", drafter_dir(tmp_path), "--target", target, "--format", "json")
    assert result.code == 2
    assert len(result.err.splitlines()) == 1 and "tokenizer_config.json" in result.err


def test_cli_target_given_as_its_config_file(dflash: Callable[..., Result], tmp_path: Path) -> None:
    target = config_only(tmp_path, "Qwen__Qwen3-8B")
    result = dflash("check", drafter_dir(tmp_path), "--target", target / "config.json", "--format", "json")
    found = [(f["rule"], f["pointer"]) for f in result.json()["files"][0]["findings"] if f["rule"].startswith("DF4")]
    assert found == [("DF401", "/hidden_size")]


def test_a_tokenizer_with_no_added_tokens_bounds_the_vocabulary(tmp_path: Path, dflash: Callable[..., Result]) -> None:
    """A tokenizer.json whose added_tokens is empty: its base vocabulary alone says where the ids end."""
    drafter = write_config(tmp_path / "drafter")
    data = json.loads(drafter.read_text(encoding="utf-8"))
    target = tmp_path / "target"
    target.mkdir()
    _write(target / "config.json", {"model_type": "qwen3", "vocab_size": data["vocab_size"] + 256, "hidden_size": 2560})
    _write(target / "tokenizer.json", {"added_tokens": [], "model": {"type": "BPE", "vocab": {"a": 0, "b": 1}}})
    result = dflash("check", drafter.parent, "--target", target, "--select", "DF402", "--format", "json")
    assert result.code == 0, result.err
    (finding,) = result.json()["files"][0]["findings"]
    assert finding["severity"] == "info" and "tokenizer ends at id 1" in finding["message"]

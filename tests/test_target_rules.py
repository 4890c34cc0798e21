"""DF401-DF405 through the real CLI: published drafter configs checked against published target configs
(and tokenizer files written here in the real Qwen3 layout), all as files in tmp_path.

One case per rule (and the clean pairs) is a row of test_rule_cases.py; these tests check what a row does
not: messages, fixes, several findings at once, tokenizer layouts, exit codes."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, ROOT, Result

UPSTREAM = FIXTURES / "upstream"
TARGETS = FIXTURES / "targets"


def load_drafter(name: str) -> dict[str, Any]:
    data = json.loads((UPSTREAM / name / "config.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def write_json(path: Path, obj: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")
    return path


def make_drafter(tmp_path: Path, cfg: dict[str, Any], name: str = "drafter") -> Path:
    directory = tmp_path / name
    write_json(directory / "config.json", cfg)
    return directory


def make_target(tmp_path: Path, name: str, *, changes: dict[str, Any] | None = None, dirname: str = "target") -> Path:
    """A target dir holding a copy of the real target config.json (only that file, unless a test adds more)."""
    cfg = json.loads((TARGETS / name / "config.json").read_text(encoding="utf-8"))
    cfg.update(changes or {})
    directory = tmp_path / dirname
    write_json(directory / "config.json", cfg)
    return directory


B16 = "z-lab__Qwen3-4B-DFlash-b16"
Q35_4B = "z-lab__Qwen3.5-4B-DFlash"
Q36_27B = "z-lab__Qwen3.6-27B-DFlash"
QWEN3_4B, QWEN3_8B, QWEN36_27B = "Qwen__Qwen3-4B", "Qwen__Qwen3-8B", "Qwen__Qwen3.6-27B"


def check_json(
    dflash: Callable[..., Result], drafter: Path, target: Path, *extra: str
) -> tuple[Result, list[dict[str, Any]]]:
    result = dflash("check", drafter, "--target", target, "--format", "json", *extra)
    assert result.out, result.err
    doc = result.json()
    assert len(doc["files"]) == 1, doc
    assert doc["files"][0]["kind"] in ("dflash", "dflash2")
    return result, doc["files"][0]["findings"]


def only(findings: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    return [f for f in findings if f["rule"].startswith(prefix)]


def pairs(findings: list[dict[str, Any]], prefix: str = "DF4") -> list[tuple[str, str]]:
    return sorted((f["rule"], f["pointer"]) for f in only(findings, prefix))


# --- DF401 / DF402 / DF403: sizes and depth ----------------------------------------------------------------


def test_b16_drafter_against_qwen3_8b_is_a_width_mismatch(dflash: Callable[..., Result], tmp_path: Path) -> None:
    drafter = make_drafter(tmp_path, load_drafter(B16))
    target = make_target(tmp_path, QWEN3_8B)
    _, findings = check_json(dflash, drafter, target)
    # Same depth (36) and vocabulary (151936): only the width differs.
    assert pairs(findings) == [("DF401", "/hidden_size")]
    (f,) = only(findings, "DF401")
    assert f["severity"] == "error"
    assert "2560" in f["message"] and "4096" in f["message"]
    assert f["line"] is not None  # located on the hidden_size line of the drafter file
    assert json.loads((drafter / "config.json").read_text())["hidden_size"] == 2560


def test_target_hidden_size_declared_wrong(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = load_drafter(B16)
    cfg["target_hidden_size"] = 4096
    drafter = make_drafter(tmp_path, cfg)
    _, findings = check_json(dflash, drafter, make_target(tmp_path, QWEN3_4B))
    assert pairs(findings) == [("DF401", "/target_hidden_size")]


def test_target_hidden_size_declared_right_for_a_wider_target(dflash: Callable[..., Result], tmp_path: Path) -> None:
    # An "exotic" drafter (target_hidden_size set): own width 2560, reading a 4096-wide target. Not a DF401.
    cfg = load_drafter(B16)
    cfg["target_hidden_size"] = 4096
    _, findings = check_json(dflash, make_drafter(tmp_path, cfg), make_target(tmp_path, QWEN3_8B))
    assert only(findings, "DF401") == []


def test_qwen35_drafter_against_qwen3_4b(dflash: Callable[..., Result], tmp_path: Path) -> None:
    drafter = make_drafter(tmp_path, load_drafter(Q35_4B))
    target = make_target(tmp_path, QWEN3_4B)
    result, findings = check_json(dflash, drafter, target)

    got = pairs(findings)
    assert ("DF402", "/vocab_size") in got
    assert ("DF403", "/num_target_layers") in got
    assert only(findings, "DF401") == []  # both 2560 wide
    assert only(findings, "DF405") == []  # taps 1..29 all exist in 36 layers

    (vocab,) = only(findings, "DF402")
    assert "248320" in vocab["message"] and "151936" in vocab["message"]
    assert vocab["severity"] == "error"

    (depth,) = only(findings, "DF403")
    assert depth["severity"] == "warning"  # SGLang captures with the running target's depth; vLLM does not read it
    assert "32" in depth["message"] and "36" in depth["message"]
    assert depth["fix"] is not None and depth["fix"]["safe"] is True
    assert depth["fix"]["patch"] == [{"op": "replace", "path": "/num_target_layers", "value": 36}]

    # The Qwen3.5 mask 248077 does not exist in a 151936-token vocabulary.
    masks = only(findings, "DF404")
    assert [m["pointer"] for m in masks] == ["/dflash_config/mask_token_id"]
    assert "outside the target vocabulary" in masks[0]["message"]
    assert result.err == ""


def test_df403_patch_applies_to_the_file(dflash: Callable[..., Result], tmp_path: Path) -> None:
    """Applying the DF403 patch by hand makes DF403 go away on a re-check."""
    drafter = make_drafter(tmp_path, load_drafter(Q35_4B))
    target = make_target(tmp_path, QWEN3_4B)
    _, findings = check_json(dflash, drafter, target)
    (depth,) = only(findings, "DF403")
    cfg = json.loads((drafter / "config.json").read_text())
    for op in depth["fix"]["patch"]:
        keys = op["path"].lstrip("/").split("/")
        obj = cfg
        for k in keys[:-1]:
            obj = obj[k]
        obj[keys[-1]] = op["value"]
    write_json(drafter / "config.json", cfg)
    _, after = check_json(dflash, drafter, target)
    assert only(after, "DF403") == []


def test_df403_missing_num_target_layers_is_an_add(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = load_drafter(B16)
    del cfg["num_target_layers"]
    _, findings = check_json(dflash, make_drafter(tmp_path, cfg), make_target(tmp_path, QWEN3_4B))
    (depth,) = only(findings, "DF403")
    assert depth["pointer"] == "/num_target_layers"
    assert depth["fix"]["patch"] == [{"op": "add", "path": "/num_target_layers", "value": 36}]


def test_df403_inside_dflash_config(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = load_drafter(B16)
    cfg["dflash_config"]["num_target_layers"] = 32
    _, findings = check_json(dflash, make_drafter(tmp_path, cfg), make_target(tmp_path, QWEN3_4B))
    (depth,) = only(findings, "DF403")
    assert depth["pointer"] == "/dflash_config/num_target_layers"
    assert depth["fix"]["patch"] == [{"op": "replace", "path": "/dflash_config/num_target_layers", "value": 36}]


def test_df403_stale_top_level_copy_next_to_a_right_inner_one(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = load_drafter(B16)
    cfg["num_target_layers"] = 32  # top level: read by z-lab April code and MLX
    cfg["dflash_config"]["num_target_layers"] = 36  # read by SGLang
    _, findings = check_json(dflash, make_drafter(tmp_path, cfg), make_target(tmp_path, QWEN3_4B))
    assert ("DF403", "/num_target_layers") in pairs(findings)


def test_df402_draft_vocab_size_suppresses(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = load_drafter(B16)
    cfg["vocab_size"] = 32000
    cfg["draft_vocab_size"] = 32000
    _, findings = check_json(dflash, make_drafter(tmp_path, cfg), make_target(tmp_path, QWEN3_4B))
    assert only(findings, "DF402") == []


# --- DF405: taps past the target --------------------------------------------------------------------------


def test_df405_taps_past_a_36_layer_target(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = load_drafter(B16)
    cfg["dflash_config"]["target_layer_ids"] = [1, 10, 20, 30, 36, 40]
    drafter = make_drafter(tmp_path, cfg)
    _, findings = check_json(dflash, drafter, make_target(tmp_path, QWEN3_4B))
    past = only(findings, "DF405")
    assert [f["pointer"] for f in past] == ["/dflash_config/target_layer_ids/4", "/dflash_config/target_layer_ids/5"]
    assert all(f["severity"] == "error" for f in past)
    assert "36" in past[0]["message"] and "40" in past[1]["message"]
    assert all(f["line"] is not None for f in past)


def test_df405_ignores_what_num_target_layers_claims(dflash: Callable[..., Result], tmp_path: Path) -> None:
    # The file says 48 layers (so its own DF1xx checks are content), but the real target has 36.
    cfg = load_drafter(B16)
    cfg["num_target_layers"] = 48
    cfg["dflash_config"]["target_layer_ids"] = [1, 12, 23, 34, 45]
    _, findings = check_json(dflash, make_drafter(tmp_path, cfg), make_target(tmp_path, QWEN3_4B))
    assert [f["pointer"] for f in only(findings, "DF405")] == ["/dflash_config/target_layer_ids/4"]
    assert ("DF403", "/num_target_layers") in pairs(findings)


def test_df405_top_level_taps(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = load_drafter(B16)
    del cfg["dflash_config"]["target_layer_ids"]
    cfg["target_layer_ids"] = [1, 9, 17, 25, 40]
    _, findings = check_json(dflash, make_drafter(tmp_path, cfg), make_target(tmp_path, QWEN3_4B))
    assert [f["pointer"] for f in only(findings, "DF405")] == ["/target_layer_ids/4"]


# --- the incident: a stale Qwen3.6-27B drafter against the real composite target ----------------------------


def incident_drafter() -> dict[str, Any]:
    cfg = json.loads((FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json").read_text(encoding="utf-8"))
    assert cfg["dflash_config"]["mask_token_id"] == 248064
    assert cfg["dflash_config"]["target_layer_ids"] == [1, 17, 33, 49, 63]
    assert cfg["layer_types"] == ["full_attention"] * 5
    return cfg


def test_incident_drafter_is_the_upstream_file_with_three_changes() -> None:
    """The stale on-disk state differs from the upstream drafter only in the mask, the taps and layer_types."""
    expected = load_drafter(Q36_27B)
    expected["dflash_config"]["mask_token_id"] = 248064
    expected["dflash_config"]["target_layer_ids"] = [1, 17, 33, 49, 63]
    expected["layer_types"] = ["full_attention"] * 5
    assert incident_drafter() == expected


def test_incident_drafter_against_real_qwen36_27b(dflash: Callable[..., Result], tmp_path: Path) -> None:
    drafter = make_drafter(tmp_path, incident_drafter())
    target = make_target(tmp_path, QWEN36_27B)
    _, findings = check_json(dflash, drafter, target)

    # The target's depth lives in text_config (64): the drafter's 64 is right, so no DF403 and no DF405.
    assert only(findings, "DF403") == []
    assert only(findings, "DF405") == []
    # Width 5120 and vocab 248320 also come from text_config.
    assert only(findings, "DF401") == [] and only(findings, "DF402") == []
    # Tap 63 is the last of 64 layers.
    last = only(findings, "DF105")
    assert [f["pointer"] for f in last] == ["/dflash_config/target_layer_ids/4"]
    assert last[0]["severity"] == "warning"


def test_incident_drafter_against_a_flat_36_layer_reading(dflash: Callable[..., Result], tmp_path: Path) -> None:
    """Had the composite config been read at the top level only, depth would be unknown; a flat copy with the
    text_config values hoisted must give the same verdicts."""
    real = json.loads((TARGETS / QWEN36_27B / "config.json").read_text(encoding="utf-8"))
    flat = {k: v for k, v in real.items() if k != "text_config"} | real["text_config"]
    target = write_json(tmp_path / "flat" / "config.json", flat).parent
    _, findings = check_json(dflash, make_drafter(tmp_path, incident_drafter()), target)
    assert only(findings, "DF403") == [] and only(findings, "DF405") == []


def test_qwen36_mask_on_image_token_of_real_target(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = incident_drafter()
    cfg["dflash_config"]["mask_token_id"] = 248056  # the real config's image_token_id
    _, findings = check_json(dflash, make_drafter(tmp_path, cfg), make_target(tmp_path, QWEN36_27B))
    (mask,) = only(findings, "DF404")
    assert mask["severity"] == "warning" and mask["pointer"] == "/dflash_config/mask_token_id"
    assert "image_token_id" in mask["message"]


def test_qwen36_mask_on_text_config_eos(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = incident_drafter()
    cfg["dflash_config"]["mask_token_id"] = 248044  # text_config eos/bos
    _, findings = check_json(dflash, make_drafter(tmp_path, cfg), make_target(tmp_path, QWEN36_27B))
    (mask,) = only(findings, "DF404")
    assert mask["severity"] == "warning"
    assert "text_config.eos_token_id" in mask["message"]


# --- DF404: the mask token against the target tokenizer (real Qwen3 layout) -------------------------------

# Qwen3's tokenizer_config.json added_tokens_decoder: 151643..151668 (26 added tokens after the
# 151643-token base vocabulary); the four the checks rely on are asserted below.
_QWEN3_ADDED = [
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<|object_ref_start|>", True),
    ("<|object_ref_end|>", True),
    ("<|box_start|>", True),
    ("<|box_end|>", True),
    ("<|quad_start|>", True),
    ("<|quad_end|>", True),
    ("<|vision_start|>", True),
    ("<|vision_end|>", True),
    ("<|vision_pad|>", True),
    ("<|image_pad|>", True),
    ("<|video_pad|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
    ("<|fim_prefix|>", False),
    ("<|fim_middle|>", False),
    ("<|fim_suffix|>", False),
    ("<|fim_pad|>", False),
    ("<|repo_name|>", False),
    ("<|file_sep|>", False),
    ("<tool_response>", False),
    ("</tool_response>", False),
    ("<think>", False),
    ("</think>", False),
]


def qwen3_tokenizer_config() -> dict[str, Any]:
    decoder = {
        str(151643 + i): {
            "content": content,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": special,
        }
        for i, (content, special) in enumerate(_QWEN3_ADDED)
    }
    tc: dict[str, Any] = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": decoder,
        "additional_special_tokens": [c for c, s in _QWEN3_ADDED if s][1:],
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 131072,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }
    d = tc["added_tokens_decoder"]
    assert (d["151643"]["content"], d["151643"]["special"]) == ("<|endoftext|>", True)
    assert (d["151644"]["content"], d["151644"]["special"]) == ("<|im_start|>", True)
    assert (d["151645"]["content"], d["151645"]["special"]) == ("<|im_end|>", True)
    assert (d["151667"]["content"], d["151667"]["special"]) == ("<think>", False)
    assert tc["eos_token"] == "<|im_end|>" and tc["pad_token"] == "<|endoftext|>"
    return tc


def qwen3_target_with_tokenizer(
    tmp_path: Path, tokenizer_changes: dict[str, Any] | None = None, config_changes: dict[str, Any] | None = None
) -> Path:
    target = make_target(tmp_path, QWEN3_4B, changes=config_changes)
    tc = qwen3_tokenizer_config()
    for key, value in (tokenizer_changes or {}).items():
        if key == "added_tokens_decoder":
            tc[key] = {**tc[key], **value}
        else:
            tc[key] = value
    write_json(target / "tokenizer_config.json", tc)
    return target


def b16_with_mask(tmp_path: Path, mask: int) -> Path:
    cfg = load_drafter(B16)
    cfg["dflash_config"]["mask_token_id"] = mask
    return make_drafter(tmp_path, cfg)


def test_df404_mask_past_the_tokenizer_passes(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = check_json(dflash, b16_with_mask(tmp_path, 151669), qwen3_target_with_tokenizer(tmp_path))
    assert only(findings, "DF4") == []


def test_df404_mask_on_eos(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = check_json(dflash, b16_with_mask(tmp_path, 151645), qwen3_target_with_tokenizer(tmp_path))
    masks = only(findings, "DF404")
    assert len(masks) == 1, masks
    (m,) = masks
    assert m["severity"] == "warning" and m["pointer"] == "/dflash_config/mask_token_id"
    assert "<|im_end|>" in m["message"]
    assert "eos_token" in m["message"]  # names where the collision comes from
    assert m["line"] is not None


def test_df404_mask_on_pad(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = check_json(dflash, b16_with_mask(tmp_path, 151643), qwen3_target_with_tokenizer(tmp_path))
    (m,) = only(findings, "DF404")
    assert m["severity"] == "warning"
    assert "pad_token" in m["message"] and "<|endoftext|>" in m["message"]


def test_df404_mask_on_added_non_special_token_warns(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = check_json(dflash, b16_with_mask(tmp_path, 151667), qwen3_target_with_tokenizer(tmp_path))
    (m,) = only(findings, "DF404")
    assert m["severity"] == "warning"
    assert "<think>" in m["message"] and "not special" in m["message"]


def test_df404_mask_on_ordinary_base_vocab_token(dflash: Callable[..., Result], tmp_path: Path) -> None:
    _, findings = check_json(dflash, b16_with_mask(tmp_path, 1000), qwen3_target_with_tokenizer(tmp_path))
    (m,) = only(findings, "DF404")
    assert m["severity"] == "warning"
    assert "base" in m["message"] and "151643" in m["message"]


def qwen3_target_with_tokenizer_json(tmp_path: Path) -> Path:
    """Qwen3-4B (vocab_size 151936) with a tokenizer.json of 151643 base ids and the added tokens up to 151668."""
    target = qwen3_target_with_tokenizer(tmp_path)
    vocab = {f"t{i}": i for i in range(151643)}
    decoder = json.loads((target / "tokenizer_config.json").read_text(encoding="utf-8"))["added_tokens_decoder"]
    tok = {
        "version": "1.0",
        "added_tokens": [
            {
                "id": int(i),
                "content": e["content"],
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": e["special"],
            }
            for i, e in decoder.items()
        ],
        "model": {"type": "BPE", "vocab": vocab, "merges": []},
    }
    (target / "tokenizer.json").write_text(json.dumps(tok), encoding="utf-8")
    return target


def test_df404_ordinary_token_with_tokenizer_json(dflash: Callable[..., Result], tmp_path: Path) -> None:
    """With tokenizer.json present the base-vocabulary size comes from its model.vocab."""
    target = qwen3_target_with_tokenizer_json(tmp_path)
    _, findings = check_json(dflash, b16_with_mask(tmp_path, 151642), target)
    (m,) = only(findings, "DF404")
    assert m["severity"] == "warning" and "151643" in m["message"]
    drafter2 = b16_with_mask(tmp_path / "again", 151669)
    _, clean = check_json(dflash, drafter2, target)
    assert only(clean, "DF404") == []


def test_df404_tokenizer_mask_token_disagrees(dflash: Callable[..., Result], tmp_path: Path) -> None:
    target = qwen3_target_with_tokenizer(
        tmp_path,
        {
            "added_tokens_decoder": {
                "151670": {
                    "content": "<|MASK|>",
                    "lstrip": False,
                    "normalized": False,
                    "rstrip": False,
                    "single_word": False,
                    "special": True,
                }
            },
            "mask_token": "<|MASK|>",
        },
    )
    _, findings = check_json(dflash, b16_with_mask(tmp_path, 151669), target)
    (m,) = only(findings, "DF404")
    assert m["severity"] == "error"
    assert "<|MASK|>" in m["message"] and "151670" in m["message"]


def test_df404_tokenizer_mask_token_agrees(dflash: Callable[..., Result], tmp_path: Path) -> None:
    target = qwen3_target_with_tokenizer(
        tmp_path,
        {
            "added_tokens_decoder": {
                "151669": {
                    "content": "<|MASK|>",
                    "lstrip": False,
                    "normalized": False,
                    "rstrip": False,
                    "single_word": False,
                    "special": True,
                }
            },
            "mask_token": "<|MASK|>",
        },
    )
    _, findings = check_json(dflash, b16_with_mask(tmp_path, 151669), target)
    assert only(findings, "DF404") == []


def test_df404_image_token_id_in_target_config(dflash: Callable[..., Result], tmp_path: Path) -> None:
    target = qwen3_target_with_tokenizer(tmp_path, config_changes={"image_token_id": 151669})
    _, findings = check_json(dflash, b16_with_mask(tmp_path, 151669), target)
    (m,) = only(findings, "DF404")
    assert m["severity"] == "warning"
    assert "image_token_id" in m["message"]


def test_df404_generation_config_eos_list(dflash: Callable[..., Result], tmp_path: Path) -> None:
    target = qwen3_target_with_tokenizer(tmp_path)
    write_json(target / "generation_config.json", {"eos_token_id": [151645, 151643], "pad_token_id": 151643})
    _, findings = check_json(dflash, b16_with_mask(tmp_path, 151643), target)
    (m,) = only(findings, "DF404")
    assert "generation_config.eos_token_id" in m["message"]


def test_df404_top_level_mask_pointer(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = load_drafter(B16)
    del cfg["dflash_config"]["mask_token_id"]
    cfg["mask_token_id"] = 151645
    _, findings = check_json(dflash, make_drafter(tmp_path, cfg), qwen3_target_with_tokenizer(tmp_path))
    assert [f["pointer"] for f in only(findings, "DF404")] == ["/mask_token_id"]


def test_df404_without_tokenizer_files_an_ordinary_id_is_unknown(dflash: Callable[..., Result], tmp_path: Path) -> None:
    # Only config.json: nothing says 1000 is ordinary text, so no verdict rather than a guess.
    _, findings = check_json(dflash, b16_with_mask(tmp_path, 1000), make_target(tmp_path, QWEN3_4B))
    assert only(findings, "DF404") == []


# --- exit codes and errors through the CLI ---------------------------------------------------------------


def test_target_errors_reported_in_text_format(dflash: Callable[..., Result], tmp_path: Path) -> None:
    drafter = make_drafter(tmp_path, load_drafter(B16))
    result = dflash("check", drafter, "--target", make_target(tmp_path, QWEN3_8B))
    assert "error DF401 target-hidden-size /hidden_size" in result.out
    assert "1 error" in result.out


def test_exit_1_on_target_errors(dflash: Callable[..., Result], tmp_path: Path) -> None:
    # Regression: at HEAD f6e764b cli.run dropped main(standalone_mode=False)'s return value, so `check`
    # exited 0 with errors (click >= 8.2 returns ctx.exit()'s code instead of raising Exit).
    drafter = make_drafter(tmp_path, load_drafter(B16))
    result, findings = check_json(dflash, drafter, make_target(tmp_path, QWEN3_8B))
    assert any(f["severity"] == "error" for f in findings)
    assert result.code == 1


@pytest.mark.slow
def test_exit_1_on_target_errors_subprocess(tmp_path: Path) -> None:
    drafter = make_drafter(tmp_path, load_drafter(B16))
    target = make_target(tmp_path, QWEN3_8B)
    proc = subprocess.run(
        [sys.executable, "-m", "dflash_cfg", "check", str(drafter), "--target", str(target), "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert json.loads(proc.stdout)["summary"]["errors"] >= 1
    assert proc.returncode == 1


def test_exit_1_on_warning_with_strict(dflash: Callable[..., Result], tmp_path: Path) -> None:
    result, findings = check_json(
        dflash, b16_with_mask(tmp_path, 151667), qwen3_target_with_tokenizer(tmp_path), "--strict"
    )
    assert [f["severity"] for f in only(findings, "DF404")] == ["warning"]
    assert result.code == 1


def test_exit_0_when_clean(dflash: Callable[..., Result], tmp_path: Path) -> None:
    result, _ = check_json(dflash, make_drafter(tmp_path, load_drafter(B16)), make_target(tmp_path, QWEN3_4B))
    assert result.code == 0


def test_missing_target_dir_exits_2_with_one_line(dflash: Callable[..., Result], tmp_path: Path) -> None:
    drafter = make_drafter(tmp_path, load_drafter(B16))
    missing = tmp_path / "no-such-target"
    result = dflash("check", drafter, "--target", missing, "--format", "json")
    assert result.code == 2
    assert json.loads(result.out)["errors"] == [result.err.strip().removeprefix("dflash-cfg: error: ")]
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("dflash-cfg: error: --target:")
    assert str(missing) in lines[0]


def test_target_dir_without_config_exits_2(dflash: Callable[..., Result], tmp_path: Path) -> None:
    drafter = make_drafter(tmp_path, load_drafter(B16))
    empty = tmp_path / "empty-target"
    empty.mkdir()
    write_json(empty / "tokenizer_config.json", qwen3_tokenizer_config())
    result = dflash("check", drafter, "--target", empty)
    assert result.code == 2
    assert len(result.err.splitlines()) == 1 and "config.json" in result.err


def test_broken_target_tokenizer_exits_2(dflash: Callable[..., Result], tmp_path: Path) -> None:
    drafter = make_drafter(tmp_path, load_drafter(B16))
    target = make_target(tmp_path, QWEN3_4B)
    (target / "tokenizer_config.json").write_text("{not json", encoding="utf-8")
    result = dflash("check", drafter, "--target", target, "--format", "json")
    assert result.code == 2
    assert len(result.err.splitlines()) == 1 and "tokenizer_config.json" in result.err


def test_target_given_as_config_file(dflash: Callable[..., Result], tmp_path: Path) -> None:
    drafter = make_drafter(tmp_path, load_drafter(B16))
    target = make_target(tmp_path, QWEN3_8B)
    _, findings = check_json(dflash, drafter, target / "config.json")
    assert pairs(findings) == [("DF401", "/hidden_size")]


def test_inputs_are_not_modified(dflash: Callable[..., Result], tmp_path: Path) -> None:
    cfg = load_drafter(Q35_4B)
    before = copy.deepcopy(cfg)
    drafter = make_drafter(tmp_path, cfg)
    target = make_target(tmp_path, QWEN3_4B)
    raw = (drafter / "config.json").read_bytes()
    check_json(dflash, drafter, target)
    assert (drafter / "config.json").read_bytes() == raw
    assert cfg == before


def test_b16_drafter_against_gpt_oss_20b(dflash: Callable[..., Result], tmp_path: Path) -> None:
    """A wholly wrong target: every size differs and the two deepest taps do not exist in 24 layers."""
    drafter = make_drafter(tmp_path, load_drafter(B16))
    _, findings = check_json(dflash, drafter, make_target(tmp_path, "openai__gpt-oss-20b"))
    assert pairs(findings) == [
        ("DF401", "/hidden_size"),
        ("DF402", "/vocab_size"),
        ("DF403", "/num_target_layers"),
        ("DF405", "/dflash_config/target_layer_ids/3"),
        ("DF405", "/dflash_config/target_layer_ids/4"),
    ]
    (depth,) = only(findings, "DF403")
    assert depth["fix"]["patch"] == [{"op": "replace", "path": "/num_target_layers", "value": 24}]


@pytest.mark.parametrize(
    ("vocab", "severity", "says"),
    [
        (152064, "error", "lm_head rows the target does not have"),  # larger than the target's 151936
        (151000, "warning", "ids 151000..151935 are never drafted"),  # cuts real tokens of the tokenizer
        (151680, "info", "only padding rows"),  # the tokenizer ends at 151668: only padding is cut
    ],
)
def test_df402_severity_follows_what_the_engines_draft(
    dflash: Callable[..., Result], tmp_path: Path, vocab: int, severity: str, says: str
) -> None:
    cfg = load_drafter(B16)
    cfg["vocab_size"] = vocab
    _, findings = check_json(dflash, make_drafter(tmp_path, cfg), qwen3_target_with_tokenizer_json(tmp_path))
    (m,) = only(findings, "DF402")
    assert m["severity"] == severity and says in m["message"]


def test_df402_smaller_vocab_without_a_tokenizer_json_is_a_warning(
    dflash: Callable[..., Result], tmp_path: Path
) -> None:
    cfg = load_drafter(B16)
    cfg["vocab_size"] = 151680
    _, findings = check_json(dflash, make_drafter(tmp_path, cfg), qwen3_target_with_tokenizer(tmp_path))
    (m,) = only(findings, "DF402")
    assert m["severity"] == "warning"

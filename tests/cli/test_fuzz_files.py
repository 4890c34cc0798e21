"""Fuzzing the CLI in-process on the files of a model dir: hostile drafter configs, target dirs and
safetensors headers through check, fix, verify and where; the tool's own files beside them (the project
config, cache entries); and the campaign's project-table, project-file, cache-entry and signal surfaces
(tests/fuzz/).

Each defect the fuzzing found on these files has a reproducer here (`test_found_bug_*`), and the generators cover
those inputs again now that the defects are fixed. The properties every run must show, and the bounded and
slow runs, are fuzzing.py's.
"""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from checkpoints import save, small_config, small_shapes
from fuzz import project as project_surface
from fuzz import signals as signals_surface
from fuzzing import (
    HOSTILE_INTS,
    HOSTILE_STRINGS,
    OSC_TITLE,
    PAIRED_DRAFTER,
    RAW_NUMBERS,
    TARGETS,
    Box,
    Doc,
    Run,
    bounded,
    box,
    drafter_bytes,
    drafter_commands,
    hostile_json,
    long,
    scalars,
    values,
)
from helpers import write_config
from hypothesis import given
from hypothesis import strategies as st

# --- check, fix and verify on hostile drafter configs ---------------------------------------------

# Directory names a model can have: any bytes but `/` and NUL (undecodable ones arrive as \udc80-\udcff).
DIR_NAMES = [
    "model",
    "model",
    "model",
    "m" + OSC_TITLE,
    os.fsdecode(b"bad-\xff\xfe-utf8"),
    "c1-\x9b2J",
    "new\nline",
    "tab\tbed",
    " ",
    "-model",
    "x" * 255,
    "\U0001f600",
]


def configs_property(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    with box(tmp_path, data.draw(st.sampled_from(DIR_NAMES), label="dir")) as b:
        (b.model / "config.json").write_bytes(drafter_bytes(data))
        drafter_commands(dflash, b, data, with_target=False)


@bounded(25)
@given(data=st.data())
def test_hostile_configs(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    configs_property(dflash, tmp_path, data)


@pytest.mark.slow
@long(1500)
@given(data=st.data())
def test_hostile_configs_long(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    configs_property(dflash, tmp_path, data)


# --- target dirs -----------------------------------------------------------------------------------

TOKEN_ID_KEYS = ["248070", "0", "9" * 5000, "9" * 19, "-1", "+5", " 5", "1_000", "٣", "0x10", "", OSC_TITLE, "\ud800"]


def target_file(path: Path, data: st.DataObject, label: str) -> None:
    """A real target file (when the fixture has one), mutated like a drafter config."""
    base: Any = json.loads(path.read_bytes()) if path.exists() else {}
    if path.name == "tokenizer_config.json" and data.draw(st.booleans(), label=f"{label}-decoder"):
        decoder = base.setdefault("added_tokens_decoder", {})
        if isinstance(decoder, dict):
            for _ in range(data.draw(st.integers(1, 3), label=f"{label}-tokens")):
                decoder[data.draw(st.sampled_from(TOKEN_ID_KEYS), label="id")] = {
                    "content": data.draw(st.sampled_from(HOSTILE_STRINGS) | scalars, label="content"),
                    "special": data.draw(st.booleans() | scalars, label="special"),
                }
    if path.name == "generation_config.json" and data.draw(st.booleans(), label=f"{label}-eos"):
        base["eos_token_id"] = data.draw(st.lists(st.sampled_from(HOSTILE_INTS) | scalars, max_size=4), label="eos")
    return_bytes = hostile_json(base, data, max_mutations=2)
    path.write_bytes(return_bytes)


# A tokenizer.json in miniature: added tokens (the mask among them) and a BPE vocabulary.
TOKENIZER_JSON: dict[str, Any] = {
    "added_tokens": [
        {"id": 248044, "content": "<|endoftext|>", "special": True},
        {"id": 248070, "content": "<|mask|>", "special": True},
    ],
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "<|mask|>": 248070}},
}


def target_dir(b: Box, data: st.DataObject) -> None:
    source = data.draw(st.sampled_from(TARGETS), label="target")
    b.target.mkdir()
    if data.draw(st.booleans(), label="tokenizer.json"):
        (b.target / "tokenizer.json").write_bytes(hostile_json(TOKENIZER_JSON, data, max_mutations=3))
    for name in ("config.json", "tokenizer_config.json", "generation_config.json"):
        present = (source / name).exists()
        if name == "config.json" or present or data.draw(st.booleans(), label=f"add-{name}"):
            if present:
                (b.target / name).write_bytes((source / name).read_bytes())
            if data.draw(st.booleans(), label=f"mutate-{name}") or not present:
                target_file(b.target / name, data, name)


def targets_property(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    with box(tmp_path) as b:
        drafter = PAIRED_DRAFTER.read_bytes() if data.draw(st.booleans(), label="real") else drafter_bytes(data)
        (b.model / "config.json").write_bytes(drafter)
        target_dir(b, data)
        drafter_commands(dflash, b, data, with_target=True)


@bounded(12)
@given(data=st.data())
def test_hostile_targets(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    targets_property(dflash, tmp_path, data)


@pytest.mark.slow
@long(600)
@given(data=st.data())
def test_hostile_targets_long(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    targets_property(dflash, tmp_path, data)


# --- safetensors headers ---------------------------------------------------------------------------

DIMS = [0, 1, 64, 2**32, 2**64 - 1, 2**64, 10**30, -1, 1.5, True, None, "64"]
NAMES = [
    "layers." + "9" * 5000 + ".self_attn.q_proj.weight",
    "layers." + "9" * 40 + ".mlp.up_proj.weight",
    "layers.-1.self_attn.q_proj.weight",
    "layers.٣.self_attn.q_proj.weight",
    "layers..self_attn.q_proj.weight",
    "fc.weight",
    "model.layers.0.self_attn.q_proj.weight",
    "layers.0.self_attn.q_proj.weight" + OSC_TITLE,
    "\ud800",
    "__metadata__",
]


HEADER_LAYERS: list[int | list[int]] = [5, 1, 0, [0, 3], [0, 10**30]]
SAVED_LAYERS: list[int | list[int]] = [5, 2, [0, 7]]


def header_bytes(header: bytes, data: st.DataObject) -> bytes:
    """8-byte length + header + a little data, with the length sometimes lying."""
    length = data.draw(
        st.sampled_from(["true"] * 4 + ["longer", "shorter", "zero", "huge", "max", "short-file"]), label="length"
    )
    n = {
        "true": len(header),
        "longer": len(header) + 100,
        "shorter": max(0, len(header) - 3),
        "zero": 0,
        "huge": 100_000_001,
        "max": 2**64 - 1,
    }.get(length, len(header))
    out = struct.pack("<Q", n) + header + b"\x00" * 16
    return out[:5] if length == "short-file" else out


def raw_header(data: st.DataObject) -> bytes:
    shapes = small_shapes(
        layers=data.draw(st.sampled_from(HEADER_LAYERS), label="layers"),
        fc_in=data.draw(st.sampled_from([None, 0, 10**30]), label="fc_in"),
    )
    entries: dict[str, Any] = {name: {"dtype": "F16", "shape": list(shape)} for name, shape in shapes.items()}
    doc = Doc(entries)
    for _ in range(data.draw(st.integers(0, 3), label="header-mutations")):
        how = data.draw(st.sampled_from(["dim", "name", "raw-dim", "entry", "dtype"]), label="header-op")
        name = data.draw(st.sampled_from(sorted(entries)), label="tensor")
        if how in ("dim", "raw-dim", "dtype") and not isinstance(entries[name], dict):
            continue  # an entry an earlier step replaced by something else stays as it is
        if how == "dim" and isinstance(entries[name].get("shape"), list) and entries[name]["shape"]:
            entries[name]["shape"][0] = data.draw(st.sampled_from(DIMS), label="dim")
        elif how == "raw-dim":
            entries[name]["shape"] = [doc.marker(data.draw(st.sampled_from(RAW_NUMBERS), label="dim")), 64]
        elif how == "name":
            entries[data.draw(st.sampled_from(NAMES), label="name")] = entries.pop(name)
        elif how == "entry":
            entries[name] = data.draw(values, label="entry")
        else:
            entries[name]["dtype"] = data.draw(scalars, label="dtype")
    text = doc.text(None, data.draw(st.booleans(), label="ascii")).encode("utf-8", "surrogatepass")
    if data.draw(st.integers(0, 9), label="not-json") == 0:
        text = data.draw(st.sampled_from([b"[]", b"{", b"\xff\xfe", b"null", b'{"a": 1}', b" " * 50]), label="hdr")
    return header_bytes(text, data)


def weights_property(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    with box(tmp_path) as b:
        config = small_config()
        raw_config = (
            json.dumps(config, indent=2).encode() if data.draw(st.booleans()) else hostile_json(config, data, 2)
        )
        (b.model / "config.json").write_bytes(raw_config)
        for k in range(data.draw(st.integers(1, 2), label="files")):
            name = "model.safetensors" if k == 0 else f"model-0000{k}.safetensors"
            if data.draw(st.booleans(), label="valid"):
                save(
                    b.model / name,
                    small_shapes(
                        heads=data.draw(st.sampled_from([4, 3]), label="heads"),
                        layers=data.draw(st.sampled_from(SAVED_LAYERS), label="layers"),
                        taps=data.draw(st.sampled_from([5, 4]), label="taps"),
                    ),
                )
            else:
                (b.model / name).write_bytes(raw_header(data))
        if data.draw(st.integers(0, 4), label="index") == 0:
            weight_map = data.draw(
                st.dictionaries(st.sampled_from(NAMES), st.sampled_from(["model.safetensors", "../x", "", "a/b", 5])),
                label="weight_map",
            )
            (b.model / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
        drafter_commands(dflash, b, data, with_target=False)


@bounded(12)
@given(data=st.data())
def test_hostile_weights(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    weights_property(dflash, tmp_path, data)


@pytest.mark.slow
@long(600)
@given(data=st.data())
def test_hostile_weights_long(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    weights_property(dflash, tmp_path, data)


# --- bugs the fuzzing found (reproducers, fixed; the generators above cover these inputs too) ---------


def test_found_bug_deep_nesting_after_a_bom(tmp_path: Path) -> None:
    depth = 200_000
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_bytes(
        b'\xef\xbb\xbf{"architectures": ["DFlashDraftModel"], "dflash_config": ' + b"[" * depth + b"]" * depth + b"}"
    )

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GiB: the bug must not take the machine

    proc = subprocess.run(
        [sys.executable, "-m", "dflash_cfg", "check", str(tmp_path / "m"), "--select", "DF0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
        preexec_fn=limit,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_found_bug_control_character_in_a_key(dflash: Run, tmp_path: Path) -> None:
    write_config(tmp_path / "m", raw=b'{"\x01a": 1, "dflash_config": {}}')
    result = dflash("check", tmp_path / "m", "--expect-sha256", "0" * 64, "--format", "json")
    assert "internal error" not in result.err, result.err
    assert result.code == 1, result
    assert {x["rule"] for f in result.json()["files"] for x in f["findings"]} >= {"DF001", "DF702"}


def test_found_bug_cache_entry_nested_too_deeply(dflash: Run, tmp_path: Path) -> None:
    write_config(tmp_path / "m")
    assert dflash("check", tmp_path / "m").code == 0
    (entry,) = (Path(os.environ["XDG_CACHE_HOME"]) / "dflash-cfg").rglob("*.json")
    entry.write_text("[" * 5000 + "]" * 5000)
    result = dflash("check", tmp_path / "m")
    assert "internal error" not in result.err, result.err
    assert result.code == 0, result


# --- found by the campaign (tests/fuzz/campaign.py) -------------------------------------------------


@pytest.mark.parametrize("name", ["dflash-cfg.toml", "pyproject.toml"])
def test_found_bug_project_config_integer_past_the_digit_limit(dflash: Run, tmp_path: Path, name: str) -> None:
    """tomllib reads a decimal integer of more than 4300 digits with int(), whose ValueError it does not
    wrap in TOMLDecodeError: an internal error."""
    write_config(tmp_path / "m")
    table = "[tool.dflash-cfg]\n" if name == "pyproject.toml" else ""
    (tmp_path / name).write_text(f"{table}min-acceptance-length = 1{'0' * 5000}\n")
    result = dflash("check", tmp_path / "m", "--format", "json")
    assert result.code == 2, result
    assert "internal error" not in result.err, result.err
    assert result.err.count("\n") == 1 and str(tmp_path / name) in result.err, result.err
    assert result.json()["errors"], result.out


# --- the campaign's surfaces (tests/fuzz/): derandomized slices of its generators -----------------------
# The campaign (tests/fuzz/campaign.py) runs the same generators over more than 10,000 inputs.


@bounded(40)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_project_tables(rng: random.Random) -> None:
    table = project_surface.project_table(rng)
    assert project_surface.table_defect(table, Path("/campaign/dflash-cfg.toml")) is None


@bounded(15)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_project_files(tmp_path: Path, rng: random.Random) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as folder:
        assert project_surface.file_defect(project_surface.toml_file(rng, Path(folder))) is None


@bounded(20)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_cache_entries(rng: random.Random) -> None:
    key = project_surface.CACHE_KEY
    assert project_surface.cache_defect(project_surface.cache_entry(rng, key), key) is None


@pytest.mark.slow
@bounded(6)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_signals(tmp_path_factory: pytest.TempPathFactory, rng: random.Random) -> None:
    home = tmp_path_factory.getbasetemp() / "signals"
    assert signals_surface.signal_defect(signals_surface.signal_case(rng), home) in (None, signals_surface.STARTUP)

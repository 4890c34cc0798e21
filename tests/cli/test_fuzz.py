"""Fuzzing the CLI in-process: hostile drafter configs, target dirs, safetensors headers, lock files,
launch command lines, model names and Hub answers through check, fix, verify, where, preflight, diff and
rules.

Every property holds for every command: the exit code is 0, 1 or 2; nothing says "Traceback" or
"internal error"; text output (stdout of --format text, and stderr always) holds no control character a
terminal would act on; --format json parses whenever the exit code is 0 or 1; no file outside the model
dir of the example is created or changed (and only `fix --yes` changes the model dir). After `fix --yes`,
a file that parsed as a JSON object still does, and every member the mechanical fixes do not own keeps its
value.

The default run is bounded (derandomized, a few examples per property, a few seconds in all); the same
properties run with many more examples behind the `slow` marker (DFLASH_FUZZ_SCALE multiplies both; see long()).

Each defect the fuzzing found has a reproducer at the end (`test_found_bug_*`), and the generators cover
those inputs again now that the defects are fixed.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import random
import re
import stat
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from checkpoints import save, small_config, small_shapes
from faultproxy import FaultProxy
from fuzz import launch as launch_surface
from fuzz import project as project_surface
from fuzz import s3 as s3_surface
from fuzz import signals as signals_surface
from fuzz.common import environ
from helpers import FIXTURES, Result, examples, write_config
from hubserver import ErrorHub
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from s3server import S3Server

Run = Callable[..., Result]

SCALE = float(os.environ.get("DFLASH_FUZZ_SCALE", "1"))
_HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]


def bounded(examples: int) -> settings:
    """The default run: derandomized (the same examples every run, no database), a handful of them."""
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=_HEALTH,
    )


# The slow run in CI: a third of the campaign, derandomized, so a submission is judged on the same examples
# every time. DFLASH_FUZZ_RANDOM=1 draws fresh ones (failures kept in the example database under the tests'
# cache); DFLASH_FUZZ_SCALE=3 runs the whole campaign.
LONG_SHARE = 1 / 3


def long(count: int) -> settings:
    """The slow run (see LONG_SHARE)."""
    return examples(max(1, int(count * SCALE * LONG_SHARE)), *_HEALTH)


# --- inputs ---------------------------------------------------------------------------------------

UPSTREAM = sorted(FIXTURES.glob("upstream/*/config.json"))
UPSTREAM_DATA: list[dict[str, Any]] = [json.loads(p.read_bytes()) for p in UPSTREAM]
TARGETS = sorted(p.parent for p in (FIXTURES / "targets").glob("*/config.json"))
# The drafter whose target ships a tokenizer_config.json with added_tokens_decoder.
PAIRED_DRAFTER = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"
PAIRED_TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"

OSC_TITLE = "\x1b]0;pwned\x07"
HOSTILE_STRINGS = [
    "",
    "\ud800",
    "\udfff",
    "a\udcffb",  # what a shell argument with an invalid UTF-8 byte becomes in Python (surrogateescape)
    OSC_TITLE,
    "\x1b[31mred\x1b[0m",
    "\x00",
    "\x9b2J",  # C1 CSI
    "\x7f",
    "\r\n",
    "\t",
    "\u202eevil",
    "é",
    "\U0001f600",
    "\ufeff",
    "~1/0~",
    "x" * 5000,
    "sliding_attention",
    "full_attention",
    "DFlashDraftModel",
    "qwen3",
    "../../../../etc/passwd",
    "hf_abcdefghijklmnop",
]
HOSTILE_INTS = [0, -1, 1, 2, 3, 2**31, 2**53 + 1, 2**63, 2**64, -(2**63), 10**18, 10**30, 10**400]
# Raw JSON number tokens json.dumps cannot write (past the 4300-digit limit) or writes otherwise.
RAW_NUMBERS = [
    "9" * 5000,
    "-" + "9" * 4400,
    "1" + "0" * 4300,
    "1e400",
    "-1e400",
    "1E+2",
    "-0",
    "0.0",
    "5e-324",
    "NaN",
    "Infinity",
    "-Infinity",
]
# Locating a finding is linear in the depth (test_found_bug_deep_nesting_after_a_bom has 200,000 levels).
DEEP = ["[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000, "[" * 50000 + "]" * 50000]

scalars: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(HOSTILE_INTS),
    st.integers(min_value=-5, max_value=300_000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(HOSTILE_STRINGS),
    st.text(max_size=12),
)
values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.sampled_from(HOSTILE_STRINGS), children),
    max_leaves=12,
)
keys: st.SearchStrategy[str] = st.one_of(st.sampled_from(HOSTILE_STRINGS), st.text(max_size=8))


@dataclass
class Doc:
    """A JSON value being mutated, with markers for what json.dumps cannot write: raw number tokens,
    deep nesting, and a duplicate of a key the same object already has."""

    data: Any
    raw: dict[str, str] = field(default_factory=dict)

    def marker(self, replacement: str) -> str:
        name = f"@@MARK{len(self.raw)}@@"
        self.raw[f'"{name}"'] = replacement
        return name

    def text(self, indent: int | None, ascii_only: bool) -> str:
        out = json.dumps(self.data, indent=indent, ensure_ascii=ascii_only, allow_nan=True)
        for token, replacement in self.raw.items():
            out = out.replace(token, replacement)
        return out


def containers(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths of every object and array inside `value` (the root included)."""
    if isinstance(value, (dict, list)):
        yield at
        children = value.items() if isinstance(value, dict) else enumerate(value)
        for key, child in children:
            yield from containers(child, (*at, key))


def get_in(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def taps(data: st.DataObject) -> Any:
    kind = data.draw(st.sampled_from(["huge-list", "hostile-items", "descending", "big-values"]), label="taps")
    if kind == "huge-list":
        n = data.draw(st.sampled_from([1000, 20_000, 100_000]), label="n")
        return list(range(n)) if data.draw(st.booleans(), label="unique") else [1] * n
    if kind == "hostile-items":
        return data.draw(st.lists(scalars, max_size=8), label="items")
    if kind == "descending":
        return list(range(data.draw(st.integers(0, 70), label="top"), -3, -1))
    return [1, 2, 10**18, 2**64, 10**400]


OPS = ["set", "set", "set", "delete", "add-key", "dup-key", "raw", "taps", "mask", "deep"]
MANGLES = ["none"] * 6 + ["truncate", "bom", "utf16", "utf32", "bad-utf8", "trailing", "nul"]


def mutate(doc: Doc, data: st.DataObject, ops: list[str] = OPS) -> None:
    """One hostile edit somewhere in the document."""
    where = data.draw(st.sampled_from(list(containers(doc.data)) or [()]), label="container")
    box = get_in(doc.data, where) if where or isinstance(doc.data, (dict, list)) else None
    op = data.draw(
        st.sampled_from(ops),
        label="op",
    )
    if op == "taps" and isinstance(doc.data, dict):
        block = doc.data.get("dflash_config")
        holder = block if isinstance(block, dict) and data.draw(st.booleans(), label="inner") else doc.data
        holder["target_layer_ids"] = taps(data)
        return
    if op == "mask" and isinstance(doc.data, dict):
        block = doc.data.get("dflash_config")
        holder = block if isinstance(block, dict) else doc.data
        holder["mask_token_id"] = data.draw(st.sampled_from(HOSTILE_INTS) | scalars, label="mask")
        return
    if not isinstance(box, (dict, list)):
        doc.data = data.draw(values, label="root")
        return
    if isinstance(box, dict) and op in ("add-key", "dup-key"):
        if op == "dup-key" and box:
            existing = data.draw(st.sampled_from(sorted(box)), label="dup")
            box[doc.marker(json.dumps(existing))] = data.draw(values, label="value")
        else:
            box[data.draw(keys, label="key")] = data.draw(values, label="value")
        return
    if not box:
        return
    slot = data.draw(st.sampled_from(sorted(box) if isinstance(box, dict) else range(len(box))), label="slot")
    if op == "delete":
        del box[slot]
    elif op == "raw":
        box[slot] = doc.marker(data.draw(st.sampled_from(RAW_NUMBERS), label="number"))
    elif op == "deep":
        box[slot] = doc.marker(data.draw(st.sampled_from(DEEP), label="deep"))
    else:
        box[slot] = data.draw(values, label="value")


def mangle(raw: bytes, data: st.DataObject, mangles: list[str] = MANGLES) -> bytes:
    """Damage below JSON: truncation, byte-order marks, UTF-16/32, invalid UTF-8, a raw control character."""
    how = data.draw(
        st.sampled_from(mangles),
        label="bytes",
    )
    if how == "truncate":
        return raw[: data.draw(st.integers(0, max(0, len(raw) - 1)), label="cut")]
    if how == "bom":
        return b"\xef\xbb\xbf" + raw
    if how in ("utf16", "utf32"):
        try:
            return raw.decode("utf-8").encode("utf-16" if how == "utf16" else "utf-32")
        except UnicodeError:
            return raw
    if how == "bad-utf8":
        at = data.draw(st.integers(0, len(raw)), label="at")
        bad = data.draw(st.sampled_from([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xe2\x82"]), label="bad")
        return raw[:at] + bad + raw[at:]
    if how == "trailing":
        return raw + data.draw(st.sampled_from([b"\n{}", b"x", b"\x00", b"  ,"]), label="tail")
    if how == "nul":
        return raw.replace(b'"', b'"\x00', 1)
    return raw


def hostile_json(
    base: Any, data: st.DataObject, max_mutations: int = 4, ops: list[str] = OPS, mangles: list[str] = MANGLES
) -> bytes:
    doc = Doc(copy.deepcopy(base))
    for _ in range(data.draw(st.integers(0, max_mutations), label="mutations")):
        mutate(doc, data, ops)
    text = doc.text(data.draw(st.sampled_from([2, None, 4]), label="indent"), data.draw(st.booleans(), label="ascii"))
    # A lone surrogate written raw (ensure_ascii=False) is not UTF-8: the bytes a broken writer leaves.
    return mangle(text.encode("utf-8", "surrogatepass"), data, mangles)


def drafter_bytes(data: st.DataObject, mangles: list[str] = MANGLES) -> bytes:
    return hostile_json(data.draw(st.sampled_from(UPSTREAM_DATA), label="upstream"), data, mangles=mangles)


# --- what every run must show ----------------------------------------------------------------------

# C0 controls but \t and \n, DEL, C1 controls, and lone surrogates: nothing a terminal acts on.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def unsafe(text: str) -> str | None:
    found = _UNSAFE.search(text)
    return None if found is None else repr(text[max(0, found.start() - 60) : found.end() + 60])


def survive(dflash: Run, *args: str | Path, text_out: bool, json_out: bool = False) -> Result:
    shown = " ".join(map(str, args))[:300]
    result = dflash(*args)
    assert result.code in (0, 1, 2), (shown, result)
    for name, stream in (("stdout", result.out), ("stderr", result.err)):
        assert "Traceback" not in stream, (shown, name, stream[-2000:])
        assert "internal error" not in stream, (shown, name, stream[-2000:])
    assert unsafe(result.err) is None, (shown, "stderr", unsafe(result.err))
    if text_out:
        assert unsafe(result.out) is None, (shown, "stdout", unsafe(result.out))
    if json_out and result.code in (0, 1):
        json.loads(result.out)
    return result


Snapshot = dict[str, tuple[str, int, bytes | str]]


def snapshot(root: Path, *skip: Path) -> Snapshot:
    out: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if Path(dirpath) / d not in skip]
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st_ = p.lstat()
            if stat.S_ISLNK(st_.st_mode):
                out[str(p)] = ("link", st_.st_mode, os.readlink(p))
            elif stat.S_ISREG(st_.st_mode):
                out[str(p)] = ("file", st_.st_mode, p.read_bytes())
            else:
                out[str(p)] = ("dir" if stat.S_ISDIR(st_.st_mode) else "other", st_.st_mode, "")
    return out


@dataclass
class Box:
    """One example's world: `root/model` (the drafter), `root/target`, `root/outside/` (a bystander),
    and the working directory set to `root` while the commands run."""

    root: Path
    model_name: str = "model"

    @property
    def model(self) -> Path:
        return self.root / self.model_name

    @property
    def target(self) -> Path:
        return self.root / "target"


@contextmanager
def box(tmp_path: Path, model_name: str = "model") -> Iterator[Box]:
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    b = Box(root, model_name)
    b.model.mkdir()
    (root / "outside").mkdir()
    (root / "outside" / "keep.txt").write_bytes(b"bystander\n")
    here = os.getcwd()
    os.chdir(root)
    try:
        yield b
    finally:
        os.chdir(here)


@contextmanager
def untouched(root: Path, *may_change: Path) -> Iterator[None]:
    """Nothing under `root` is created or changed, except inside the `may_change` dirs."""
    before = snapshot(root, *may_change)
    yield
    after = snapshot(root, *may_change)
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    assert changed == [], changed[:5]


# --- check, fix and verify on hostile drafter configs ---------------------------------------------

FORMATS = ["text", "json", "sarif"]
# Pointers the mechanical fixes may write (the catalogue's safe fixes); every other member must survive.
FIXABLE = {
    "/block_size",
    "/rope_theta",
    "/use_sliding_window",
    "/num_target_layers",
    "/dflash_config",
    "/dflash_config/block_size",
    "/dflash_config/mask_token_id",
    "/dflash_config/target_layer_ids",
    "/dflash_config/num_target_layers",
}


def as_object(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def untouched_members(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Members of `old` (top level and dflash_config) that the fix changed though no fix owns them."""
    wrong: list[str] = []
    for key, value in old.items():
        pointer = "/" + key.replace("~", "~0").replace("/", "~1")
        if pointer == "/dflash_config" and isinstance(value, dict) and isinstance(new.get(key), dict):
            for inner, inner_value in value.items():
                at = pointer + "/" + inner.replace("~", "~0").replace("/", "~1")
                if at not in FIXABLE and (inner not in new[key] or not same(new[key][inner], inner_value)):
                    wrong.append(at)
        elif pointer not in FIXABLE and (key not in new or not same(new[key], value)):
            wrong.append(pointer)
    wrong += ["/" + k for k in new if k not in old and "/" + k not in FIXABLE]
    return wrong


def drafter_commands(dflash: Run, b: Box, data: st.DataObject, with_target: bool) -> None:
    config = b.model / "config.json"
    target = ["--target", str(b.target)] if with_target else []
    fmt = data.draw(st.sampled_from(FORMATS), label="format")
    named = data.draw(st.sampled_from([config, b.model]), label="named")
    with untouched(b.root):
        survive(dflash, "check", named, "--format", fmt, *target, text_out=fmt == "text", json_out=fmt != "text")
        if fmt != "json":
            survive(dflash, "check", named, "--format", "json", *target, text_out=False, json_out=True)
        survive(dflash, "fix", named, "--dry-run", *target, text_out=True)
        survive(dflash, "verify", named, text_out=True)
        where_format = data.draw(st.sampled_from(["text", "json"]), label="where-format")
        survive(dflash, "where", named, "--format", where_format, text_out=where_format == "text")
    old = config.read_bytes()
    with untouched(b.root, b.model):
        result = survive(dflash, "fix", named, "--yes", *target, text_out=True)
    new = config.read_bytes()
    before = as_object(old)
    if before is not None:
        after = as_object(new)
        assert after is not None, ("fix --yes left a file that is not a JSON object", result, new[:300])
        assert untouched_members(before, after) == [], (result, untouched_members(before, after))
    if new != old:
        assert result.code in (0, 1), result
        with untouched(b.root):
            assert survive(dflash, "verify", named, text_out=True).code == 0


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


# --- .dflash-cfg.lock ------------------------------------------------------------------------------

REVISIONS = ["main", "v1.0", "../../../../victim", "/etc", "a\\b", "refs/pr/1", "a" * 300, OSC_TITLE, "\ud800", ""]
COMMITS = ["0" * 40, "a" * 40, "../../x", "0" * 39 + "G", "", OSC_TITLE, "\udcff"]


def lock_bytes(config: bytes, data: st.DataObject) -> bytes:
    entry: dict[str, Any] = {
        "path": "/elsewhere/config.json",
        "sha256": hashlib.sha256(config).hexdigest(),
        "git_blob_sha1": hashlib.sha1(b"blob %d\0" % len(config) + config).hexdigest(),
        "source": None,
        "written_at": "2026-01-01T00:00:00Z",
        "tool_version": "0.1.0",
    }
    if data.draw(st.booleans(), label="source"):
        entry["source"] = {
            "repo": data.draw(st.sampled_from(["z-lab/x", "anyrev", "../..", "a/b/c", OSC_TITLE]), label="repo"),
            "revision": data.draw(st.sampled_from(REVISIONS), label="revision"),
            "commit": data.draw(st.sampled_from(COMMITS), label="commit"),
        }
    if data.draw(st.booleans(), label="stale"):
        entry["sha256"] = "f" * 64
    doc = {"version": 1, "files": {"config.json": entry}}
    mutations = data.draw(st.sampled_from([0, 0, 1, 3]), label="lock-mutations")
    return hostile_json(doc, data, max_mutations=mutations, ops=list(OPS))


def locks_property(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    with box(tmp_path) as b:
        hostile = data.draw(st.booleans(), label="hostile")
        config = drafter_bytes(data, list(MANGLES)) if hostile else UPSTREAM[0].read_bytes()
        (b.model / "config.json").write_bytes(config)
        lock = b.model / ".dflash-cfg.lock"
        lock.write_bytes(lock_bytes(config, data))
        was_json = is_json(lock.read_bytes())
        with untouched(b.root):
            survive(dflash, "verify", b.model, "--expect-sha256", hashlib.sha256(config).hexdigest(), text_out=True)
            fmt = data.draw(st.sampled_from(FORMATS), label="format")
            survive(dflash, "check", b.model, "--from-hub", "--offline", "--format", fmt, text_out=fmt == "text")
        drafter_commands(dflash, b, data, with_target=False)
        if was_json:  # fix records its write in a lock that stays JSON (a corrupt one is refused, kept as is)
            assert is_json(lock.read_bytes()), lock.read_bytes()[:300]


def is_json(raw: bytes) -> bool:
    try:
        json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return True


@bounded(12)
@given(data=st.data())
def test_hostile_lock_files(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    locks_property(dflash, tmp_path, data)


@pytest.mark.slow
@long(600)
@given(data=st.data())
def test_hostile_lock_files_long(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    locks_property(dflash, tmp_path, data)


# --- launch command lines for preflight -----------------------------------------------------------

ODD_TOKENS = [
    "--",
    "-",
    "-O3",
    "-O",
    "--x=y",
    "--unknown",
    "serve",
    "=",
    "A=b",
    "",
    OSC_TITLE,
    "a\udcffb",
    "-1",
    "x" * 300,
]
COUNTS = ["1", "2", "15", "16", "0", "-1", "9" * 5000, "1e3", "1.0", "", "٣", OSC_TITLE]
METHODS = ["dflash", "DFLASH", "eagle3", "", None, 5, OSC_TITLE]


def model_ref(b: Box, data: st.DataObject, label: str, own: Path) -> str:
    return data.draw(
        st.sampled_from(
            [str(own)] * 4
            + [str(own / "config.json"), own.name, "org/name", "", "../..", "/nonexistent", OSC_TITLE, "a\udcffb"]
        ),
        label=label,
    )


def vllm_argv(b: Box, data: st.DataObject, drafter: str, target: str) -> list[str]:
    head = data.draw(
        st.sampled_from(
            [
                ["vllm", "serve"],
                ["/usr/local/bin/vllm", "serve"],
                ["python", "-m", "vllm.entrypoints.cli.main", "serve"],
            ]
        ),
        label="head",
    )
    spec: dict[str, Any] = {
        "method": data.draw(st.sampled_from(METHODS), label="method"),
        "model": drafter,
        "num_speculative_tokens": data.draw(st.sampled_from([15, 16, 0, -1, 10**400, 1.5, True, "15"]), label="n"),
    }
    form = data.draw(st.sampled_from(["json", "json", "hostile-json", "dotted", "aliases"]), label="form")
    if form == "dotted":
        options = [x for key in ("method", "model") for x in (f"--speculative-config.{key}", str(spec[key]))]
        options += ["--speculative-config.num_speculative_tokens", data.draw(st.sampled_from(COUNTS))]
    elif form == "aliases":
        options = ["--spec-model", drafter, "--spec-tokens", data.draw(st.sampled_from(COUNTS), label="tokens")]
    else:
        text = json.dumps(spec) if form == "json" else hostile_json(spec, data, 2).decode("utf-8", "surrogateescape")
        options = [data.draw(st.sampled_from(["--speculative-config", "-sc", "--speculative_config"])), text]
    if data.draw(st.booleans(), label="tp"):
        options += [data.draw(st.sampled_from(["-tp", "--tensor-parallel-size"])), data.draw(st.sampled_from(COUNTS))]
    return [*head, target, *options]


def sglang_argv(b: Box, data: st.DataObject, drafter: str, target: str) -> list[str]:
    head = data.draw(
        st.sampled_from(
            [["python", "-m", "sglang.launch_server", "--model-path", target], ["sglang", "serve", target]]
        ),
        label="head",
    )
    options = ["--speculative-algorithm", str(data.draw(st.sampled_from(METHODS), label="algorithm"))]
    options += ["--speculative-draft-model-path", drafter]
    options += ["--speculative-num-draft-tokens", data.draw(st.sampled_from(COUNTS), label="tokens")]
    if data.draw(st.booleans(), label="tp"):
        options += [data.draw(st.sampled_from(["--tp-size", "--tp"])), data.draw(st.sampled_from(COUNTS))]
    return [*head, *options]


def launch_argv(b: Box, data: st.DataObject) -> list[str]:
    drafter = model_ref(b, data, "drafter", b.model)
    target = model_ref(b, data, "target-ref", b.target)
    engine = vllm_argv if data.draw(st.booleans(), label="vllm") else sglang_argv
    argv = engine(b, data, drafter, target)
    env = data.draw(
        st.lists(st.sampled_from(["CUDA_VISIBLE_DEVICES=0,1", "A=b c", f"X={OSC_TITLE}", "env", "-i", "HF_TOKEN=x"])),
        label="env",
    )
    argv = env + argv
    for _ in range(data.draw(st.integers(0, 2), label="odd")):
        argv.insert(data.draw(st.integers(0, len(argv)), label="at"), data.draw(st.sampled_from(ODD_TOKENS)))
    return argv


def launch_property(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    with box(tmp_path) as b:
        drafter = PAIRED_DRAFTER.read_bytes() if data.draw(st.booleans(), label="real") else drafter_bytes(data)
        (b.model / "config.json").write_bytes(drafter)
        b.target.mkdir()
        for name in ("config.json", "tokenizer_config.json"):
            (b.target / name).write_bytes((PAIRED_TARGET / name).read_bytes())
        argv = launch_argv(b, data)
        fmt = data.draw(st.sampled_from(FORMATS), label="format")
        with untouched(b.root):
            survive(dflash, "preflight", "--format", fmt, "--", *argv, text_out=fmt == "text", json_out=False)


@bounded(25)
@given(data=st.data())
def test_hostile_launch_commands(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    launch_property(dflash, tmp_path, data)


@pytest.mark.slow
@long(1500)
@given(data=st.data())
def test_hostile_launch_commands_long(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    launch_property(dflash, tmp_path, data)


# --- where and rules --------------------------------------------------------------------------------

# Paths with NUL, unencodable lone surrogates and `~unknown-user` included (test_found_bug_path_*).
PATH_STRINGS = list(HOSTILE_STRINGS)
SHA256S = [hashlib.sha256(UPSTREAM[0].read_bytes()).hexdigest(), "0" * 64, "A" * 64, "0" * 63, "g" * 64, "", OSC_TITLE]
RULE_IDS = ["DF1", "df2", "DF204", "DF9999", "", ",", "DF", "X", OSC_TITLE, "\ud800", "DF1,,DF2"]


def names_property(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    with box(tmp_path) as b:
        (b.model / "config.json").write_bytes(UPSTREAM[0].read_bytes())
        name = data.draw(st.sampled_from([str(b.model), "model", "org/name", "a/b/c", "", "x" * 300, *PATH_STRINGS]))
        revision = data.draw(st.sampled_from([None, *REVISIONS, *COMMITS]), label="revision")
        fmt = data.draw(st.sampled_from(["text", "json"]), label="format")
        with untouched(b.root):
            survive(
                dflash,
                "where",
                name,
                *(["--revision", revision] if revision is not None else []),
                "--format",
                fmt,
                text_out=fmt == "text",
                json_out=fmt == "json",
            )
            ids = data.draw(st.lists(st.sampled_from(RULE_IDS), max_size=2), label="ids")
            fmt = data.draw(st.sampled_from(["text", "json"]), label="rules-format")
            verbose = ["-v"] if data.draw(st.booleans(), label="verbose") else []
            survive(dflash, "rules", *ids, "--format", fmt, *verbose, text_out=fmt == "text", json_out=fmt == "json")
            options = [
                *(["--select", ",".join(ids)] if data.draw(st.booleans(), label="select") else []),
                *(
                    ["--ignore", data.draw(st.sampled_from(RULE_IDS), label="ignore")]
                    if data.draw(st.booleans())
                    else []
                ),
                *(
                    ["--expect-sha256", data.draw(st.sampled_from(SHA256S), label="sha")]
                    if data.draw(st.booleans())
                    else []
                ),
            ]
            fmt = data.draw(st.sampled_from(FORMATS), label="check-format")
            survive(dflash, "check", b.model, *options, "--format", fmt, text_out=fmt == "text", json_out=fmt != "text")
            if "--expect-sha256" in options:
                survive(dflash, "verify", b.model, *options[options.index("--expect-sha256") :], text_out=True)


@bounded(15)
@given(data=st.data())
def test_hostile_names(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    names_property(dflash, tmp_path, data)


@pytest.mark.slow
@long(600)
@given(data=st.data())
def test_hostile_names_long(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    names_property(dflash, tmp_path, data)


# --- the Hub: revisions and servers that should not be trusted -------------------------------------

TOKEN = "hf_fuzzsecrettoken0123456789"
PASSWORD = "fuzzpassw0rd"
HUB_REPOS = ["t/anyrev", "t/badcommit", "t/echo", "t/gated", "t/broken", "t/missing-revision", "t/no-config", "t/x"]
HUB_REVISIONS = [
    *REVISIONS,
    *COMMITS,
    "../../../../victim",
    "../../../../outside/keep.txt",
    "..",
    ".",
    "refs/../../x",
    "main/../..",
    "~",
    "a b",
    "v1.0\n",
]


def hub_property(dflash: Run, tmp_path: Path, endpoint: str, data: st.DataObject) -> None:
    with box(tmp_path) as b:
        local = UPSTREAM[0].read_bytes() if data.draw(st.booleans(), label="real") else drafter_bytes(data)
        (b.model / "config.json").write_bytes(local)
        hf = b.root / "hf"
        hf.mkdir()
        repo = data.draw(st.sampled_from(["t/anyrev"] * 4 + HUB_REPOS), label="repo")
        revision = data.draw(
            st.sampled_from(["main", "v1.0", "refs/pr/1"]) | st.sampled_from(HUB_REVISIONS) | st.text(max_size=20),
            label="revision",
        )
        if data.draw(st.booleans(), label="userinfo"):
            endpoint = endpoint.replace("http://", f"http://user:{PASSWORD}@")
        token = TOKEN if data.draw(st.booleans(), label="token") else None
        command = data.draw(
            st.sampled_from(
                [
                    ["check", "--format", "json"],
                    ["check"],
                    ["check", "--format", "sarif"],
                    ["fix", "--dry-run"],
                    ["fix", "--dry-run", "--only-critical"],
                    ["fix", "--yes"],
                    ["fix", "--yes", "--only-critical"],
                    ["diff"],
                    ["diff", "--format", "json"],
                ]
            ),
            label="command",
        )
        writes = [b.model] if "--yes" in command else []
        with environ(HF_ENDPOINT=endpoint, HF_TOKEN=token, HF_HOME=str(hf)), untouched(b.root, hf, *writes):
            text = "--format" not in command
            result = survive(dflash, *command, b.model, "--from-hub", repo, "--revision", revision, text_out=text)
        for secret in (TOKEN, PASSWORD):
            assert secret not in result.out + result.err, (command, repo, revision, result)
        # Whatever the revision says, the cache keeps to its own directory.
        for dirpath, dirnames, filenames in os.walk(hf):
            for name in dirnames + filenames:
                resolved = Path(os.path.realpath(Path(dirpath) / name))
                assert resolved.is_relative_to(hf.resolve()), resolved


@bounded(15)
@given(data=st.data())
def test_hostile_hub(dflash: Run, tmp_path: Path, error_hub: ErrorHub, data: st.DataObject) -> None:
    hub_property(dflash, tmp_path, error_hub.endpoint, data)


@pytest.mark.slow
@long(600)
@given(data=st.data())
def test_hostile_hub_long(dflash: Run, tmp_path: Path, error_hub: ErrorHub, data: st.DataObject) -> None:
    hub_property(dflash, tmp_path, error_hub.endpoint, data)


# --- bugs the fuzzing found (reproducers, fixed; the generators above cover these inputs too) ---------


def assert_one_line_cause(result: Result) -> None:
    assert result.code == 2, result
    assert "internal error" not in result.err and "Traceback" not in result.err, result.err
    assert result.err.startswith("dflash-cfg: error: ") and result.err.count("\n") == 1, result.err


@pytest.mark.parametrize("drafter", ["\\u0000", "a\\u0000b", "\\ud800", "z-lab/x\\udfff"])
def test_found_bug_path_that_cannot_be_encoded(dflash: Run, drafter: str) -> None:
    # The drafter of a launch comes from JSON, where "\\u0000" and "\\ud800" are valid escapes.
    spec = '{"method": "dflash", "model": "' + drafter + '", "num_speculative_tokens": 15}'
    assert_one_line_cause(dflash("preflight", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", spec))


@pytest.mark.parametrize("how", ["where", "preflight"])
def test_found_bug_tilde_of_an_unknown_user(dflash: Run, how: str) -> None:
    name = "~no-such-user-dflash/model"
    if how == "where":
        result = dflash("where", name)
    else:
        spec = json.dumps({"method": "dflash", "model": name, "num_speculative_tokens": 15})
        result = dflash("preflight", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", spec)
    assert_one_line_cause(result)


@pytest.mark.parametrize("where", ["option", "lock-file"])
def test_found_bug_revision_with_a_lone_surrogate(
    dflash: Run, tmp_path: Path, error_hub: ErrorHub, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", error_hub.endpoint)
    config = tmp_path / "m" / "config.json"
    config.parent.mkdir()
    config.write_bytes(UPSTREAM[0].read_bytes())
    if where == "option":
        # `--revision $'\xff'` in a shell: Python decodes the argument to "\udcff" (surrogateescape).
        result = dflash("check", config.parent, "--from-hub", "t/anyrev", "--revision", "\udcff")
    else:
        raw = config.read_bytes()
        entry = {
            "path": str(config),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "git_blob_sha1": hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest(),
            "source": {"repo": "t/anyrev", "revision": "\ud800", "commit": "0" * 40},
            "written_at": "2026-01-01T00:00:00Z",
            "tool_version": "0.1.0",
        }
        (config.parent / ".dflash-cfg.lock").write_text(json.dumps({"version": 1, "files": {"config.json": entry}}))
        result = dflash("check", config.parent, "--from-hub")
    assert_one_line_cause(result)


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


@pytest.mark.parametrize("how", ["where", "preflight"])
def test_found_bug_revision_read_outside_the_cache(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    commit = "a" * 40
    repo_dir = tmp_path / "hf" / "hub" / "models--org--name"
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(commit)
    (repo_dir / "snapshots" / commit).mkdir(parents=True)
    (repo_dir / "snapshots" / commit / "config.json").write_bytes(PAIRED_DRAFTER.read_bytes())
    planted = tmp_path / "planted"  # outside the cache
    planted.write_text(commit)
    revision = os.path.relpath(planted, repo_dir / "refs")
    assert revision.startswith("../")
    if how == "where":
        result = dflash("where", "org/name", "--revision", revision)
    else:
        spec = json.dumps({"method": "dflash", "model": "org/name", "revision": revision})
        result = dflash("preflight", "--", "vllm", "serve", "org/name", "--speculative-config", spec)
    assert_one_line_cause(result)
    assert "branch, tag or commit" in result.err


@pytest.mark.slow  # each case imports huggingface_hub afresh in a child process
@pytest.mark.parametrize(
    ("name", "value", "command"),
    [
        ("HF_HUB_ETAG_TIMEOUT", "", ("where", "z-lab/x")),
        ("HF_HUB_DOWNLOAD_TIMEOUT", "", ("check", str(UPSTREAM[0]), "--no-cache")),
        ("HF_ENDPOINT", "http://127.0.0.1:99999", ("check", str(UPSTREAM[0]), "--no-cache")),
        ("HF_ENDPOINT", "http://[::1", ("where", "z-lab/x")),
    ],
    ids=["etag-timeout-empty", "download-timeout-empty", "endpoint-port", "endpoint-bracket"],
)
def test_found_bug_hub_settings_that_break_the_import(
    tmp_path: Path, name: str, value: str, command: tuple[str, ...]
) -> None:
    # huggingface_hub reads these once, at import: a fresh process is needed.
    proc = subprocess.run(
        [sys.executable, "-m", "dflash_cfg", *command],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1", name: value},
        check=False,
    )
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1, 2)
    if proc.returncode == 2:
        assert proc.stderr.startswith("dflash-cfg: error: ") and proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize("command", [("check",), ("verify",), ("fix", "--yes"), ("fix", "--dry-run")])
def test_found_bug_lock_file_nested_too_deeply(dflash: Run, tmp_path: Path, command: tuple[str, ...]) -> None:
    config = write_config(tmp_path / "m")
    lock = tmp_path / "m" / ".dflash-cfg.lock"
    lock.write_text('{"version": 1, "files": {"config.json": ' + "[" * 5000 + "]" * 5000 + "}}")
    before = config.read_bytes(), lock.read_bytes()
    result = dflash(*command, tmp_path / "m")
    assert (config.read_bytes(), lock.read_bytes()) == before
    assert "internal error" not in result.err, result.err
    assert result.code in (1, 2) and result.err.count("\n") <= 1, result


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


def _launch_world(root: Path) -> tuple[Path, Path]:
    drafter, target = root / "d", root / "t"
    drafter.mkdir(parents=True)
    (drafter / "config.json").write_bytes(PAIRED_DRAFTER.read_bytes())
    target.mkdir()
    for name in ("config.json", "tokenizer_config.json"):
        (target / name).write_bytes((PAIRED_TARGET / name).read_bytes())
    return drafter, target


@pytest.mark.parametrize("number", ["0x" + "f" * 5000, "0" + "7" * 5000, "0b" + "1" * 20000])
@pytest.mark.parametrize("where", ["port: {}", "speculative-config: {{model: ./d, num_speculative_tokens: {}}}"])
def test_found_bug_config_yaml_integer_past_the_digit_limit(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, number: str, where: str
) -> None:
    """YAML reads hexadecimal, octal (0777) and binary integers of any length; turning one back into an option
    (str) raised ValueError: an internal error."""
    _launch_world(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "launch.yaml").write_text(where.format(number) + "\n")
    spec = '{"method": "dflash", "model": "./d", "num_speculative_tokens": 15}'
    result = dflash(
        "preflight", "--no-engine-check", "--", "vllm", "serve", "./t", "--config", "launch.yaml", "-sc", spec
    )
    assert result.code == 2, result
    assert "internal error" not in result.err, result.err
    assert result.err.count("\n") == 1 and "4300 digits" in result.err, result.err


@pytest.mark.parametrize(
    "wrapper",
    [["--directory", "--directory", "/w"], ["--directory", "/w", "--with", "--directory"], ["--with", "--directory"]],
)
def test_found_bug_uv_run_option_value_that_looks_like_an_option(
    dflash: Run, tmp_path: Path, wrapper: list[str]
) -> None:
    """`uv run`'s options were read token by token, a value as an option: `--directory` last in the options
    read past their end (IndexError, an internal error)."""
    drafter, target = _launch_world(tmp_path)
    line = ["uv", "run", *wrapper, "python", "-m", "sglang.launch_server", "--model-path", str(target)]
    line += ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", str(drafter)]
    result = dflash("preflight", "--no-engine-check", "--format", "json", "--", *line)
    assert "internal error" not in result.err, result.err
    assert result.code in (0, 1, 2), result
    json.loads(result.out)
    if result.code == 2:
        assert result.err.count("\n") == 1, result.err


@pytest.mark.parametrize("line", ["port: !!float", "port: !!int ''", "port: !!bool maybe", "port: !!timestamp x"])
def test_found_bug_config_yaml_value_that_does_not_fit_its_tag(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str
) -> None:
    """PyYAML's constructors of tagged scalars raise IndexError, KeyError or AttributeError on a value they
    cannot read: internal errors."""
    _launch_world(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "launch.yaml").write_text(line + "\n")
    spec = '{"method": "dflash", "model": "./d", "num_speculative_tokens": 15}'
    result = dflash(
        "preflight", "--no-engine-check", "--", "vllm", "serve", "./t", "--config", "launch.yaml", "-sc", spec
    )
    assert result.code == 2, result
    assert "internal error" not in result.err, result.err
    assert result.err.count("\n") == 1 and "does not fit its tag" in result.err, result.err


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


@pytest.mark.parametrize("command", [["check"], ["fix", "--yes"], ["verify"]])
def test_found_bug_a_trickled_listing_is_held_to_the_deadline(s3: S3Server, tmp_path: Path, command: list[str]) -> None:
    """DFLASH_CFG_REMOTE_DEADLINE bounded the reads of objects only: a listing (or a HEAD, or a put's answer)
    trickled a byte a second held the run for as many seconds as the answer had bytes, times the retries."""
    bucket = s3.new_bucket()
    s3.put(bucket, "team/drafter/config.json", b"\xef\xbb\xbf" + PAIRED_DRAFTER.read_bytes())
    proxy = FaultProxy(s3.port)
    proxy.start()
    proxy.faults, proxy.only_key, proxy.trickle_delay = {"trickle"}, bucket, 1.0  # the bucket's listings
    env = {**os.environ, "AWS_ENDPOINT_URL_S3": proxy.endpoint, "DFLASH_CFG_REMOTE_DEADLINE": "2", "NO_COLOR": "1"}
    try:
        child = subprocess.run(
            [sys.executable, "-m", "dflash_cfg", *command[:1], f"s3://{bucket}/team/drafter", *command[1:]],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,  # a hang guard: the listing alone is minutes long at a byte a second
        )
    finally:
        proxy.stop()
    assert child.returncode == 2, child
    assert child.stderr.count("\n") == 1 and "within the deadline" in child.stderr, child.stderr


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


@pytest.fixture
def launch_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> launch_surface.World:
    world = launch_surface.make_world(tmp_path / "launch")
    monkeypatch.chdir(world.root)  # the lines name ./d, ./t and launch.yaml
    return world


def launch_lines_property(world: launch_surface.World, rng: random.Random) -> None:
    case = launch_surface.launch_case(rng, world)
    launch_surface.write_case(world, case)
    assert launch_surface.parse_defect(case) is None


@bounded(25)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_launch_lines(launch_world: launch_surface.World, rng: random.Random) -> None:
    launch_lines_property(launch_world, rng)


@pytest.mark.slow
@long(3000)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_launch_lines_long(launch_world: launch_surface.World, rng: random.Random) -> None:
    launch_lines_property(launch_world, rng)


def preflight_property(world: launch_surface.World, rng: random.Random) -> None:
    before = launch_surface.snapshot(world)
    case = launch_surface.launch_case(rng, world)
    launch_surface.write_case(world, case)
    fmt = rng.choice(FORMATS)
    assert launch_surface.preflight_defect(case, fmt, engine_check=False) is None
    assert launch_surface.snapshot(world) == before


@bounded(6)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_preflight(launch_world: launch_surface.World, rng: random.Random) -> None:
    preflight_property(launch_world, rng)


@pytest.mark.slow
@long(600)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_preflight_long(launch_world: launch_surface.World, rng: random.Random) -> None:
    preflight_property(launch_world, rng)


@pytest.fixture
def s3_store(s3: S3Server) -> Iterator[s3_surface.Store]:
    proxy = FaultProxy(s3.port)
    proxy.start()
    yield s3_surface.Store(s3, proxy)
    proxy.stop()


@pytest.mark.slow
@bounded(4)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_s3_faults(s3_store: s3_surface.Store, rng: random.Random) -> None:
    assert s3_surface.s3_defect(s3_store, s3_surface.s3_case(rng)) is None


@pytest.mark.slow
@bounded(6)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_signals(tmp_path_factory: pytest.TempPathFactory, rng: random.Random) -> None:
    home = tmp_path_factory.getbasetemp() / "signals"
    assert signals_surface.signal_defect(signals_surface.signal_case(rng), home) in (None, signals_surface.STARTUP)

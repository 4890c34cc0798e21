"""What the CLI fuzz tests (test_fuzz_files.py, test_fuzz_hub.py and test_fuzz_launch.py) share: the
hypothesis settings of their runs, the hostile inputs, and the properties every run must show.

Every property holds for every command: the exit code is 0, 1 or 2; nothing says "Traceback" or
"internal error"; text output (stdout of --format text, and stderr always) holds no control character a
terminal would act on; --format json parses whenever the exit code is 0 or 1 (survive); no file outside the
model dir of the example is created or changed, and only `fix --yes` changes the model dir (box, untouched).
After `fix --yes`, a file that parsed as a JSON object still does, and every member the mechanical fixes do
not own keeps its value (drafter_commands).

The default run is bounded (bounded(): derandomized, a few examples per property, a few seconds in all); the
same properties run with many more examples behind the `slow` marker (DFLASH_FUZZ_SCALE multiplies both; see
long()).
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers import FIXTURES, Result, examples
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

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


# --- what every drafter example runs: check, fix, verify and where --------------------------------------

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

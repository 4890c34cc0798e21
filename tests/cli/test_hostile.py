"""Hostile inputs: whatever sits in a config.json, `check` answers with exit 0, 1 or 2, a report that parses,
and never a traceback, an "internal error", a hang or a write.

Property tests (hypothesis) feed random bytes, random JSON values and random mutations of a real drafter
config through the real CLI; explicit cases cover files that are empty, truncated, huge, or not files.
"""

from __future__ import annotations

import json
import os
import random
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, REAL, REAL_DATA, Result, mutated, write_config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

Run = Callable[..., Result]
BIN = Path(sys.executable).parent

# DFLASH_FUZZ_SCALE=20 runs twenty times as many examples (for a long hunt; the default keeps the file ~10 s).
SCALE = float(os.environ.get("DFLASH_FUZZ_SCALE", "1"))


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )


FUZZ = fuzz(100)

# --- strategies -----------------------------------------------------------------------------------

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=300_000),
    st.integers(),
    st.integers(min_value=-(10**200), max_value=10**200),  # bigger than any int64 / float
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(
        [
            "sliding_attention",
            "full_attention",
            "linear_attention",
            "DFlashDraftModel",
            "qwen3",
            "",
            "\ufeff",
            "\x00",
            "dflash",
        ]
    ),
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=25,
)
# Values shaped like what the DFlash fields hold, so mutations reach the deeper rules.
field_values = st.one_of(
    json_values,
    st.lists(st.integers(min_value=-3, max_value=70), max_size=10),
    st.lists(st.sampled_from(["sliding_attention", "full_attention", "bogus"]), max_size=8),
    st.integers(min_value=-2, max_value=300_000),
)


def paths_of(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every member/element path inside a JSON value (not the root)."""
    out: list[tuple[str | int, ...]] = []
    if isinstance(value, dict):
        for key, child in value.items():
            out.append((*prefix, key))
            out.extend(paths_of(child, (*prefix, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out.append((*prefix, index))
            out.extend(paths_of(child, (*prefix, index)))
    return out


REAL_PATHS = paths_of(REAL_DATA)
# Real target model dirs (config.json, and a tokenizer_config.json for Qwen3.6-27B) for --target.
TARGET_DIRS = sorted(p.parent for p in (FIXTURES / "targets").glob("*/config.json"))


def dumps(value: Any) -> str:
    # allow_nan: NaN/Infinity tokens are exactly what a hostile writer puts in a file.
    return json.dumps(value, indent=2, allow_nan=True)


def get_in(doc: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


# --- the invariant --------------------------------------------------------------------------------


def deserved(doc: dict[str, Any]) -> int:
    """The exit code a check's JSON document calls for, with defaults (errors fail; a finding scoped to some engines
    fails nothing while nothing says what serves): 2 when the run could not be made, 1 on a failing error."""
    if doc.get("errors"):
        return 2
    failing = [x for f in doc["files"] for x in f["findings"] if x["severity"] == "error" and not x.get("engines")]
    return 1 if failing else 0


def check_survives(dflash: Run, path: Path, *extra: str, fmt: str = "json") -> dict[str, Any]:
    """A check of a hostile input: one document, no traceback, and the exit code its own findings call for."""
    result = dflash("check", path, "--format", fmt, *extra)
    code = result.code
    assert "Traceback" not in result.out + result.err, result.err
    assert "internal error" not in result.err, result.err
    if fmt != "json":
        if fmt == "sarif":
            json.loads(result.out)
        assert result.out.endswith("\n") and "\x1b[" not in result.out
        result = dflash("check", path, "--format", "json", *extra)
    doc: dict[str, Any] = result.json()  # always parses
    assert set(doc) >= {"version", "files", "summary"}
    assert code == result.code == deserved(doc), (code, result.code, doc.get("errors"), doc["summary"])
    for f in doc["files"]:
        for x in f["findings"]:
            assert x["pointer"] == "" or x["pointer"].startswith("/")
            assert x["line"] is None or x["line"] >= 1
    if result.code == 2:
        assert result.err.startswith("dflash-cfg: error: "), result.err
    else:
        assert result.err == "", result.err
    return doc


def kinds(doc: dict[str, Any]) -> list[str]:
    return [f["kind"] for f in doc["files"]]


def rules(doc: dict[str, Any]) -> set[str]:
    return {x["rule"] for f in doc["files"] for x in f["findings"]}


# --- properties -----------------------------------------------------------------------------------


@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes(dflash: Run, tmp_path: Path, data: bytes) -> None:
    path = write_config(tmp_path / "m", raw=data)
    doc = check_survives(dflash, path)
    (f,) = doc["files"]
    assert f["sha256"] is not None


@FUZZ
@given(data=st.binary(max_size=200))
def test_random_bytes_that_mention_dflash_are_linted(dflash: Run, tmp_path: Path, data: bytes) -> None:
    # A broken drafter config must never be skipped as "not a drafter".
    path = write_config(tmp_path / "m", raw=b'{"architectures": ["DFlashDraftModel"], ' + data)
    doc = check_survives(dflash, path)
    try:
        json.loads(path.read_bytes())
    except ValueError:
        assert kinds(doc) == ["dflash"]
        assert rules(doc) & {"DF001", "DF003"}


@FUZZ
@given(value=json_values)
def test_random_json_values(dflash: Run, tmp_path: Path, value: Any) -> None:
    path = write_config(tmp_path / "m", raw=dumps(value).encode())
    doc = check_survives(dflash, path)
    if not isinstance(value, dict):
        assert kinds(doc) == ["skipped"] or rules(doc) & {"DF005"}


@pytest.mark.slow
@FUZZ
@given(value=json_values)
def test_random_json_as_dflash_config(dflash: Run, tmp_path: Path, value: Any) -> None:
    path = write_config(
        tmp_path / "m", raw=dumps({"architectures": ["DFlashDraftModel"], "dflash_config": value}).encode()
    )
    assert kinds(check_survives(dflash, path)) == ["dflash"]


@pytest.mark.slow
@fuzz(250)
@given(data=st.data())
def test_random_mutations_of_a_real_config(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    doc = mutated(lambda d: None)
    for _ in range(data.draw(st.integers(min_value=1, max_value=3), label="mutations")):
        where = data.draw(st.sampled_from(paths_of(doc) or [()]), label="path")
        if not where:
            break
        parent = get_in(doc, where[:-1])
        if isinstance(parent, dict) and data.draw(st.booleans(), label="delete"):
            del parent[where[-1]]
        else:
            parent[where[-1]] = data.draw(field_values, label="value")
    path = write_config(tmp_path / "m", raw=dumps(doc).encode())
    target = data.draw(st.sampled_from([None, *TARGET_DIRS]), label="target")
    report = check_survives(
        dflash,
        path,
        *(["--target", str(target)] if target else []),
        fmt=data.draw(st.sampled_from(["json", "text", "sarif"]), label="format"),
    )
    assert len(report["files"]) == 1


@FUZZ
@given(data=st.data())
def test_duplicate_keys_inserted_in_the_text(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    text = REAL.read_text(encoding="utf-8")
    # Duplicate a key at the top level or inside dflash_config, by editing the text after the `{`.
    block = data.draw(st.sampled_from(["top", "dflash_config", "rope_parameters"]), label="object")
    if block == "top":
        keys, at = list(REAL_DATA), text.index("{") + 1
    else:
        keys, at = list(REAL_DATA[block]), text.index("{", text.index(f'"{block}"')) + 1
    key = data.draw(st.sampled_from(keys), label="key")
    value = data.draw(field_values, label="value")
    edited = f"{text[:at]}\n  {json.dumps(key)}: {dumps(value)},{text[at:]}"
    path = write_config(tmp_path / "m", raw=edited.encode())
    report = check_survives(dflash, path)
    assert kinds(report) == ["dflash"]
    dup = [x for x in findings_of(report) if x["rule"] == "DF002"]
    assert dup, "a duplicate key must be reported"
    assert dup[0]["pointer"].endswith("/" + key.replace("~", "~0").replace("/", "~1"))


def findings_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [x for f in doc["files"] for x in f["findings"]]


@fuzz(60)
@given(data=st.data())
def test_exit_code_agrees_with_the_summary(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    doc = mutated(lambda d: None)
    where = data.draw(st.sampled_from(REAL_PATHS), label="path")
    get_in(doc, where[:-1])[where[-1]] = data.draw(field_values, label="value")
    path = write_config(tmp_path / "m", raw=dumps(doc).encode())
    for strict in (False, True):
        result = dflash("check", path, "--format", "json", *(["--strict"] if strict else []))
        summary = result.json()["summary"]
        failing = summary["errors"] + (summary["warnings"] if strict else 0)
        assert result.code == (1 if failing else 0), (summary, result.code, strict)


# --- explicit hostile files -----------------------------------------------------------------------


def test_empty_file(dflash: Run, tmp_path: Path) -> None:
    doc = check_survives(dflash, write_config(tmp_path / "m", raw=b""))
    assert len(doc["files"]) == 1


@pytest.mark.parametrize("raw", [b"", b"\n", b"  \n\t\n"], ids=["empty", "newline", "whitespace"])
def test_empty_config_is_reported_not_skipped(dflash: Run, tmp_path: Path, raw: bytes) -> None:
    # A download that never landed: the file the user named is linted, not skipped as "not a drafter".
    path = write_config(tmp_path / "Qwen3.5-4B-DFlash", raw=raw)
    for named in (path, path.parent):
        result = dflash("check", named, "--format", "json")
        (f,) = result.json()["files"]
        assert [x["rule"] for x in f["findings"]] == ["DF001"], f
        assert "empty" in f["findings"][0]["message"] or "whitespace" in f["findings"][0]["message"]
        assert result.code == 1
    # Found in a tree, an empty config.json says nothing about being a drafter: skipped.
    assert kinds(check_survives(dflash, tmp_path)) == ["skipped"]


@pytest.mark.parametrize("byte", [b"{", b"[", b" ", b"\x00", b"\xff", b"0", b"\xef"])
def test_one_byte(dflash: Run, tmp_path: Path, byte: bytes) -> None:
    check_survives(dflash, write_config(tmp_path / "m", raw=byte))


def truncations() -> list[int]:
    raw = REAL.read_bytes()
    return sorted(
        {
            1,
            2,
            10,
            raw.index(b"dflash") + 6,
            raw.index(b"target_layer_ids") + 25,
            len(raw) // 2,
            len(raw) - 3,
            len(raw) - 2,
        }
    )


def test_truncated_real_config(dflash: Run, tmp_path: Path) -> None:
    raw = REAL.read_bytes()
    for cut in truncations():
        path = write_config(tmp_path / f"cut{cut}" / "model", raw=raw[:cut])
        # Named explicitly: always linted, DF001.
        doc = check_survives(dflash, path)
        assert kinds(doc) == ["dflash"], cut
        (x,) = findings_of(doc)
        assert x["rule"] == "DF001" and x["severity"] == "error", (cut, x)
        assert x["line"] >= 1 and x["pointer"] == ""
        # Found in a tree: linted as soon as the bytes say DFlash, else skipped.
        in_tree = check_survives(dflash, path.parent.parent)
        assert kinds(in_tree) == (["dflash"] if b"dflash" in raw[:cut].lower() else ["skipped"]), cut
    # The last newline alone does not matter.
    assert check_survives(dflash, write_config(tmp_path / "full", raw=raw.rstrip()))["summary"]["errors"] == 0


@pytest.mark.parametrize("where", ["between-tokens", "inside-a-string", "inside-a-number"])
def test_truncation_is_called_truncated(dflash: Run, tmp_path: Path, where: str) -> None:
    raw = REAL.read_bytes()
    cut = {
        "between-tokens": raw.index(b'"dtype"'),  # after `,\n  `
        "inside-a-string": raw.index(b'"bfloat16"') + 4,
        "inside-a-number": raw.index(b"248320") + 3,
    }[where]
    doc = check_survives(dflash, write_config(tmp_path / "m", raw=raw[:cut]))
    (x,) = findings_of(doc)
    assert x["rule"] == "DF001"
    assert "truncated" in x["message"], x["message"]


def test_twenty_megabyte_file(dflash: Run, tmp_path: Path) -> None:
    # Valid JSON, mentions DFlash, 20 MB: refused as a drafter config without parsing it whole.
    filler = "x" * (20 * 1024 * 1024)
    path = write_config(
        tmp_path / "m", raw=json.dumps({"architectures": ["DFlashDraftModel"], "padding": filler}).encode()
    )
    doc = check_survives(dflash, path)
    assert kinds(doc) == ["dflash"]
    (x,) = findings_of(doc)
    assert x["rule"] == "DF001" and "bytes" in x["message"]


def test_deep_nesting_and_huge_integer(dflash: Run, tmp_path: Path) -> None:
    deep = b'{"dflash_config": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    assert kinds(check_survives(dflash, write_config(tmp_path / "deep", raw=deep))) == ["dflash"]
    huge = b'{"dflash_config": {"mask_token_id": ' + b"9" * 5000 + b"}}"
    doc = check_survives(dflash, write_config(tmp_path / "huge", raw=huge))
    assert kinds(doc) == ["dflash"] and "DF001" in rules(doc)


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b'{"dflash_config": {"block_size": NaN, "mask_token_id": Infinity}}', id="nan-inf"),
        pytest.param(b'{"dflash_config": {"block_size": 1e400}, "vocab_size": -Infinity}', id="overflow"),
        pytest.param(b"\xef\xbb\xbf" + REAL.read_bytes(), id="utf8-bom"),
        pytest.param(REAL.read_text(encoding="utf-8").encode("utf-16"), id="utf16"),
        pytest.param(REAL.read_text(encoding="utf-8").encode("utf-32"), id="utf32"),
        pytest.param(REAL.read_text(encoding="utf-8").encode("utf-16-le"), id="utf16-no-bom"),
        pytest.param(REAL.read_bytes().replace(b"bfloat16", b"bfloat\xff16"), id="bad-utf8"),
        pytest.param(REAL.read_bytes().replace(b'"qwen3"', b'"qwen3\\ud800"'), id="lone-surrogate"),
        pytest.param(b'{"dflash_config": {"a": 1, "a": 2, "a": 3}, "dflash_config": 5}', id="dup-dup"),
        pytest.param(b'{"dflash_config": {}, "x": "\\/~"}', id="escapes"),
        pytest.param(b'{"dflash_config": {}, "a/b": {"c~d": [1, 1e999]}}', id="pointer-escapes"),
        pytest.param(b'{"dflash_config": 1}\n{"dflash_config": 2}', id="two-documents"),
        pytest.param(b'"dflash"', id="string-top-level"),
        pytest.param(b"[" + b'{"dflash_config": {}},' * 10 + b"null]", id="array-top-level"),
    ],
)
def test_hostile_documents(dflash: Run, tmp_path: Path, raw: bytes) -> None:
    doc = check_survives(dflash, write_config(tmp_path / "m", raw=raw))
    assert kinds(doc) == ["dflash"], doc
    assert doc["summary"]["errors"] >= 1


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_utf16_drafter_in_a_tree_is_not_skipped(dflash: Run, tmp_path: Path, encoding: str) -> None:
    # PowerShell's Out-File writes UTF-16: the drafter must still be found and reported, not skipped.
    write_config(tmp_path / "models" / "drafter", raw=REAL.read_text(encoding="utf-8").encode(encoding))
    doc = check_survives(dflash, tmp_path)
    assert kinds(doc) == ["dflash"]
    assert rules(doc) & {"DF003", "DF001"}
    assert doc["summary"]["errors"] >= 1


def test_bom_is_reported_with_a_safe_fix(dflash: Run, tmp_path: Path) -> None:
    doc = check_survives(dflash, write_config(tmp_path / "m", raw=b"\xef\xbb\xbf" + REAL.read_bytes()))
    df003 = [x for x in findings_of(doc) if x["rule"] == "DF003"]
    assert len(df003) == 1 and df003[0]["fix"]["safe"] is True


def test_symlink_loops(dflash: Run, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    real = write_config(tree / "m")
    (tree / "m" / "up").symlink_to(tree)  # a directory loop
    (tree / "self").symlink_to(tree / "self")  # a link to itself
    (tree / "a").symlink_to(tree / "b")
    (tree / "b").symlink_to(tree / "a")
    doc = check_survives(dflash, tree)
    assert [f["path"] for f in doc["files"]] == [str(real)]
    result = dflash("check", tree / "self")
    assert result.code == 2 and result.err.startswith("dflash-cfg: error: ") and "Traceback" not in result.err


def test_dangling_symlink_config_in_a_tree(dflash: Run, tmp_path: Path) -> None:
    # A Hugging Face snapshot whose blob was never downloaded.
    write_config(tmp_path / "ok")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").symlink_to(tmp_path / "blobs" / "missing")
    result = dflash("check", tmp_path, "--format", "json")
    assert "Traceback" not in result.err and "internal error" not in result.err
    assert result.err.startswith("dflash-cfg: error: cannot read ")
    assert str(tmp_path / "broken" / "config.json") in result.err
    assert [f["kind"] for f in result.json()["files"]] == ["dflash"]


def test_dangling_symlink_config_in_a_tree_exits_2(dflash: Run, tmp_path: Path) -> None:
    write_config(tmp_path / "ok")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").symlink_to(tmp_path / "blobs" / "missing")
    assert dflash("check", tmp_path).code == 2


def test_explicit_dangling_symlink(dflash: Run, tmp_path: Path) -> None:
    link = tmp_path / "config.json"
    link.symlink_to(tmp_path / "nowhere")
    result = dflash("check", link, "--format", "json")
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.startswith("dflash-cfg: error: ")
    # --format json always writes one document, so a CI step that parses stdout sees the error too.
    doc = json.loads(result.out)
    assert doc["files"] == [] and len(doc["errors"]) == 1 and "broken symlink" in doc["errors"][0]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_non_utf8_file_name_in_a_tree(dflash: Run, tmp_path: Path, fmt: str) -> None:
    folder = os.fsencode(tmp_path) + b"/models/\xff\xfe-drafter"
    os.makedirs(folder)
    with open(folder + b"/config.json", "wb") as fh:
        fh.write(REAL.read_bytes())
    result = dflash("check", tmp_path, "--format", fmt)
    assert "internal error" not in result.err and "Traceback" not in result.err, result.err
    assert result.code == 0, result.err
    result.out.encode("utf-8")  # what reaches a UTF-8 terminal or file is UTF-8
    if fmt != "text":
        assert json.loads(result.out)


def test_directory_named_config_json(dflash: Run, tmp_path: Path) -> None:
    inner = write_config(tmp_path / "config.json" / "m")
    doc = check_survives(dflash, tmp_path / "config.json")
    assert [f["path"] for f in doc["files"]] == [str(inner)]
    assert [f["path"] for f in check_survives(dflash, tmp_path)["files"]] == [str(inner)]


def run_cli(
    *args: str | Path, cwd: Path, timeout: float, memory: int | None = None
) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if memory is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", "dflash_cfg", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1"},
        preexec_fn=limit,
    )


def hostile_config(folder: Path, **values: Any) -> Path:
    """The real config with some fields set (``dflash_config__x`` for dflash_config.x; None deletes)."""
    data = mutated(lambda d: None)
    for name, value in values.items():
        block, key = (data["dflash_config"], name.split("__")[1]) if "__" in name else (data, name)
        if value is None:
            del block[key]
        else:
            block[key] = value
    return write_config(folder, data)


def assert_finishes(folder: Path, *options: str, timeout: float) -> None:
    try:
        proc = run_cli("check", folder, "--format", "json", *options, cwd=folder, timeout=timeout, memory=4 << 30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"dflash-cfg check {' '.join(options)} did not finish in {timeout} s")
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    json.loads(proc.stdout)


@pytest.mark.parametrize(
    "taps", [pytest.param([1, 5, 10**12], id="huge-tap"), pytest.param(list(range(100_000)), id="100k-taps")]
)
def test_huge_taps_do_not_hang(tmp_path: Path, taps: list[int]) -> None:
    hostile_config(tmp_path, dflash_config__target_layer_ids=taps)
    # --select DF0: no transformers import, so a healthy run takes well under a second. The bound catches a
    # hang (a range expanded to 10**12 runs for hours), not slowness: a shared CI host can be loaded 10x.
    assert_finishes(tmp_path, "--select", "DF0", timeout=30)


def test_huge_num_hidden_layers_does_not_hang(tmp_path: Path) -> None:
    hostile_config(tmp_path, num_hidden_layers=10**9, layer_types=None)
    assert_finishes(tmp_path, "--select", "DF206", timeout=30)


@pytest.mark.slow
def test_huge_sizes_elsewhere_finish(tmp_path: Path) -> None:
    # The same kind of values in fields that are not expanded: must stay fast, through Qwen3Config too.
    hostile_config(
        tmp_path,
        num_target_layers=10**18,
        vocab_size=10**30,
        sliding_window=10**30,
        max_window_layers=10**12,
        dflash_config__block_size=10**12,
        dflash_config__mask_token_id=10**40,
    )
    assert_finishes(tmp_path, timeout=60)


def test_fifo_named_config_json_does_not_hang(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    (tmp_path / "m").mkdir()
    os.mkfifo(tmp_path / "m" / "config.json")
    try:
        proc = run_cli("check", tmp_path, "--select", "DF0", cwd=tmp_path, timeout=60)  # a hang, not a slow start
    except subprocess.TimeoutExpired:
        pytest.fail("dflash-cfg check hung on a FIFO named config.json")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_endless_device_named_config_json(tmp_path: Path) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").symlink_to("/dev/zero")
    # 1 GiB of address space is plenty for the tool (--select DF0 does not import transformers).
    proc = run_cli("check", tmp_path, "--select", "DF0", cwd=tmp_path, timeout=60, memory=1 << 30)
    assert "Traceback" not in proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, proc.stderr


# --- no writes ------------------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, tuple[str, int, int, bytes | str]]:
    out: dict[str, tuple[str, int, int, bytes | str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st_ = p.lstat()
            if stat.S_ISLNK(st_.st_mode):
                out[str(p)] = ("link", st_.st_mtime_ns, st_.st_mode, os.readlink(p))
            elif stat.S_ISDIR(st_.st_mode):
                out[str(p)] = ("dir", st_.st_mtime_ns, st_.st_mode, "")
            else:
                out[str(p)] = ("file", st_.st_mtime_ns, st_.st_mode, p.read_bytes())
    return out


def test_check_writes_nothing_in_a_read_only_tree(dflash: Run, tmp_path: Path) -> None:
    tree = tmp_path / "models"
    write_config(tree / "clean")
    write_config(tree / "broken", mutated(lambda d: d.pop("use_sliding_window")))
    write_config(tree / "bom", raw=b"\xef\xbb\xbf" + REAL.read_bytes())
    write_config(tree / "truncated", raw=REAL.read_bytes()[:300])
    rng = random.Random(0)
    write_config(tree / "noise", raw=bytes(rng.randrange(256) for _ in range(500)))
    (tree / "broken" / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    for dirpath, dirnames, filenames in os.walk(tree):
        for name in filenames + dirnames:
            p = Path(dirpath) / name
            p.chmod(p.stat().st_mode & ~0o222)
    tree.chmod(0o555)
    before = snapshot(tree)
    try:
        for fmt in ("text", "json", "sarif"):
            result = dflash("check", tree, "--format", fmt)
            assert result.code in (0, 1) and "Traceback" not in result.err
        assert snapshot(tree) == before
        assert not any(p.name == ".dflash-cfg.lock" or p.suffix in (".bak", ".tmp") for p in tree.rglob("*"))
    finally:
        for dirpath, dirnames, _ in os.walk(tree):
            for name in dirnames:
                (Path(dirpath) / name).chmod(0o755)
        tree.chmod(0o755)


def test_floats_round_trip_in_json_report(dflash: Run, tmp_path: Path) -> None:
    # Non-finite values in a file must not leak into the report as invalid JSON (NaN is not JSON).
    raw = (
        b'{"dflash_config": {"target_layer_ids": [1, NaN, Infinity], "mask_token_id": -Infinity,'
        b' "block_size": 1e400}, "architectures": ["DFlashDraftModel"], "layer_types": [NaN]}'
    )
    result = dflash("check", write_config(tmp_path / "m", raw=raw), "--format", "json")
    assert "NaN" not in _json_tokens(result.out) and "Infinity" not in _json_tokens(result.out)
    json.loads(result.out, parse_constant=_reject)
    sarif = dflash("check", tmp_path / "m", "--format", "sarif").out
    json.loads(sarif, parse_constant=_reject)


def _reject(token: str) -> Any:
    raise AssertionError(f"report is not strict JSON: contains {token}")


def _json_tokens(text: str) -> set[str]:
    out: set[str] = set()

    def hook(token: str) -> float:
        out.add(token)
        return 0.0

    json.loads(text, parse_constant=hook)
    return out

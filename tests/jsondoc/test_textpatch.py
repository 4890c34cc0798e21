"""dflash_cfg.jsondoc.textpatch: RFC 6902 on data, and the same edit on the text with the file's format kept.

The text tables give the exact expected output; for the standard-form fixtures that output is also
what transformers itself would write (`json.dumps(d, indent=2, sort_keys=True) + "\\n"`), and the
diff against the input is only the lines the op names.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

import jsonpatch
import pytest
from helpers import FIXTURES, examples
from hypothesis import assume, given
from hypothesis import strategies as st

from dflash_cfg.errors import PatchError
from dflash_cfg.jsondoc.patch import apply_to_data
from dflash_cfg.jsondoc.pointer import escape
from dflash_cfg.jsondoc.textpatch import apply_to_text
from dflash_cfg.model import PatchOp

UPSTREAM = FIXTURES / "upstream"
QWEN36 = (UPSTREAM / "z-lab__Qwen3.6-27B-DFlash" / "config.json").read_text(encoding="utf-8")
QWEN36_PARTIAL = (UPSTREAM / "z-lab__Qwen3.6-27B-DFlash" / "config.partial.json").read_text(encoding="utf-8")
QWEN35 = (UPSTREAM / "z-lab__Qwen3.5-4B-DFlash" / "config.json").read_text(encoding="utf-8")
MIMO = (UPSTREAM / "XiaomiMiMo__MiMo-V2.5-Pro-FP4-DFlash" / "dflash" / "config.json").read_bytes().decode("utf-8")


def standard(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def changed(old: str, new: str) -> tuple[list[str], list[str]]:
    """(removed lines, added lines) of a line diff."""
    diff = list(difflib.ndiff(old.splitlines(keepends=True), new.splitlines(keepends=True)))
    return [d[2:] for d in diff if d.startswith("- ")], [d[2:] for d in diff if d.startswith("+ ")]


def sub(text: str, old: str, new: str) -> str:
    """`text` with the one occurrence of `old` replaced: the expected outputs are written as edits."""
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_fixtures_are_what_the_tests_assume() -> None:
    assert QWEN36 == standard(json.loads(QWEN36)) and QWEN35 == standard(json.loads(QWEN35))
    assert "\r" not in MIMO and not MIMO.endswith("\n") and '\n    "model_type"' in MIMO


# ------------------------------------------------------------------------------------------ tables

LAYERS = ["full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention"]

TEXT_CASES = [
    pytest.param(
        QWEN36,
        [PatchOp("replace", "/use_sliding_window", False)],
        sub(QWEN36, '"use_sliding_window": true,', '"use_sliding_window": false,'),
        id="replace-scalar",
    ),
    pytest.param(  # block_size sorts first in dflash_config: it brings its own comma, no other line changes
        QWEN36,
        [PatchOp("add", "/dflash_config/block_size", 16)],
        sub(QWEN36, '    "mask_token_id": 248070,\n', '    "block_size": 16,\n    "mask_token_id": 248070,\n'),
        id="add-nested-sorted-first",
    ),
    pytest.param(  # sorts last: the previous member's closing line gains a comma
        QWEN36,
        [PatchOp("add", "/dflash_config/use_swa", True)],
        sub(QWEN36, "      61\n    ]\n", '      61\n    ],\n    "use_swa": true\n'),
        id="add-nested-sorted-last",
    ),
    pytest.param(
        QWEN35,
        [PatchOp("add", "/rope_theta", 10000000)],
        sub(
            QWEN35,
            '    "rope_type": "default"\n  },\n',
            '    "rope_type": "default"\n  },\n  "rope_theta": 10000000,\n',
        ),
        id="add-top-level-sorted-middle",
    ),
    pytest.param(
        QWEN36,
        [PatchOp("replace", "/layer_types", LAYERS)],
        sub(
            QWEN36,
            '    "sliding_attention",\n    "sliding_attention",\n    "sliding_attention",\n'
            '    "sliding_attention",\n    "full_attention"\n',
            "".join(f'    "{x}",\n' for x in LAYERS)[:-2] + "\n",
        ),
        id="replace-multiline-list",
    ),
    pytest.param(
        QWEN36,
        [PatchOp("remove", "/architectures")],
        sub(QWEN36, '  "architectures": [\n    "DFlashDraftModel"\n  ],\n', ""),
        id="remove-first",
    ),
    pytest.param(
        QWEN36, [PatchOp("remove", "/hidden_act")], sub(QWEN36, '  "hidden_act": "silu",\n', ""), id="remove-middle"
    ),
    pytest.param(
        QWEN36,
        [PatchOp("remove", "/vocab_size")],
        sub(QWEN36, '  "use_sliding_window": true,\n  "vocab_size": 248320\n', '  "use_sliding_window": true\n'),
        id="remove-last",
    ),
    pytest.param(
        QWEN36,
        [PatchOp("remove", "/dflash_config/target_layer_ids")],
        sub(
            QWEN36,
            '"mask_token_id": 248070,\n    "target_layer_ids": [\n      1,\n      16,\n      31,\n'
            "      46,\n      61\n    ]\n",
            '"mask_token_id": 248070\n',
        ),
        id="remove-last-nested-multiline",
    ),
    pytest.param(
        QWEN36,
        [PatchOp("remove", "/auto_map/AutoModel")],
        sub(QWEN36, '"auto_map": {\n    "AutoModel": "dflash.DFlashDraftModel"\n  },', '"auto_map": {},'),
        id="remove-only-member",
    ),
    pytest.param(
        QWEN36,
        [PatchOp("add", "/dflash_config/extra", {"z": [1, 2], "a": {}})],
        sub(
            QWEN36,
            '  "dflash_config": {\n',
            '  "dflash_config": {\n    "extra": {\n      "a": {},\n      "z": [\n        1,\n        2\n'
            "      ]\n    },\n",
        ),
        id="add-container-sorted-keys",
    ),
    pytest.param(
        QWEN36_PARTIAL,
        [PatchOp("replace", "/dflash_config/target_layer_ids", [1, 17, 33, 49, 63])],
        sub(QWEN36_PARTIAL, '"target_layer_ids": [1, 16, 31, 46, 61]', '"target_layer_ids": [1, 17, 33, 49, 63]'),
        id="replace-one-line-list-stays-one-line",
    ),
    pytest.param(
        QWEN36_PARTIAL,
        [
            PatchOp("add", "/dflash_config/target_layer_ids/-", 62),
            PatchOp("remove", "/dflash_config/target_layer_ids/0"),
            PatchOp("add", "/dflash_config/target_layer_ids/0", 2),
            PatchOp("replace", "/dflash_config/target_layer_ids/2", 30),
        ],
        sub(QWEN36_PARTIAL, "[1, 16, 31, 46, 61]", "[2, 16, 30, 46, 61, 62]"),
        id="one-line-array-elements",
    ),
    pytest.param(
        MIMO,
        [
            PatchOp("add", "/dflash_config/mask_token_id", 151670),
            PatchOp("add", "/dflash_config/window", {"size": 1024}),
            PatchOp("add", "/aaa", [1]),
        ],
        sub(
            sub(
                sub(MIMO, '"mask_token_id": 151669', '"mask_token_id": 151670'),
                '        "attention_sink_bias": true\n',
                '        "attention_sink_bias": true,\n        "window": {\n            "size": 1024\n        }\n',
            ),
            '    "use_cache": true\n}',
            '    "use_cache": true,\n    "aaa": [\n        1\n    ]\n}',
        ),
        id="four-spaces-no-final-newline-unsorted-appends",
    ),
    pytest.param(
        QWEN36.replace("\n", "\r\n"),
        [PatchOp("add", "/dflash_config/block_size", {"b": 16})],
        sub(
            QWEN36,
            '    "mask_token_id": 248070,\n',
            '    "block_size": {\n      "b": 16\n    },\n    "mask_token_id": 248070,\n',
        ).replace("\n", "\r\n"),
        id="crlf",
    ),
    pytest.param(
        '{\n\t"b": {},\n\t"a": [],\n\t"c": 1\n}',
        [PatchOp("add", "/b/x", 1), PatchOp("add", "/a/-", {"k": None})],
        '{\n\t"b": {\n\t\t"x": 1\n\t},\n\t"a": [\n\t\t{\n\t\t\t"k": null\n\t\t}\n\t],\n\t"c": 1\n}',
        id="tabs-empty-nested-containers-open-up",
    ),
    pytest.param(
        '{"b": 1, "a": {"y": [1,2], "x": {}}}',
        [
            PatchOp("add", "/a/x/k", "v"),
            PatchOp("add", "/a/y/1", 9),
            PatchOp("add", "/c", {"q": 1}),
            PatchOp("remove", "/b"),
        ],
        '{"a": {"y": [1,9,2], "x": {"k": "v"}}, "c": {"q": 1}}',
        id="one-line-file-stays-one-line",
    ),
    pytest.param(
        '{"a":1,"b":[true]}',
        [PatchOp("add", "/ab", [1, 2]), PatchOp("replace", "/b", [False, None])],
        '{"a":1,"ab":[1,2],"b":[false,null]}',
        id="compact-separators",
    ),
    pytest.param(
        '{\n  "a": 1\n}\n',
        [PatchOp("add", "/a~1b", 1), PatchOp("add", "/m~0n", 2), PatchOp("add", '/q"\u00e9\u6f22', 3)],
        '{\n  "a": 1,\n  "a/b": 1,\n  "m~n": 2,\n  "q\\"\u00e9\u6f22": 3\n}\n',
        id="escaped-pointers-and-keys",
    ),
    pytest.param(
        '{\n  "a": 1,\n  "b": 2\n}',
        [PatchOp("add", "/a", {"n": 1})],
        '{\n  "a": {\n    "n": 1\n  },\n  "b": 2\n}',
        id="add-existing-is-replace",
    ),
    pytest.param('  {"a": 1}  \n\n', [PatchOp("replace", "", [1, 2])], "  [1, 2]  \n\n", id="replace-whole-document"),
    pytest.param(
        '{\n  "a": [\n    1,\n    2\n  ]\n}',
        [PatchOp("add", "/a/1", 5), PatchOp("remove", "/a/0")],
        '{\n  "a": [\n    5,\n    2\n  ]\n}',
        id="multi-line-array-elements",
    ),
]


@pytest.mark.parametrize(("text", "ops", "expected"), TEXT_CASES)
def test_apply_to_text(text: str, ops: list[PatchOp], expected: str) -> None:
    out = apply_to_text(text, ops)
    assert out == expected
    assert json.loads(out) == apply_to_data(json.loads(text), ops)


@pytest.mark.parametrize("text", [QWEN36, QWEN35])
@pytest.mark.parametrize(
    "ops",
    [
        [PatchOp("replace", "/use_sliding_window", False)],
        [PatchOp("add", "/dflash_config/block_size", 16)],
        [PatchOp("add", "/dflash_config/use_swa", True)],
        [PatchOp("add", "/rope_theta", 10000000)],
        [PatchOp("replace", "/layer_types", LAYERS)],
        [PatchOp("remove", "/architectures"), PatchOp("remove", "/dflash_config/mask_token_id")],
        [PatchOp("add", "/auto_map/x", {}), PatchOp("add", "/auto_map/x/y", [{"b": 1, "a": 2}])],
    ],
)
def test_standard_form_stays_standard(text: str, ops: list[PatchOp]) -> None:
    assert apply_to_text(text, ops) == standard(apply_to_data(json.loads(text), ops))


def test_scalar_replace_changes_exactly_one_line() -> None:
    incident = QWEN36.replace('"use_sliding_window": true', '"use_sliding_window": false')
    removed, added = changed(incident, apply_to_text(incident, [PatchOp("replace", "/use_sliding_window", True)]))
    assert removed == ['  "use_sliding_window": false,\n'] and added == ['  "use_sliding_window": true,\n']


def test_add_changes_only_the_new_line_and_a_comma() -> None:
    removed, added = changed(QWEN36, apply_to_text(QWEN36, [PatchOp("add", "/dflash_config/block_size", 16)]))
    assert (removed, added) == ([], ['    "block_size": 16,\n'])
    removed, added = changed(QWEN36, apply_to_text(QWEN36, [PatchOp("add", "/dflash_config/use_swa", True)]))
    assert (removed, added) == (["    ]\n"], ["    ],\n", '    "use_swa": true\n'])


def test_remove_never_leaves_a_blank_line() -> None:
    for ptr in (
        "/architectures",
        "/bos_token_id",
        "/vocab_size",
        "/dflash_config/mask_token_id",
        "/dflash_config/target_layer_ids",
        "/layer_types/0",
        "/layer_types/4",
    ):
        out = apply_to_text(QWEN36, [PatchOp("remove", ptr)])
        assert "\n\n" not in out and out.count("\n") < QWEN36.count("\n"), ptr


def test_duplicate_keys_fall_back_to_reserialising() -> None:
    # json keeps the last "a"; removing it in place would uncover the first, so the check rejects the edit.
    text = '{\n    "a": 1,\n    "b": [1, 2],\n    "a": 2\n}'
    assert apply_to_text(text, [PatchOp("remove", "/a")]) == '{\n    "b": [\n        1,\n        2\n    ]\n}'
    assert apply_to_text(text, [PatchOp("replace", "/a", 3)]) == '{\n    "a": 1,\n    "b": [1, 2],\n    "a": 3\n}'


def test_unicode_is_written_as_is_and_escapes_are_kept() -> None:
    text = '{\n  "name": "\\u00e9",\n  "x": 1\n}\n'
    assert apply_to_text(text, [PatchOp("replace", "/x", "\u6f22")]) == '{\n  "name": "\\u00e9",\n  "x": "\u6f22"\n}\n'


# ------------------------------------------------------------------------------------------ errors

ERROR_CASES = [
    pytest.param({"a": 1}, PatchOp("replace", "/b", 1), "no member 'b' to replace", id="replace-missing"),
    pytest.param({"a": 1}, PatchOp("remove", "/b"), "no member 'b' to remove", id="remove-missing"),
    pytest.param({"a": 1}, PatchOp("add", "/x/y", 1), "parent '/x' does not exist", id="add-missing-parent"),
    pytest.param({"a": 1}, PatchOp("add", "/a/y", 1), "parent '/a' is a number", id="add-into-scalar"),
    pytest.param({"a": [1]}, PatchOp("add", "/a/2", 1), "not in 0..1", id="add-past-end"),
    pytest.param({"a": [1]}, PatchOp("add", "/a/01", 1), "not in 0..1", id="leading-zero"),
    pytest.param({"a": [1]}, PatchOp("replace", "/a/-", 1), "not in 0..0", id="replace-dash"),
    pytest.param({"a": [1]}, PatchOp("remove", "/a/1"), "not in 0..0", id="remove-past-end"),
    pytest.param({"a": []}, PatchOp("remove", "/a/0"), "the array is empty", id="remove-from-empty"),
    pytest.param({"a": [1]}, PatchOp("remove", "/a/" + "9" * 5000), "not in 0..0", id="huge-index"),
    pytest.param({"a": [[1]]}, PatchOp("add", "/a/3/0", 1), "parent '/a/3' does not exist", id="bad-parent-index"),
    pytest.param({"a": 1}, PatchOp("add", "a", 1), "must be empty or start with '/'", id="relative-pointer"),
    pytest.param({"a": 1}, PatchOp("add", "/a~2", 1), "'~' must be followed by 0 or 1", id="bad-escape"),
    pytest.param({"a": 1}, PatchOp("remove", ""), "cannot remove the whole document", id="remove-root"),
    pytest.param({"a": 1}, PatchOp("move", "/a"), "unsupported op 'move'", id="unsupported-op"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("data", "op", "why"), ERROR_CASES)
def test_errors(data: Any, op: PatchOp, why: str) -> None:
    ops = [PatchOp("add", "/z", 0), op]
    with pytest.raises(PatchError, match=r"^op 1 \(") as info:
        apply_to_data(data, ops)
    assert why in str(info.value) and repr(op.path) in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(PatchError):
        apply_to_text(json.dumps(data, indent=2), ops)


def test_text_errors() -> None:
    with pytest.raises(PatchError, match="not valid JSON"):
        apply_to_text('{"a": 1', [])
    with pytest.raises(PatchError, match="not valid JSON"):
        apply_to_text("\ufeff{}", [])  # json.loads refuses a BOM; the BOM fix strips it first
    with pytest.raises(PatchError, match=r"op 0 .*value is not JSON"):
        apply_to_text("{}", [PatchOp("add", "/a", {1, 2})])  # type: ignore[arg-type]


@pytest.mark.parametrize("depth", [600, 100_000])
def test_hostile_nesting_is_a_patch_error(depth: int) -> None:
    text = '{"a":' * depth + "1" + "}" * depth
    with pytest.raises(PatchError, match=r"nests too deeply"):
        apply_to_text(text, [PatchOp("add", "/b", 1)])


def test_data_is_deep_copied() -> None:
    data: dict[str, Any] = {"a": {"b": [1]}}
    value: list[Any] = [{"c": 1}]
    out = apply_to_data(data, [PatchOp("add", "/a/b/-", 2), PatchOp("add", "/v", value)])
    out["v"][0]["c"] = 2
    assert data == {"a": {"b": [1]}} and value == [{"c": 1}] and out["a"]["b"] == [1, 2]


def test_data_semantics() -> None:
    ops = [
        PatchOp("add", "/a/1", "x"),
        PatchOp("add", "/a/-", "z"),
        PatchOp("add", "/k", 1),
        PatchOp("add", "/b", 2),
        PatchOp("replace", "/a/0", 0),
        PatchOp("remove", "/m~1n~0"),
    ]
    out = apply_to_data({"b": 1, "a": [1, 2], "m/n~": 0}, ops)
    assert out == {"b": 2, "a": [0, "x", 2, "z"], "k": 1}
    assert list(out) == ["b", "a", "k"]  # add of an existing member keeps its place
    assert apply_to_data({"a": 1}, [PatchOp("replace", "", [1])]) == [1]


# ------------------------------------------------------------------------------------------ properties

KEYS = st.text(st.characters(codec="utf-8"), max_size=5)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
VALUES = st.recursive(
    SCALARS, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(KEYS, kids, max_size=4), max_leaves=10
)
DOCS = st.dictionaries(KEYS, VALUES, max_size=6)

STYLES = {
    "standard": lambda d: json.dumps(d, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
    "indent4-sorted-bare": lambda d: json.dumps(d, indent=4, sort_keys=True, ensure_ascii=False),
    "tab-sorted-crlf": lambda d: (
        json.dumps(d, indent="\t", sort_keys=True, ensure_ascii=False).replace("\n", "\r\n") + "\r\n"
    ),
    "indent2-unsorted-ascii": lambda d: json.dumps(d, indent=2) + "\n",
    "indent4-unsorted-crlf": lambda d: json.dumps(d, indent=4, ensure_ascii=False).replace("\n", "\r\n"),
    "one-line": lambda d: json.dumps(d),
    "compact-sorted": lambda d: json.dumps(d, separators=(",", ":"), sort_keys=True) + "\n",
}
# Styles json.dumps writes the same way whatever is in them: the edited text must be that exact text.
EXACT = {"standard", "indent4-sorted-bare", "tab-sorted-crlf"}


def containers(value: Any, at: str = "") -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        found.append((at, value))
        for k, v in value.items():
            found += containers(v, at + "/" + escape(k))
    elif isinstance(value, list):
        found.append((at, value))
        for i, v in enumerate(value):
            found += containers(v, f"{at}/{i}")
    return found


@st.composite
def one_op(draw: st.DrawFn, doc: Any, settable_only: bool) -> PatchOp:
    """A valid op for `doc`; `settable_only` keeps to ops that are idempotent (set a member or element)."""
    at, box = draw(st.sampled_from(containers(doc)))
    if isinstance(box, dict):
        kinds = ["add-new"] + (["add-existing", "replace"] + ([] if settable_only else ["remove"]) if box else [])
    else:
        kinds = ([] if settable_only else ["insert"]) + (
            ["replace"] + ([] if settable_only else ["remove"]) if box else []
        )
    assume(kinds)
    kind = draw(st.sampled_from(kinds))
    if kind == "add-new":
        key = draw(KEYS.filter(lambda k: k not in box))
        return PatchOp("add", at + "/" + escape(key), draw(VALUES))
    if kind == "insert":
        where = draw(st.integers(0, len(box)).map(str) | st.just("-"))
        return PatchOp("add", f"{at}/{where}", draw(VALUES))
    token = (
        escape(draw(st.sampled_from(list(box)))) if isinstance(box, dict) else str(draw(st.integers(0, len(box) - 1)))
    )
    if kind == "remove":
        return PatchOp("remove", f"{at}/{token}")
    return PatchOp("add" if kind == "add-existing" else "replace", f"{at}/{token}", draw(VALUES))


@st.composite
def patched(draw: st.DrawFn, settable_only: bool = False) -> tuple[Any, list[PatchOp], Any]:
    doc = draw(DOCS)
    ops: list[PatchOp] = []
    after = doc
    for _ in range(draw(st.integers(1, 3))):
        op = draw(one_op(after, settable_only))
        ops.append(op)
        after = apply_to_data(after, [op])
    return doc, ops, after


@pytest.mark.slow
@examples(300)
@given(patched())
def test_data_patch_agrees_with_an_independent_implementation(case: tuple[Any, list[PatchOp], Any]) -> None:
    """The jsonpatch library is the oracle for RFC 6902 on data."""
    doc, ops, after = case
    assert jsonpatch.apply_patch(doc, [op.to_json() for op in ops]) == after


def test_escaped_pointers_agree_with_the_oracle() -> None:
    doc = {"a": {"b/c": 1, "m~n": [1, 2]}}
    ops = [
        PatchOp("replace", "/a/b~1c", 2),
        PatchOp("add", "/a/m~0n/-", 3),
        PatchOp("add", "/a/m~0n/0", 0),
        PatchOp("remove", "/a/m~0n/1"),
        PatchOp("add", "/x", {"y": True}),
    ]
    expected = {"a": {"b/c": 2, "m~n": [0, 2, 3]}, "x": {"y": True}}
    assert apply_to_data(doc, ops) == jsonpatch.apply_patch(doc, [op.to_json() for op in ops]) == expected


@examples(300)
@given(patched(), st.sampled_from(sorted(STYLES)))
def test_text_edit_gives_the_data_edit(case: tuple[Any, list[PatchOp], Any], style: str) -> None:
    doc, ops, after = case
    text = STYLES[style](doc)
    out = apply_to_text(text, ops)
    assert json.loads(out) == apply_to_data(json.loads(text), ops) == after
    assert out.count("\n") == out.count("\r\n") if "\r\n" in text else "\r" not in out
    assert out.endswith("\n") == text.endswith("\n")
    if style in EXACT and "\n" in text.rstrip():  # "{}" shows no indent unit to follow
        assert out == STYLES[style](after)


@pytest.mark.slow
@examples(200)
@given(patched(settable_only=True), st.sampled_from(sorted(STYLES)))
def test_add_and_replace_are_idempotent(case: tuple[Any, list[PatchOp], Any], style: str) -> None:
    doc, ops, after = case
    try:  # a later op can replace the parent an earlier one added into, so a rerun can be invalid
        assume(apply_to_data(after, ops) == after)
    except PatchError:
        assume(False)
    once = apply_to_text(STYLES[style](doc), ops)
    assert apply_to_text(once, ops) == once

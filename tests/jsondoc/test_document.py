"""dflash_cfg.jsondoc.document: bytes -> Document (data plus what json.load hides) and pointer -> (line, column).

Positions are 1-based; a member's position is its key's opening quote, an array element's is the first
character of the element. Hostile inputs (huge, deeply nested, huge integers) must end as DF001, never as
an exception.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from helpers import FIXTURES, REAL

from dflash_cfg.jsondoc.document import MAX_BYTES, Document, parse
from dflash_cfg.jsondoc.pointer import escape, parent, pointer
from dflash_cfg.jsondoc.spans import Positions, find
from dflash_cfg.lint.linter import Inputs
from dflash_cfg.lint.linter import lint as lint_inputs
from dflash_cfg.lint.rules import file as file_rules
from dflash_cfg.lint.rules.base import Context
from dflash_cfg.model import ByteEdit, FileReport, Finding, Problem

TEXT = """{
  "architectures": [
    "DFlashDraftModel"
  ],
  "dflash_config": {"target_layer_ids": [1, 16,
      31, 46, 61], "mask_token_id": 248070},
\t"grid": [[1, 2], [3, {"deep": null}]],
  "tricky": "a string with { [ \\" \\\\ : , inside",
  "after": true
}
"""


@dataclass(frozen=True)
class Issue:
    """A parse problem as the DF0xx rule that reports it words it."""

    rule: str
    problem: Problem

    @property
    def line(self) -> int | None:
        return self.problem.at[0] if self.problem.at else None

    @property
    def column(self) -> int | None:
        return self.problem.at[1] if self.problem.at else None


def issues(doc: Document) -> list[Issue]:
    """The file rules' problems, in the order the parser found them."""
    ctx = Context(inputs=Inputs(path="config.json", doc=doc), doc=doc, kind="dflash")
    found = [(r.id, p) for r in file_rules.RULES if "bytes" in r.needs for p in r.run(ctx)]
    order = {(pp.pointer, pp.at): i for i, pp in enumerate(doc.problems)}
    found.sort(key=lambda rp: order.get((rp[1].pointer, rp[1].at), 0))
    return [Issue(rule, problem) for rule, problem in found]


def lint(raw: bytes, path: str, _inputs: object = None) -> FileReport:
    return lint_inputs(Inputs(path=path, doc=parse(raw)))


def doc_of(text: str) -> Document:
    doc = parse(text.encode("utf-8"))
    assert doc.parsed and doc.problems == (), doc.problems
    return doc


def rules_of(doc: Document) -> list[str]:
    return [i.rule for i in issues(doc)]


# ------------------------------------------------------------------------------------------ positions


@pytest.mark.parametrize(
    ("ptr", "where"),
    [
        ("", (1, 1)),
        ("/architectures", (2, 3)),
        ("/architectures/0", (3, 5)),
        ("/dflash_config", (5, 3)),
        ("/dflash_config/target_layer_ids", (5, 21)),
        ("/dflash_config/target_layer_ids/0", (5, 42)),
        ("/dflash_config/target_layer_ids/1", (5, 45)),
        ("/dflash_config/target_layer_ids/2", (6, 7)),
        ("/dflash_config/target_layer_ids/4", (6, 15)),
        ("/dflash_config/mask_token_id", (6, 20)),
        ("/grid", (7, 2)),  # a tab counts as one column
        ("/grid/0", (7, 11)),
        ("/grid/0/1", (7, 15)),
        ("/grid/1", (7, 19)),
        ("/grid/1/1", (7, 23)),
        ("/grid/1/1/deep", (7, 24)),
        ("/tricky", (8, 3)),
        ("/after", (9, 3)),
    ],
)
def test_positions_of_keys_and_elements(ptr: str, where: tuple[int, int]) -> None:
    doc = doc_of(TEXT)
    assert doc.locate(ptr) == where
    line, column = where
    shown = TEXT.splitlines()[line - 1][column - 1 :]
    if ptr and not ptr.rsplit("/", 1)[-1].isdigit():
        assert shown.startswith(json.dumps(ptr.rsplit("/", 1)[-1])), shown  # a member: its key's quote


def test_data_is_what_json_load_gives() -> None:
    assert doc_of(TEXT).data == json.loads(TEXT)


def test_crlf_and_non_ascii_columns_count_characters() -> None:
    text = '{\r\n  "name": "\u00e9\u00e9",  "next": 1,\r\n  "\u6f22": [10,\r\n 20]\r\n}'
    doc = doc_of(text)
    assert doc.locate("/name") == (2, 3)
    assert doc.locate("/next") == (2, 18)
    assert doc.locate("/\u6f22") == (3, 3)
    assert doc.locate("/\u6f22/0") == (3, 9)
    assert doc.locate("/\u6f22/1") == (4, 2)


def test_single_line_file() -> None:
    doc = doc_of('{"a": {"b": [0, {"c": 1}]}, "d": 2}')
    assert [doc.locate(p) for p in ("/a", "/a/b", "/a/b/0", "/a/b/1", "/a/b/1/c", "/d")] == [
        (1, 2),
        (1, 8),
        (1, 14),
        (1, 17),
        (1, 18),
        (1, 29),
    ]


@pytest.mark.parametrize(
    ("missing", "ancestor"),
    [
        ("/use_sliding_window", ""),
        ("/dflash_config/block_size", "/dflash_config"),
        ("/dflash_config/target_layer_ids/9", "/dflash_config/target_layer_ids"),
        ("/grid/1/1/deep/more", "/grid/1/1/deep"),
        ("/grid/7/0", "/grid"),
        ("/nothing/at/all", ""),
    ],
)
def test_missing_member_resolves_to_nearest_ancestor(missing: str, ancestor: str) -> None:
    doc = doc_of(TEXT)
    assert doc.locate(missing) == doc.locate(ancestor)
    assert doc.locate(missing) is not None


def test_pointer_helpers() -> None:
    assert pointer("dflash_config", "target_layer_ids", 3) == "/dflash_config/target_layer_ids/3"
    assert pointer() == ""
    assert pointer("a/b", "m~n", "~1") == "/a~1b/m~0n/~01"
    assert escape("~/") == "~0~1"
    assert parent("/a/b/0") == "/a/b" and parent("/a") == "" and parent("") == ""


def test_keys_with_slash_and_tilde_are_escaped() -> None:
    text = '{\n  "a/b": {"m~n": [7, 8]},\n  "~1": 1,\n  "": 2,\n  "\\u002f": 3\n}\n'
    doc = doc_of(text)
    assert doc.data == {"a/b": {"m~n": [7, 8]}, "~1": 1, "": 2, "/": 3}
    assert doc.locate("/a~1b") == (2, 3)
    assert doc.locate("/a~1b/m~0n") == (2, 11)
    assert doc.locate("/a~1b/m~0n/1") == (2, 22)
    assert doc.locate("/~01") == (3, 3)
    assert doc.locate("/") == (4, 3)  # the empty key
    assert doc.locate("/~1") == (5, 3)  # "\u002f" is "/"
    # Unescaped forms do not exist: "/a/b" is member "b" of a missing "a", so it falls back to the root.
    assert doc.locate("/a/b") == (1, 1)
    assert doc.locate("/a~1b/missing") == (2, 3)


# ------------------------------------------------------------------------------------- hostile inputs


def test_file_over_the_size_limit_is_refused_unread() -> None:
    # Valid JSON, and invalid UTF-8 inside the string: parsed or decoded, it would give data or DF003.
    body = b'{"architectures": ["DFlashDraftModel"], "pad": "' + b"\xff" * (17 * 1024 * 1024) + b'"}'
    assert len(body) > MAX_BYTES
    doc = parse(body)
    assert [(i.rule, i.problem.pointer) for i in issues(doc)] == [("DF001", "")]
    assert f"over {MAX_BYTES} bytes" in issues(doc)[0].problem.message
    assert doc.data is None and not doc.parsed and doc.text is None
    assert doc.locate("/architectures") is None


def test_size_limit_boundary() -> None:
    head, tail = b'{"architectures": ["DFlashDraftModel"], "pad": "', b'"}'
    exact = head + b"x" * (MAX_BYTES - len(head) - len(tail)) + tail
    assert len(exact) == MAX_BYTES
    assert parse(exact).parsed
    over = parse(exact[:-2] + b'x"}')
    assert rules_of(over) == ["DF001"] and not over.parsed


def test_lint_of_an_oversized_drafter_file_is_df001() -> None:
    body = b'{"architectures": ["DFlashDraftModel"], "pad": "' + b"x" * (17 * 1024 * 1024) + b'"}'
    report = lint(body, "config.json")
    assert [(f.rule, f.pointer) for f in report.findings] == [("DF001", "")]


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"[" * 100_000, id="open-brackets"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, id="balanced-brackets"),
        pytest.param(b'{"a": ' * 100_000 + b"1" + b"}" * 100_000, id="nested-objects"),
        pytest.param(b'{"architectures": ["DFlashDraftModel"], "x": ' + b"[" * 100_000, id="in-a-drafter"),
    ],
)
def test_deep_nesting_is_df001_not_recursion_error(raw: bytes) -> None:
    doc = parse(raw)  # must not raise RecursionError
    assert rules_of(doc) == ["DF001"] and doc.data is None and not doc.parsed
    assert issues(doc)[0].line is not None and issues(doc)[0].column is not None
    report = lint(raw + b" dflash", "config.json")  # mentions DFlash: linted, not skipped
    assert [f.rule for f in report.findings] == ["DF001"]


def test_integer_of_5000_digits_is_df001() -> None:
    raw = b'{"architectures": ["DFlashDraftModel"], "vocab_size": ' + b"7" * 5000 + b"}"
    doc = parse(raw)
    assert rules_of(doc) == ["DF001"] and not doc.parsed
    message = issues(doc)[0].problem.message
    assert message.startswith("invalid JSON") and "\n" not in message
    report = lint(raw, "config.json")
    assert [(f.rule, f.line, f.column) for f in report.findings] == [("DF001", 1, 1)]


def test_integer_below_the_digit_limit_is_data() -> None:
    doc = doc_of('{"n": ' + "7" * 4000 + "}")
    assert doc.data == {"n": int("7" * 4000)}


# ---------------------------------------------------------------------------------------- duplicates

NESTED_DUP = """{
  "architectures": ["DFlashDraftModel"],
  "dflash_config": {
    "mask_token_id": 248064,
    "block_size": 16,
    "mask_token_id": 248070
  },
  "other": {"mask_token_id": 1}
}
"""


def test_duplicate_in_a_nested_object() -> None:
    doc = parse(NESTED_DUP.encode())
    assert doc.parsed
    assert [(i.rule, i.problem.pointer) for i in issues(doc)] == [("DF002", "/dflash_config/mask_token_id")]
    assert doc.data["dflash_config"]["mask_token_id"] == 248070  # json.load keeps the last
    assert "first at line 4" in issues(doc)[0].problem.message
    # The same key in a different object is not a duplicate.
    assert doc.locate("/other/mask_token_id") == (8, 13)


def test_duplicate_key_locates_the_value_json_load_keeps() -> None:
    doc = parse(NESTED_DUP.encode())
    assert doc.locate("/dflash_config/mask_token_id") == (6, 5)


def test_duplicate_positions_in_lint() -> None:
    [f] = [f for f in lint(NESTED_DUP.encode(), "config.json").findings if f.rule == "DF002"]
    assert f.pointer == "/dflash_config/mask_token_id" and "first at line 4" in f.message
    assert f.line is not None and f.column == 5


OBJECT_DUP = """{
  "architectures": ["DFlashDraftModel"],
  "dflash_config": {
    "target_layer_ids": [1, 17, 33, 49, 63],
    "mask_token_id": 248064
  },
  "dflash_config": {
    "target_layer_ids": [1, 16, 31, 46, 61],
    "mask_token_id": 248070
  }
}
"""


def test_duplicate_key_whose_value_is_an_object() -> None:
    doc = parse(OBJECT_DUP.encode())
    assert [(i.rule, i.problem.pointer) for i in issues(doc)] == [("DF002", "/dflash_config")]
    assert "first at line 3" in issues(doc)[0].problem.message
    assert doc.data["dflash_config"] == {"target_layer_ids": [1, 16, 31, 46, 61], "mask_token_id": 248070}
    # Keys inside the kept (second) object are located there.
    assert doc.locate("/dflash_config/target_layer_ids") == (8, 5)
    assert doc.locate("/dflash_config/mask_token_id") == (9, 5)


def test_duplicate_object_elements_are_located_in_the_kept_object() -> None:
    doc = parse(OBJECT_DUP.encode())
    assert doc.locate("/dflash_config/target_layer_ids/4") == (8, 41)


def test_duplicate_object_member_is_located_at_the_kept_one() -> None:
    doc = parse(OBJECT_DUP.encode())
    assert doc.locate("/dflash_config") == (7, 3)


def test_duplicate_three_times_reports_each_repeat() -> None:
    doc = parse(b'{"a": 1,\n "a": 2,\n "a": 3}')
    assert [(i.rule, i.problem.pointer) for i in issues(doc)] == [("DF002", "/a"), ("DF002", "/a")]
    assert all("first at line 1" in i.problem.message for i in issues(doc))
    assert doc.data == {"a": 3}


def test_duplicates_in_objects_inside_arrays() -> None:
    doc = parse(b'{"list": [{"k": 1, "k": 2}, {"k": 3}]}')
    assert [(i.rule, i.problem.pointer) for i in issues(doc)] == [("DF002", "/list/0/k")]


def test_duplicate_message_shows_the_key_as_written() -> None:
    doc = parse(b'{"a/b": 1, "a/b": 2}')
    [issue] = issues(doc)
    assert issue.problem.pointer == "/a~1b"
    assert '"a/b"' in issue.problem.message, issue.problem.message


# ----------------------------------------------------------------------------- other parse outcomes


def test_clean_file_has_no_issues_and_no_positions_computed() -> None:
    doc = doc_of(TEXT)
    assert "_positions" not in doc.__dict__  # nothing is scanned until something is located
    assert doc.locate("/after") == (9, 3)
    assert "_positions" not in doc.__dict__  # and a lookup walks down its pointer: no tree is built


def test_many_lookups_build_the_tree_once_and_find_the_same_places() -> None:
    # A walk reads up to the whole text: a hostile file with thousands of findings would make locating them
    # quadratic, so past a handful of lookups the tree is built and followed.
    text = json.dumps({"layer_types": ["weird"] * 3000, "after": 1}, indent=2)
    walked = [doc_of(text).locate(f"/layer_types/{i}") for i in range(0, 3000, 150)]
    doc = doc_of(text)
    found = [doc.locate(f"/layer_types/{i}") for i in range(3000)]
    assert "_positions" in doc.__dict__
    assert found[::150] == walked and found[2999] == (3002, 5)


def _pointers(value: Any, tokens: tuple[str, ...] = ()) -> Iterator[list[str]]:
    """Every member and element of `value`, and a missing one under each container."""
    yield list(tokens)
    if isinstance(value, dict):
        yield [*tokens, "no such key"]
        for key, item in value.items():
            yield from _pointers(item, (*tokens, key))
    elif isinstance(value, list):
        yield [*tokens, str(len(value))]
        yield [*tokens, "01"]  # RFC 6901 has no leading zeros
        for i, item in enumerate(value):
            yield from _pointers(item, (*tokens, str(i)))
    else:
        yield [*tokens, "0"]  # a scalar has no members


HARD_TEXTS = (
    TEXT,
    '{"a": 1, "a": {"b": [1, 2]}, "c": "}]\\"\\u005d", "a": {"b": [3, [4, {"x": null}]]}}',
    '  {\r\n\t"k\\u00e9y": [ {} , [], "x" ,{"y":[{"z":-1.5e3}]}] ,"s":"a\\"b", "n": NaN, "i": -Infinity}  ',
    '[1, {"a": [2]}, [[3]]]',
    '"just a string"',
    "{}",
    '{"\u6f22\u5b57": {"": {"~/": [true, false, null]}}}',
)


FIXTURE_TEXTS = tuple(p.read_text(encoding="utf-8-sig") for p in sorted(FIXTURES.rglob("config.json")))


@pytest.mark.parametrize("text", [*HARD_TEXTS, *FIXTURE_TEXTS])
def test_walking_a_pointer_finds_what_the_tree_finds(text: str) -> None:
    """The walk `locate` takes and the tree `scan` builds put every value, present or missing, in one place."""
    doc = parse(text.encode("utf-8"))
    if not doc.parsed:
        pytest.skip("a fixture json refuses: nothing is located in it")
    tree = Positions(text)
    for tokens in _pointers(doc.data):
        assert find(text, tokens) == tree.of(tokens), tokens


@pytest.mark.parametrize(
    ("raw", "rule", "fragment"),
    [
        (b"", "DF001", "empty"),
        (b" \n\t ", "DF001", "whitespace"),
        (b'{"a": 1', "DF001", "truncated"),
        (b'{"a": 1} x', "DF001", "invalid JSON"),
        (b"\xff\xfe" + '{"a": 1}'.encode("utf-16-le"), "DF003", "UTF-16-LE"),
        (b"\xfe\xff" + '{"a": 1}'.encode("utf-16-be"), "DF003", "UTF-16-BE"),
        (b"\xff\xfe\x00\x00" + '{"a": 1}'.encode("utf-32-le"), "DF003", "UTF-32-LE"),
        (b"\x00\x00\xfe\xff" + '{"a": 1}'.encode("utf-32-be"), "DF003", "UTF-32-BE"),
        (b'{"a": "\xc3"}', "DF003", "not valid UTF-8"),
        (b"[1, 2]", "DF005", "an array"),
        (b'"s"', "DF005", "a string"),
        (b"3.5", "DF005", "a number"),
        (b"null", "DF005", "null"),
        (b"true", "DF005", "a boolean"),
    ],
)
def test_parse_outcomes(raw: bytes, rule: str, fragment: str) -> None:
    doc = parse(raw)
    assert rules_of(doc) == [rule], issues(doc)
    assert fragment in issues(doc)[0].problem.message
    assert issues(doc)[0].problem.pointer == ""
    if rule != "DF005":
        assert doc.data is None and not doc.parsed


def test_utf8_bom_is_reported_and_the_rest_parsed() -> None:
    doc = parse(b'\xef\xbb\xbf{\n  "a": 1,\n  "b": 2,\n  "b": 3\n}')
    assert [(i.rule, i.problem.pointer) for i in issues(doc)] == [("DF003", ""), ("DF002", "/b")]
    bom = issues(doc)[0].problem
    assert bom.fix is not None and bom.fix.patch == () and bom.fix.safe and bom.fix.edits == (ByteEdit(0, 3),)
    assert doc.data == {"a": 1, "b": 3} and doc.locate("/a") == (2, 3)  # positions ignore the BOM


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('{"eps": NaN}', [("DF004", "/eps")]),
        ('{"x": [1, Infinity, -Infinity]}', [("DF004", "/x/1"), ("DF004", "/x/2")]),
        ('{"x": {"y": 1e400}, "z": -1E+999}', [("DF004", "/x/y"), ("DF004", "/z")]),
        ('{"fine": 1e308, "tiny": 1e-400}', []),
    ],
)
def test_non_finite_numbers(text: str, found: list[tuple[str, str]]) -> None:
    doc = parse(text.encode())
    assert doc.parsed and [(i.rule, i.problem.pointer) for i in issues(doc)] == found


# ------------------------------------------------------------- the file rules on a real drafter file
# Where DF001-DF004 and DF010 point, and what they say, on a published drafter (helpers.REAL) with one defect:
# the parser's line and column arithmetic, which a rule-case row (rule, pointer, severity) does not pin.

REAL_TEXT = REAL.read_text(encoding="utf-8")


def found(raw: bytes, rule: str) -> list[Finding]:
    return [f for f in lint(raw, "config.json").findings if f.rule == rule]


def line_of(text: str, needle: str, nth: int = 0) -> int:
    starts = [m.start() for m in re.finditer(re.escape(needle), text)]
    return text.count("\n", 0, starts[nth]) + 1


def test_invalid_json_reports_the_decoders_line_and_column() -> None:
    text = REAL_TEXT.replace('"attention_bias": false,', '"attention_bias": false')
    [f] = found(text.encode(), "DF001")
    line = line_of(text, '"attention_dropout"')  # the decoder stops at the next key
    assert (f.line, f.column) == (line, 3)
    assert f"line {line}, column 3" in f.message and "invalid JSON" in f.message


@pytest.mark.parametrize("cut_at", ['"dflash_config": {', '"layer_types": [', '"vocab_size": 24'])
def test_truncated_between_tokens_says_truncated(cut_at: str) -> None:
    [f] = found(REAL_TEXT[: REAL_TEXT.index(cut_at) + len(cut_at)].encode(), "DF001")
    assert f.message.startswith("file is truncated"), f.message


def test_truncated_inside_a_string_says_truncated() -> None:
    cut_at = REAL_TEXT.index('"sliding_attention"') + len('"sliding_att')
    [f] = found(REAL_TEXT[:cut_at].encode(), "DF001")
    assert f.message.startswith("file is truncated"), f.message


@pytest.mark.parametrize(("raw", "message"), [(b"", "file is empty"), (b" \n\t\n", "only whitespace")])
def test_empty_file_message_from_the_parser(raw: bytes, message: str) -> None:
    [f] = lint(raw, "config.json").findings
    assert f.rule == "DF001" and message in f.message and (f.line, f.column) == (1, 1)


DUPLICATED = {
    "top-level": ('  "vocab_size": 248320\n', '  "vocab_size": 248320,\n  "vocab_size": 151936\n', '"vocab_size"'),
    "in-dflash_config": (
        '"mask_token_id": 248077,',
        '"mask_token_id": 248077,\n    "mask_token_id": 248064,',
        '"mask_token_id"',
    ),
}


@pytest.mark.parametrize("where", sorted(DUPLICATED))
def test_duplicate_key_is_located_at_the_duplicate_and_names_the_first(where: str) -> None:
    old, new, key = DUPLICATED[where]
    text = REAL_TEXT.replace(old, new)
    [f] = found(text.encode(), "DF002")
    assert f"(first at line {line_of(text, key, 0)})" in f.message
    second = line_of(text, key, 1)
    assert (f.line, f.column) == (second, text.splitlines()[second - 1].index(key) + 1)


def test_bom_fix_is_byte_level_and_stripping_it_clears_df003() -> None:
    raw = b"\xef\xbb\xbf" + REAL_TEXT.encode()
    [f] = found(raw, "DF003")
    assert f.fix is not None and f.fix.safe and f.fix.patch == () and "byte-order mark" in f.fix.summary
    assert (f.line, f.column) == (1, 1)
    assert found(raw[3:], "DF003") == []
    # Without the BOM the rest of the file is linted as usual: same findings as the base apart from DF003.
    same = {(g.rule, g.pointer) for g in lint(raw, "config.json").findings if g.rule != "DF003"}
    assert same == {(g.rule, g.pointer) for g in lint(raw[3:], "config.json").findings}


def test_invalid_utf8_byte_position_ascii_line() -> None:
    raw = REAL_TEXT.encode().replace(b'"silu"', b'"silu\xff"')
    [f] = found(raw, "DF003")
    offset = raw.index(b"\xff")
    line = raw.count(b"\n", 0, offset) + 1
    column = offset - raw.rfind(b"\n", 0, offset)
    assert (f.line, f.column) == (line, column)
    assert "0xff" in f.message and f"offset {offset}" in f.message


def test_invalid_utf8_byte_column_counts_characters() -> None:
    raw = REAL_TEXT.encode().replace(b'"silu"', b'"s\xc3\xa9\xff"')
    [f] = found(raw, "DF003")
    offset = raw.index(b"\xff")
    line_start = raw.rfind(b"\n", 0, offset) + 1
    chars_before = len(raw[line_start:offset].decode("utf-8"))
    assert (f.line, f.column) == (raw.count(b"\n", 0, offset) + 1, chars_before + 1)


def test_invalid_utf8_offset_counts_the_bom() -> None:
    raw = b"\xef\xbb\xbf" + REAL_TEXT.encode().replace(b'"silu"', b'"silu\xff"')
    [f] = found(raw, "DF003")
    offset = raw.index(b"\xff")
    assert f"offset {offset}" in f.message, f.message


@pytest.mark.parametrize(
    ("token", "pointer"),
    [("NaN", "/rms_norm_eps"), ("Infinity", "/initializer_range"), ("-Infinity", "/attention_dropout")],
)
def test_non_finite_number_is_located_at_its_member(token: str, pointer: str) -> None:
    name = pointer.lstrip("/")
    data = json.loads(REAL_TEXT)
    data[name] = float(token.replace("Infinity", "inf"))
    text = json.dumps(data, indent=2) + "\n"
    [f] = found(text.encode(), "DF004")
    assert f'"{name}": {token}' in text and token in f.message
    assert f.line == line_of(text, f'"{name}"') and f.column == 3


def test_schema_missing_field_points_where_it_belongs() -> None:
    data = json.loads(REAL_TEXT)
    del data["hidden_size"]
    [f] = found((json.dumps(data, indent=2) + "\n").encode(), "DF010")
    assert f.pointer == "/hidden_size" and "hidden_size is missing" in f.message
    assert (f.line, f.column) == (1, 1)  # the nearest existing ancestor: the whole file

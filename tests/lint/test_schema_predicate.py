"""The compiled schema predicate (lint/schema.py) accepts exactly what jsonschema's Draft 2020-12 validator
accepts: a file it passes is never checked by jsonschema, so a disagreement would hide a DF010 finding."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, examples
from hypothesis import given
from hypothesis import strategies as st

from dflash_cfg.lint import schema
from dflash_cfg.lint.speculators import is_speculators, translate

KINDS = ("dflash", "dflash2")


def _objects() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(FIXTURES.rglob("*.json")):
        try:
            data = json.loads(path.read_bytes())
        except ValueError:
            continue
        if isinstance(data, dict):
            out.append((str(path.relative_to(FIXTURES)), translate(data).data if is_speculators(data) else data))
    return out


OBJECTS = _objects()
BASE = dict(OBJECTS)["upstream/z-lab__Qwen3.8-27B-DFlash2/config.json"]


def _agree(data: Any) -> None:
    for kind in KINDS:
        accepts = schema.predicate(kind)
        assert accepts is not None, f"the bundled {kind} schema no longer compiles: every file pays for jsonschema"
        assert accepts(data) == schema._validator(kind).is_valid(data), (kind, data)


@pytest.mark.parametrize("name", [n for n, _ in OBJECTS])
def test_every_fixture_is_judged_as_jsonschema_judges_it(name: str) -> None:
    _agree(dict(OBJECTS)[name])


def test_validate_still_reports_what_jsonschema_reports() -> None:
    bad = {**BASE, "hidden_size": "4096", "dflash_config": {**BASE["dflash_config"], "conv_kernel_size": 0}}
    assert schema.predicate("dflash2") is not None and not schema.predicate("dflash2")(bad)  # type: ignore[misc]
    found = schema.validate(bad, "dflash2")
    assert [ptr for ptr, _ in found] == ["/dflash_config/conv_kernel_size", "/hidden_size"]
    assert schema.validate(BASE, "dflash2") == []


@pytest.mark.parametrize(
    "keyword",
    [
        {"pattern": "^a"},
        {"enum": [1]},
        {"prefixItems": [True], "items": False},
        {"$ref": "#/$defs/x"},
        {"type": "date"},
    ],
    ids=["pattern", "enum", "prefixItems", "fragment-ref", "unknown-type"],
)
def test_a_keyword_it_does_not_implement_leaves_every_file_to_jsonschema(keyword: dict[str, Any]) -> None:
    assert schema.compiled({"properties": {"x": keyword}}, []) is None


def test_a_ref_cycle_is_not_compiled() -> None:
    a = {"$id": "https://x.invalid/a", "properties": {"n": {"$ref": "https://x.invalid/a"}}}
    assert schema.compiled(a, [a]) is None


def _paths(node: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every property path the bundled schemas describe (dflash_config's members included)."""
    out = []
    for name, sub in (node.get("properties") or {}).items() if isinstance(node, dict) else ():
        out.append((*prefix, name))
        out += _paths(sub, (*prefix, name))
    return out


PATHS = sorted({p for kind in KINDS for p in _paths(schema.load(schema.SCHEMA_FILES[kind]))})
# The edges the keywords turn on, each tried alone on an otherwise valid file.
EDGES: list[Any] = [
    None, True, False, 0, 1, -1, 2, 0.0, -0.0, 1.0, 0.5, 1.5, -0.5, 2.0, math.nan, math.inf, -math.inf,
    10**400, -(10**400), "", "x", "silu", [], [0], [1.0], [True], ["full_attention"], [""], {}, {"a": 1},
]  # fmt: skip


@pytest.mark.parametrize("path", PATHS, ids="/".join)
def test_each_edge_value_alone_is_judged_as_jsonschema_judges_it(path: tuple[str, ...]) -> None:
    assert len(PATHS) > 30
    for value in EDGES:
        raw = copy.deepcopy(BASE)
        holder = raw
        for name in path[:-1]:
            holder = holder.setdefault(name, {})
        holder[path[-1]] = value
        _agree(raw)


# Values of every JSON type, with the edges the keywords turn on: bool against integer, 1.0 as an
# integer, NaN and infinities against the bounds, 0 against exclusiveMinimum, the empty string.
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 0.0, 1.0, -0.0, 0.5, 2.0, math.nan, math.inf, -math.inf, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "full_attention", "sliding_attention", "silu", "qwen3", "x"]),
    st.text(max_size=4),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8,
)


@st.composite
def _configs(draw: st.DrawFn) -> dict[str, Any]:
    raw = copy.deepcopy(draw(st.sampled_from([BASE, *(d for _, d in OBJECTS if "dflash_config" in d)])))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        holder = raw
        if isinstance(raw.get("dflash_config"), dict) and draw(st.booleans()):
            holder = raw["dflash_config"]
        keys = [*sorted(holder), "conv_kernel_size", "selector_top_k", "layer_types", "head_dim"]
        key = draw(st.sampled_from(keys))
        if key in holder and draw(st.integers(0, 4)) == 0:
            del holder[key]
        elif isinstance(holder.get(key), list) and holder[key] and draw(st.booleans()):
            holder[key][draw(st.integers(0, len(holder[key]) - 1))] = draw(_json)  # one element
        else:
            holder[key] = draw(_json)
    return raw


@examples(400)
@given(_configs())
def test_generated_configs_are_judged_as_jsonschema_judges_them(raw: dict[str, Any]) -> None:
    _agree(raw)


@pytest.mark.slow
@examples(5000)
@given(_configs())
def test_many_generated_configs_are_judged_as_jsonschema_judges_them(raw: dict[str, Any]) -> None:
    _agree(raw)


def test_the_objects_cover_the_fixtures() -> None:
    assert len(OBJECTS) >= len(list(FIXTURES.rglob("config.json")))
    assert all((FIXTURES / name).is_file() for name, _ in OBJECTS)
    assert Path(FIXTURES / "upstream/z-lab__Qwen3.8-27B-DFlash2/config.json").is_file()

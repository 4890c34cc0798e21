"""construct(cls, raw) reads every config exactly as cls.from_dict(raw): the same values (the whole
to_dict()), the same errors (type and message), the same warnings; and the same view for dflash-cfg."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, REAL_DATA, ROOT, examples
from hypothesis import assume, given
from hypothesis import strategies as st

from dflash_cfg.jsondoc.document import parse
from dflash_cfg.sources import construct as construct_module
from dflash_cfg.sources import views
from dflash_cfg.sources.construct import construct, recognised

INPUTS = sorted(FIXTURES.rglob("config.json")) + sorted((ROOT / "tests" / "golden" / "inputs").glob("*.json"))


def _objects() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in INPUTS:
        data = parse(path.read_bytes()).data
        if isinstance(data, dict):
            out.append((str(path.relative_to(ROOT)), data))
    return out


OBJECTS = _objects()


def _classes(raw: dict[str, Any]) -> list[type]:
    """The class views uses today, and the one transformers maps the file's model_type to."""
    views._load()
    cls, _ = views.config_class("qwen3")
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    found = [cls]
    model_type = raw.get("model_type")
    if isinstance(model_type, str) and model_type in CONFIG_MAPPING:
        other = CONFIG_MAPPING[model_type]
        if other is not cls:
            found.append(other)
    return found


def _outcome(make: Callable[[type, dict[str, Any]], Any], cls: type, raw: dict[str, Any]) -> tuple[Any, ...]:
    """What one construction shows: its to_dict() or its error, and every warning, as views captures them."""
    with views.captured() as (records, caught):
        try:
            config = make(cls, copy.deepcopy(raw))
        except Exception as exc:  # noqa: BLE001 - any error must be the same error
            result: Any = ("error", type(exc), str(exc))
        else:
            try:
                result = ("values", json.dumps(config.to_dict(), sort_keys=True, default=repr))
            except Exception as exc:  # noqa: BLE001
                result = ("to_dict error", type(exc), str(exc))
    messages = [*records, *(f"{w.category.__name__}: {w.message}" for w in caught)]
    return result, messages


def _from_dict(cls: type, raw: dict[str, Any]) -> Any:
    return cls.from_dict(raw)  # type: ignore[attr-defined]


def _same(raw: dict[str, Any]) -> None:
    for cls in _classes(raw):
        assert _outcome(construct, cls, raw) == _outcome(_from_dict, cls, raw), cls.__name__


def test_the_installed_transformers_is_mirrored() -> None:
    # If this fails after a transformers upgrade, construct() falls back to from_dict (correct, slower):
    # read the new from_dict and repr code, and add its fingerprint to construct.KNOWN once they match.
    _, version = views._load()
    cls, _ = views.config_class("qwen3")
    assert recognised(cls), f"transformers {version}: fingerprint {construct_module.fingerprint(cls)} not in KNOWN"


@pytest.mark.parametrize(("name", "raw"), OBJECTS, ids=[name for name, _ in OBJECTS])
def test_every_fixture_reads_as_from_dict_reads_it(name: str, raw: dict[str, Any]) -> None:
    _same(raw)


@pytest.mark.parametrize(("name", "raw"), OBJECTS, ids=[name for name, _ in OBJECTS])
def test_every_fixture_gives_the_same_view(name: str, raw: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = views.view(raw)
    monkeypatch.setattr(views, "construct", _from_dict)
    assert fast == views.view(raw)


def test_an_unrecognised_from_dict_is_called_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    views._load()
    cls, _ = views.config_class("qwen3")
    calls = []

    class Other(cls):  # type: ignore[misc, valid-type]
        @classmethod
        def from_dict(klass, config_dict: dict[str, Any], **kwargs: Any) -> Any:
            calls.append(config_dict)
            return super().from_dict(config_dict, **kwargs)

    assert not recognised(Other)
    construct(Other, copy.deepcopy(REAL_DATA))
    assert len(calls) == 1


def test_the_repr_is_evaluated_when_it_could_fail() -> None:
    # A quantization_config that is not a dict: the repr calls .to_dict() on it and fails, so from_dict does.
    raw = {**REAL_DATA, "quantization_config": "int4"}
    _same(raw)
    views._load()
    assert _outcome(construct, views.config_class("qwen3")[0], raw)[0][0] == "error"


# --------------------------------------------------------------------------------------------------
# Generated configs: the real drafter with fields replaced, removed or added, by values of any JSON type.

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "full_attention", "sliding_attention", "bfloat16", "float16", "default", "linear", "x.y"]),
    st.text(max_size=8),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12,
)
_EXTRA_KEYS = [
    "dtype",
    "torch_dtype",
    "quantization_config",
    "id2label",
    "label2id",
    "num_labels",
    "rope_theta",
    "rope_scaling",
    "rope_parameters",
    "layer_types",
    "sliding_window",
    "use_sliding_window",
    "max_window_layers",
    "output_attentions",
    "attn_implementation",
    "per_layer_config",
    "transformers_version",
    "architectures",
    "model_type",
]
_keys = st.sampled_from([*sorted(REAL_DATA), *_EXTRA_KEYS])
_layer_types = st.lists(st.sampled_from(["full_attention", "sliding_attention", "linear_attention"]), max_size=8)
_special = st.one_of(
    st.tuples(st.just("layer_types"), _layer_types),
    st.tuples(st.just("num_hidden_layers"), st.integers(min_value=0, max_value=12)),
    st.tuples(
        st.just("rope_parameters"), st.dictionaries(st.sampled_from(["rope_theta", "rope_type", "factor"]), _json)
    ),
    st.tuples(st.just("dtype"), st.one_of(st.sampled_from(["bfloat16", "auto", "float32"]), _json)),
    st.tuples(st.just("id2label"), st.dictionaries(st.sampled_from(["0", "1", "2", "x"]), st.text(max_size=3))),
    st.tuples(st.just("quantization_config"), st.one_of(st.none(), st.dictionaries(st.text(max_size=4), _json))),
)


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    raw = copy.deepcopy(REAL_DATA)
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        change = draw(st.sampled_from(("replace", "remove", "special")))
        if change == "remove" and raw:
            raw.pop(draw(st.sampled_from(sorted(raw))))
        elif change == "special":
            key, value = draw(_special)
            raw[key] = value
        else:
            raw[draw(_keys)] = draw(_json)
    # views never hands the class a depth past MAX_LAYERS (it would build that many layer types: 2**70 is
    # tens of GB), so neither construction is asked to build one here.
    depth = raw.get("num_hidden_layers")
    assume(not (isinstance(depth, int) and not isinstance(depth, bool) and depth > views.MAX_LAYERS))
    return raw


@examples(150)
@given(configs())
def test_generated_configs_read_as_from_dict_reads_them(raw: dict[str, Any]) -> None:
    _same(raw)


@pytest.mark.slow
@examples(2000)
@given(configs())
def test_many_generated_configs_read_as_from_dict_reads_them(raw: dict[str, Any]) -> None:
    _same(raw)


def test_inputs_cover_every_fixture() -> None:
    assert len(OBJECTS) >= len(list(FIXTURES.rglob("config.json")))
    assert all(Path(ROOT / name).is_file() for name, _ in OBJECTS)

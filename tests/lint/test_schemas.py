"""The bundled JSON Schemas (`schemas/*.schema.json`), checked the way DF010 uses them.

The tool validates with `Draft202012Validator` (no format checker) and a `referencing.Registry` holding both
schemas, and reports each error at `error.absolute_path`. So the tests check, on real configs:
real drafters give no error; each planted type/range defect gives exactly one error, at the expected path;
and what the DFlash rules own (ordering, ranges against other fields, presence of DFlash keys) is left alone.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, ROOT
from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012, specification_with

from dflash_cfg.lint.speculators import is_speculators, translate

SCHEMA_DIR = ROOT / "schemas"
UPSTREAM = FIXTURES / "upstream"

V1 = json.loads((SCHEMA_DIR / "dflash.schema.json").read_text(encoding="utf-8"))
V2 = json.loads((SCHEMA_DIR / "dflash2.schema.json").read_text(encoding="utf-8"))
SCHEMAS = {"dflash": V1, "dflash2": V2}
REGISTRY: Registry = Registry().with_resources(
    (schema["$id"], Resource.from_contents(schema)) for schema in SCHEMAS.values()
)
VALIDATORS = {kind: Draft202012Validator(schema, registry=REGISTRY) for kind, schema in SCHEMAS.items()}

# The layer shapes Qwen3Config would silently default (qwen3config-behaviour.md §1.7).
SHAPE_FIELDS = {
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
}
# Presence of these is reported by rules (DF101, DF102, DF111, DF121, DF122, DF206), never by the schema.
RULE_OWNED = {
    "dflash_config",
    "target_layer_ids",
    "mask_token_id",
    "block_size",
    "num_target_layers",
    "layer_types",
}

# z-lab/Qwen3.8-27B-DFlash2 (mirrored as incoai/Qwen3.8-27B-DFlash2), byte-verified (PROVENANCE.md level A);
# values agree with the published values.
QWEN38_DFLASH2: dict[str, Any] = json.loads(
    (UPSTREAM / "z-lab__Qwen3.8-27B-DFlash2" / "config.json").read_text(encoding="utf-8")
)

DELETE = object()


def drafter_files() -> list[Path]:
    """Every drafter config in fixtures/upstream, at any depth (MiMo's sits in dflash/)."""
    return sorted(UPSTREAM.rglob("config*.json"))


def _file_id(path: Path) -> str:
    return path.relative_to(UPSTREAM).as_posix()


def _is_v1(path: Path) -> bool:
    return kind_of(json.loads(path.read_text(encoding="utf-8"))) == "dflash"


def kind_of(doc: dict[str, Any]) -> str:
    # The partial Qwen3.6-27B copy has no `architectures`; the spec (§6) lists it as DFlashDraftModel.
    return "dflash2" if "DFlash2DraftModel" in doc.get("architectures", []) else "dflash"


def real_errors(kind: str, path: Path) -> list[tuple[list[Any], str, str]]:
    """Schema errors of a published file as engines read it (a speculators file through vLLM's translation);
    a partial copy's missing keys are unknown rather than absent, so `required` says nothing there."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    if is_speculators(doc):
        doc = translate(doc).data
    found = describe(errors(kind, doc))
    if path.name == "config.partial.json":
        found = [e for e in found if e[1] != "required"]
    return found


def errors(kind: str, doc: Any) -> list[ValidationError]:
    return sorted(VALIDATORS[kind].iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])


def describe(errs: list[ValidationError]) -> list[tuple[list[Any], str, str]]:
    return [(list(e.absolute_path), str(e.validator), e.message) for e in errs]


def planted(base: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    *parents, last = path
    node = doc
    for key in parents:
        node = node[key]
    if value is DELETE:
        node.pop(last, None)
    else:
        node[last] = value
    return doc


@pytest.fixture(scope="module")
def qwen35_4b() -> dict[str, Any]:
    """z-lab/Qwen3.5-4B-DFlash, the fullest real v1 file (newer layout: rope_parameters, mixed SWA/full)."""
    path = UPSTREAM / "z-lab__Qwen3.5-4B-DFlash" / "config.json"
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


# ---------------------------------------------------------------------------------------------- the schemas


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_schema_is_valid_draft_2020_12(kind: str) -> None:
    schema = SCHEMAS[kind]
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"https://dflash-cfg.invalid/schemas/{kind}.schema.json"
    assert schema["title"] and schema["description"]
    assert schema["additionalProperties"] is True
    assert specification_with(schema["$schema"]) is DRAFT202012  # what Resource.from_contents picks


def subschemas(schema: Any, where: str = "#", via: str = "") -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Every subschema with its location and the keyword it hangs under ("properties", "items", ...)."""
    if not isinstance(schema, dict):
        return
    yield where, via, schema
    for key, value in schema.items():
        if key in ("properties", "$defs"):
            for name, sub in value.items():
                yield from subschemas(sub, f"{where}/{key}/{name}", key)
        elif key in ("items", "then", "else", "if", "not", "additionalProperties"):
            yield from subschemas(value, f"{where}/{key}", key)
        elif key in ("allOf", "anyOf", "oneOf"):
            for i, sub in enumerate(value):
                yield from subschemas(sub, f"{where}/{key}/{i}", key)


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_every_property_item_and_then_has_a_description(kind: str) -> None:
    # An error's `schema` is the subschema that failed; its description is what a user reads next to it.
    undescribed = [
        where
        for where, via, sub in subschemas(SCHEMAS[kind])
        if via in ("properties", "items", "then")
        and not (isinstance(sub.get("description"), str) and sub["description"].strip())
    ]
    assert undescribed == []


def test_only_the_shape_fields_are_required_and_rule_owned_fields_never_are() -> None:
    required = {
        (kind, where): set(sub["required"])
        for kind, schema in SCHEMAS.items()
        for where, _, sub in subschemas(schema)
        if "required" in sub
    }
    assert required == {("dflash", "#"): SHAPE_FIELDS}
    assert not SHAPE_FIELDS & RULE_OWNED


def test_dflash2_reuses_the_v1_schema_by_id() -> None:
    assert {"$ref": V1["$id"]} in V2["allOf"]
    # No second definition of a v1 field: v2 only adds guards to the four DFlash2 keys.
    assert set(V2["properties"]) == {"dflash_config"}
    assert set(V2["properties"]["dflash_config"]["properties"]) == {
        "conv_kernel_size",
        "conv_group_size",
        "selector_rank",
        "selector_top_k",
    }
    for name, sub in V2["properties"]["dflash_config"]["properties"].items():
        assert "type" not in sub, name
        assert name in V1["properties"]["dflash_config"]["properties"]
    assert "is_causal" in V1["properties"]


def test_the_registry_resolves_the_v1_schema_from_the_v2_one() -> None:
    resolved = REGISTRY.resolver().lookup(V1["$id"]).contents
    assert resolved is V1
    # A v1 field violated in a DFlash2 file is found through the $ref, once.
    errs = errors("dflash2", planted(QWEN38_DFLASH2, ("head_dim",), "128"))
    assert describe(errs) == [(["head_dim"], "type", "'128' is not of type 'integer'")]


# ---------------------------------------------------------------------------------------------- real files


def test_the_upstream_folder_holds_the_known_drafters() -> None:
    names = {p.relative_to(UPSTREAM).parts[0] for p in drafter_files()}
    assert {
        "z-lab__Qwen3-4B-DFlash-b16",
        "z-lab__Qwen3.5-4B-DFlash",
        "z-lab__Qwen3.6-27B-DFlash",
        "z-lab__Qwen3.8-27B-DFlash2",
        "z-lab__Muse-Glimmer-30B-DFlash2",
        "XiaomiMiMo__MiMo-V2.5-Pro-FP4-DFlash",
        "z-lab__gemma-4-26B-A4B-it-DFlash",
        "z-lab__gemma-4-31B-it-DFlash",
    } <= names
    assert UPSTREAM / "z-lab__Qwen3.6-27B-DFlash" / "config.partial.json" in drafter_files()
    assert UPSTREAM / "RedHatAI__DeepSeek-V4-Flash-speculator.dflash" / "config.json" in drafter_files()


@pytest.mark.parametrize("path", drafter_files(), ids=_file_id)
def test_real_drafter_validates_clean(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    kind = kind_of(doc)
    if path.name != "config.partial.json":
        # A speculators file keeps its decoder's shape in transformer_layer_config (vLLM's translation lifts it).
        shape = doc["transformer_layer_config"] if is_speculators(doc) else doc
        assert SHAPE_FIELDS <= shape.keys(), "every real drafter carries the required shape fields"
    assert real_errors(kind, path) == []


def test_qwen38_dflash2_validates_clean() -> None:
    assert kind_of(QWEN38_DFLASH2) == "dflash2"
    assert describe(errors("dflash2", QWEN38_DFLASH2)) == []
    # The v2 additions only tighten, so a DFlash2 file is also a valid DFlash file.
    assert describe(errors("dflash", QWEN38_DFLASH2)) == []


@pytest.mark.parametrize("path", [p for p in drafter_files() if _is_v1(p)], ids=_file_id)
def test_v1_drafters_also_pass_the_v2_schema(path: Path) -> None:
    # They carry no conv/selector keys, so nothing v2-specific applies (missing keys are DF141's job).
    assert real_errors("dflash2", path) == []


# ---------------------------------------------------------------------------------------------- planted defects

V1_DEFECTS = [
    # (path in the file, planted value, expected absolute_path, expected validator)
    (("sliding_window",), "2048", ["sliding_window"], "type"),
    (("sliding_window",), 0, ["sliding_window"], "minimum"),
    (("dflash_config", "mask_token_id"), True, ["dflash_config", "mask_token_id"], "type"),
    (("dflash_config", "mask_token_id"), "248077", ["dflash_config", "mask_token_id"], "type"),
    (("dflash_config", "target_layer_ids"), [1, "16"], ["dflash_config", "target_layer_ids", 1], "type"),
    (("dflash_config", "target_layer_ids"), "1,5,9", ["dflash_config", "target_layer_ids"], "type"),
    (("dflash_config", "block_size"), 16.5, ["dflash_config", "block_size"], "type"),
    (("dflash_config", "num_target_layers"), "32", ["dflash_config", "num_target_layers"], "type"),
    (("dflash_config", "swa_window_size"), 0, ["dflash_config", "swa_window_size"], "minimum"),
    (("dflash_config", "use_swa"), "yes", ["dflash_config", "use_swa"], "type"),
    (("dflash_config", "causal"), 0, ["dflash_config", "causal"], "type"),
    (("dflash_config", "output_multiplier"), 0, ["dflash_config", "output_multiplier"], "exclusiveMinimum"),
    (("dflash_config", "mask_token"), "", ["dflash_config", "mask_token"], "minLength"),
    (("dflash_config", "conv_kernel_size"), -1, ["dflash_config", "conv_kernel_size"], "minimum"),
    (("dflash_config",), [], ["dflash_config"], "type"),
    (("rope_parameters", "rope_theta"), -1, ["rope_parameters", "rope_theta"], "exclusiveMinimum"),
    (("rope_parameters", "rope_type"), 1, ["rope_parameters", "rope_type"], "type"),
    (("rope_parameters",), "default", ["rope_parameters"], "type"),
    (("rope_theta",), 0, ["rope_theta"], "exclusiveMinimum"),
    (("rope_theta",), "1e7", ["rope_theta"], "type"),
    (("rope_scaling",), "yarn", ["rope_scaling"], "type"),
    (("hidden_size",), 0, ["hidden_size"], "minimum"),
    (("intermediate_size",), 9216.5, ["intermediate_size"], "type"),
    (("vocab_size",), "248320", ["vocab_size"], "type"),
    (("num_key_value_heads",), 0, ["num_key_value_heads"], "minimum"),
    (("head_dim",), None, ["head_dim"], "type"),
    (("rms_norm_eps",), 0, ["rms_norm_eps"], "exclusiveMinimum"),
    (("max_position_embeddings",), 0, ["max_position_embeddings"], "minimum"),
    (("max_window_layers",), -1, ["max_window_layers"], "minimum"),
    (("use_sliding_window",), "true", ["use_sliding_window"], "type"),
    (("tie_word_embeddings",), 1, ["tie_word_embeddings"], "type"),
    (("attention_bias",), None, ["attention_bias"], "type"),
    (("is_causal",), "false", ["is_causal"], "type"),
    (("layer_types",), "sliding_attention", ["layer_types"], "type"),
    (("layer_types",), ["sliding_attention", None], ["layer_types", 1], "type"),
    (("architectures",), "DFlashDraftModel", ["architectures"], "type"),
    (("model_type",), None, ["model_type"], "type"),
    (("dtype",), None, ["dtype"], "type"),
    (("block_size",), "16", ["block_size"], "type"),
    (("num_target_layers",), 0, ["num_target_layers"], "minimum"),
    (("mask_token_id",), False, ["mask_token_id"], "type"),
    (("eagle_aux_hidden_state_layer_ids",), [2, 6.5], ["eagle_aux_hidden_state_layer_ids", 1], "type"),
    (("eos_token_id",), ["248044"], ["eos_token_id", 0], "type"),
    (("hidden_act",), ["silu"], ["hidden_act"], "type"),
] + [((name,), DELETE, [], "required") for name in sorted(SHAPE_FIELDS)]


def _id(case: tuple[Any, ...]) -> str:
    path, value = case[0], case[1]
    return "/".join(path) + ("-missing" if value is DELETE else f"={value!r}")


def assert_one_error(errs: list[ValidationError], where: list[Any], validator: str) -> None:
    assert [(list(e.absolute_path), e.validator) for e in errs] == [(where, validator)], describe(errs)
    (err,) = errs
    # The failing subschema carries a description (for `required` that is the schema's own).
    assert isinstance(err.schema, dict) and err.schema.get("description"), err.schema


@pytest.mark.parametrize("case", V1_DEFECTS, ids=[_id(c) for c in V1_DEFECTS])
def test_planted_defect_is_reported_once_at_its_path(case: tuple[Any, ...], qwen35_4b: dict[str, Any]) -> None:
    path, value, where, validator = case
    if value is DELETE:
        assert path[0] in qwen35_4b
    errs = errors("dflash", planted(qwen35_4b, path, value))
    assert_one_error(errs, where, validator)
    if validator == "required":
        assert errs[0].message == f"{path[-1]!r} is a required property"


def test_the_required_error_names_every_missing_shape_field(qwen35_4b: dict[str, Any]) -> None:
    doc = {k: v for k, v in qwen35_4b.items() if k not in SHAPE_FIELDS}
    errs = errors("dflash", doc)
    assert {(tuple(e.absolute_path), e.validator) for e in errs} == {((), "required")}
    assert sorted(e.message for e in errs) == sorted(f"{name!r} is a required property" for name in SHAPE_FIELDS)


V2_DEFECTS = [
    # v1 fields, reached through the $ref.
    (("is_causal",), "false", ["is_causal"], "type"),
    (("sliding_window",), "2048", ["sliding_window"], "type"),
    (("dflash_config", "target_layer_ids"), [5, "19"], ["dflash_config", "target_layer_ids", 1], "type"),
    (("dflash_config", "mask_token_id"), True, ["dflash_config", "mask_token_id"], "type"),
    (("rope_parameters", "rope_theta"), -1, ["rope_parameters", "rope_theta"], "exclusiveMinimum"),
    (("hidden_size",), DELETE, [], "required"),
    # DFlash2 keys: wrong type or negative is reported by the v1 definition only; 0 by the v2 guard only.
    (("dflash_config", "conv_kernel_size"), 0, ["dflash_config", "conv_kernel_size"], "minimum"),
    (("dflash_config", "conv_group_size"), 0, ["dflash_config", "conv_group_size"], "minimum"),
    (("dflash_config", "selector_rank"), 0, ["dflash_config", "selector_rank"], "minimum"),
    (("dflash_config", "selector_top_k"), 0, ["dflash_config", "selector_top_k"], "minimum"),
    (("dflash_config", "conv_group_size"), -16, ["dflash_config", "conv_group_size"], "minimum"),
    (("dflash_config", "selector_rank"), "256", ["dflash_config", "selector_rank"], "type"),
    (("dflash_config", "selector_top_k"), 0.5, ["dflash_config", "selector_top_k"], "type"),
    (("dflash_config", "conv_kernel_size"), True, ["dflash_config", "conv_kernel_size"], "type"),
    (("dflash_config",), "conv", ["dflash_config"], "type"),
]


@pytest.mark.parametrize("case", V2_DEFECTS, ids=[_id(c) for c in V2_DEFECTS])
def test_planted_dflash2_defect_is_reported_once_at_its_path(case: tuple[Any, ...]) -> None:
    path, value, where, validator = case
    assert_one_error(errors("dflash2", planted(QWEN38_DFLASH2, path, value)), where, validator)


def test_a_zero_dflash2_size_is_only_a_dflash2_error() -> None:
    # 0 means "module off" (SGLang default) and is fine for a DFlashDraftModel.
    doc = planted(QWEN38_DFLASH2, ("dflash_config", "conv_kernel_size"), 0)
    assert describe(errors("dflash", doc)) == []
    assert errors("dflash2", doc)[0].message == "0 is less than the minimum of 1"


# ---------------------------------------------------------------------------------------------- left to rules

LEFT_TO_RULES = (
    [
        # Semantics that DF1xx/DF2xx rules report: the schema must stay silent so nothing is reported twice.
        (
            "taps out of order, duplicated, negative, past the target",
            ("dflash_config", "target_layer_ids"),
            [33, 1, 1, -1, 99],
        ),
        ("no taps", ("dflash_config", "target_layer_ids"), []),
        ("mask id past vocab", ("dflash_config", "mask_token_id"), 10**9),
        ("negative mask id", ("dflash_config", "mask_token_id"), -1),
        ("block_size too small", ("dflash_config", "block_size"), 1),
        ("block_size zero", ("dflash_config", "block_size"), 0),
        ("top-level block_size disagrees", ("block_size",), 8),
        ("layer_types too short", ("layer_types",), ["sliding_attention"]),
        ("unknown layer type", ("layer_types",), ["bogus"] * 6),
        ("sliding layers without window", ("sliding_window",), None),
        ("sliding layers while use_sliding_window false", ("use_sliding_window",), False),
        ("wrong architectures value", ("architectures",), ["Qwen3DFlashDraftModel"]),
        ("empty architectures", ("architectures",), []),
        ("wrong model_type value", ("model_type",), "llama"),
        ("hidden_act not silu", ("hidden_act",), "gelu"),
        ("dtype not bfloat16", ("dtype",), "float16"),
        ("num_key_value_heads null", ("num_key_value_heads",), None),
        ("integral float", ("hidden_size",), 2560.0),
        ("rope_parameters null", ("rope_parameters",), None),
        ("eos list", ("eos_token_id",), [248044, 248046]),
        ("unknown top-level key", ("use_tree_pos_emb",), True),
        ("unknown dflash_config key", ("dflash_config", "backbone_rotary_base"), 5000000),
    ]
    + [(f"{name} absent", (name,), DELETE) for name in sorted(RULE_OWNED)]
    + [
        (f"dflash_config.{name} absent", ("dflash_config", name), DELETE)
        for name in ("target_layer_ids", "mask_token_id", "block_size")
    ]
)


@pytest.mark.parametrize("case", LEFT_TO_RULES, ids=[c[0] for c in LEFT_TO_RULES])
def test_semantic_problem_is_left_to_the_rules(case: tuple[Any, ...], qwen35_4b: dict[str, Any]) -> None:
    _, path, value = case
    doc = planted(qwen35_4b, path, value)
    assert describe(errors("dflash", doc)) == []
    assert describe(errors("dflash2", doc)) == []


@pytest.mark.parametrize("missing", ["conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k"])
def test_incomplete_dflash2_keys_are_left_to_df141(missing: str) -> None:
    assert describe(errors("dflash2", planted(QWEN38_DFLASH2, ("dflash_config", missing), DELETE))) == []


def test_dflash2_without_is_causal_is_left_to_df207() -> None:
    assert describe(errors("dflash2", planted(QWEN38_DFLASH2, ("is_causal",), DELETE))) == []

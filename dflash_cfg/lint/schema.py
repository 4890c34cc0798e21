"""JSON Schema validation of a drafter config against the bundled schemas (Draft 2020-12).

`jsonschema` gives the errors, but costs ~40 ms to import and ~0.3 ms per file (a third of the cost of
linting a config in a big tree). Almost every file is valid, so each schema is first compiled here into a
plain predicate for the keywords the bundled schemas use; a file it accepts has no errors, and only a file
it refuses goes through jsonschema for the messages. A schema using any other keyword compiles to nothing
and every file goes through jsonschema, so a schema edit can make validation slower but never laxer.
tests/test_schemas.py proves the predicate agrees with jsonschema's `is_valid`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from dflash_cfg.jsondoc.pointer import pointer

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

SCHEMA_FILES = {"dflash": "dflash.schema.json", "dflash2": "dflash2.schema.json"}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(schema_dir().joinpath(name).read_text(encoding="utf-8"))
    return data


def schema_dir() -> Traversable:
    """Where the bundled schemas are, however the package was imported. Installed (a wheel, an editable
    install), schemas/ is the package dflash_cfg.schemas (pyproject's package-dir). Imported from a source
    tree instead (`python -m dflash_cfg` or a script run from the repository root puts the checkout first on
    sys.path, ahead of any install), dflash_cfg has no such subpackage and the schemas are the tree's own
    top-level schemas/, beside the package."""
    try:
        return resources.files("dflash_cfg.schemas")
    except ModuleNotFoundError:
        return resources.files("dflash_cfg") / ".." / "schemas"


@cache
def _schemas() -> dict[str, dict[str, Any]]:
    return {k: load(v) for k, v in SCHEMA_FILES.items()}


@cache
def _validator(kind: str) -> Any:
    # Imported here: jsonschema costs ~40 ms to import and only an invalid file needs it.
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    schemas = _schemas()
    registry: Registry[Any] = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    return Draft202012Validator(schemas[kind], registry=registry)


def validate(data: dict[str, Any], kind: str) -> list[tuple[str, str]]:
    """(JSON pointer, message) per violation, in document order."""
    kind = "dflash2" if kind == "dflash2" else "dflash"
    accepts = predicate(kind)
    if accepts is not None and accepts(data):
        return []
    out = []
    for err in _validator(kind).iter_errors(data):
        path = list(err.absolute_path)
        message = err.message
        if err.validator == "required":
            # Point at where the missing member belongs, not at its parent.
            missing = next((p for p in err.validator_value if message.startswith(repr(p))), None)
            if missing is not None:
                path.append(missing)
                message = f"{missing} is missing; the config class engines load would silently use its default"
        description = err.schema.get("description") if isinstance(err.schema, dict) else None
        if description and err.validator != "required":
            message = f"{message} ({description})"
        out.append((pointer(*path), message))
    return sorted(out)


# ------------------------------------------------------------------------------------------------------
# The compiled predicate

Accepts = Callable[[Any], bool]

# Keywords that never make an instance invalid.
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "default", "examples"})


class _Unsupported(Exception):
    """A keyword (or form of one) the predicate does not implement: use jsonschema for every file."""


@cache
def predicate(kind: str) -> Accepts | None:
    """`kind`'s bundled schema as a predicate (see `compiled`)."""
    schemas = _schemas()
    return compiled(schemas[kind], list(schemas.values()))


def compiled(schema: Any, registry: list[dict[str, Any]]) -> Accepts | None:
    """`schema` as a predicate equal to jsonschema's Draft 2020-12 `is_valid`, with `$ref`s resolved
    against the `$id`s of `registry`; None if it uses a keyword (or form) the compiler does not implement."""
    by_id = {s["$id"]: s for s in registry if isinstance(s, dict) and isinstance(s.get("$id"), str)}
    try:
        return _compile(schema, by_id, frozenset())
    except _Unsupported:
        return None


def _is_type(name: str) -> Accepts:
    # As Draft 2020-12's type checker: bool is no number, and a float with an integral value is an integer.
    if name == "integer":
        return lambda x: (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer())
    if name == "number":
        return _is_number
    simple = {"string": str, "boolean": bool, "array": list, "object": dict, "null": type(None)}
    if name not in simple:
        raise _Unsupported(f"type {name!r}")
    cls = simple[name]
    return lambda x: isinstance(x, cls)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _compile(schema: Any, by_id: dict[str, Any], within: frozenset[int]) -> Accepts:
    """`within`: the schemas being compiled around this one, to refuse a $ref cycle."""
    if schema is True:
        return lambda x: True
    if schema is False:
        return lambda x: False
    if not isinstance(schema, dict):
        raise _Unsupported("a schema that is not an object or a boolean")
    if id(schema) in within:
        raise _Unsupported("recursive $ref")
    within = within | {id(schema)}
    checks: list[Accepts] = []
    for key, value in schema.items():
        if key in _ANNOTATIONS or key in ("then", "else"):  # then/else belong to `if`
            continue
        checks.append(_keyword(key, value, schema, by_id, within))
    if not checks:
        return lambda x: True
    if len(checks) == 1:
        return checks[0]
    return lambda x: all(check(x) for check in checks)


def _keyword(key: str, value: Any, schema: dict[str, Any], by_id: dict[str, Any], within: frozenset[int]) -> Accepts:
    def sub(subschema: Any) -> Accepts:
        return _compile(subschema, by_id, within)

    if key == "type":
        names = value if isinstance(value, list) else [value]
        tests = [_is_type(n) for n in names]
        return lambda x: any(t(x) for t in tests)
    if key == "properties":
        props = {name: sub(s) for name, s in value.items()}
        return lambda x: not isinstance(x, dict) or all(check(x[k]) for k, check in props.items() if k in x)
    if key == "additionalProperties":
        if "patternProperties" in schema:
            raise _Unsupported("patternProperties")
        known = frozenset(schema.get("properties", {}))
        extra = sub(value)
        return lambda x: not isinstance(x, dict) or all(extra(v) for k, v in x.items() if k not in known)
    if key == "required":
        needed = tuple(value)
        return lambda x: not isinstance(x, dict) or all(n in x for n in needed)
    if key == "items":
        if "prefixItems" in schema:
            raise _Unsupported("prefixItems")
        each = sub(value)
        return lambda x: not isinstance(x, list) or all(each(v) for v in x)
    # The comparisons are jsonschema's own (`instance < minimum` fails), so NaN passes as it does there.
    if key == "minimum":
        return lambda x: not _is_number(x) or not x < value
    if key == "maximum":
        return lambda x: not _is_number(x) or not x > value
    if key == "exclusiveMinimum":
        return lambda x: not _is_number(x) or not x <= value
    if key == "exclusiveMaximum":
        return lambda x: not _is_number(x) or not x >= value
    if key == "minLength":
        return lambda x: not isinstance(x, str) or not len(x) < value
    if key == "allOf":
        parts = [sub(s) for s in value]
        return lambda x: all(p(x) for p in parts)
    if key == "$ref":
        if value not in by_id:  # a fragment, a relative or a foreign reference
            raise _Unsupported(f"$ref {value!r}")
        return sub(by_id[value])
    if key == "if":
        test, then, otherwise = sub(value), sub(schema.get("then", True)), sub(schema.get("else", True))
        return lambda x: then(x) if test(x) else otherwise(x)
    raise _Unsupported(key)

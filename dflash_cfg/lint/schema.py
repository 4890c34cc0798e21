"""JSON Schema validation of a drafter config against the bundled schemas (Draft 2020-12)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from dflash_cfg.jsondoc.pointer import pointer

SCHEMA_FILES = {"dflash": "dflash.schema.json", "dflash2": "dflash2.schema.json"}


def load(name: str) -> dict[str, Any]:
    try:
        # Installed: schemas/ is packaged as dflash_cfg.schemas (pyproject's package-dir).
        text = resources.files("dflash_cfg.schemas").joinpath(name).read_text(encoding="utf-8")
    except ModuleNotFoundError:
        # Imported from a source checkout (e.g. run from the repository root): the top-level schemas/.
        text = (Path(__file__).resolve().parent.parent / "schemas" / name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def _validator(kind: str) -> Any:
    # Imported here: jsonschema costs ~50 ms to import and only linting needs it.
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    schemas = {k: load(v) for k, v in SCHEMA_FILES.items()}
    registry: Registry[Any] = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    return Draft202012Validator(schemas[kind], registry=registry)


def validate(data: dict[str, Any], kind: str) -> list[tuple[str, str]]:
    """(JSON pointer, message) per violation, in document order."""
    out = []
    for err in _validator("dflash2" if kind == "dflash2" else "dflash").iter_errors(data):
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

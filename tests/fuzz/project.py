"""Project configs and result-cache entries, pure: random `[tool.dflash-cfg]` tables through the parser and
the per-file globs, the same tables written as TOML text (then mangled: truncated, duplicated, not UTF-8,
numbers past the digit limit, nested too deeply) through the file reader, and cache entries through the
entry check. A table either parses or is refused with a UsageError naming the file; a cache entry is a
hit or a miss; nothing else may come out."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

from dflash_cfg.errors import UsageError
from dflash_cfg.model import FIELDS
from dflash_cfg.sources import cache, project

ATOMS: list[Any] = [
    None,
    True,
    0,
    -1,
    10**30,
    1.5,
    float("nan"),
    "",
    "x",
    "a/b",
    "s3://",
    "hf://a/b",
    "[" * 50,
    "**/config.json",
    "models/",
    [],
    {},
    [[]],
    [None],
    {"a": []},
]
KEYS = ["select", "ignore", "fail-on", "per-file-ignores", "models", "path", "upstream", "revision", "target"]
MORE_KEYS = ["min-acceptance-length", "engine-check", "served-name", "error", "warning", "DF105"]
# TOML-only values (dates and times), written as raw tokens: json has none of them.
RAW_TOML = ["1979-05-27", "07:32:00", "1979-05-27T07:32:00Z", "1979-05-27 07:32:00.999999", "0x7f", "0o17", "0b101"]
# Text damage after writing: (name, function of the text and a Random).
HOSTILE_TOKENS = [
    "1" + "0" * 5000,  # past Python's 4300-digit limit
    "-" + "9" * 4400,
    "0x" + "f" * 5000,  # no digit limit for powers of two
    "[" * 5000 + "]" * 5000,
    "{a=" * 1000 + "1" + "}" * 1000,
    '"\\ud800"',
    '"\\U0010ffff"',
    '"\\U00110000"',
    '"""' + "x" * 2000,
    "nan",
    "-inf",
    "1e400",
    "9223372036854775808",
    "true",
    "'''a'''",
]


def value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.5:
        return (
            rng.choice(ATOMS)
            if rng.random() < 0.7
            else "".join(rng.choice("[]*?!/.-az") for _ in range(rng.randint(0, 30)))
        )
    if roll < 0.75:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {
        rng.choice(KEYS) if rng.random() < 0.7 else str(value(rng, 4)): value(rng, depth + 1)
        for _ in range(rng.randint(0, 4))
    }


def project_table(rng: random.Random) -> dict[str, Any]:
    table: dict[str, Any] = {}
    top = ["select", "ignore", "fail-on", "per-file-ignores", "models", "min-acceptance-length", "engine-check"]
    for key in rng.sample(top, rng.randint(0, len(top))):
        if key == "models" and rng.random() < 0.7:
            table[key] = [
                {k: value(rng, 3) for k in rng.sample([*KEYS[5:], *MORE_KEYS[:3]], rng.randint(0, 5))}
                for _ in range(rng.randint(0, 3))
            ]
        elif key == "per-file-ignores" and rng.random() < 0.7:
            table[key] = {str(value(rng, 4)): [rng.choice(["DF105", "DF2", ""])] for _ in range(rng.randint(0, 3))}
        elif key == "min-acceptance-length" and rng.random() < 0.5:
            table[key] = rng.choice([1, 1.5, 0.5, 10**6, math.inf, -1, "2", True])
        else:
            table[key] = value(rng)
    return table


def cache_entry(rng: random.Random, key: dict[str, Any]) -> Any:
    values = {name: value(rng, 2) if rng.random() < 0.3 else 4 for name in FIELDS}
    eff = {
        "transformers_version": key["transformers"],
        "values": values,
        "error": None,
        "warnings": [],
        "config_class": "Qwen3Config",
    }
    entry: dict[str, Any] = {**key, "effective": eff}
    if rng.random() < 0.2:
        entry = value(rng)
    return entry


# --- TOML text -------------------------------------------------------------------------------------


def toml_value(rng: random.Random, v: Any) -> str:
    """A TOML token for a value (inline tables for mappings); None, which TOML lacks, becomes a date."""
    if v is None:
        return rng.choice(RAW_TOML)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v) if rng.random() < 0.8 else "'" + v.replace("'", "") + "'"
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(rng, x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(rng, x)}" for k, x in v.items()) + "}"


def toml_text(rng: random.Random, table: dict[str, Any], prefix: str) -> str:
    """The table as TOML text under `prefix` ("" or "tool.dflash-cfg"), models as [[...models]] tables."""
    head = f"[{prefix}]\n" if prefix else ""
    lines = [head] if head else []
    models = table.get("models")
    for key, v in table.items():
        if key == "models" and isinstance(models, list) and models and all(isinstance(m, dict) for m in models):
            continue
        lines.append(f"{json.dumps(key) if rng.random() < 0.2 else key} = {toml_value(rng, v)}\n")
    if isinstance(models, list) and models and all(isinstance(m, dict) for m in models):
        for entry in models:
            lines.append(f"[[{prefix + '.' if prefix else ''}models]]\n")
            lines += [f"{json.dumps(k)} = {toml_value(rng, x)}\n" for k, x in entry.items()]
    if prefix and rng.random() < 0.2:
        lines.insert(0, '[project]\nname = "x"\n')
    return "".join(lines)


def mangle_toml(rng: random.Random, text: str) -> bytes:
    how = rng.choice(["none"] * 5 + ["truncate", "token", "dup-line", "bom", "bad-utf8", "nul", "crlf", "utf16"])
    raw = text.encode("utf-8", "surrogatepass")
    if how == "truncate":
        return raw[: rng.randint(0, max(0, len(raw) - 1))]
    if how == "token":
        at = rng.randint(0, len(text))
        return (text[:at] + rng.choice(HOSTILE_TOKENS) + text[at:]).encode("utf-8", "surrogatepass")
    if how == "dup-line" and text.strip():
        lines = text.splitlines(keepends=True)
        line = rng.choice(lines)
        return (text + line).encode("utf-8", "surrogatepass")
    if how == "bom":
        return b"\xef\xbb\xbf" + raw
    if how == "bad-utf8":
        at = rng.randint(0, len(raw))
        return raw[:at] + rng.choice([b"\xff", b"\xc0\x80", b"\xed\xa0\x80"]) + raw[at:]
    if how == "nul":
        return raw.replace(b"=", b"=\x00", 1)
    if how == "crlf":
        return raw.replace(b"\n", b"\r\n")
    if how == "utf16":
        return text.encode("utf-16", "surrogatepass")
    return raw


def toml_file(rng: random.Random, folder: Path) -> Path:
    """A project config file in `folder` (dflash-cfg.toml or pyproject.toml), random and maybe damaged."""
    pyproject = rng.random() < 0.3
    table = project_table(rng)
    if rng.random() < 0.1:
        table[rng.choice(["extra", "Select", "models "])] = value(rng)
    text = toml_text(rng, table, "tool.dflash-cfg" if pyproject else "")
    path = folder / (project.PYPROJECT if pyproject else project.CONFIG_NAME)
    path.write_bytes(mangle_toml(rng, text))
    return path


# --- the invariants ---------------------------------------------------------------------------------

PROBE = Path("/campaign/models/x/config.json")


def table_defect(table: dict[str, Any], where: Path) -> str | None:
    """None when the table parses (and its globs and models answer) or is refused naming the file."""
    try:
        config = project.parse(table, where)
        config.ignored_for(where.parent / "models" / "x" / "config.json")
        config.model_for(where.parent / "models" / "x" / "config.json")
    except UsageError as exc:
        if str(where) not in str(exc):
            return f"refusal without the file: {exc}"
    except Exception as exc:  # noqa: BLE001 - the finding
        return f"{type(exc).__name__}: {exc} <- {table!r:.300}"
    return None


def file_defect(path: Path) -> str | None:
    """None when the file loads (and answers) or is refused with a one-line UsageError naming it."""
    try:
        config = project.load(path)
        config.ignored_for(path.parent / "models" / "x" / "config.json")
        config.model_for(path.parent / "models" / "x" / "config.json")
    except UsageError as exc:
        message = str(exc)
        if str(path) not in message and "project config" not in message:
            return f"refusal without the file: {message}"
        if "\n" in message:
            return f"refusal on several lines: {message[:300]!r}"
    except Exception as exc:  # noqa: BLE001 - the finding
        return f"{type(exc).__name__}: {str(exc)[:200]} <- {path.read_bytes()[:300]!r}"
    return None


def cache_defect(entry: Any, key: dict[str, Any]) -> str | None:
    try:
        text = json.dumps(entry, allow_nan=True)
        cache._valid(json.loads(text), key)
    except (ValueError, RecursionError):
        pass
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"
    return None


CACHE_KEY = {
    "format": cache.FORMAT,
    "sha256": "0" * 64,
    "config_class": "q",
    "transformers": "5.24.0",
    "dflash_cfg": "0.1.0",
}

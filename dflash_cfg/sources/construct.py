"""An engine config class built from a dict as its `from_dict` builds it, without the log line's repr.

transformers' `PreTrainedConfig.from_dict(d)` (no keyword arguments, as `views` calls it) is
``config = cls(**d)`` followed by ``logger.info(f"Model config {config}")``. The f-string is evaluated
whatever the log level, and `repr(config)` serialises the whole config against a freshly built default
`PreTrainedConfig()`: about half of what reading one drafter file through the class costs.

`construct(cls, raw)` makes the same call, ``cls(**raw)``, so the arguments, the class's validation and
the warnings it logs are the class's own. It leaves the repr out only when that cannot be told apart:
- the code involved is code this module was written against: the source of `from_dict` and of every
  method the repr runs, as the class resolves them, hashes to a known value (`KNOWN`); for anything
  else (another transformers version, a class that overrides one of them) it calls `from_dict` itself;
- the built config holds nothing the repr could stumble on (`_inert`): only JSON-like values, dict keys
  json.dumps can sort, dtypes the serialiser reads, no nested or per-layer config objects, no
  non-dict quantization config. Otherwise it evaluates the repr, exactly as `from_dict` does, so an
  exception or warning the repr raises is the same.

tests/test_construct.py holds every fixture and generated configs to: the same to_dict(), the same
errors (type and message) and the same warnings as `from_dict`.
"""

from __future__ import annotations

import hashlib
import linecache
from typing import Any

# What `from_dict` and the repr run, in this order; the source of each, as the class resolves it, is hashed.
_METHODS = (
    "from_dict",
    "__repr__",
    "to_json_string",
    "to_diff_dict",
    "to_dict",
    "default_config_fields",
    "dict_dtype_to_str",
    "_remove_keys_not_serialized",
    "_encode_special_floats",
    "_update_heterogeneous_to_dict_output",
    "_getattr_without_heterogeneous_validation",
    "is_heterogeneous",
)

# sha256 of the joined sources of _METHODS in transformers versions whose from_dict this module mirrors.
KNOWN = frozenset(
    {
        "3fceda3c14fc1aa9fb23841eba9c0059db05655c8584835ec5cf907c41286d60",  # transformers 5.24.0
    }
)

_MAX_DEPTH = 64  # deeper values are left to the repr itself (it recurses)
_recognised: dict[type, bool] = {}


def construct(cls: type, raw: dict[str, Any]) -> Any:
    """`cls.from_dict(raw)`, without evaluating its log line's repr where that changes nothing."""
    if not recognised(cls):
        return cls.from_dict(raw)  # type: ignore[attr-defined]
    config = cls(**raw)
    if not _inert(config):
        repr(config)  # from_dict's log line: its exceptions and warnings are from_dict's
    return config


def recognised(cls: type) -> bool:
    """Is the code `from_dict` and its repr run for `cls` code this module mirrors?"""
    known = _recognised.get(cls)
    if known is None:
        digest = fingerprint(cls)
        known = _recognised[cls] = digest is not None and digest in KNOWN
    return known


def fingerprint(cls: type) -> str | None:
    """sha256 of the sources of _METHODS as `cls` resolves them; None if one cannot be read."""
    h = hashlib.sha256()
    for name in _METHODS:
        owner = next((k for k in cls.__mro__ if name in k.__dict__), None)
        if owner is None:
            return None
        source = _source(owner.__dict__[name])
        if source is None:
            return None
        h.update(f"{name}\0{owner.__name__}\0{source}\0".encode())
    return h.hexdigest()


def _source(member: Any) -> str | None:
    func = getattr(member, "__func__", None) or getattr(member, "fget", None) or member
    code = getattr(func, "__code__", None)
    if code is None:
        return None
    lines = linecache.getlines(code.co_filename)
    start = code.co_firstlineno - 1  # the first decorator's line
    if not 0 <= start < len(lines):
        return None
    head = start
    while head < len(lines) and not lines[head].lstrip().startswith(("def ", "async def ")):
        head += 1
    if head == len(lines):
        return None
    indent = len(lines[head]) - len(lines[head].lstrip())
    end = head + 1
    while end < len(lines):
        line = lines[end]
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        end += 1
    return "".join(lines[start:end]).rstrip()


def _inert(config: Any) -> bool:
    """Can the repr of `config` neither raise nor warn? Its attributes must be plain JSON-like data."""
    state = config.__dict__
    if "_heterogeneity_spec" in state:
        return False
    quantization = state.get("quantization_config")
    if quantization is not None and not isinstance(quantization, dict):
        return False
    return _plain(state, 0)


def _plain(value: Any, depth: int) -> bool:
    if value is None or type(value) in (str, int, float, bool):
        return True
    if depth > _MAX_DEPTH:
        return False
    if type(value) in (list, tuple):
        return all(_plain(v, depth + 1) for v in value)
    if type(value) is not dict:
        return False
    keys = {type(k) for k in value}
    if not (keys <= {str} or keys <= {int, bool}):  # json.dumps(sort_keys=True) must order them
        return False
    dtype = value.get("dtype")
    if dtype is not None and type(dtype) not in (str, int, bool, dict):
        return False  # dict_dtype_to_str would take it apart as a torch dtype's str()
    return all(_plain(v, depth + 1) for v in value.values())

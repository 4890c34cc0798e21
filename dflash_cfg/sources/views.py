"""The drafter config as engines see it: through the real transformers `Qwen3Config`.

vLLM, SGLang and the reference code all load the drafter's config.json with transformers, which
rewrites some values on the way (a falsy `use_sliding_window` nulls `sliding_window`, absent
`layer_types` are derived, RoPE moves between versions). Rather than re-implementing that logic,
we run the installed transformers and read back what it made: that is the point of this module.

The import costs most of a cold run (~0.8 s), so it happens lazily, once per process.
"""

from __future__ import annotations

import copy
import logging
import os
import sys
import warnings
from importlib import metadata
from typing import Any

from dflash_cfg.model import FIELDS, Effective
from dflash_cfg.sources.construct import construct


def transformers_version() -> str | None:
    """Installed version from package metadata, without importing transformers."""
    try:
        return metadata.version("transformers")
    except metadata.PackageNotFoundError:
        return None


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.getMessage())


_state: dict[str, Any] = {}


def _load() -> tuple[Any, _Capture, str]:
    if "cls" not in _state:
        # The config classes need no torch; importing it would cost seconds and may touch a GPU.
        if "torch" not in sys.modules:
            sys.modules["torch"] = None  # type: ignore[assignment]
        previous = os.environ.get("TRANSFORMERS_NO_ADVISORY_WARNINGS")
        os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"] = "1"  # silences "PyTorch was not found"
        try:
            from transformers.models.qwen3.configuration_qwen3 import Qwen3Config
            from transformers.utils import logging as hf_logging
        finally:
            if previous is None:
                del os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"]
            else:
                os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"] = previous
        hf_logging.disable_default_handler()
        capture = _Capture()
        hf_logging.get_logger().addHandler(capture)
        import transformers

        _state.update(cls=Qwen3Config, capture=capture, version=transformers.__version__)
    return _state["cls"], _state["capture"], _state["version"]


# Qwen3Config builds one layer type per layer; a hostile num_hidden_layers of 10**9 would take minutes
# and gigabytes, and no drafter (nor target) comes near this.
MAX_LAYERS = 10_000


def view(raw: dict[str, Any]) -> Effective:
    depth = raw.get("num_hidden_layers")
    if isinstance(depth, int) and not isinstance(depth, bool) and depth > MAX_LAYERS:
        version = transformers_version() or "unknown"
        return Effective(
            version,
            None,
            f"num_hidden_layers {depth} was not passed to Qwen3Config: it would build "
            f"{depth} layer types (dflash-cfg stops at {MAX_LAYERS})",
            (),
        )
    cls, capture, version = _load()
    capture.records.clear()
    # warning_once is an lru_cache: without clearing it, a second file would hide the same warning.
    cache_clear = getattr(getattr(logging.Logger, "warning_once", None), "cache_clear", None)
    if cache_clear is not None:
        cache_clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            # from_dict writes into its argument in some versions: never hand it the linted data.
            config = construct(cls, copy.deepcopy(raw))
        except Exception as exc:  # noqa: BLE001 - v5 raises StrictDataclass*Error, 4.x ValueError/TypeError
            return Effective(version, None, _one_line(exc), _messages(capture.records, caught))
        values = {name: _read(config, name) for name in FIELDS}
    return Effective(version, values, None, _messages(capture.records, caught))


def _read(config: Any, name: str) -> Any:
    if name in ("rope_theta", "rope_scaling"):
        # v5 folds both into rope_parameters and removes the rope_theta attribute; 4.x keeps them flat.
        params = getattr(config, "rope_parameters", None)
        if isinstance(params, dict) and "rope_theta" in params and not hasattr(config, "rope_theta"):
            if name == "rope_theta":
                return params.get("rope_theta")
            rest = {k: v for k, v in params.items() if k not in ("rope_theta", "rope_type")}
            return rest or None if params.get("rope_type", "default") == "default" else params
        return getattr(config, name, None)
    if name == "dtype":
        value = getattr(config, "dtype", None) if hasattr(config, "dtype") else None
        if value is None:
            value = config.__dict__.get("torch_dtype")
        return None if value is None else str(value).replace("torch.", "")
    value = getattr(config, name, None)
    return copy.deepcopy(value)


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _messages(records: list[str], caught: list[warnings.WarningMessage]) -> tuple[str, ...]:
    return tuple(
        dict.fromkeys([" ".join(r.split()) for r in records] + [" ".join(str(w.message).split()) for w in caught])
    )

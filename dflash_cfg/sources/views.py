"""The drafter config as engines see it: through the real transformers config class engines load it with.

vLLM, SGLang and the reference code all load the drafter's config.json with transformers' `AutoConfig`,
i.e. the class registered for the file's `model_type` (`Qwen3Config` for `qwen3` drafters, `GptOssConfig`
for `gpt_oss`, `LagunaConfig` for `laguna`, ...), which rewrites some values on the way (Qwen3Config nulls
`sliding_window` when `use_sliding_window` is falsy, derives absent `layer_types`, moves RoPE between
versions). Rather than re-implementing that logic, we run the installed transformers and read back what it
made: that is the point of this module. vLLM reads a speculators-format file through its own
`SpeculatorsConfig`, a bare `PretrainedConfig` built from the translated dict: that is the class used for
those (`SPECULATORS`).

The class is looked up in `CONFIG_MAPPING` without loading remote code (never `trust_remote_code`), and
only that class's module is imported; the import costs most of a cold run, so it happens lazily, once per
process.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import os
import sys
import warnings
from collections.abc import Iterator
from importlib import metadata
from typing import Any

from dflash_cfg.model import FIELDS, Effective
from dflash_cfg.sources.construct import construct
from dflash_cfg.sources.hfenv import import_hub


@functools.cache  # reading the metadata costs about a millisecond, and a process runs one transformers
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


SPECULATORS = "speculators"  # the class key of a translated speculators-format file


def class_key(raw: dict[str, Any]) -> str:
    """Which class the view uses for `raw`, named without importing transformers: its `model_type` (the
    installed transformers version, also in every cache key, decides the class registered for it)."""
    value = raw.get("model_type")
    return value if isinstance(value, str) else ""


def _load() -> tuple[_Capture, str]:
    if "capture" not in _state:
        # The config classes need no torch; importing it would cost seconds and may touch a GPU.
        if "torch" not in sys.modules:
            sys.modules["torch"] = None  # type: ignore[assignment]
        import_hub()  # first, with the environment huggingface_hub can parse
        previous = os.environ.get("TRANSFORMERS_NO_ADVISORY_WARNINGS")
        os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"] = "1"  # silences "PyTorch was not found"
        try:
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

        _state.update(capture=capture, version=transformers.__version__)
    return _state["capture"], _state["version"]


def config_class(key: str) -> tuple[Any, str | None]:
    """The config class for a `class_key`, or (None, why there is none).

    `CONFIG_MAPPING[model_type]` is what `AutoConfig` uses: it imports that one configuration module and
    never runs code from a model repo. `qwen3` is imported directly (the project's promise, and the
    cheapest import); a speculators-format file gets the bare `PretrainedConfig`, as in vLLM.
    """
    if key == "qwen3":
        from transformers.models.qwen3.configuration_qwen3 import Qwen3Config

        return Qwen3Config, None
    if key == SPECULATORS:
        from transformers.configuration_utils import PretrainedConfig

        return PretrainedConfig, None
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    if not key:
        return None, "the file has no model_type, so AutoConfig cannot pick a config class"
    try:
        return CONFIG_MAPPING[key], None
    except KeyError:
        return None, f"AutoConfig has no config class for model_type {key!r}"
    except Exception as exc:  # noqa: BLE001 - a registered module that fails to import without torch
        return None, f"AutoConfig's class for model_type {key!r} cannot be imported: {_one_line(exc)}"


# Qwen3Config builds one layer type per layer; a hostile num_hidden_layers of 10**9 would take minutes
# and gigabytes, and no drafter (nor target) comes near this.
MAX_LAYERS = 10_000


def view(raw: dict[str, Any], key: str | None = None) -> Effective:
    """What the config class for `key` (default: the file's `model_type`) makes of `raw`."""
    key = class_key(raw) if key is None else key
    depth = raw.get("num_hidden_layers")
    if isinstance(depth, int) and not isinstance(depth, bool) and depth > MAX_LAYERS:
        version = transformers_version() or "unknown"
        return Effective(
            transformers_version=version,
            values=None,
            error=f"num_hidden_layers {depth} was not passed to the config class: it would build "
            f"{depth} layer types (dflash-cfg stops at {MAX_LAYERS})",
            warnings=(),
        )
    _, version = _load()
    cls, missing = config_class(key)
    if cls is None:
        return Effective(transformers_version=version, values=None, error=missing, warnings=(), config_class=None)
    name = "PretrainedConfig (vLLM SpeculatorsConfig)" if key == SPECULATORS else cls.__name__
    with captured() as (records, caught):
        try:
            # from_dict writes into its argument in some versions: never hand it the linted data.
            config = construct(cls, copy.deepcopy(raw))
        except Exception as exc:  # noqa: BLE001 - v5 raises StrictDataclass*Error, 4.x ValueError/TypeError
            return Effective(
                transformers_version=version,
                values=None,
                error=_one_line(exc),
                warnings=_messages(records, caught),
                config_class=name,
            )
        # A field the class cannot give one value of is left out: not "null", which would be a value it gives.
        values = {field: value for field in FIELDS if (value := _held(config, field)) is not _UNREADABLE}
    return Effective(
        transformers_version=version, values=values, error=None, warnings=_messages(records, caught), config_class=name
    )


@contextlib.contextmanager
def captured() -> Iterator[tuple[list[str], list[warnings.WarningMessage]]]:
    """What transformers says while the block runs, for one file afresh: its log records (read them before
    the next block: the list is reused) and its Python warnings."""
    capture, _ = _load()
    capture.records.clear()
    # warning_once is an lru_cache: without clearing it, a second file would hide the same warning.
    cache_clear = getattr(getattr(logging.Logger, "warning_once", None), "cache_clear", None)
    if cache_clear is not None:
        cache_clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield capture.records, caught


_UNREADABLE = object()


def _held(config: Any, name: str) -> Any:
    """The class's value of `name`, or _UNREADABLE where it holds no one value: a heterogeneous config (Gemma 4's
    text config) raises on a global read of a per-layer attribute such as head_dim, rather than answer."""
    try:
        return _read(config, name)
    except Exception:  # noqa: BLE001 - whatever a config class raises on a read is "no one value", not a crash
        return _UNREADABLE


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

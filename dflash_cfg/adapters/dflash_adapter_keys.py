"""Which keys of the drafter's config.json an engine's code reads, recorded while the adapter runs it: the key
recording of `./dev engines --keys` (tools/engines/engine_keys.py). Standard library only, like the adapters.

dflash_adapter_io imports it only when the adapter's environment sets DFLASH_ADAPTER_KEYS=1 (then each record
carries "keys"): the recording wraps transformers' and pydantic's attribute access, which no user's engine run
should pay for.

How a read is seen:
- The drafter's config dict: transformers' `PreTrainedConfig.get_config_dict` for the drafter's directory returns
  it with every nested dict a `RecordingDict` that knows its JSON pointer; item, get, `in`, pop and setdefault on
  them are reads. Every engine loads the file through that call, and the nested dicts (`dflash_config`,
  `speculators_config`, `rope_parameters`) travel into the config objects as they are.
- The config objects: attribute access on transformers configs and pydantic models (speculators) is a read when the
  object is the drafter's: the one `from_dict` built from the recorded dict, one that holds a recorded dict under
  its own name (vLLM's EAGLEConfig copies the draft config's keys onto itself), or one reached from them by an
  attribute (`transformer_layer_config`). A name the object lacks is a read too: the engine asked for it with a
  default.
- Where: each engine read's code site, the reading frame and the engine frames that called it (two at most: a
  helper such as SGLang's `_cfg_get` reads for its caller), as `PATH:LINE` under site-packages (`sites()`): what
  tools/engines/branches.py matches against the source's reads to tell which branches a run reached.
- Who reads: the frame that made the access. In the engine's package it is the engine's read ("engine"); in
  transformers while it builds the drafter's config from the dict it is the config class's ("config"), and so are
  the file's keys the class consumes (its named fields, and keys its __post_init__ pops, such as rope_scaling).
  Anything else (transformers' serialization and class machinery, pydantic, the adapter's own reporting) is not
  recorded; nor are private or dunder names, nor methods, properties and class constants of the config classes.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


_BASE = os.sep + "configuration_utils.py"


class _State:
    """One request's recording: the drafter's directory, what was read, and the objects known to be the drafter's."""

    def __init__(self, engine_dir: str, transformers_dir: str, drafter: str) -> None:
        self.engine_dir = engine_dir
        self.transformers_dir = transformers_dir
        self.drafter = os.path.realpath(drafter)
        self.reads: dict[str, set[str]] = {}
        self.known: dict[int, tuple[Any, str]] = {}  # id -> (the object, kept alive; its pointer)
        self.building = 0  # > 0 while transformers builds a config from the recorded dict
        self.file: Any = None  # the drafter's dict as get_config_dict returned it (recorded)
        # Pointers the engine wrote into the recorded dicts (vLLM's speculators translation pushes top-level keys
        # into transformer_layer_config): what it reads there later is its own value, not a key of the file.
        self.derived: set[str] = set()
        self.sites: set[tuple[str, str]] = set()  # (pointer, PATH:LINE) of the engine's reads
        self.site_root = os.path.dirname(engine_dir.rstrip(os.sep)) + os.sep

    def file_has(self, pointer: str) -> bool:
        """Whether the file states `pointer` (looked up without recording)."""
        node = self.file
        for part in pointer.split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and dict.__contains__(node, part):
                node = dict.__getitem__(node, part)
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return False
        return True

    def source(self, frame: Any) -> str | None:
        path = frame.f_code.co_filename
        if path.startswith(self.engine_dir):
            return "engine"
        # The config class's own code and its RoPE handling; not configuration_utils.py, the base class, whose reads
        # while building are its serialization (the log line's repr) and its probes of every dict-valued attribute.
        if self.building and path.startswith(self.transformers_dir) and not path.endswith(_BASE):
            return "config"
        return None

    def note(self, pointer: str, source: str, frame: Any = None) -> None:
        if not any(pointer == d or pointer.startswith(d + "/") for d in self.derived):
            self.reads.setdefault(pointer, set()).add(source)
            if source == "engine" and frame is not None:
                self.where(pointer, frame)

    def where(self, pointer: str, frame: Any) -> None:
        """The read's site and its callers' in the engine (a helper reads for them), three frames at most."""
        for _ in range(3):
            path = frame.f_code.co_filename if frame is not None else ""
            if not path.startswith(self.engine_dir):
                return
            self.sites.add((pointer, f"{path[len(self.site_root) :]}:{frame.f_lineno}"))
            frame = frame.f_back

    def pointer_of(self, obj: Any) -> str | None:
        found = self.known.get(id(obj))
        if found is not None:
            return found[1]
        try:
            attrs = object.__getattribute__(obj, "__dict__")
        except AttributeError:
            return None
        for name, value in list(attrs.items()):
            if isinstance(value, RecordingDict) and value._dflash_pointer.endswith("/" + _escape(name)):
                pointer = value._dflash_pointer[: -len(_escape(name)) - 1]
            elif id(value) in self.known and _is_config(value):
                pointer = self.known[id(value)][1]  # a wrapper of the drafter's config (vLLM's EAGLEConfig)
            else:
                continue
            self.known[id(obj)] = (obj, pointer)
            return pointer
        return None

    def adopt(self, owner: Any, name: str, value: Any, pointer: str) -> Any:
        """`value`, read off the drafter's `owner` as `name`: a config or model becomes the drafter's at `pointer`;
        a plain dict (one the config class built) is replaced in `owner` by a recording copy."""
        if _is_config(value):
            self.known.setdefault(id(value), (value, pointer))
        elif type(value) is dict:
            try:
                attrs = object.__getattribute__(owner, "__dict__")
            except AttributeError:
                return value
            if attrs.get(name) is value:
                value = wrap(value, pointer)
                attrs[name] = value
        elif type(value) is list:
            for index, item in enumerate(value):
                if _is_config(item):
                    self.known.setdefault(id(item), (item, f"{pointer}/{index}"))
        return value


_state: _State | None = None
_config_types: tuple[type, ...] = ()
# Names of the base config class and of dict: machinery, read as keys only where the file has them (`_is_key`).
_generic: frozenset[str] = frozenset()


def _is_config(value: Any) -> bool:
    return isinstance(value, _config_types)


class RecordingDict(dict[str, Any]):
    """A dict of the drafter's config that notes the keys the engine's code asks it for. Its pointer is an instance
    attribute, so copies (deepcopy, as transformers' to_dict makes) keep recording at the same place."""

    _dflash_pointer = ""

    def _read(self, key: Any, frame: Any) -> None:
        state = _state
        if state is not None and isinstance(key, str):
            source = state.source(frame)
            if source is not None:
                state.note(f"{self._dflash_pointer}/{_escape(key)}", source, frame)

    def __getitem__(self, key: Any) -> Any:
        self._read(key, sys._getframe(1))
        return super().__getitem__(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        state = _state
        if state is not None and isinstance(key, str):
            # A key the engine writes, or transformers adds (from_dict's name_or_path): its value from then on is
            # theirs, not the file's. (A copy's reconstruction writes from the copy module: not a write of theirs.)
            pointer = f"{self._dflash_pointer}/{_escape(key)}"
            path = sys._getframe(1).f_code.co_filename
            if path.startswith(state.engine_dir) or (
                path.startswith(state.transformers_dir) and not state.file_has(pointer)
            ):
                state.derived.add(pointer)
        super().__setitem__(key, value)

    def get(self, key: Any, default: Any = None) -> Any:
        self._read(key, sys._getframe(1))
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self._read(key, sys._getframe(1))
        return super().__contains__(key)

    def pop(self, key: Any, *default: Any) -> Any:
        self._read(key, sys._getframe(1))
        return super().pop(key, *default)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._read(key, sys._getframe(1))
        return super().setdefault(key, default)


def wrap(value: Any, pointer: str) -> Any:
    """`value` with every dict in it (in lists too) a RecordingDict at its pointer."""
    if isinstance(value, dict):
        out = RecordingDict({k: wrap(v, f"{pointer}/{_escape(str(k))}") for k, v in dict.items(value)})
        out._dflash_pointer = pointer
        return out
    if isinstance(value, list):
        return [wrap(v, f"{pointer}/{i}") for i, v in enumerate(value)]
    return value


def _is_key(state: _State, obj: Any, name: str, pointer: str) -> bool:
    """Whether `name` read on a config object at `pointer` is a key of the file rather than the class's machinery.
    A name of the base config class (its generic fields: id2label, return_dict, base_model_tp_plan) or of a dict
    (an engine's duck-typing probe, `items`) counts only where the file states it; any other name counts when the
    instance holds it, the class declares it as a field, or nothing has it (asked for with a default), and not when
    the class has it as a method, property or constant."""
    if name in _generic:
        return state.file_has(f"{pointer}/{_escape(name)}")
    try:
        if name in object.__getattribute__(obj, "__dict__"):
            return True
    except AttributeError:
        pass
    cls = type(obj)
    if name in getattr(cls, "__dataclass_fields__", {}) or name in (getattr(cls, "__pydantic_fields__", None) or {}):
        return True
    return not any(name in vars(klass) for klass in cls.__mro__)


def _attribute_hook(original: Any) -> Any:
    def __getattribute__(self: Any, name: str) -> Any:
        state = _state
        if state is None or name.startswith("_"):
            return original(self, name)
        # Only the engine's own attribute reads: transformers' are its machinery (to_dict, get_text_config).
        if not sys._getframe(1).f_code.co_filename.startswith(state.engine_dir):
            return original(self, name)
        pointer = state.pointer_of(self)
        if pointer is None:
            return original(self, name)
        here = f"{pointer}/{_escape(name)}"
        key = _is_key(state, self, name, here.rsplit("/", 1)[0])
        if key:
            state.note(here, "engine", sys._getframe(1))
        value = original(self, name)
        return state.adopt(self, name, value, here) if key else value

    return __getattribute__


def _consumed(state: _State, config: Any, given: RecordingDict) -> None:
    """The file's keys the config class took as its own: its declared fields, and keys it popped (held neither under
    their name nor as a field: transformed, as rope_scaling into rope_parameters); into the configs and models it
    built of the nested dicts (speculators' pydantic sub-models, a transformer_layer_config)."""
    cls = type(config)
    fields = set(getattr(cls, "__dataclass_fields__", {})) | set(getattr(cls, "__pydantic_fields__", None) or {})
    try:
        held = object.__getattribute__(config, "__dict__")
    except AttributeError:
        held = {}
    state.known.setdefault(id(config), (config, given._dflash_pointer))
    for key in dict.keys(given):
        pointer = f"{given._dflash_pointer}/{_escape(key)}"
        if not isinstance(key, str) or not (key in fields or key not in held) or not state.file_has(pointer):
            continue
        state.note(pointer, "config")
        value, inner = held.get(key), dict.__getitem__(given, key)
        if _is_config(value) and isinstance(inner, RecordingDict):
            _consumed(state, value, inner)
        elif isinstance(value, list) and isinstance(inner, list):
            for item, raw in zip(value, inner, strict=False):  # a list the class shortened: its head
                if _is_config(item) and isinstance(raw, RecordingDict):
                    _consumed(state, item, raw)


def _from_dict_hook(original: Any) -> Any:
    def from_dict(cls: Any, config_dict: Any, *args: Any, **kwargs: Any) -> Any:
        state = _state
        if state is None or not isinstance(config_dict, RecordingDict):
            return original(cls, config_dict, *args, **kwargs)
        state.building += 1
        try:
            result = original(cls, config_dict, *args, **kwargs)
        finally:
            state.building -= 1
        config = result[0] if isinstance(result, tuple) else result
        if _is_config(config):
            _consumed(state, config, config_dict)
        return result

    return from_dict


def _get_config_dict_hook(original: Any) -> Any:
    def get_config_dict(cls: Any, path: Any, *args: Any, **kwargs: Any) -> Any:
        config_dict, rest = original(cls, path, *args, **kwargs)
        state = _state
        if state is not None and isinstance(config_dict, dict) and not isinstance(config_dict, RecordingDict):
            where = os.path.realpath(str(path))
            if where in (state.drafter, os.path.join(state.drafter, "config.json")):
                config_dict = wrap(config_dict, "")
                if state.file is None:
                    state.file = config_dict
        return config_dict, rest

    return get_config_dict


def _wrap_classmethod(cls: type, name: str, hook: Any) -> None:
    original = vars(cls)[name].__func__
    setattr(cls, name, classmethod(hook(original)))


_dirs: dict[str, str] = {}


def _package_dir(name: str) -> str:
    spec = importlib.util.find_spec(name)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return os.path.realpath(locations[0]) + os.sep if locations else "\0"


def install(engine: str) -> None:
    """Wrap the config machinery the engine loads the drafter through (once, after the engine's import)."""
    global _config_types, _generic
    from transformers import PreTrainedConfig

    types: list[type] = [PreTrainedConfig]
    PreTrainedConfig.__getattribute__ = _attribute_hook(PreTrainedConfig.__getattribute__)  # type: ignore[method-assign]
    _wrap_classmethod(PreTrainedConfig, "get_config_dict", _get_config_dict_hook)
    _wrap_classmethod(PreTrainedConfig, "from_dict", _from_dict_hook)
    try:
        from pydantic import BaseModel
    except ImportError:
        pass
    else:
        types.append(BaseModel)
        BaseModel.__getattribute__ = _attribute_hook(object.__getattribute__)  # type: ignore[method-assign]
    if engine == "speculators":  # its own from_dict: the file's dict validated into its pydantic classes
        from speculators import SpeculatorModelConfig

        _wrap_classmethod(SpeculatorModelConfig, "from_dict", _from_dict_hook)
    _config_types = tuple(types)
    base = {name for klass in PreTrainedConfig.__mro__ for name in vars(klass)}
    _generic = frozenset(base | set(getattr(PreTrainedConfig, "__dataclass_fields__", {})) | set(dir(dict)))
    _dirs.update(engine=_package_dir(engine), transformers=_package_dir("transformers"))


def begin(drafter: str) -> None:
    global _state
    _state = _State(_dirs["engine"], _dirs["transformers"], drafter)


_last: list[_State] = []


def end() -> list[list[str]]:
    """What the request read: [pointer, source] pairs, sorted."""
    global _state
    state, _state = _state, None
    _last[:] = [state] if state is not None else []
    if state is None:
        return []
    return sorted([pointer, source] for pointer, sources in state.reads.items() for source in sources)


def sites() -> list[list[str]]:
    """Where the request that `end` finished read each key in the engine's code: [pointer, PATH:LINE], sorted."""
    return sorted([pointer, site] for state in _last for pointer, site in state.sites)


__all__ = ["RecordingDict", "begin", "end", "install", "sites", "wrap"]

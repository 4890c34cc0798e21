"""A content-addressed on-disk cache of the transformers view (`effective.view`) of config files.

Importing transformers costs most of a cold check (~0.8 s), and what `Qwen3Config` makes of a file
depends only on the file's bytes, the transformers version and dflash-cfg's own reading code. So the
result is stored under a key made of exactly those, and a warm check of an unchanged file never imports
transformers: the versions come from package metadata, and `effective.view` loads transformers only
when it is first called, which happens only on a miss.

Layout: ``$XDG_CACHE_HOME/dflash-cfg/effective/<key>.json`` (default ``~/.cache/dflash-cfg``), one
self-describing JSON file per entry: the key fields plus `Effective.to_json()`. One flat directory, no
fan-out: on ext4, creating the first files of 256 fresh sub-directories cost a tree of 1000 drafters
about 0.2 ms of kernel time per entry, five times a file in one directory (whose index holds millions).

The cache can only make a check faster, never fail it or change its result:
- an entry is used only if it parses, has exactly the expected shape and types, and its key fields
  equal the ones asked for; anything else (corrupt, truncated, foreign, stale) is a miss, recomputed
  and rewritten;
- writes go to a temporary file in the entry's directory and are renamed into place (atomic on POSIX),
  so concurrent checks never see half an entry; the same key written twice holds the same bytes;
- any OS error (unwritable or missing cache dir, a file where a dir should be, disk full) leaves the
  check uncached;
- a result that would not read back identically from JSON is not stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dflash_cfg.errors import PathError
from dflash_cfg.model import FIELDS, Effective
from dflash_cfg.sources import files
from dflash_cfg.sources.atomic import replace_atomically
from dflash_cfg.sources.views import transformers_version
from dflash_cfg.version import __version__

FORMAT = 3  # bump when the entry layout or the meaning of a stored view changes (3: no fan-out directories)
MAX_ENTRY_BYTES = 1 << 20  # far above any real entry; a bigger file is foreign

View = Callable[[dict[str, Any], str], Effective]


def default_root(environ: Mapping[str, str] | None = None) -> Path | None:
    """``$XDG_CACHE_HOME/dflash-cfg``, else ``~/.cache/dflash-cfg``; None if neither is an absolute path.

    The XDG spec says a relative ``XDG_CACHE_HOME`` is invalid and must be ignored.
    """
    base = (os.environ if environ is None else environ).get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "dflash-cfg"


class EffectiveCache:
    """`view` with its results kept on disk, keyed by the sha256 of the bytes a dict was parsed from."""

    def __init__(self, view: View, root: Path | None) -> None:
        self.view = view
        self.root = root
        self.transformers = transformers_version()  # None: transformers is missing; nothing to key on

    def key_fields(self, sha256: str, config_class: str) -> dict[str, Any]:
        """`config_class` is the view's class key (`views.class_key`): with the transformers version it
        names the class the view was made through, so one file viewed through two classes has two entries."""
        assert self.transformers is not None
        return {
            "format": FORMAT,
            "sha256": sha256,
            "config_class": config_class,
            "transformers": self.transformers,
            "dflash_cfg": __version__,
        }

    def path(self, sha256: str, config_class: str) -> Path | None:
        if self.root is None or self.transformers is None:
            return None
        fields = self.key_fields(sha256, config_class)
        key = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()
        return self.root / "effective" / f"{key}.json"

    def get(self, sha256: str, raw: dict[str, Any], config_class: str) -> Effective:
        """The view of `raw` through the class keyed `config_class`; `raw` is the dict parsed from bytes
        whose sha256 is `sha256` (or translated from it: the class key says which)."""
        path = self.path(sha256, config_class)
        if path is None:
            return self.view(raw, config_class)
        key = self.key_fields(sha256, config_class)
        hit = self._read(path, key)
        if hit is not None:
            return hit
        effective = self.view(raw, config_class)
        self._write(path, key, effective)
        return effective

    # ----------------------------------------------------------------------------------------------

    def _read(self, path: Path, key: dict[str, Any]) -> Effective | None:
        try:
            data = files.read_optional(path, MAX_ENTRY_BYTES)
        except PathError:
            return None
        if data is None or len(data) > MAX_ENTRY_BYTES:
            return None
        try:
            entry = json.loads(data)
        except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, nested too deeply
            return None
        return _valid(entry, key)

    def _write(self, path: Path, key: dict[str, Any], effective: Effective) -> None:
        entry = {**key, "effective": effective.to_json()}
        try:
            # One line: without indent json.dumps runs in C (with it, in Python, at several times the cost).
            text = json.dumps(entry) + "\n"  # not sorted: rules may read values in FIELDS order
        except (TypeError, ValueError, RecursionError):  # a value transformers made that JSON cannot hold
            return
        if _valid(json.loads(text), key) != effective:
            return  # would not read back as the same result: keep this one uncached
        # Unwritable, full, or not a dir: this check simply runs uncached. The directory is created only
        # when the first temp file cannot be (a mkdir each time costs ~0.2 ms).
        with contextlib.suppress(OSError):
            replace_atomically(path, text.encode("utf-8"), make_parents=True)


def _int(v: Any) -> bool:
    return v is None or (isinstance(v, int) and not isinstance(v, bool))


# What each field of a view can hold: the rules read a stored value as the view made it, so an entry of
# the right shape but a foreign value (`layer_types: 5`) is a miss, not a crash in a rule. A value the
# view made outside these is simply never stored (see _write), which costs a recompute, never a result.
_VALUE_OK: dict[str, Callable[[Any], bool]] = {
    **{name: _int for name in FIELDS},
    "layer_types": lambda v: v is None or (isinstance(v, list) and all(isinstance(t, str) for t in v)),
    "use_sliding_window": lambda v: v is None or isinstance(v, bool),
    "rope_theta": lambda v: v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)),
    "rope_scaling": lambda v: v is None or isinstance(v, dict),
    "dtype": lambda v: v is None or isinstance(v, str),
}


def _valid(entry: Any, key: dict[str, Any]) -> Effective | None:
    """The stored view, if `entry` is exactly a well-formed entry for `key`; else None."""
    if not isinstance(entry, dict) or set(entry) != {*key, "effective"}:
        return None
    for name, want in key.items():
        got = entry[name]
        if type(got) is not type(want) or got != want:  # compare types too: True == 1 must not pass for format 1
            return None
    eff = entry["effective"]
    if not isinstance(eff, dict) or set(eff) != {"transformers_version", "values", "error", "warnings", "config_class"}:
        return None
    values, error, warnings = eff["values"], eff["error"], eff["warnings"]
    if eff["config_class"] is not None and not isinstance(eff["config_class"], str):
        return None
    if eff["transformers_version"] != key["transformers"]:
        return None
    if values is None:
        if not isinstance(error, str):
            return None
    elif (
        not isinstance(values, dict)
        or list(values) != list(FIELDS)
        or error is not None
        or not all(_VALUE_OK[name](value) for name, value in values.items())
    ):
        return None
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        return None
    return Effective.from_json(eff)

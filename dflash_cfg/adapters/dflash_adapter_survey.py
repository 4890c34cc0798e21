"""What an interpreter has installed, read without importing any engine: which engines it can import (found, not
imported: an engine import costs seconds) and the state of every package directory it would import them from.

`PYTHON dflash_adapter_survey.py ENGINE...` prints one JSON object. dflash_cfg.sources.interpreters runs it in
the adapters' environment and as a script from this directory, as the adapters themselves run, so it sees the
sys.path they will see. Standard library only (the interpreter may not have dflash_cfg); its distinctive name
keeps it from shadowing anything an engine imports, as for dflash_adapter_io.

The state tells when the installation changed (preflight's cache of engine answers keys on it, and surveys
again only when a witness changed: dflash_cfg.sources.engine_cache): pip, uv and conda create or remove a
`NAME-VERSION.dist-info` directory for every install, upgrade and removal, which changes the modification time
of the directory holding it, so the times of the sys.path directories change whenever anything the engine
imports is installed, upgraded or removed. Each engine's own metadata (the version the adapters report, as
importlib.metadata finds it: the first on sys.path) is read as well. The files and directories stated are the
survey's witnesses: while none of them changes, neither does what this script would print.
"""

from __future__ import annotations

import os
import stat
import sys

# Neither importlib.util nor json: together they are half this script's cost (re, enum, contextlib), and it
# runs on every preflight.
HEADERS_MAX = 1 << 16  # METADATA's headers come first; the long description after them is not read


def _stat(path: str) -> list[int] | None:
    """Size, modification time and inode of `path` (symlinks followed); None when there is nothing."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _metadata_version(info: str) -> str | None:
    """The `Version:` header of a dist-info's METADATA (an egg-info's PKG-INFO)."""
    for name in ("METADATA", "PKG-INFO"):
        path = os.path.join(info, name)
        try:
            # Non-blocking and regular files only: a FIFO named METADATA must not hang the survey.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            head = os.read(fd, HEADERS_MAX)
        except OSError:
            return None
        finally:
            os.close(fd)
        for line in head.split(b"\n"):
            if not line.strip():
                break  # the end of the headers
            if line.startswith(b"Version:"):
                return line[len(b"Version:") :].strip().decode("utf-8", "replace")
        return None
    return None


def _is_dist(name: str, engine: str) -> bool:
    lower = name.lower()
    return lower.startswith(engine.replace("-", "_") + "-") and lower.endswith((".dist-info", ".egg-info"))


def find_spec(name: str) -> object | None:
    """importlib.util.find_spec for a top-level name, without importing importlib.util: ask each finder on
    sys.meta_path in turn (the path finder, and an editable install's own finder), as the import system does."""
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            spec = find(name, None)
        except (ImportError, ValueError):
            return None
        if spec is not None:
            return spec
    return None


def dumps(value: object) -> str:
    """`value` (str, int, None, list, dict of those) as ASCII JSON, through the json module's C string encoder."""
    if isinstance(value, str):
        return encode_string(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{encode_string(str(k))}:{dumps(v)}" for k, v in sorted(value.items())) + "}"
    return encode_string(repr(value))


try:
    from _json import encode_basestring_ascii as encode_string
except ImportError:  # an interpreter without the C accelerator: the json module itself
    from json import dumps as encode_string


def survey(engines: list[str]) -> dict[str, object]:
    """The engines found, each one's metadata, and the witnesses: every file and directory whose state decides
    what this interpreter imports, with its state (_stat). While no witness changes, neither does the survey."""
    witnesses: dict[str, list[int] | None] = {}

    def witness(path: str) -> None:
        witnesses[path] = _stat(path)

    found = []
    packages: dict[str, dict] = {}  # no typing import: each start of this script counts
    for engine in engines:
        spec = find_spec(engine)
        if spec is None:
            continue
        found.append(engine)
        origin = getattr(spec, "origin", None)
        origin = origin if isinstance(origin, str) else None
        if origin:  # an editable install's package lives outside site-packages: its entry point and folder
            witness(origin)
            witness(os.path.dirname(origin))
        packages[engine] = {"origin": origin, "dists": [], "version": None}
    path = sys.path[1:]  # [0] is this script's directory, as the adapters' is theirs
    for entry in path:
        witness(entry)  # a package installed, upgraded or removed there changes its time
        try:
            names = sorted(os.listdir(entry or "."))
        except (OSError, ValueError):
            continue
        for name in names:
            if name.endswith(".pth"):  # what they add to sys.path, or run, can change in place
                witness(os.path.join(entry, name))
        for engine, package in packages.items():
            for name in names:
                if not _is_dist(name, engine):
                    continue
                info = os.path.join(entry, name)
                version = _metadata_version(info)
                witness(os.path.join(info, "METADATA"))
                witness(os.path.join(info, "RECORD"))
                package["dists"].append([info, version])
                if package["version"] is None:
                    package["version"] = version
    # The interpreter itself, its venv's settings, the user site (which joins sys.path once it exists) and the
    # modules site imports at start: what else decides sys.path.
    witness(sys.executable)
    witness(os.path.realpath(sys.executable))
    witness(os.path.join(sys.prefix, "pyvenv.cfg"))
    site = sys.modules.get("site")
    if getattr(site, "ENABLE_USER_SITE", False) and isinstance(getattr(site, "USER_SITE", None), str):
        witness(site.USER_SITE)  # type: ignore[union-attr]
    for name in ("sitecustomize", "usercustomize"):
        file = getattr(sys.modules.get(name), "__file__", None)
        if isinstance(file, str):
            witness(file)
    return {
        "engines": found,
        "packages": packages,
        "executable": sys.executable,
        "prefix": sys.prefix,
        "python": sys.version,
        "path": path,
        "witnesses": sorted([k, v] for k, v in witnesses.items()),
    }


if __name__ == "__main__":
    print(dumps(survey(sys.argv[1:])))

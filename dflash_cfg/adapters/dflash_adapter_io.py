"""The protocol every adapter speaks: JSON requests in, one JSON record out per request, one engine per process.

Standard library only: this module runs inside the engine's interpreter, next to the adapter script (the script's
directory is sys.path[0], which is how the adapters import it; its distinctive name keeps it from shadowing
anything an engine imports).

Request (one JSON object a line): {"drafter": DIR, "target": DIR | null, "num_speculative_tokens": int | null,
"tensor_parallel_size": int, "speculative_config": {...} | null}. Record: see `record` below. A case that the
engine's own code refuses is a refusal (type, message and the engine's frame that raised); a case the adapter
itself could not serve is `failed`, so a record never passes an adapter bug off as the engine's answer.
"""

from __future__ import annotations

import atexit
import dataclasses
import importlib
import importlib.metadata
import importlib.util
import json
import math
import os
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

Request = dict[str, Any]


class Case:
    """One request's answer under construction: the values the engine runs with, and every place the adapter
    stood in for something it could not run (so a reader never mistakes a stand-in for the engine's reading)."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.reads: dict[str, Any] = {}
        self.stand_ins: list[str] = []

    def stand_in(self, text: str) -> None:
        if text not in self.stand_ins:
            self.stand_ins.append(text)


@dataclasses.dataclass(frozen=True, kw_only=True)
class StandIn:
    """An engine check the adapter reproduces because it cannot run it (it runs only on a GPU worker): where the
    engine makes it (`path:qualname`), the engine's own code for it (an expression, as the engine writes it), and
    what it raises. The engine suite finds `code` in the installed source of `where`, and a raise of `kind` with
    `message` beside it when one is given (tests/engines/test_stand_ins.py): the stand-in is held to the engine's
    code, not to itself."""

    where: str
    code: str
    kind: str
    message: str | None  # None: the engine's own call raises (an AttributeError), no message of its own to match
    stand_in: str  # what the record says the adapter stood in for


class Refused(Exception):
    """The engine's code would raise at a call the adapter cannot make as the engine does (a worker method on the
    model it built): the refusal the engine gives there, at the engine code a `StandIn` names. Raised only where
    the engine's own code makes the outcome certain; the record says the adapter stood in for the call."""

    def __init__(self, check: StandIn, message: str | None = None) -> None:
        self.message = message if message is not None else check.message or check.kind
        super().__init__(self.message)
        self.kind, self.where, self.stand_in = check.kind, check.where, check.stand_in


class AdapterError(Exception):
    """The adapter cannot serve this request (a malformed request, a missing directory): not the engine's answer."""


def version(engine: str) -> str:
    try:
        return importlib.metadata.version(engine)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def where(error: BaseException, package: str) -> str | None:
    """The innermost frame of `error`'s traceback inside the engine's package, as "PACKAGE/PATH.py:LINE" (relative
    to the directory the package is installed in); None when no frame of the engine's is in it."""
    root = _package_root(package)
    if root is None:
        return None
    found = None
    for frame in traceback.extract_tb(error.__traceback__):
        path = os.path.abspath(frame.filename)
        if path.startswith(os.path.join(root, package) + os.sep):
            found = f"{os.path.relpath(path, root)}:{frame.lineno}"
    return found


def _package_root(package: str) -> str | None:
    module = sys.modules.get(package)
    file = getattr(module, "__file__", None)
    return os.path.dirname(os.path.dirname(os.path.abspath(file))) if file else None


def read_config(folder: str) -> dict[str, Any]:
    """The drafter's config.json as JSON, for the values an adapter must stand in with (never for the reads)."""
    try:
        data = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def jsonable(value: Any) -> Any:
    """`value` as JSON can hold it: tuples as lists, non-finite floats as strings, anything else as its repr."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    item = getattr(value, "item", None)  # a 0-dim tensor or numpy scalar
    if callable(item):
        try:
            return jsonable(item())
        except Exception:  # noqa: BLE001 - not a scalar after all: its repr below
            pass
    return repr(value)


def record(engine: str, case: Case | None, *, refused: dict[str, Any] | None = None, failed: str | None = None) -> dict:
    ver = version(engine)
    ok = refused is None and failed is None and case is not None
    # The config keys the engine read for this request, when recording (dflash_adapter_keys): a refused case too
    # read what it read before the refusal.
    # The sites of those reads in the engine's code come with them (tools/engines/branches.py reads them).
    extra = {"keys": _recorder.end(), "sites": _recorder.sites()} if _recorder is not None and case is not None else {}
    return {
        **extra,
        "engine": engine,
        "version": ver,
        "python": sys.executable,
        "refused": refused,
        "reads": jsonable(case.reads) if ok and case is not None else None,
        "stand_ins": list(case.stand_ins) if case is not None else [],
        "failed": failed,
    }


# The key recorder (dflash_adapter_keys), set by `serve` when DFLASH_ADAPTER_KEYS=1: `./dev engines --keys` only.
_recorder: Any = None


def _record_keys(engine: str) -> None:
    """Turn the key recording on, when asked: imported only then (beside the adapter script, sys.path[0]), so an
    ordinary run neither loads nor pays for it."""
    global _recorder
    if os.environ.get("DFLASH_ADAPTER_KEYS") == "1":
        recorder = importlib.import_module("dflash_adapter_keys")
        recorder.install(engine)
        _recorder = recorder


_scratch: list[str] = []


def scratch() -> str:
    """This adapter process's own temporary directory, for what an engine needs on disk (a rendezvous file, a
    stand-in config): made private (mkdtemp) on first use, removed when `serve` returns or the process exits. The
    runner also gives each adapter a TMPDIR of its own and removes it, which covers an adapter killed outright."""
    if not _scratch:
        _scratch.append(tempfile.mkdtemp(prefix="dflash-adapter-"))
        atexit.register(remove_scratch)
    return _scratch[0]


def remove_scratch() -> None:
    while _scratch:
        shutil.rmtree(_scratch.pop(), ignore_errors=True)


def serve(engine: str, setup: Callable[[], None], handle: Callable[[Case], None]) -> None:
    """Answer every request on stdin with one record on stdout, in order. `setup` imports the engine once (an
    import costs seconds); `handle` fills a case's reads and stand-ins and raises whatever the engine raised.
    Engines print logs to stdout: that fd is pointed at stderr, and records go to a private copy of it."""
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    broken = None
    keep_bytecode(engine)
    try:
        try:
            setup()
            _record_keys(engine)
        except BaseException as error:  # noqa: BLE001 - an engine that does not import answers every case with it
            broken = f"cannot import {engine}: {type(error).__name__}: {error}"
        for line in sys.stdin:
            if not line.strip():
                continue
            out.write(json.dumps(_answer(engine, line, handle, broken)) + "\n")
        out.flush()
    finally:
        remove_scratch()


def _answer(engine: str, line: str, handle: Callable[[Case], None], broken: str | None) -> dict:
    if broken is not None:
        return record(engine, None, failed=broken)
    try:
        request = json.loads(line)
        if not isinstance(request, dict) or not isinstance(request.get("drafter"), str):
            raise AdapterError(f"not a request: {line.strip()[:200]}")
        if not os.path.isdir(request["drafter"]):
            raise AdapterError(f"no such drafter directory: {request['drafter']}")
    except (ValueError, AdapterError) as error:
        return record(engine, None, failed=f"bad request: {error}")
    case = Case(request)
    if _recorder is not None:
        _recorder.begin(request["drafter"])
    try:
        handle(case)
    except AdapterError as error:
        return record(engine, case, failed=str(error))
    except Refused as refusal:
        case.stand_in(refusal.stand_in)
        return record(engine, case, refused={"type": refusal.kind, "message": refusal.message, "where": refusal.where})
    except BaseException as error:  # each case is isolated: its failure is its own record
        if isinstance(error, KeyboardInterrupt):
            raise
        frame = where(error, engine)
        if frame is None:
            detail = "".join(traceback.format_exception(type(error), error, error.__traceback__)[-3:])
            return record(engine, case, failed=f"adapter error: {type(error).__name__}: {error}\n{detail}")
        return record(engine, case, refused={"type": type(error).__name__, "message": str(error), "where": frame})
    return record(engine, case)


def keep_bytecode(engine: str) -> None:
    """An engine installed without bytecode (uv's default; pip under PYTHONDONTWRITEBYTECODE) compiles every module
    it imports from source at each start: 30 s of a 40 s SGLang import here. For such an install the bytecode is
    kept in dflash-cfg's own cache ($DFLASH_CFG_BYTECODE, set by the runner), so only the first run pays, and
    nothing is written into the engine's tree. An install with its bytecode is left as it is."""
    root = os.environ.get("DFLASH_CFG_BYTECODE")
    try:
        spec = importlib.util.find_spec(engine)  # finds the package without importing it
    except (ImportError, ValueError):
        return
    origin = getattr(spec, "origin", None)
    if not root or not origin or not origin.endswith(".py"):
        return
    if os.path.exists(importlib.util.cache_from_source(origin)):
        return
    sys.pycache_prefix = root
    sys.dont_write_bytecode = False


def first_import(*modules: str) -> None:
    """Import the engine modules an adapter calls, so their cost is paid once, before the first request."""
    for name in modules:
        importlib.import_module(name)

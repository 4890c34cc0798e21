"""preflight's cache of engine answers: the record the launch's engine gave (a read or a refusal) for one
drafter, target, launch and installation, so that an unchanged relaunch does not start the engine again
(its import alone costs 6-12 s; a cached answer costs milliseconds: a few stats, two small files read).

The key is the sha256 of everything the answer can depend on (`key`):
- the entry format, dflash-cfg's version, and the bytes of the adapter scripts (dflash_cfg/adapters/*.py): a
  changed adapter or reader asks again;
- the engine, the interpreter as the launch names it and as its symlinks resolve, and the survey of its
  installation (interpreters.survey: its sys.path, the state of each directory on it, the engine's package
  and metadata, read without importing the engine): an engine installed, upgraded or removed, or any other
  package of that environment, asks again;
- the request the adapter is sent (adapters.Request: the drafter and target as given, the drafts per step,
  the speculative method, the tensor- and pipeline-parallel sizes, --max-model-len);
- the adapters' environment (adapters.adapter_env), the variables that can change an answer (ENVIRONMENT);
- the drafter's and the target's directories, as the engine opens them: every entry's name and kind, the
  bytes of each file up to SMALL_FILE (config.json, generation_config.json, the tokenizer's and quantization
  configs: whatever an engine's config code reads), and the size, modification time and inode of larger ones
  (weights, which the adapters never load).

Layout: ``$XDG_CACHE_HOME/dflash-cfg/engine/<key>.json`` (beside the transformers views, sources.cache), one
JSON object per entry: the format, the key, the engine and the adapter's record. Beside them,
``survey-<key>.json``: an interpreter's survey with its witnesses (EngineCache.survey), so that a cached answer
does not even start the interpreter. The newest MAX_ENTRIES files are kept.

The cache can only make a preflight faster, never change what it says:
- an entry is used only if it parses, has exactly the expected shape and types, and holds the key and engine
  asked for; anything else (corrupt, truncated, foreign, hostile) is a miss: the engine runs again;
- only an engine's answer is stored: a record whose adapter failed or timed out is asked again next time;
- writes go through a temp file and a rename (sources.atomic); any OS error (an unwritable or missing cache
  dir, a full disk) leaves the step uncached;
- a record that would not read back identically is not stored.
What the key cannot see: an edit inside an engine installed in editable mode (its source tree lives outside
site-packages; only its top folder and entry file are stated), or a file of sys.path rewritten in place with
its size, time and inode kept. `preflight --no-cache` asks the engine anyway.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dflash_cfg.errors import PathError
from dflash_cfg.model import Adapted, EngineRecord
from dflash_cfg.sources import files
from dflash_cfg.sources.adapters import ADAPTERS, ENGINES, READ_SHAPES, Request, adapter_env, from_json, to_json
from dflash_cfg.sources.atomic import replace_atomically
from dflash_cfg.sources.interpreters import Survey, state, survey
from dflash_cfg.version import __version__

FORMAT = 2  # bump when the entry layout or the meaning of a stored record changes
MAX_ENTRIES = 256  # a few KB each; the oldest beyond this go when an entry is written
MAX_ENTRY_BYTES = 1 << 20  # far above any real record; a bigger file is foreign
SMALL_FILE = 1 << 20  # files up to this size are keyed by their bytes, larger ones by their stat
HASHED_MAX = 64 << 20  # at most this many bytes are read per directory; the rest is keyed by stat
FOLDER_MAX = 4096  # a model directory with more entries is not keyed (nor cached)
ADAPTER_MAX = 1 << 20

# The adapters' variables that can change an engine's answer: the engines' own settings (VLLM_USE_V2_MODEL_RUNNER
# and the rest), the Hub's, transformers' and torch's, and Python's (which packages import). The others (PATH,
# HOME, a terminal's) do not, and would make every shell a miss. A credential (a name with TOKEN in it) is left
# out: no answer on local files depends on it, and no key should.
ENVIRONMENT = (
    "VLLM_",
    "SGLANG_",
    "SGL_",
    "HF_",
    "HUGGINGFACE_",
    "HUGGING_FACE_",
    "TRANSFORMERS_",
    "TOKENIZERS_",
    "TORCH",
    "PYTORCH_",
    "CUDA_",
    "TRITON_",
    "PYTHON",
)


def key(
    engine: str,
    python: str,
    installation: str,
    request: Request,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """The cache key of the engine's answer to `request` in `python` (surveyed as `installation`), or None
    when what the answer depends on cannot be stated (an unreadable adapter, an unlistable or huge model
    directory): then nothing is cached."""
    adapters = _adapters()
    drafter = folder(request.drafter)
    target = folder(request.target) if request.target is not None else []
    if adapters is None or drafter is None or target is None:
        return None
    fields = {
        "format": FORMAT,
        "dflash_cfg": __version__,
        "adapters": adapters,
        "engine": engine,
        "python": [os.path.abspath(python), os.path.realpath(python)],
        "installation": installation,
        "request": json.loads(request.to_json()),
        "environment": _environment(environ),
        "drafter": [os.path.realpath(request.drafter), drafter],
        "target": [os.path.realpath(request.target), target] if request.target is not None else None,
    }
    # ensure_ascii (the default) escapes what a file name or variable may hold that UTF-8 cannot.
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _environment(environ: Mapping[str, str] | None) -> list[list[str]]:
    env = adapter_env(environ)
    return sorted([name, value] for name, value in env.items() if name.startswith(ENVIRONMENT) and "TOKEN" not in name)


def folder(path: str) -> list[list[Any]] | None:
    """A model directory as the engine finds it: each entry (symlinks followed, as the engine opens them) by
    name and kind, a file by its sha256 (up to SMALL_FILE, while HASHED_MAX lasts) or its size, modification
    time and inode. None when it cannot be listed or has more than FOLDER_MAX entries."""
    try:
        with os.scandir(path) as found:
            names = []
            for entry in found:
                names.append(entry.name)
                if len(names) > FOLDER_MAX:
                    return None
    except (OSError, ValueError):
        return None
    stated: list[list[Any]] = []
    budget = HASHED_MAX
    for name in sorted(names):
        full = os.path.join(path, name)
        try:
            st = os.stat(full)
        except (OSError, ValueError):
            stated.append([name, "missing"])
            continue
        if stat.S_ISDIR(st.st_mode):
            stated.append([name, "dir", st.st_mtime_ns])
        elif not stat.S_ISREG(st.st_mode):
            stated.append([name, "other"])
        elif st.st_size <= min(SMALL_FILE, budget) and (digest := _sha256(full)) is not None:
            budget -= st.st_size
            stated.append([name, "file", digest])
        else:
            stated.append([name, "file", st.st_size, st.st_mtime_ns, st.st_ino])
    return stated


def _sha256(path: str) -> str | None:
    try:
        data = files.read(Path(path), SMALL_FILE)
    except PathError:
        return None
    return hashlib.sha256(data).hexdigest() if len(data) <= SMALL_FILE else None


def _adapters() -> str | None:
    """sha256 of every script of dflash_cfg/adapters, by name: the code that makes the answer."""
    digest = hashlib.sha256()
    try:
        for script in sorted(ADAPTERS.glob("*.py")):
            data = files.read(script, ADAPTER_MAX)
            digest.update(f"{script.name}\0{len(data)}\0".encode())
            digest.update(data)
    except (PathError, OSError):
        return None
    return digest.hexdigest()


class EngineCache:
    """Engine records on disk under `root` (`sources.cache.default_root`); None: nothing is kept."""

    def __init__(self, root: Path | None) -> None:
        self.folder = root / "engine" if root is not None else None

    def path(self, key: str) -> Path | None:
        return self.folder / f"{key}.json" if self.folder is not None else None

    def survey(self, python: str, environ: Mapping[str, str] | None = None) -> Survey | None:
        """`interpreters.survey(python)`, remembered beside the answers (`survey-<key>.json`, keyed by the
        interpreter's path, the adapters' code and environment): while each of its witnesses (the interpreter,
        its venv's settings, the directories on its sys.path, their .pth files, the engines' packages and
        metadata) stats as it did, the interpreter is not started at all. That start is most of what a cached
        answer costs (~20 ms idle, several times that on a loaded host)."""
        path = self._survey_path(python, environ)
        if path is not None:
            remembered = self._read_survey(path)
            if remembered is not None and all(state(p) == was for p, was in remembered.witnesses):
                return remembered
        found = survey(python)
        if path is not None and found is not None and found.witnesses:
            entry = {
                "format": FORMAT,
                "key": path.stem,
                "survey": {
                    "engines": list(found.engines),
                    "versions": dict(found.versions),
                    "installation": found.installation,
                    "witnesses": [[p, list(was) if was is not None else None] for p, was in found.witnesses],
                },
            }
            with contextlib.suppress(OSError):
                replace_atomically(path, (json.dumps(entry) + "\n").encode(), make_parents=True)
        return found

    def _survey_path(self, python: str, environ: Mapping[str, str] | None) -> Path | None:
        adapters = _adapters()
        if self.folder is None or adapters is None:
            return None
        fields = {
            "format": FORMAT,
            "dflash_cfg": __version__,
            "adapters": adapters,
            "python": [os.path.abspath(python), os.path.realpath(python)],
            "environment": _environment(environ),
        }
        return self.folder / f"survey-{hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()}.json"

    def _read_survey(self, path: Path) -> Survey | None:
        entry = _load(path)
        if not isinstance(entry, dict) or set(entry) != {"format", "key", "survey"}:
            return None
        if not _int(entry["format"]) or entry["format"] != FORMAT or entry["key"] != path.stem:
            return None
        data = entry["survey"]
        if not isinstance(data, dict) or set(data) != {"engines", "versions", "installation", "witnesses"}:
            return None
        engines, versions, witnesses = data["engines"], data["versions"], data["witnesses"]
        if not (
            isinstance(engines, list)
            and all(e in ENGINES for e in engines)
            and isinstance(versions, dict)
            and set(versions) == set(engines)
            and all(_opt(_str)(v) for v in versions.values())
            and _str(data["installation"])
            and isinstance(witnesses, list)
            and witnesses
            and all(
                isinstance(w, list) and len(w) == 2 and _str(w[0]) and _opt(_list_of(_int))(w[1]) for w in witnesses
            )
        ):
            return None
        return Survey(
            tuple(e for e in ENGINES if e in engines),
            dict(versions),
            data["installation"],
            tuple((w[0], tuple(w[1]) if w[1] is not None else None) for w in witnesses),
        )

    def get(self, key: str, engine: Adapted) -> EngineRecord | None:
        """The stored answer of `engine` for `key`, or None (a miss: absent, unreadable or not a valid entry)."""
        path = self.path(key)
        entry = _load(path) if path is not None else None
        if entry is None or not _valid_entry(entry, key, engine):
            return None
        try:
            record = from_json(engine, "", entry["record"])
        except (ValueError, KeyError, TypeError):
            return None
        return record if record.failed is None else None

    def put(self, key: str, record: EngineRecord) -> None:
        """Keep `record` for `key` if it is an engine's answer (read or refused), never a failure."""
        path = self.path(key)
        if path is None or record.failed is not None:
            return
        data = to_json(record)
        entry = {"format": FORMAT, "key": key, "engine": record.engine, "record": data}
        try:
            text = json.dumps(entry, indent=1) + "\n"
            back = json.loads(text)
        except (TypeError, ValueError, RecursionError):  # a value the adapter made that JSON cannot hold
            return
        if not _valid_entry(back, key, record.engine) or from_json(record.engine, "", back["record"]) != record:
            return  # would not read back as the same answer: asked again next time
        with contextlib.suppress(OSError):
            replace_atomically(path, text.encode("utf-8"), make_parents=True)
            self._prune()

    def _prune(self) -> None:
        """Keep the newest MAX_ENTRIES files (entries, and temp files a killed writer left)."""
        assert self.folder is not None
        found: list[tuple[int, str]] = []
        with os.scandir(self.folder) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.is_file(follow_symlinks=False):
                        found.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.path))
        if len(found) <= MAX_ENTRIES:
            return
        for _, path in sorted(found, reverse=True)[MAX_ENTRIES:]:
            with contextlib.suppress(OSError):  # another preflight may have removed it first
                os.unlink(path)


def _load(path: Path) -> Any:
    """The JSON in a cache file, or None: absent, unreadable, too large, not JSON."""
    try:
        raw = files.read_optional(path, MAX_ENTRY_BYTES)
    except PathError:
        return None
    if raw is None or len(raw) > MAX_ENTRY_BYTES:
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, too deep, too many digits
        return None


# --- what a valid entry holds -------------------------------------------------------------------------------


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _opt(check: Any) -> Any:
    return lambda v: v is None or check(v)


def _list_of(check: Any) -> Any:
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


def _str(v: Any) -> bool:
    return isinstance(v, str)


# An entry holds every read the adapters write (a missing one is a miss), each of the adapters' shape
# (adapters.READ_SHAPES): the rules take a stored value as the engine gave it, so an entry of the right shape with
# a foreign value (`layer_types: [{}]`) is a miss, not a crash in a rule.
_READS = {name: check for name, check in READ_SHAPES.items() if name != "max_model_len"}


def _valid_entry(entry: Any, key: str, engine: str) -> bool:
    if not isinstance(entry, dict) or set(entry) != {"format", "key", "engine", "record"}:
        return False
    if not _int(entry["format"]) or entry["format"] != FORMAT or entry["key"] != key or entry["engine"] != engine:
        return False
    record = entry["record"]
    if not isinstance(record, dict) or set(record) != {
        "engine",
        "version",
        "python",
        "refused",
        "reads",
        "stand_ins",
        "failed",
    }:
        return False
    refused, reads = record["refused"], record["reads"]
    return (
        record["engine"] == engine
        and _opt(_str)(record["version"])
        and _str(record["python"])
        and record["failed"] is None
        and _list_of(_str)(record["stand_ins"])
        and (
            refused is None
            or (
                isinstance(refused, dict)
                and set(refused) == {"type", "message", "where"}
                and _str(refused["type"])
                and _str(refused["message"])
                and _opt(_str)(refused["where"])
            )
        )
        and (
            reads is None
            or (
                isinstance(reads, dict)
                and set(_READS) <= set(reads)
                and all(check(reads[name]) for name, check in _READS.items())
                and _opt(lambda v: isinstance(v, dict))(reads.get("max_model_len"))
            )
        )
        and (refused is None or reads is None)
    )

"""The project config: `dflash-cfg.toml`, or `[tool.dflash-cfg]` in pyproject.toml, found like ruff's.

The nearest one walking up from the checked path (or the current directory) applies; `--config FILE`
names one, `--isolated` ignores them all. It says which rules run, what fails a gate, which findings
are accepted on purpose (JSON has no comments, so a per-file ignore is the only way), and, for each
drafter, where its trained values come from (upstream repo and revision) and which target it serves:

    [[tool.dflash-cfg.models]]
    path = "models/drafter"            # relative to the config file
    upstream = "z-lab/Qwen3.6-27B-DFlash"
    revision = "main"                  # optional
    target = "models/target"           # a dir (relative to the config file) or a Hub id
    served-name = "Qwen/Qwen3.6-27B"   # optional: the engine's model_name label (probe finds the drafter)
    min-acceptance-length = 2.0        # optional: probe's collapse threshold for it

A top-level `min-acceptance-length` is probe's threshold for every served model.
"""

from __future__ import annotations

import copy
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dflash_cfg.errors import HubError, PathError, UsageError
from dflash_cfg.model import Engine, Severity, Url, is_engine
from dflash_cfg.sources import files, remote
from dflash_cfg.sources.hub import check_revision

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 backport
    import tomli as tomllib

CONFIG_NAME = "dflash-cfg.toml"
PYPROJECT = "pyproject.toml"
MAX_BYTES = 1024 * 1024
# A real per-file glob is a path, far shorter than this (fnmatch, used before, took minutes on 40,000 `[`s).
MAX_GLOB = 1024
# huggingface_hub's validate_repo_id, without importing it: org/name of [A-Za-z0-9_.-], no `--` or `..`.
_REPO_ID = re.compile(r"^(?!.*(--|\.\.))[\w.-]{1,96}/[\w.-]{1,96}$", re.ASCII)
_KEYS = {
    "select",
    "ignore",
    "fail-on",
    "per-file-ignores",
    "models",
    "min-acceptance-length",
    "engine-check",
    "engines",
}
# What `engines = [...]` may name: what serves the project's drafters (a finding scoped to other engines or ports
# does not fail its gates).
SERVED = ("vllm", "sglang", "mlx", "reference")
_MODEL_STRINGS = {"path", "upstream", "revision", "target", "served-name"}
_MODEL_KEYS = {*_MODEL_STRINGS, "min-acceptance-length"}


@dataclass(frozen=True, kw_only=True)
class ModelEntry:
    path: Path | Url  # absolute: the drafter's model dir (or its config.json); or an s3://, gs://, hf:// one
    upstream: str | None
    revision: str | None
    target: str | None  # an absolute dir, an s3://, gs:// or hf:// path, or a Hub id
    served_name: str | None = None  # the model_name the engine serves it under (vLLM --served-model-name)
    min_acceptance_length: float | None = None  # probe: below this mean acceptance length is a collapse
    # `upstream = "none"`: a drafter of the project's own; it is not identified with a published one (catalog,
    # cache snapshot), whatever its shape.
    identify: bool = True
    written: str = ""  # `path` as the config file writes it (a warning names the entry so)

    def matches(self, config: Path | Url) -> bool:
        """Whether `config` (a config.json) is this drafter's."""
        if isinstance(self.path, Url) or isinstance(config, Url):
            return isinstance(self.path, Url) and config in (self.path, self.path / files.CONFIG)
        mine = os.path.abspath(self.path)
        return os.path.abspath(config) in (mine, os.path.join(mine, files.CONFIG))


@dataclass(frozen=True, kw_only=True)
class ProjectConfig:
    source: Path | None  # the file it was read from; None: no project config
    select: str | None = None
    ignore: str | None = None
    fail_on: Severity | None = None
    # (the glob as written, compiled; rule ids)
    per_file_ignores: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = ()
    models: tuple[ModelEntry, ...] = ()
    min_acceptance_length: float | None = None  # probe's collapse threshold (default 1.5)
    # preflight runs the launch's own engine on the drafter (`engine-check = false`: never, as --no-engine-check)
    engine_check: bool = True
    # `engines = ["vllm"]`: what serves the project's drafters; () not said, so a finding about some engines only
    # is shown but fails no gate (lint.gate).
    engines: tuple[Engine, ...] = ()

    def model_for(self, config: Path | Url) -> ModelEntry | None:
        return next((m for m in self.models if m.matches(config)), None)

    def ignored_for(self, config: Path) -> tuple[str, ...]:
        """Rule ids (or prefixes) accepted on purpose for this file."""
        if self.source is None:
            return ()
        base = self.source.parent
        try:
            rel = Path(os.path.abspath(config)).relative_to(os.path.abspath(base)).as_posix()
        except ValueError:
            return ()
        return tuple(i for _, glob, ids in self.per_file_ignores if glob.fullmatch(rel) for i in ids)

    def unmatched(self, checked: Sequence[Path | Url], searched: Sequence[Path | Url]) -> tuple[str, ...]:
        """A one-line warning for each entry that matched no config.json of the run (`checked`) where it could
        have: a `[[models]] path` inside a tree the run searched (`searched`: the paths it was given), or naming
        nothing on disk; a per-file-ignores glob, when the run searched the whole project (the config file's
        directory or above). A typo there silently drops an upstream, a target or an accepted finding."""
        if self.source is None:
            return ()
        local = [os.path.abspath(p) for p in checked if not isinstance(p, Url)]
        roots = [os.path.abspath(p) for p in searched if not isinstance(p, Url)]
        out = []
        shown = os.path.relpath(self.source)
        config = self.source if shown.startswith("..") else shown
        for n, m in enumerate(self.models):
            if isinstance(m.path, Url) or any(m.matches(Path(p)) for p in local):
                continue
            mine = os.path.abspath(m.path)
            inside = any(os.path.commonpath((mine, root)) == root for root in roots)
            if inside or not os.path.exists(mine):
                out.append(
                    f"{config}: models[{n}].path = {m.written!r} matches no config.json of this run "
                    f"({'no such path' if not os.path.exists(mine) else 'none under it'}): the entry applies to "
                    "nothing"
                )
        base = os.path.abspath(self.source.parent)
        if any(os.path.commonpath((base, root)) == root for root in roots):
            rels = [os.path.relpath(p, base).replace(os.sep, "/") for p in local]
            for written, glob, ids in self.per_file_ignores:
                if not any(glob.fullmatch(rel) for rel in rels if not rel.startswith("../")):
                    out.append(
                        f"{config}: per-file-ignores {written!r} = {list(ids)} matches no config.json of this "
                        "run (globs are relative to the config file's directory, as in .gitignore)"
                    )
        return tuple(out)


NONE = ProjectConfig(source=None)


def _compile_glob(glob: str) -> re.Pattern[str]:
    """One regex for a per-file glob, made once, with the glob semantics of .gitignore (and ruff's
    per-file-ignores): `*`, `?` and `[...]` never cross a `/`; `**` is any number of dirs ("**/config.json",
    "models/**/config.json"); a glob without a `/` but a trailing one matches at any depth ("config.json"); a dir,
    with a trailing `/` or not ("models/drafter/"), covers everything under it."""
    anchored = "/" in glob.rstrip("/")
    parts = [p for p in glob.strip("/").split("/") if p]
    out = "" if anchored else "(?:.*/)?"
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out += ".*" if last else "(?:.*/)?"
            continue
        out += _segment(part) + ("" if last else "/")
    return re.compile(out + "(?:/.*)?", re.DOTALL)


def _segment(part: str) -> str:
    """One path segment of a glob as a regex: wildcards stay within it."""
    out, i = "", 0
    while i < len(part):
        c = part[i]
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[" and (end := part.find("]", i + 2 if part[i + 1 : i + 2] in ("!", "]") else i + 1)) > i:
            body = part[i + 1 : end]
            negated = body.startswith("!")
            body = re.sub(r"([\\^\]])", r"\\\1", body[1:] if negated else body)
            out += f"[{'^/' if negated else ''}{body}]" if negated else f"(?!/)[{body}]"
            i = end
        else:
            out += re.escape(c)
        i += 1
    return out


def find(start: Path) -> Path | None:
    """The nearest dflash-cfg.toml, or pyproject.toml with a [tool.dflash-cfg] table, from `start` up."""
    here = Path(os.path.abspath(start))
    if files.probe(here) != "dir":
        here = here.parent
    for folder in (here, *here.parents):
        own = folder / CONFIG_NAME
        if files.probe(own) == "file":
            return own
        pyproject = folder / PYPROJECT
        if files.probe(pyproject) == "file" and _tool_table(_read_toml(pyproject), pyproject) is not None:
            return pyproject
    return None


def load(path: Path) -> ProjectConfig:
    """Read and validate one config file; every mistake is a one-line UsageError naming file and key."""
    data = _read_toml(path)
    table = data if path.name != PYPROJECT else _tool_table(data, path)
    if table is None:
        raise UsageError(f"{path}: no [tool.dflash-cfg] table")
    return parse(table, path)


def parse(table: dict[str, Any], path: Path) -> ProjectConfig:
    def bad(key: str, why: str) -> UsageError:
        return UsageError(f"{path}: {key}: {why}")

    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise bad(unknown[0], f"unknown key (known: {', '.join(sorted(_KEYS))})")
    select, ignore = _ids(table, "select", bad), _ids(table, "ignore", bad)
    fail_on = None
    if "fail-on" in table:
        value = table["fail-on"]
        if value not in ("error", "warning"):
            raise bad("fail-on", f'must be "error" or "warning", not {value!r}')
        fail_on = Severity[value.upper()]
    per_file: list[tuple[str, re.Pattern[str], tuple[str, ...]]] = []
    raw_pfi = table.get("per-file-ignores", {})
    if not isinstance(raw_pfi, dict):
        raise bad("per-file-ignores", "must be a table of glob = [rule ids]")
    for glob, ids in raw_pfi.items():
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i.strip() for i in ids):
            raise bad(f"per-file-ignores.{glob}", "must be a non-empty list of rule ids")
        if len(glob) > MAX_GLOB:
            raise bad(f"per-file-ignores.{glob[:40]}...", f"a glob longer than {MAX_GLOB} characters is not a path")
        per_file.append((glob, _compile_glob(glob), tuple(i.strip().upper() for i in ids)))
    engine_check = table.get("engine-check", True)
    if not isinstance(engine_check, bool):
        raise bad("engine-check", f"must be true or false, not {engine_check!r}")
    engines = served_engines(table.get("engines", []), lambda why: bad("engines", why))
    models = []
    raw_models = table.get("models", [])
    if not isinstance(raw_models, list):
        raise bad("models", "must be an array of tables ([[models]])")
    for n, entry in enumerate(raw_models):
        where = f"models[{n}]"
        if not isinstance(entry, dict):
            raise bad(where, "must be a table")
        extra = sorted(set(entry) - _MODEL_KEYS)
        if extra:
            raise bad(f"{where}.{extra[0]}", f"unknown key (known: {', '.join(sorted(_MODEL_KEYS))})")
        values = {}
        for key in _MODEL_STRINGS:
            value = entry.get(key)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise bad(f"{where}.{key}", "must be a non-empty string")
            values[key] = value
        if values["path"] is None:
            raise bad(f"{where}.path", "is required (the drafter's model dir, relative to this file)")
        own = values["upstream"] == "none"
        if values["revision"] is not None and (values["upstream"] is None or own):
            raise bad(f"{where}.revision", "needs upstream")
        upstream = None if own else values["upstream"]
        if upstream is not None and not _REPO_ID.match(upstream):
            raise bad(
                f"{where}.upstream",
                f'{upstream!r} is not a Hub repo id (org/name), or "none" for a drafter of your own',
            )
        if values["revision"] is not None:
            try:
                check_revision(values["revision"])
            except HubError as exc:
                raise bad(f"{where}.revision", str(exc)) from None
        model_path: Path | Url
        if remote.is_url(values["path"]):
            model_path = _url(values["path"], f"{where}.path", bad)
        else:
            model_path = Path(os.path.normpath(path.parent / values["path"]))
        target = values["target"]
        if target is not None and remote.is_url(target):
            _url(target, f"{where}.target", bad)  # kept as written: --target reads it the same way
        elif target is not None and not _looks_like_hub_id(target, path.parent):
            target = os.path.normpath(path.parent / target)
        models.append(
            ModelEntry(
                path=model_path,
                upstream=upstream,
                revision=values["revision"],
                target=target,
                served_name=values["served-name"],
                min_acceptance_length=_min_length(entry, f"{where}.min-acceptance-length", bad),
                identify=not own,
                written=values["path"],
            )
        )
    min_length = _min_length(table, "min-acceptance-length", bad)
    return ProjectConfig(
        source=path,
        select=select,
        ignore=ignore,
        fail_on=fail_on,
        per_file_ignores=tuple(per_file),
        models=tuple(models),
        min_acceptance_length=min_length,
        engine_check=engine_check,
        engines=engines,
    )


def served_engines(value: Any, bad: Callable[[str], Exception]) -> tuple[Engine, ...]:
    """`engines` of the project config, or `--engine` values: names of SERVED, as a tuple without repeats."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise bad(f"must be a list of engine names ({', '.join(SERVED)})")
    out: list[Engine] = []
    for name in value:
        known = name.strip().lower() if isinstance(name, str) else None
        if known not in SERVED or not is_engine(known):
            raise bad(f"{name!r} is not an engine dflash-cfg knows (known: {', '.join(SERVED)})")
        if known not in out:
            out.append(known)
    return tuple(out)


def _min_length(table: dict[str, Any], key: str, bad: Any) -> float | None:
    value = table.get(key.rsplit(".", 1)[-1])
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1 <= value < 1e6:
        raise bad(key, "must be a number of tokens, at least 1 (the bonus token alone), e.g. 1.5")
    return float(value)


def _url(text: str, key: str, bad: Any) -> Url:
    try:
        return remote.parse(text)
    except UsageError as exc:
        raise bad(key, str(exc)) from None


def _looks_like_hub_id(value: str, base: Path) -> bool:
    """org/name that is not an existing path beside the config: a Hub id (a path wins, as in the engines)."""
    return value.count("/") == 1 and not value.startswith((".", "/")) and files.probe(base / value) == "missing"


def _ids(table: dict[str, Any], key: str, bad: Any) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(i, str) for i in value):
        raise bad(key, 'must be a list of rule ids or prefixes, e.g. ["DF2", "DF601"]')
    return ",".join(value)


def _tool_table(data: dict[str, Any], path: Path) -> dict[str, Any] | None:
    tool = data.get("tool")
    table = tool.get("dflash-cfg") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.dflash-cfg] must be a table")
    return table


# Parsed TOML by (path, its stat): a process that checks many times (the API, a watch) parses a pyproject.toml
# it passes on the way up once, and again only when the file changes.
_PARSED: dict[tuple[str, int, int, int], dict[str, Any]] = {}


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return _parse_toml(path)
    key = (os.fspath(path), st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _PARSED:
        if len(_PARSED) > 64:
            _PARSED.clear()
        _PARSED[key] = _parse_toml(path)
    return copy.deepcopy(_PARSED[key])  # callers read it; a copy keeps the kept one as the file says


def _parse_toml(path: Path) -> dict[str, Any]:
    try:
        raw = files.read(path, MAX_BYTES)
    except PathError as exc:
        raise UsageError(f"project config: {exc}") from None
    if len(raw) > MAX_BYTES:
        raise UsageError(f"{path}: larger than {MAX_BYTES} bytes: not a project config")
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:  # RecursionError: nested too deeply
        raise UsageError(f"{path}: not valid TOML ({' '.join(str(exc).split())})") from None
    except ValueError as exc:  # an integer past Python's 4300-digit limit, which tomllib does not wrap
        raise UsageError(f"{path}: a value cannot be read ({' '.join(str(exc).split())[:160]})") from None


def resolve(start: Path, config: str | None, isolated: bool) -> ProjectConfig:
    """The project config that applies: --isolated none, --config FILE that one, else the nearest."""
    if isolated:
        return NONE
    if config is not None:
        return load(Path(os.path.abspath(config)))
    found = find(start)
    return load(found) if found is not None else NONE

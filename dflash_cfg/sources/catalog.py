"""The catalog of published drafters on disk: the one shipped in the package (built from the byte-checked published
files in fixtures/, tools/shipped_catalog.py) and the user's, which `dflash-cfg catalog update` refreshes from the
Hub (in the cache dir, `catalog.json`). Read together: the user's revisions add to the shipped ones, none is dropped.

JSON, version 1: {"version": 1, "updated": ISO-8601|null, "drafters": [{"repo", "gated", "base_model",
"base_shape", "shape", "revisions": [{"commit", "date", "git_blob_sha1", "sha256", "values", "trust", "source",
"complete"}]}]}. A catalog that cannot be read is said in one line (CatalogError, exit 2), never half-used.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from dflash_cfg.errors import CatalogError, PathError
from dflash_cfg.model.catalog import Catalog, Published, Revision, Shape, TargetShape
from dflash_cfg.sources import files
from dflash_cfg.sources.atomic import replace_atomically
from dflash_cfg.sources.cache import default_root

VERSION = 1
SHIPPED = "published.json"  # package data of dflash_cfg
USER_FILE = "catalog.json"
MAX_CATALOG = 64 * 1024 * 1024  # a catalog of every published drafter is a few MB


def user_path(environ: Mapping[str, str] | None = None) -> Path | None:
    root = default_root(environ)
    return None if root is None else root / USER_FILE


def catalog_path(environ: Mapping[str, str] | None = None) -> Path | None:
    """The user's catalog file, as load() reads it and `catalog update` writes it: DFLASH_CFG_CATALOG, else the
    cache dir's; None without a cache dir."""
    named = (os.environ if environ is None else environ).get("DFLASH_CFG_CATALOG")
    return Path(named) if named else user_path(environ)


def verified(catalog: Catalog, repo: str) -> frozenset[str]:
    """The commits of `repo` whose whole config.json `catalog` has as the Hub served it (trust hub or A): what
    `catalog update` need not read again. A partial, transcribed or reconstructed copy does not count: the Hub's
    file would complete or confirm it."""
    entry = catalog.get(repo)
    return frozenset(
        r.commit
        for r in (entry.revisions if entry is not None else ())
        if r.commit is not None and r.complete and r.values is not None and r.trust in ("hub", "A")
    )


# Which copy of one commit's file the catalog keeps: the Hub's own bytes over a byte-checked copy over a
# transcription over a reconstruction; a whole file over a partial one.
_TRUST_ORDER = {"hub": 0, "A": 1, "B": 2, "C": 3, "D": 4}


def _better(new: Revision, old: Revision) -> bool:
    return (not new.complete, _TRUST_ORDER[new.trust]) < (not old.complete, _TRUST_ORDER[old.trust])


def add_revision(entry: Published, revision: Revision) -> Published:
    """`entry` with `revision` recorded once: of two copies of the same commit (or of the same bytes without a
    commit) the more trusted is kept, so the Hub's file replaces a shipped reconstruction of it."""
    kept = list(entry.revisions)
    for i, seen in enumerate(kept):
        same_commit = revision.commit is not None and seen.commit == revision.commit
        same_bytes = revision.commit is None and seen.sha256 is not None and seen.sha256 == revision.sha256
        if same_commit or same_bytes:
            if not _better(revision, seen):
                return entry
            del kept[i]
            break
    ordered = sorted([*kept, revision], key=lambda r: (r.date is not None, r.date or ""))
    return Published(
        repo=entry.repo,
        shape=entry.shape,
        base_model=entry.base_model,
        base_shape=entry.base_shape,
        revisions=tuple(ordered),
        gated=entry.gated,
    )


def merge(first: Catalog, second: Catalog) -> Catalog:
    """Both catalogs' drafters; a repo in both keeps every revision of each, and the second's card facts."""
    by_repo: dict[str, Published] = {e.repo.lower(): e for e in first.drafters}
    for entry in second.drafters:
        seen = by_repo.get(entry.repo.lower())
        if seen is None:
            by_repo[entry.repo.lower()] = entry
            continue
        merged = Published(
            repo=entry.repo,
            shape=entry.shape or seen.shape,
            base_model=entry.base_model or seen.base_model,
            base_shape=entry.base_shape or seen.base_shape,
            revisions=seen.revisions,
            gated=entry.gated,
        )
        for revision in entry.revisions:
            merged = add_revision(merged, revision)
        by_repo[entry.repo.lower()] = merged
    return Catalog(
        drafters=tuple(sorted(by_repo.values(), key=lambda e: e.repo.lower())),
        updated=second.updated or first.updated,
        origin=(*first.origin, *second.origin),
    )


# --- JSON -------------------------------------------------------------------------------------------------------


def to_json(catalog: Catalog) -> dict[str, Any]:
    return {
        "version": VERSION,
        "updated": catalog.updated,
        "drafters": [
            {
                "repo": e.repo,
                "gated": e.gated,
                "base_model": e.base_model,
                "base_shape": None
                if e.base_shape is None
                else {
                    "num_hidden_layers": e.base_shape.num_hidden_layers,
                    "hidden_size": e.base_shape.hidden_size,
                    "vocab_size": e.base_shape.vocab_size,
                },
                "shape": None if e.shape is None else e.shape.to_json(),
                "revisions": [
                    {
                        "commit": r.commit,
                        "date": r.date,
                        "git_blob_sha1": r.git_blob_sha1,
                        "sha256": r.sha256,
                        "trust": r.trust,
                        "complete": r.complete,
                        "source": r.source,
                        "values": r.values,
                    }
                    for r in e.revisions
                ],
            }
            for e in catalog.drafters
        ],
    }


def dumps(catalog: Catalog) -> bytes:
    return (json.dumps(to_json(catalog), indent=1, ensure_ascii=False) + "\n").encode()


def _opt(node: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = node.get(key)
    if value is not None and (not isinstance(value, kind) or (isinstance(value, bool) and kind is int)):
        raise CatalogError(f"{where}: {key} is not a {getattr(kind, '__name__', 'value')}")
    return value


def from_json(data: Any, origin: str) -> Catalog:
    """A catalog document as values; anything malformed is refused with where it is."""
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("drafters"), list):
        raise CatalogError(f"{origin}: not a dflash-cfg catalog (version {VERSION})")
    drafters = []
    for i, node in enumerate(data["drafters"]):
        where = f"{origin}: drafters[{i}]"
        if not isinstance(node, dict) or not isinstance(node.get("repo"), str):
            raise CatalogError(f"{where}: no repo")
        shape = node.get("shape")
        base = node.get("base_shape")
        revisions = node.get("revisions")
        if not isinstance(revisions, list):
            raise CatalogError(f"{where}: no revisions")
        try:
            drafters.append(
                Published(
                    repo=node["repo"],
                    shape=None if shape is None else Shape(**_fields(shape, Shape, f"{where}.shape")),
                    base_model=_opt(node, "base_model", str, where),
                    base_shape=None
                    if base is None
                    else TargetShape(**_fields(base, TargetShape, f"{where}.base_shape")),
                    revisions=tuple(_revision(r, f"{where}.revisions") for r in revisions),
                    gated=bool(node.get("gated", False)),
                )
            )
        except (KeyError, TypeError) as exc:
            raise CatalogError(f"{where}: malformed ({exc})") from None
    updated = data.get("updated")
    return Catalog(drafters=tuple(drafters), updated=updated if isinstance(updated, str) else None, origin=(origin,))


# The text fields of a shape; every other field of a Shape or TargetShape is an integer (or null).
_TEXT_FIELDS = ("method", "architecture", "model_type")


def _fields(node: Any, kind: type[Shape] | type[TargetShape], where: str) -> dict[str, Any]:
    """A shape's fields, each of its type: a shape is a lookup key, so a list where a number belongs would not only
    be wrong but unhashable."""
    if not isinstance(node, dict):
        raise CatalogError(f"{where}: not an object")
    out = {}
    for key in kind.__dataclass_fields__:
        text = key in _TEXT_FIELDS
        out[key] = _opt(node, key, str if text else int, where)
        if key == "method" and out[key] is None:
            raise CatalogError(f"{where}: no method")
    return out


def _revision(node: Any, where: str) -> Revision:
    if not isinstance(node, dict):
        raise CatalogError(f"{where}: not an object")
    values = node.get("values")
    if values is not None and not isinstance(values, dict):
        raise CatalogError(f"{where}: values is not an object")
    trust = node.get("trust")
    if trust not in ("hub", "A", "B", "C", "D"):
        raise CatalogError(f"{where}: trust {trust!r} is not hub, A, B, C or D")
    return Revision(
        commit=_opt(node, "commit", str, where),
        date=_opt(node, "date", str, where),
        git_blob_sha1=_opt(node, "git_blob_sha1", str, where),
        sha256=_opt(node, "sha256", str, where),
        values=values,
        trust=trust,
        source=str(node.get("source") or ""),
        complete=bool(node.get("complete", True)),
    )


# --- files ------------------------------------------------------------------------------------------------------

_loaded: dict[tuple[str, float | None], Catalog] = {}


def shipped() -> Catalog:
    key = ("shipped", None)
    if key not in _loaded:
        text = resources.files("dflash_cfg").joinpath(SHIPPED).read_bytes()
        _loaded[key] = from_json(json.loads(text), "the shipped catalog")
    return _loaded[key]


def read_user(path: Path) -> Catalog | None:
    """The user's catalog at `path`; None when there is none yet."""
    try:
        raw = files.read_optional(path, MAX_CATALOG)
    except PathError as exc:
        raise CatalogError(f"catalog {path}: {exc}") from None
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise CatalogError(
            f"catalog {path} is not JSON ({exc}); remove it or run `dflash-cfg catalog update`"
        ) from None
    return from_json(data, f"catalog {path}")


def load(environ: Mapping[str, str] | None = None) -> Catalog:
    """The shipped catalog with the user's added (DFLASH_CFG_CATALOG names another file than the cache's)."""
    env = os.environ if environ is None else environ
    named = env.get("DFLASH_CFG_CATALOG")
    path = Path(named) if named else user_path(environ)
    base = shipped()
    if path is None:
        return base
    try:
        stamp: float | None = path.stat().st_mtime
    except OSError:
        stamp = None
    key = (str(path), stamp)
    if key not in _loaded:
        user = read_user(path) if stamp is not None else None
        _loaded[key] = base if user is None else merge(base, user)
    return _loaded[key]


def write_user(catalog: Catalog, path: Path) -> None:
    """Write the user's catalog atomically (a Ctrl-C leaves the old one or the new one, never half of one)."""
    try:
        replace_atomically(path, dumps(catalog), make_parents=True)
    except OSError as exc:
        raise CatalogError(f"cannot write the catalog {path}: {exc.strerror or exc}") from None

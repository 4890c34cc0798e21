"""A drafter config against the published drafters of the catalog: its shape, its trained values, and which
published revision (if any) it is. Pure: dicts and catalog values in, a Judgement out.

The shape (model/catalog.Shape) is what the weights fix; a file of a published shape is taken for a copy of that
drafter. Its trained values are the ones a stale or guessed copy gets wrong and the engines accept silently: the
taps, the mask id, the layer layout and window, the block size, RoPE and the vocabulary. The file is judged against
every revision of every published drafter of its shape, and the closest revision says what differs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from dflash_cfg.errors import CatalogError
from dflash_cfg.jsondoc.document import git_blob_sha1, parse
from dflash_cfg.lint.speculators import is_speculators, translate
from dflash_cfg.model import MISSING
from dflash_cfg.model.catalog import Catalog, Match, Published, Revision, Shape, TargetShape, Trust

# name -> where the value lives, in the order loaders read them (the first present wins; the first is where an
# absent value belongs). Pointers into the engine-format dict: a speculators file is judged as vLLM translates it.
TRAINED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("target_layer_ids", ("/dflash_config/target_layer_ids", "/target_layer_ids")),
    ("mask_token_id", ("/dflash_config/mask_token_id", "/mask_token_id")),
    ("layer_types", ("/layer_types",)),
    ("sliding_window", ("/sliding_window", "/dflash_config/swa_window_size")),
    ("use_sliding_window", ("/use_sliding_window", "/dflash_config/use_swa")),
    ("block_size", ("/dflash_config/block_size", "/block_size")),
    ("rope_theta", ("/rope_parameters/rope_theta", "/rope_theta")),
    ("rope_type", ("/rope_parameters/rope_type", "/rope_scaling/rope_type", "/rope_scaling/type")),
    ("rope_factor", ("/rope_parameters/factor", "/rope_scaling/factor")),
    ("vocab_size", ("/vocab_size",)),
    ("draft_vocab_size", ("/draft_vocab_size",)),
    ("is_causal", ("/is_causal", "/dflash_config/causal")),
)
# What a loader derives when the file does not say (the layout from the config class): a copy re-saved through
# transformers writes it out, which is no change of what the engines read.
DERIVED = ("layer_types",)
# Values that say what an absent key means to every loader, so a re-saved copy may write them out.
NEUTRAL: dict[str, tuple[Any, ...]] = {"rope_type": ("default",), "use_sliding_window": (False,)}


def _neutral(name: str, value: Any) -> bool:
    return value is MISSING or value is None or any(same(value, n) for n in NEUTRAL.get(name, ()))


# How messages name a trained value.
LABELS = {"target_layer_ids": "taps", "mask_token_id": "mask_token_id", "layer_types": "layer layout"}


def _at(data: dict[str, Any], where: str) -> Any:
    node: Any = data
    for part in where.split("/")[1:]:
        if not isinstance(node, dict) or part not in node:
            return MISSING
        node = node[part]
    return node


def trained_values(data: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """name -> (pointer, value) of every trained value the file has."""
    out: dict[str, tuple[str, Any]] = {}
    for name, places in TRAINED:
        for where in places:
            value = _at(data, where)
            if value is not MISSING:
                out[name] = (where, value)
                break
    return out


def pointer_of(name: str, data: dict[str, Any]) -> str:
    """Where a trained value is in the file, else where it belongs."""
    found = trained_values(data).get(name)
    return found[0] if found is not None else dict(TRAINED)[name][0]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def shape_of(data: dict[str, Any], method: str) -> Shape | None:
    """The file's shape; None when it lacks the width or the depth (too little to tell drafters apart)."""
    archs = data.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
    block = data.get("dflash_config")
    depth = block.get("num_target_layers") if isinstance(block, dict) else None
    if depth is None:
        depth = data.get("num_target_layers")
    model_type = data.get("model_type")
    shape = Shape(
        method=method,
        architecture=arch,
        model_type=model_type if isinstance(model_type, str) else None,
        hidden_size=_int(data.get("hidden_size")),
        num_hidden_layers=_int(data.get("num_hidden_layers")),
        num_attention_heads=_int(data.get("num_attention_heads")),
        num_key_value_heads=_int(data.get("num_key_value_heads")),
        head_dim=_int(data.get("head_dim")),
        intermediate_size=_int(data.get("intermediate_size")),
        target_depth=_int(depth),
    )
    return shape if shape.hidden_size is not None and shape.num_hidden_layers is not None else None


def _norm(value: Any) -> Any:
    """One JSON value per meaning: 1e7 and 10000000 are one number; true is not 1."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, list):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return value


def same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    try:
        return json.dumps(_norm(a), sort_keys=True) == json.dumps(_norm(b), sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return False


def values_json(data: dict[str, Any]) -> dict[str, Any]:
    """The trained values as a catalog revision records them."""
    return {name: value for name, (_, value) in trained_values(data).items()}


@dataclass(frozen=True, kw_only=True)
class Difference:
    name: str  # a TRAINED name
    pointer: str  # where it is (or belongs) in the checked file
    local: Any  # MISSING when the file lacks it
    published: Any  # MISSING when the revision lacks it


@dataclass(frozen=True, kw_only=True)
class Judgement:
    entry: Published
    revision: Revision  # the revision the file is (identical, trained) or the closest one (differs)
    match: Match
    differences: tuple[Difference, ...] = ()  # against `revision`, when it differs
    newer: Revision | None = None  # the newest revision, when `revision` is an older one
    changed: tuple[str, ...] = ()  # the trained values `newer` changed (older)
    others: tuple[str, ...] = ()  # other published repos of the same shape


@dataclass(frozen=True)
class _Index:
    """A catalog looked up by shape and by hash, built once per catalog: a tree of thousands of files asks it
    once a file, and a user's catalog may hold hundreds of drafters."""

    by_shape: dict[Shape, tuple[Published, ...]]
    partial: tuple[Published, ...]  # drafters known only from partial copies: their shape has unknowns
    by_hash: dict[str, tuple[Published, ...]]  # sha256 or git blob id of a revision -> its drafters


_indexes: dict[int, tuple[Catalog, _Index]] = {}


def _index(catalog: Catalog) -> _Index:
    known = _indexes.get(id(catalog))
    if known is not None and known[0] is catalog:
        return known[1]
    by_shape: dict[Shape, list[Published]] = {}
    by_hash: dict[str, list[Published]] = {}
    partial = []
    for entry in catalog.drafters:
        if entry.shape is not None:
            by_shape.setdefault(entry.shape, []).append(entry)
            if not any(r.complete for r in entry.revisions if r.values is not None):
                partial.append(entry)
        for r in entry.revisions:
            for digest in {r.sha256, r.git_blob_sha1} - {None}:
                assert digest is not None
                if entry not in by_hash.setdefault(digest, []):
                    by_hash[digest].append(entry)
    index = _Index(
        {k: tuple(v) for k, v in by_shape.items()}, tuple(partial), {k: tuple(v) for k, v in by_hash.items()}
    )
    _indexes.clear()  # one catalog a run: keep no old one alive
    _indexes[id(catalog)] = (catalog, index)
    return index


def candidates(catalog: Catalog, shape: Shape | None, sha256: str | None, blob: str | None) -> tuple[Published, ...]:
    """The published drafters a file may be a copy of: those of its shape, and any whose bytes it has (in catalog
    order)."""
    index = _index(catalog)
    found: list[Published] = [*index.by_hash.get(sha256 or "", ()), *index.by_hash.get(blob or "", ())]
    if shape is not None:
        found += index.by_shape.get(shape, ())
        found += [e for e in index.partial if _fits(e, shape)]
    if not found:
        return ()
    chosen = {id(e) for e in found}
    return tuple(e for e in catalog.drafters if id(e) in chosen)


def _fits(entry: Published, shape: Shape) -> bool:
    """The same shape; a partial copy's missing fields are unknown, so they fit anything."""
    assert entry.shape is not None
    if entry.shape == shape:
        return True
    if any(r.complete for r in entry.revisions if r.values is not None):
        return False
    mine, theirs = shape.to_json(), entry.shape.to_json()
    return all(value is None or mine[key] == value for key, value in theirs.items())


def differences(data: dict[str, Any], revision: Revision) -> tuple[Difference, ...]:
    """The trained values where the file and the revision differ (for a partial copy, only the values it has)."""
    assert revision.values is not None
    mine = trained_values(data)
    theirs = revision.values
    out = []
    for name, places in TRAINED:
        if name not in theirs and (not revision.complete or name not in mine):
            continue
        local = mine[name][1] if name in mine else MISSING
        published = theirs.get(name, MISSING)
        if published is MISSING and (name in DERIVED or _neutral(name, local)):
            continue  # the published file left it to the loader's default, which this value is (or may be)
        if local is MISSING and _neutral(name, published):
            continue
        if local is MISSING or published is MISSING or not same(local, published):
            out.append(
                Difference(
                    name=name, pointer=mine[name][0] if name in mine else places[0], local=local, published=published
                )
            )
    return tuple(out)


def _changed(old: Revision, new: Revision) -> tuple[str, ...]:
    assert old.values is not None and new.values is not None
    names = [n for n, _ in TRAINED if n in old.values or n in new.values]
    return tuple(n for n in names if not same(old.values.get(n, MISSING), new.values.get(n, MISSING)))


def judge(data: dict[str, Any], sha256: str | None, blob: str | None, found: tuple[Published, ...]) -> Judgement | None:
    """The published revision the file is, or the closest one of its shape; None without candidates."""
    if not found:
        return None
    # Byte for byte a published revision (its hashes are known even where its values are not).
    for entry in found:
        for revision in reversed(entry.revisions):
            if (sha256 is not None and revision.sha256 == sha256) or (
                blob is not None and revision.git_blob_sha1 == blob
            ):
                return _judged(entry, revision, "identical", found)
    scored: list[tuple[int, int, int, int, Published, Revision, tuple[Difference, ...]]] = []
    for e, entry in enumerate(found):
        for r, revision in enumerate(entry.revisions):
            if revision.values is None:
                continue
            diff = differences(data, revision)
            # Fewest differences; then a complete copy over a partial one; then the newest.
            scored.append((len(diff), 0 if revision.complete else 1, -r, e, entry, revision, diff))
    if not scored:
        return None
    scored.sort(key=lambda s: s[:4])
    count, _, _, _, entry, revision, diff = scored[0]
    if count:
        return _judged(entry, revision, "differs", found, diff)
    return _judged(entry, revision, "trained", found)


def _judged(
    entry: Published,
    revision: Revision,
    match: Match,
    found: tuple[Published, ...],
    diff: tuple[Difference, ...] = (),
) -> Judgement:
    others = tuple(e.repo for e in found if e.repo != entry.repo)
    newest = entry.newest
    if match in ("identical", "trained") and newest is not None and newest is not revision and revision.values:
        changed = _changed(revision, newest)
        if changed:
            return Judgement(
                entry=entry,
                revision=revision,
                match="older" if match == "trained" else match,
                newer=newest,
                changed=changed,
                others=others,
            )
    return Judgement(entry=entry, revision=revision, match=match, differences=diff, others=others)


# --- catalog revisions, from published files -------------------------------------------------------------------


def engine_dict(data: dict[str, Any]) -> dict[str, Any]:
    """The dict a drafter is judged on: a speculators-format file as vLLM translates it."""
    return translate(data).data if is_speculators(data) else data


def revision_of(
    raw: bytes, *, commit: str | None, date: str | None, trust: Trust, source: str, complete: bool = True
) -> tuple[Revision, Shape | None]:
    """A published config.json as a catalog revision, and its shape (None: not a DFlash drafter, or no shape)."""
    from dflash_cfg.lint.linter import classify  # the linter imports this module

    doc = parse(raw)
    kind, _ = classify(doc, explicit=False)
    if kind == "skipped" or not isinstance(doc.data, dict):
        raise CatalogError(f"{source}: not a DFlash-family drafter config")
    data = engine_dict(doc.data)
    revision = Revision(
        commit=commit,
        date=date,
        git_blob_sha1=git_blob_sha1(raw) if complete else None,
        sha256=hashlib.sha256(raw).hexdigest() if complete else None,
        values=values_json(data),
        trust=trust,
        source=source,
        complete=complete,
    )
    return revision, shape_of(data, kind)


def target_shape(data: Any) -> TargetShape | None:
    """A base model's config as far as a launch's target is compared with it (text_config first)."""
    if not isinstance(data, dict):
        return None
    text = data.get("text_config")
    node = text if isinstance(text, dict) and "num_hidden_layers" in text else data

    def num(key: str) -> int | None:
        value = node.get(key, data.get(key))
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    found = TargetShape(
        num_hidden_layers=num("num_hidden_layers"), hidden_size=num("hidden_size"), vocab_size=num("vocab_size")
    )
    return found if any(v is not None for v in (found.num_hidden_layers, found.hidden_size, found.vocab_size)) else None

"""Field-by-field comparison of a local drafter config with its upstream copy, raw and through
Qwen3Config. Pure: dicts in, rows out."""

from __future__ import annotations

from typing import Any

from dflash_cfg.jsondoc.pointer import escape, pointer
from dflash_cfg.model import CRITICAL, MISSING, NOT_READ, Row

# Objects whose members are compared one by one rather than as a whole.
_NESTED = ("dflash_config", "rope_parameters")


def fields(data: dict[str, Any]) -> dict[str, Any]:
    """pointer -> value at comparison granularity: top-level keys, and members of dflash_config/rope_parameters."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in _NESTED and isinstance(value, dict):
            for sub, inner in value.items():
                out[f"/{escape(key)}/{escape(sub)}"] = inner
        else:
            out[f"/{escape(key)}"] = value
    return out


def changed(a: dict[str, Any], b: dict[str, Any]) -> set[str]:
    """Pointers (at `fields` granularity, or coarser) where deepdiff finds a difference.

    Numeric type changes are ignored: 1e7 and 10000000 are one JSON number.
    """
    from deepdiff import DeepDiff

    out = set()
    for items in DeepDiff(a, b, ignore_numeric_type_changes=True, view="tree").values():
        for item in items:
            path = item.path(output_format="list")
            depth = 2 if path and path[0] in _NESTED and len(path) > 1 else 1
            out.add(pointer(*path[:depth]))
    return out


def _within(pointer: str, places: set[str]) -> bool:
    return any(pointer == p or pointer.startswith(p + "/") or p.startswith(pointer + "/") for p in places)


def compare(
    local: dict[str, Any],
    upstream: dict[str, Any],
    local_effective: dict[str, Any] | None = None,
    upstream_effective: dict[str, Any] | None = None,
) -> tuple[Row, ...]:
    """One row per field present on either side; critical fields first, in catalogue order."""
    left, right = fields(local), fields(upstream)
    leff, reff = local_effective or {}, upstream_effective or {}
    raw_changes = changed(local, upstream)
    eff_changes = changed(leff, reff) if leff and reff else set()
    rows = []
    for ptr in dict.fromkeys([*left, *right]):
        name = ptr[1:] if ptr.count("/") == 1 else ("rope_theta" if ptr == "/rope_parameters/rope_theta" else "")
        rows.append(
            Row(
                pointer=ptr,
                local=left.get(ptr, MISSING),
                upstream=right.get(ptr, MISSING),
                local_effective=leff.get(name, NOT_READ),
                upstream_effective=reff.get(name, NOT_READ),
                differs=_within(ptr, raw_changes),
                differs_effective=f"/{name}" in eff_changes,
            )
        )
    # Effective-only fields (e.g. a derived layer_types) can differ although neither file has the key.
    for name in dict.fromkeys([*leff, *reff]):
        ptr = f"/{name}"
        if ptr not in left and ptr not in right and ptr in eff_changes:
            rows.append(
                Row(
                    pointer=ptr,
                    local=MISSING,
                    upstream=MISSING,
                    local_effective=leff.get(name, MISSING),
                    upstream_effective=reff.get(name, MISSING),
                    differs=False,
                    differs_effective=True,
                )
            )
    order = {p: i for i, p in enumerate(CRITICAL)}
    return tuple(sorted(rows, key=lambda r: (0, order[r.pointer]) if r.critical else (1, r.pointer)))

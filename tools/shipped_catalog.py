"""Build the catalog shipped in the package (dflash_cfg/published.json) from fixtures/published.toml: the published
drafter files of fixtures/ with their provenance. `./dev catalog` writes it; tests/lint/test_catalog.py holds the
shipped file to what this builds, so the two cannot drift.

    python tools/shipped_catalog.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

from dflash_cfg.jsondoc.document import parse
from dflash_cfg.lint.published import revision_of, target_shape
from dflash_cfg.model.catalog import Catalog, Published, Revision, Shape
from dflash_cfg.sources.catalog import SHIPPED, dumps

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "fixtures" / "published.toml"
OUTPUT = ROOT / "dflash_cfg" / SHIPPED


def entry(node: dict[str, Any], fixtures: Path) -> Published:
    repo = str(node["repo"])
    trust = node["trust"]
    revisions: list[Revision] = []
    shape: Shape | None = None
    if "file" in node:
        path = fixtures / node["file"]
        partial = bool(node.get("partial", False))
        revision, shape = revision_of(
            path.read_bytes(),
            commit=node.get("commit"),
            date=node.get("date"),
            trust=trust,
            source=f"fixtures/{node['file']} (PROVENANCE.md: {trust})",
            complete=not partial,
        )
        revisions.append(revision)
    for sha256 in node.get("hashes", ()):
        revisions.insert(
            0,
            Revision(
                commit=None,
                date=None,
                git_blob_sha1=None,
                sha256=sha256,
                values=None,
                trust="C",
                source="a published sha256 recorded by a third party (fixtures/PROVENANCE.md)",
            ),
        )
    base = None
    if "base_config" in node:
        base = target_shape(parse((fixtures / node["base_config"]).read_bytes()).data)
    return Published(
        repo=repo, shape=shape, base_model=node.get("base_model"), base_shape=base, revisions=tuple(revisions)
    )


def build(manifest: Path = MANIFEST) -> Catalog:
    with open(manifest, "rb") as f:
        nodes = tomllib.load(f)["drafter"]
    drafters = tuple(sorted((entry(n, manifest.parent) for n in nodes), key=lambda e: e.repo.lower()))
    return Catalog(drafters=drafters)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the shipped catalog is not what this builds")
    args = parser.parse_args()
    built = dumps(build())
    if args.check:
        if OUTPUT.read_bytes() != built:
            print(f"{OUTPUT} is stale: run ./dev catalog", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_bytes(built)
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

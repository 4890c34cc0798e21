"""Maintainer tooling, outside the package (CONTRIBUTING.md, the code map's `tools/` row)."""

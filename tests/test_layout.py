"""The layout is a promise: the pure packages import nothing that touches the world, and only
commands/ joins effects and the pure core (README, "Code map")."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "dflash_cfg"

# package -> what its modules may import from dflash_cfg (prefixes of dotted module names).
ALLOWED = {
    "model": (),
    "errors": (),
    "jsondoc": ("jsondoc", "model", "errors"),
    "lint": ("jsondoc", "lint", "model", "errors"),
    "report": ("jsondoc", "lint.rules", "lint.compare", "model", "errors", "report"),
    "sources": ("jsondoc", "model", "errors", "sources", "version"),
    "write": ("jsondoc", "model", "errors", "sources", "write"),
}


def _imports(path: Path) -> list[str]:
    """dflash_cfg modules (or root names) imported at run time, not under `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for stmt in block.body
        for node in ast.walk(stmt)
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "dflash_cfg":
            if node.module == "dflash_cfg":
                found += [alias.name for alias in node.names]
            else:
                found.append(node.module.removeprefix("dflash_cfg."))
        elif isinstance(node, ast.Import):
            found += [a.name.removeprefix("dflash_cfg.") for a in node.names if a.name.startswith("dflash_cfg.")]
    return found


def test_each_package_imports_only_what_the_code_map_allows() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        package = rel.parts[0]
        if package not in ALLOWED:
            continue  # cli, __init__, __main__ and commands/ may import everything
        for module in _imports(path):
            if not any(module == a or module.startswith(a + ".") for a in ALLOWED[package]):
                wrong.append(f"{rel}: imports {module}")
    assert wrong == []


def test_the_pure_packages_never_open_files() -> None:
    calls = []
    for package in ("model.py", "jsondoc", "lint", "report"):
        for path in sorted(PACKAGE.glob(package) if package.endswith(".py") else (PACKAGE / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call):
                    name = ast.unparse(node.func)
                    if name in ("open", "os.open", "os.stat", "os.listdir", "os.scandir") or name.endswith(
                        (".read_text", ".read_bytes", ".write_text", ".write_bytes", ".exists", ".is_file", ".is_dir")
                    ):
                        calls.append(f"{path.relative_to(PACKAGE)}: {name}")
    # The schemas are package data, read once through importlib.resources (lint/schema.py).
    assert [c for c in calls if not c.startswith("lint/schema.py")] == []


def test_object_storage_is_reached_only_through_the_remote_seam() -> None:
    """fsspec and the object-storage clients are imported by sources/remote.py alone: every other module asks
    it (or sources/storage.py) to list, read or put, and never cares where a file lives."""
    clients = {"fsspec", "s3fs", "gcsfs", "botocore", "aiobotocore", "boto3"}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(str(n).split(".")[0] in clients for n in names):
                found.append(path.relative_to(PACKAGE).as_posix())
    assert sorted(set(found)) == ["sources/remote.py"]

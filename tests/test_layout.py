"""The layout is a promise: the pure parts import nothing that touches the world, and only commands/ joins
effects and the pure core. LAYOUT below is the one statement of it: the tests hold the code to it, and the
"may import" column of CONTRIBUTING.md's code map is LAYOUT rendered (a test checks that too)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dflash_cfg"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"


@dataclass(frozen=True)
class Part:
    """A module or package of dflash_cfg: what it may import from dflash_cfg (dotted prefixes, relative to
    the package; `__init__` is the package root), each exception to that with its reason, and whether it is
    pure (never opens a file)."""

    may_import: tuple[str, ...]
    exceptions: tuple[tuple[str, str], ...] = ()
    pure: bool = False


# Every module of dflash_cfg belongs to exactly one part: a module (`version.py`) or a package (`lint/`).
# In code-map order: the value types and pure core first, then the effects, the glue and the edges.
LAYOUT: dict[str, Part] = {
    "version.py": Part((), pure=True),
    "pinned.py": Part(("model",), pure=True),
    "errors.py": Part((), pure=True),
    "model/": Part(("model",), pure=True),
    "jsondoc/": Part(("jsondoc", "model", "errors"), pure=True),
    "launch/": Part(("launch", "jsondoc", "model", "errors"), pure=True),
    "lint/": Part(("lint", "jsondoc", "model", "errors", "pinned"), pure=True),
    "report/": Part(("report", "jsondoc", "model", "errors"), pure=True),
    "progress.py": Part(()),
    "sources/": Part(("sources", "jsondoc", "model", "errors", "version", "pinned", "progress")),
    "write/": Part(("write", "sources", "jsondoc", "model", "errors")),
    "commands/": Part(
        (
            "commands",
            "sources",
            "write",
            "lint",
            "launch",
            "jsondoc",
            "model",
            "errors",
            "version",
            "pinned",
            "progress",
        )
    ),
    "__init__.py": Part(("commands", "model", "errors", "version")),
    "cli/": Part(
        ("cli", "commands", "report", "model", "errors", "version", "progress"),
        exceptions=(
            ("lint.gate", "a check's exit code and its advice: the verdict on the report"),
            (
                "lint.rules",
                "the rules' docs as values for the renderers: the `rules` command's catalogue, SARIF's rule "
                "descriptions",
            ),
            ("sources.hfenv", "reads the Hub token to keep it out of every message, click's own errors too"),
        ),
    ),
    "__main__.py": Part(("cli",)),
    # Standalone scripts run by an engine's own interpreter, where dflash_cfg may not be installed.
    "adapters/": Part(
        (),
        exceptions=(
            (
                "adapters",
                "their shared module, for the type checker only: at run time a script imports it from its own dir",
            ),
        ),
    ),
}


# The parts outside the package, and what of the repository they may import: the top-level names of dflash_cfg,
# of tools/ and of the tests' modules (tests/: `engines` is tests/engines/). The tests may import the tooling; the
# package imports neither.
OUTSIDE: dict[str, Part] = {
    "tools/": Part(
        ("dflash_cfg", "tools"),
        exceptions=(
            (
                "engines",
                "the engine tooling runs the engine suite's own drafters and launches (tests/engines/cases.py, "
                "mutants.py, launches.py) in the venvs its build.py makes",
            ),
        ),
    ),
}
TEST_MODULES = {p.stem for p in (ROOT / "tests").glob("*.py")} | {
    p.name for p in (ROOT / "tests").iterdir() if (p / "__init__.py").is_file()
}


def _part(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return f"{rel.parts[0]}/" if len(rel.parts) > 1 else rel.name


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _submodules() -> set[str]:
    """Names directly under dflash_cfg/ that are modules or packages (what `from dflash_cfg import X` imports as a
    module rather than a name of the root)."""
    return {p.stem for p in PACKAGE.glob("*.py")} | {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}


def _imports(path: Path) -> list[str]:
    """Every dflash_cfg module a file imports, dotted and relative to the package (`__init__` for the root),
    wherever the import is: at the top, in a function, or under `if TYPE_CHECKING:` (a type-only import is
    still a dependency on the other part's names)."""
    rel = path.relative_to(PACKAGE).with_suffix("")
    package = ["dflash_cfg", *rel.parts[:-1]]  # what a relative import starts from
    submodules = _submodules()
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.split(".")[0] == "dflash_cfg"]
            found += [n.removeprefix("dflash_cfg").removeprefix(".") or "__init__" for n in names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            if module.split(".")[0] != "dflash_cfg":
                continue
            if module == "dflash_cfg":
                found += [a.name if a.name in submodules else "__init__" for a in node.names]
            else:
                found.append(module.removeprefix("dflash_cfg."))
    return found


def _allows(allowed: tuple[str, ...], module: str) -> bool:
    return any(module == a or module.startswith(a + ".") for a in allowed)


def test_every_module_belongs_to_a_part_of_the_layout() -> None:
    unplaced = sorted({_part(p) for p in _modules()} - set(LAYOUT))
    assert unplaced == [], f"add these to LAYOUT (and to the code map in CONTRIBUTING.md): {unplaced}"


def test_each_part_imports_only_what_the_layout_allows() -> None:
    wrong = []
    for path in _modules():
        part = LAYOUT[_part(path)]
        allowed = (*part.may_import, *(m for m, _ in part.exceptions))
        wrong += [f"{path.relative_to(PACKAGE)}: imports {m}" for m in _imports(path) if not _allows(allowed, m)]
    assert wrong == []


def test_every_exception_is_still_needed() -> None:
    """An exception the code no longer uses goes from the table, so the table says only what is true."""
    used = {(_part(p), m) for p in _modules() for m in _imports(p)}
    stale = [
        f"{name}: {exception}"
        for name, part in LAYOUT.items()
        for exception, _ in part.exceptions
        if not any(p == name and _allows((exception,), m) for p, m in used)
    ]
    assert stale == []


def test_the_pure_parts_never_open_files() -> None:
    calls = []
    for path in _modules():
        if not LAYOUT[_part(path)].pure:
            continue
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
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(str(n).split(".")[0] in clients for n in names):
                found.append(path.relative_to(PACKAGE).as_posix())
    assert sorted(set(found)) == ["sources/remote.py"]


def _first_party(path: Path) -> list[str]:
    """The top-level names of the repository's own code (dflash_cfg, tools, the tests' modules) a file imports,
    wherever the import is."""
    ours = {"dflash_cfg", "tools"} | TEST_MODULES
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append(node.module.split(".")[0])
    return [name for name in found if name in ours]


def test_the_parts_outside_the_package_import_only_what_the_layout_allows() -> None:
    wrong, used = [], set()
    for name, part in OUTSIDE.items():
        allowed = (*part.may_import, *(m for m, _ in part.exceptions))
        for path in sorted((ROOT / name).rglob("*.py")):
            imports = _first_party(path)
            used |= {(name, m) for m in imports}
            wrong += [f"{path.relative_to(ROOT)}: imports {m}" for m in imports if m not in allowed]
    stale = [f"{n}: {m}" for n, part in OUTSIDE.items() for m, _ in part.exceptions if (n, m) not in used]
    assert wrong == [] and stale == []


def test_the_package_imports_neither_the_tooling_nor_the_tests() -> None:
    wrong = [f"{p.relative_to(PACKAGE)}: imports {m}" for p in _modules() for m in _first_party(p) if m != "dflash_cfg"]
    assert wrong == []


# --- CONTRIBUTING.md's code map -------------------------------------------------------------------------


def may_import(part: Part) -> str:
    """The code map's "may import" cell for a part."""
    text = ", ".join(f"`{m}`" for m in part.may_import) or "nothing of dflash_cfg"
    if part.exceptions:
        text += "; also " + "; ".join(f"`{m}` ({why})" for m, why in part.exceptions)
    return text


_ROW = re.compile(r"^\| `(?P<part>[^`]+)` \| (?P<owns>.*?) \| (?P<may>.*) \|$")


def _code_map() -> list[tuple[str, str, str]]:
    """(part, owns, may import) of each row of the table under CONTRIBUTING.md's `## Code map`."""
    text = CONTRIBUTING.read_text(encoding="utf-8")
    section = re.split(r"(?m)^## Code map$", text, maxsplit=1)[1].split("\n## ", 1)[0]
    return [(m["part"], m["owns"], m["may"]) for m in map(_ROW.match, section.splitlines()) if m]


def test_the_code_map_shows_the_layout() -> None:
    shown = _code_map()
    owns = {part: cell for part, cell, _ in shown}
    parts = {**LAYOUT, **OUTSIDE}
    expected = [(name, owns.get(name, "(say what it owns)"), may_import(part)) for name, part in parts.items()]
    table = "\n".join(
        ["| part | owns | may import |", "|---|---|---|", *(f"| `{n}` | {o} | {m} |" for n, o, m in expected)]
    )
    assert shown == expected, f"CONTRIBUTING.md's code map should read:\n\n{table}\n"

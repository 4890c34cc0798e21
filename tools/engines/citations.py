"""Resolve the repository's engine citations (`path:qualname[@release]`, dflash_cfg/lint/citations.py) in an
engine venv.

    python tools/engines/citations.py [--python PY] [--check]   (from the repository root, in .venv)

writes dflash_cfg/lint/cited_lines.py: the lines of every citation the venv holds the release of (PY: an engine
venv's python; default: the venv of $DFLASH_CFG_ENGINES_LOCK's lock, else the pinned one, built if needed), the
entries of the other releases kept as they are; or with --check says what differs and exits 1. A venv holds an
untagged citation when it has the pinned release of the citation's package (pinned.PINNED), a tagged one when it
has the tag's release: run it once with the pinned venv and once with each release's of pinned.ALSO_CHECKED that a
citation is tagged with. A citation it holds that names nothing there, or a tag naming a release the suite does not
run, is an error either way (exit 1). The engine suite holds the same (test_citations.py); `./dev engines --cite`
runs this script, and `./dev engines --upgrade` does after a release.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from dflash_cfg.lint.citations import BY_LINE, PACKAGES, citations, parse
from dflash_cfg.model import Engine
from dflash_cfg.pinned import ALSO_CHECKED, PINNED

ROOT = Path(__file__).resolve().parent.parent.parent
TABLE = ROOT / "dflash_cfg" / "lint" / "cited_lines.py"
SOURCE_KEYS = ROOT / "dflash_cfg" / "lint" / "engine_source_keys.py"
# Where citations are written: the package, the docs (templates and pages), the tests, the tooling, the top-level
# prose.
SCANNED = (
    "dflash_cfg/**/*.py", "docs/**/*.md", "tests/**/*.py", "tests/**/*.yaml", "tests/**/*.toml", "tools/**/*.py", "*.md"
)  # fmt: skip


# A Markdown backslash escape (CommonMark: any ASCII punctuation). Generated pages escape the `_` of names
# outside code spans (docs/rules.md renders the `lint.engines` rows so), which would cut a citation short.
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
# Release reports (`./dev engines --upgrade`) quote the code of two releases: a record, not a claim on the pinned one.
NOT_SCANNED = ("docs/releases/",)


def scanned_files(root: Path = ROOT) -> list[Path]:
    files = {p for pattern in SCANNED for p in root.glob(pattern) if p.is_file()}
    files = {p for p in files if not str(p.relative_to(root)).startswith(NOT_SCANNED)}
    # The source-keys table cites the code it was generated from, hundreds of reads: the engine suite holds it equal
    # to a fresh extraction (test_engine_source_keys.py), which resolves each citation by construction.
    return sorted(files - {root / TABLE.relative_to(ROOT), root / SOURCE_KEYS.relative_to(ROOT)})


def text_of(path: Path) -> str:
    """The text a citation is read from: a Markdown page's as rendered (its backslash escapes undone)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return _MD_ESCAPE.sub(r"\1", text) if path.suffix == ".md" else text


def collect(root: Path = ROOT) -> dict[str, list[str]]:
    """Every citation in the repository -> the files that cite it (relative paths)."""
    found: dict[str, list[str]] = {}
    for path in scanned_files(root):
        for cited in citations(text_of(path)):
            found.setdefault(cited, [])
            if (rel := str(path.relative_to(root))) not in found[cited]:
                found[cited].append(rel)
    return dict(sorted(found.items()))


def by_line(root: Path = ROOT) -> list[str]:
    """Citations by line number still written somewhere (`FILE: PACKAGE/PATH.py:LINE`)."""
    return [
        f"{path.relative_to(root)}: {m.group(0)}"
        for path in scanned_files(root)
        for m in BY_LINE.finditer(text_of(path))
    ]


def site_packages(python: str | Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return Path(out.strip())


def versions(site: Path) -> dict[str, str]:
    """The installed release of each cited package, from its dist-info (nothing imported)."""
    found = {}
    for info in site.glob("*.dist-info"):
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        if name.lower() in PACKAGES:
            found[name.lower()] = version
    return dict(sorted(found.items()))


def _named(body: Iterable[ast.stmt]) -> dict[str, ast.AST]:
    """The names a module or class body defines: functions, classes and assigned names (the last wins, as at
    run time)."""
    names: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
    return names


def resolve(site: Path, cited: str) -> tuple[int, int] | None:
    """The first and last line of what `cited` names in the code installed under `site` (a release tag is not looked
    at: `due` says which venv to ask); None if nothing."""
    parsed = parse(cited)
    path, qualname = parsed.path, parsed.qualname
    try:
        tree = ast.parse((site / path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    node: ast.AST = tree
    for part in qualname.split("."):
        body = getattr(node, "body", None)
        found = _named(body) if isinstance(body, list) else {}
        if part not in found:
            return None
        node = found[part]
    start = getattr(node, "lineno", None)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.decorator_list:
        start = node.decorator_list[0].lineno
    end = getattr(node, "end_lineno", None)
    return (start, end) if isinstance(start, int) and isinstance(end, int) else None


def qualname_at(site: Path, path: str, line: int) -> str | None:
    """The innermost function or class of `path` (under `site`) whose lines hold `line`, as a qualname; else the
    module-level name assigned there. For turning a citation by line into one by name."""
    tree = ast.parse((site / path).read_bytes())
    best: list[str] = []

    def walk(body: list[ast.stmt], prefix: list[str]) -> None:
        nonlocal best
        for node in body:
            end = node.end_lineno or node.lineno
            first = node.lineno
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.decorator_list:
                first = node.decorator_list[0].lineno
            if not first <= line <= end:
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                best = [*prefix, node.name]
                walk(node.body, best)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and not best:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                if names:
                    best = [*prefix, names[0]]

    walk(tree.body, [])
    return ".".join(best) or None


def due(cited: str, installed: Mapping[str, str], pinned: Mapping[Engine, str] = PINNED) -> bool:
    """Whether a venv with the `installed` releases holds what `cited` names: the pinned release of its package for
    an untagged citation, the tag's release for a tagged one."""
    parsed = parse(cited)
    want = parsed.release or pinned.get(parsed.package)
    return want is not None and installed.get(parsed.package) == want


def bad_tags(cited: Mapping[str, list[str]], pinned: Mapping[Engine, str] = PINNED) -> dict[str, list[str]]:
    """The tagged citations whose release the suite does not run (neither pinned nor ALSO_CHECKED): nothing would
    ever resolve them. Citation -> the files citing it."""
    out = {}
    for name, where in cited.items():
        parsed = parse(name)
        runs = {pinned.get(parsed.package), *ALSO_CHECKED.get(parsed.package, ())}
        if parsed.release is not None and parsed.release not in runs:
            out[name] = where
    return out


@dataclass(frozen=True)
class Resolution:
    lines: dict[str, tuple[int, int]]  # the citations this venv holds -> their lines in it
    gone: dict[str, list[str]]  # a citation this venv holds that names nothing in it -> the files citing it
    versions: dict[str, str]  # the venv's release of each cited package
    cited: frozenset[str]  # every citation of the repository
    held: frozenset[str]  # those this venv holds (`due`): resolved into `lines` or `gone`
    bad_tags: dict[str, list[str]]  # see `bad_tags`


def resolve_all(site: Path, root: Path = ROOT, pinned: Mapping[Engine, str] = PINNED) -> Resolution:
    """Every citation of the repository the venv under `site` holds (`due`), resolved there. `pinned`: the releases
    untagged citations name (`./dev engines --upgrade` passes the ones it has just written)."""
    cited = collect(root)
    installed = versions(site)
    lines, gone, held = {}, {}, set()
    for name, where in cited.items():
        if not due(name, installed, pinned):
            continue
        held.add(name)
        span = resolve(site, name)
        if span is None:
            gone[name] = where
        else:
            lines[name] = span
    return Resolution(lines, gone, installed, frozenset(cited), frozenset(held), bad_tags(cited, pinned))


def table_lines(table: Path = TABLE) -> dict[str, tuple[int, int]]:
    """The `LINES` a written cited_lines.py holds (read as text: the module imported may be an older one)."""
    if not table.exists():
        return {}
    for node in ast.parse(table.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "LINES":
            value = ast.literal_eval(node.value) if node.value is not None else {}
            return {str(k): (int(a), int(b)) for k, (a, b) in value.items()}
    return {}


def merged(result: Resolution, before: Mapping[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """The table after resolving in one venv: its own citations' lines, and the entries of the citations other
    venvs hold kept from `before` (while the repository still cites them), so that re-citing with one release's
    venv keeps the other's lines."""
    kept = {k: v for k, v in before.items() if k in result.cited and k not in result.held}
    return dict(sorted({**kept, **result.lines}.items()))


def render(lines: Mapping[str, tuple[int, int]], release: Mapping[Engine, str] = PINNED) -> str:
    """cited_lines.py: `VERSIONS` the releases the untagged citations name (the pinned ones), `LINES` the table."""
    head = (TABLE.read_text(encoding="utf-8").split('"""', 2)[1]) if TABLE.exists() else ""
    out = [f'"""{head}"""', "", "VERSIONS: dict[str, str] = {"]
    out += [f'    "{k}": "{v}",' for k, v in sorted(release.items()) if k in PACKAGES] + ["}", ""]
    out += ["LINES: dict[str, tuple[int, int]] = {"]
    out += [f'    "{k}": ({a}, {b}),' for k, (a, b) in sorted(lines.items())] + ["}", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", help="the engine venv's python (default: the pinned venv, built if needed)")
    parser.add_argument("--check", action="store_true", help="compare with cited_lines.py; write nothing")
    args = parser.parse_args(argv)
    if args.python is None:
        sys.path.insert(0, str(ROOT / "tests"))
        from engines import build

        args.python = build.engine_python()  # of $DFLASH_CFG_ENGINES_LOCK's lock, else the pinned one
    result = resolve_all(site_packages(args.python))
    for name, where in result.gone.items():
        print(f"citations: {name} names nothing in the installed code (cited in {', '.join(where)})", file=sys.stderr)
    for name, where in result.bad_tags.items():
        print(f"citations: {name} is tagged with a release the suite does not run (cited in {', '.join(where)}; "
              "dflash_cfg/pinned.py PINNED, ALSO_CHECKED)", file=sys.stderr)  # fmt: skip
    for stale in by_line():
        print(f"citations: cite by name, not by line: {stale}", file=sys.stderr)
    text = render(merged(result, table_lines()))
    if args.check:
        if TABLE.read_text(encoding="utf-8") != text:
            print(f"citations: {TABLE.relative_to(ROOT)} is stale: run ./dev engines --cite", file=sys.stderr)
            return 1
    elif TABLE.read_text(encoding="utf-8") != text:
        TABLE.write_text(text, encoding="utf-8")
        print(f"wrote {TABLE.relative_to(ROOT)}", file=sys.stderr)
    return 1 if result.gone or result.bad_tags else 0


if __name__ == "__main__":
    sys.exit(main())

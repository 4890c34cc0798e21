"""What the generators of data from the engines' source share (source_keys.py, architectures.py): their command
line, the engine venv they read, and the table written as ruff formats it, or compared with the committed one."""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent


def arguments(doc: str, argv: list[str] | None) -> argparse.Namespace:
    """--python PY (default: the lock's engine venv, built if needed) and --check; the repository on sys.path."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--python", help="the engine venv's python (default: the lock's venv, built if needed)")
    parser.add_argument("--check", action="store_true", help="print what differs and exit 1; write nothing")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    if args.python is None:
        from engines import build

        args.python = str(build.engine_python())
    return args


def committed(table: Path, name: str) -> Any:
    """The value of `name` in the committed table, read as data (no import of the module being rewritten); {} when
    the file or the name is missing."""
    if not table.exists():
        return {}
    for node in ast.parse(table.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return ast.literal_eval(node.value) if node.value is not None else {}
    return {}


def write(table: Path, render: Callable[[], str], *, check: bool, versions: object, counts: object) -> int:
    """The rendered table as ruff formats it (so the checks pass on the file as written), written to `table`; with
    `check`, compared with it instead: exit 1 and a line on stderr when it is stale."""
    text = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(table), "-"],
        input=render(),
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    if check:
        if table.exists() and table.read_text(encoding="utf-8") == text:
            return 0
        print(f"{table.relative_to(ROOT)} is stale for {versions}", file=sys.stderr)
        return 1
    table.write_text(text, encoding="utf-8")
    print(f"wrote {table.relative_to(ROOT)}: {counts}")
    return 0

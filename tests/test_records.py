"""A record of more than four fields is built by keyword: `Inputs(path, doc, None, target)` reads as nothing
and breaks silently when a field is added or moved, `Inputs(path=path, doc=doc, target=target)` does neither.
So every dataclass of dflash_cfg with more than four fields is `kw_only=True`, and no module of dflash_cfg
builds one with positional arguments (mypy refuses those too; this test names the rule and the place).

Read from the source, not imported: a record's fields are the annotated names of its class body (a
`ClassVar` is none; inherited fields are not counted: no record here extends another). A call is resolved by
the name the calling module gives the class: a class it defines, `from MODULE import Name [as Alias]` (a name
a package re-exports: the one module under it that defines it), or `module.Name` for a module it imports (an
adapter script's sibling too); so two classes of one name in two modules are told apart. A call through any
other spelling (`cls(...)`, a variable) is left to mypy, which refuses positional arguments to a kw_only
record wherever it sees one."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dflash_cfg"
MAX_POSITIONAL = 4  # fields a record may have and still be built positionally


@dataclass(frozen=True)
class Record:
    module: str  # dotted, e.g. dflash_cfg.lint.linter
    name: str
    fields: int
    kw_only: bool
    line: int


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _trees() -> dict[str, tuple[Path, ast.Module]]:
    return {_module_name(p): (p, ast.parse(p.read_text(), str(p))) for p in sorted(PACKAGE.rglob("*.py"))}


def _dataclass_decorator(node: ast.ClassDef) -> ast.expr | None:
    for decorator in node.decorator_list:
        func = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name == "dataclass":
            return decorator
    return None


def _field_count(node: ast.ClassDef) -> int:
    def is_field(stmt: ast.stmt) -> bool:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            return False
        return "ClassVar" not in ast.unparse(stmt.annotation) and "KW_ONLY" not in ast.unparse(stmt.annotation)

    return sum(1 for stmt in node.body if is_field(stmt))


def _records(trees: dict[str, tuple[Path, ast.Module]]) -> dict[tuple[str, str], Record]:
    found = {}
    for module, (_, tree) in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            decorator = _dataclass_decorator(node)
            if decorator is None:
                continue
            kw_only = isinstance(decorator, ast.Call) and any(
                k.arg == "kw_only" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in decorator.keywords
            )
            found[module, node.name] = Record(module, node.name, _field_count(node), kw_only, node.lineno)
    return found


def _names(
    module: str, tree: ast.Module, records: dict[tuple[str, str], Record]
) -> tuple[dict[str, Record], dict[str, str]]:
    """What a module calls its records (a name -> the record) and the modules it imports (a name -> dotted)."""
    classes = {name: r for (m, name), r in records.items() if m == module}
    modules: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert not node.level, f"{module}: a relative import, which this walk does not resolve"
            source = node.module or ""
            for alias in node.names:
                local = alias.asname or alias.name
                if (source, alias.name) in records:
                    classes[local] = records[source, alias.name]
                elif any(m == f"{source}.{alias.name}" for m, _ in records):
                    modules[local] = f"{source}.{alias.name}"
                else:
                    # A name re-exported by a package (`from dflash_cfg.model import Inputs`): the record of that
                    # name under the package, when exactly one module there defines it.
                    under = [r for (m, n), r in records.items() if n == alias.name and m.startswith(f"{source}.")]
                    if len(under) == 1:
                        classes[local] = under[0]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                # An adapter script imports its shared module as a sibling (`import dflash_adapter_io as io`).
                sibling = f"{module.rpartition('.')[0]}.{alias.name}"
                known = any(m == sibling for m, _ in records)
                modules[alias.asname or alias.name] = sibling if known else alias.name
    return classes, modules


def _problems() -> list[str]:
    trees = _trees()
    records = _records(trees)
    problems = [
        f"{trees[r.module][0].relative_to(ROOT)}:{r.line}: {r.name} has {r.fields} fields: @dataclass(kw_only=True)"
        for r in records.values()
        if r.fields > MAX_POSITIONAL and not r.kw_only
    ]
    for module, (path, tree) in trees.items():
        classes, modules = _names(module, tree, records)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            record = None
            if isinstance(func, ast.Name):
                record = classes.get(func.id)
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in modules:
                record = records.get((modules[func.value.id], func.attr))
            if record is not None and record.fields > MAX_POSITIONAL:
                problems.append(
                    f"{path.relative_to(ROOT)}:{node.lineno}: {record.name} ({record.fields} fields) built with "
                    "positional arguments: name them"
                )
    return problems


def test_records_of_more_than_four_fields_are_built_by_keyword() -> None:
    problems = _problems()
    assert not problems, "\n".join(problems)


def test_the_walk_sees_the_records() -> None:
    """The walk finds what it is about: the big records, and a positional call where there is one."""
    records = _records(_trees())
    assert records["dflash_cfg.lint.linter", "Inputs"].fields > MAX_POSITIONAL
    assert records["dflash_cfg.commands.check", "CheckOptions"].fields > MAX_POSITIONAL
    tree = ast.parse("from dflash_cfg.lint.linter import Inputs as I\nI('p', None, True, None, None)\n")
    classes, _ = _names("dflash_cfg.commands.example", tree, records)
    assert classes["I"].name == "Inputs"
    tree = ast.parse("import dflash_adapter_io as io\n")
    _, modules = _names("dflash_cfg.adapters.adapter_example", tree, records)
    assert modules["io"] == "dflash_cfg.adapters.dflash_adapter_io"

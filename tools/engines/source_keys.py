"""Extract, from the engines' DFlash-family source, every config.json key their code reads, and write it as data.

    .venv/bin/python tools/engines/source_keys.py [--python PY] [--check]   (from the repository root)

reads the site-packages of PY (an engine venv's python; default: the venv of $DFLASH_CFG_ENGINES_LOCK's lock, else
the pinned one, built if needed) with `ast`, never importing the engines, and rewrites those releases' entries of
dflash_cfg/lint/engine_source_keys.py (the other releases' entries are kept: run it once per engine venv); with
--check it prints what differs and exits 1.

Why beside the recorded reads (lint.engine_keys): those come from running the engines' config code on the fixture
drafters, on CPU, so a key read behind a condition those files do not meet, on a GPU-only path or in a fallback is
never seen there. The source sees every read the code spells out, reached or not.

What counts as a read, in the files of FILES: `getattr(x, "k"[, d])`, `hasattr(x, "k")`, a helper named like one
(`_cfg_get(x, "k", d)`: a name ending in `get` or `getattr`), `x.get("k"[, d])`, `x["k"]`, `"k" in x` and the
attribute read `x.k` (not a method call, not an assignment), where `x` is a drafter config:
- a name `dflash_config` or `dflash_cfg`, or a call of a function whose name holds `dflash_config`
  (`_get_dflash_config(config)`), is the DFlash block: `/dflash_config/k`;
- a name or attribute `config`, `cfg`, or one of those prefixed by `hf_`, `text_`, `hf_text_`, `draft_hf_`,
  `pretrained_` (`self.draft_model_config.hf_config`), or a `get_text_config()` call, is the file's top level: `/k`.
  Not a `*model_config`, `speculative_config`, `vllm_config` or a target's config: those are the engine's own
  objects or another model's file; nor `draft_config`, SGLang's name for the settings it parsed from the file;
- a key read from either is that key's object (`config.dflash_config` is `/dflash_config`, and so is a local name
  assigned from it: `draft_config = getattr(config, "dflash_config", None) or {}`). A local name assigned from
  anything else is not a config, whatever its name.
A key is kept when it is an identifier, not private (`_x`) and not a method's name (`get_x`, `to_x`), and not a
member test of `architectures` (a list). The condition of a read is every test it sits under within its function,
innermost first, as `ast.unparse` writes them and joined by "; " (the three innermost, then "..."): an enclosing
`if`/`while`/ternary (`not (...)` in an `else`), the operands before it in an `and`/`or`, and an earlier `if` of the
same block that returns, raises, breaks or continues (the read happens only when it did not). Calls into the
function are not followed. The citation is `PATH:QUALNAME` as dflash_cfg/lint/citations.py resolves it (functions
and classes nested in each other's bodies; tagged `@RELEASE` for a release other than the pinned one); a read at
module level outside any assignment is not kept.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dflash_cfg.model import Engine

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:  # run as a script: the repository's packages importable, as the other tools do
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from tools.engines import generated  # noqa: E402 - after the path set-up above

TABLE = ROOT / "dflash_cfg" / "lint" / "engine_source_keys.py"

# (citation, default as written or "", condition or "")
Read = tuple[str, str, str]
Entry = dict[str, tuple[Read, ...]]
Table = dict[str, dict[str, Entry]]

# The DFlash-family code of each engine, as glob patterns under site-packages (fnmatch: `*` crosses `/`).
FILES: Mapping[Engine, tuple[str, ...]] = {
    "vllm": (
        "vllm/model_executor/models/*dflash*.py",
        "vllm/model_executor/models/*dspark*.py",
        "vllm/v1/worker/gpu/spec_decode/*dflash*.py",
        "vllm/v1/worker/gpu/spec_decode/*dspark*.py",
        "vllm/v1/spec_decode/*dflash*.py",
        "vllm/v1/spec_decode/*dspark*.py",
        "vllm/config/speculative.py",
        "vllm/transformers_utils/configs/speculators/*.py",
    ),
    "sglang": (
        "sglang/srt/speculative/*dflash*.py",
        "sglang/srt/speculative/*dspark*.py",
        "sglang/srt/models/*dflash*.py",
        "sglang/srt/models/*dspark*.py",
    ),
    "speculators": ("speculators/models/*dflash*.py", "speculators/models/*dspark*.py"),
}

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Not `draft_config`: SGLang names so the parsed DFlash settings object (parse_dflash_draft_config), not a file.
_TOP = re.compile(r"_?(?:(?:hf|text|hf_text|draft_hf|pretrained)_)?(?:config|cfg)")
_TOP_CALLS = frozenset({"get_text_config", "_get_text_config", "get_hf_text_config"})
_DFLASH_NAMES = frozenset({"dflash_config", "dflash_cfg"})
_MAX_CONDS = 3
_EXITS = (ast.Return, ast.Raise, ast.Break, ast.Continue)
# The conditions are the engines' own code as written, one string each: longer than a line.
_HEAD = '''# ruff: noqa: E501
"""Generated by tools/engines/source_keys.py: do not edit.

The config.json keys the engines' DFlash-family code reads, found in its source (not by running it, unlike
lint.engine_keys): engine -> release -> JSON pointer -> the reads, each (citation `PATH:QUALNAME`, the default the
code gives as written or "", the condition it is read under, innermost first and joined by "; ", or "" when
unconditional). The generator's docstring says what counts as a read and where a key is placed. The engine suite
fails when the entry of a release it runs differs from the installed code (tests/engines/test_engine_source_keys.py).
The pure accessor is dflash_cfg.lint.key_reads."""

from __future__ import annotations
'''


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _string(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _getter(call: ast.Call) -> tuple[ast.expr, str, ast.expr | None] | None:
    """(receiver, key, default) of a read by call: getattr/hasattr/a helper named like them, or `x.get("k", d)`."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "get" and call.args:
        key = _string(call.args[0])
        if key is not None:
            return func.value, key, call.args[1] if len(call.args) > 1 else None
        return None
    name = _name(func)
    if (
        name is not None
        and (name in {"getattr", "hasattr"} or name.endswith(("get", "getattr")))
        and len(call.args) > 1
    ):
        key = _string(call.args[1])
        if key is not None:
            return call.args[0], key, call.args[2] if len(call.args) > 2 else None
    return None


# A comparison's opposite, so that an `else` reads `x is None`, not `not x is not None`.
_OPPOSITE: Mapping[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
}


def _negated(test: ast.expr) -> str:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return ast.unparse(test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return ast.unparse(ast.Compare(test.left, [_OPPOSITE[type(test.ops[0])]()], test.comparators))
    return ast.unparse(ast.UnaryOp(op=ast.Not(), operand=test))


class _Scan:
    """One file's reads: walks it with the conditions, the enclosing qualname and the local names' places."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.found: set[tuple[str, str, str, str]] = set()  # (pointer, qualname, default, condition)
        # The source lines of each of those reads (not in the table: tools/engines/branches.py matches them against
        # the sites a run recorded).
        self.lines: dict[tuple[str, str, str], set[int]] = {}

    def place(self, node: ast.expr, env: Mapping[str, str | None]) -> str | None:
        """The pointer of the object `node` is, "" for the file's top level; None when it is no drafter config."""
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            return "/dflash_config" if node.id in _DFLASH_NAMES else "" if _TOP.fullmatch(node.id) else None
        if isinstance(node, ast.BoolOp):
            return self.place(node.values[0], env)
        if isinstance(node, ast.Attribute):
            base = self.place(node.value, env)
            if base is not None and _KEY.fullmatch(node.attr):
                return f"{base}/{node.attr}"
            if node.attr in _DFLASH_NAMES:
                return "/dflash_config"
            return "" if _TOP.fullmatch(node.attr) else None
        if isinstance(node, ast.Subscript):
            key = _string(node.slice)
            base = self.place(node.value, env)
            return f"{base}/{key}" if base is not None and key is not None and _KEY.fullmatch(key) else None
        if isinstance(node, ast.Call):
            got = _getter(node)
            if got is not None:
                base = self.place(got[0], env)
                return f"{base}/{got[1]}" if base is not None and _KEY.fullmatch(got[1]) else None
            name = _name(node.func) or ""
            if "dflash_config" in name:
                return "/dflash_config"
            return "" if name in _TOP_CALLS else None
        return None

    def read(self, receiver: ast.expr, key: str, default: ast.expr | None, ctx: _Ctx, node: ast.expr) -> None:
        # A private attribute or a method looked up by name (`getattr(config, "get_text_config", None)`) is the
        # object's own, never a key of the file.
        if ctx.qualname is None or not _KEY.fullmatch(key) or key.startswith(("_", "get_", "to_")):
            return
        base = self.place(receiver, ctx.env)
        # `"Qwen3ForCausalLM" in config.architectures` asks a list, not for a key.
        if base is None or base.endswith("/architectures"):
            return
        text = ast.unparse(default) if default is not None else ""
        # The innermost tests only: a long chain of guards says little more, and the table stays bounded.
        conds = ctx.conds if len(ctx.conds) <= _MAX_CONDS else (*ctx.conds[:_MAX_CONDS], "...")
        self.found.add((f"{base}/{key}", ctx.qualname, text, "; ".join(conds)))
        span = range(node.lineno, (node.end_lineno or node.lineno) + 1)
        self.lines.setdefault((f"{base}/{key}", ctx.qualname, "; ".join(conds)), set()).update(span)

    def expr(self, node: ast.AST, ctx: _Ctx) -> None:
        """Every read in an expression, with the conditions its ternaries and boolean operators add."""
        if isinstance(node, ast.IfExp):
            self.expr(node.test, ctx)
            self.expr(node.body, ctx.under(ast.unparse(node.test)))
            self.expr(node.orelse, ctx.under(_negated(node.test)))
            return
        if isinstance(node, ast.BoolOp):
            inner = ctx
            for value in node.values:
                self.expr(value, inner)
                inner = inner.under(ast.unparse(value) if isinstance(node.op, ast.And) else _negated(value))
            return
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return  # a nested scope: its body runs when called, not here
        if isinstance(node, ast.Call):
            got = _getter(node)
            if got is not None:
                self.read(got[0], got[1], got[2], ctx, node)
            # A method call is no key read: `config.to_dict()`.
            if isinstance(node.func, ast.Attribute):
                self.expr(node.func.value, ctx)
            else:
                self.expr(node.func, ctx)
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                self.expr(arg, ctx)
            return
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            self.read(node.value, node.attr, None, ctx, node)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            key = _string(node.slice)
            if key is not None:
                self.read(node.value, key, None, ctx, node)
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            key = _string(node.left)
            if key is not None:
                self.read(node.comparators[0], key, None, ctx, node)
        for child in ast.iter_child_nodes(node):
            self.expr(child, ctx)

    def block(self, body: list[ast.stmt], ctx: _Ctx) -> None:
        """A block's statements in order: an early exit guards the statements after it."""
        for stmt in body:
            self.stmt(stmt, ctx)
            if (
                isinstance(stmt, ast.If)
                and not stmt.orelse
                and stmt.body
                and isinstance(stmt.body[-1], _EXITS)
                and ctx.qualname is not None
            ):
                ctx = ctx.under(_negated(stmt.test))

    def stmt(self, stmt: ast.stmt, ctx: _Ctx) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for deco in stmt.decorator_list:
                self.expr(deco, ctx)
            self.block(stmt.body, ctx.scope(stmt.name))
        elif isinstance(stmt, (ast.If, ast.While)):
            self.expr(stmt.test, ctx)
            self.block(stmt.body, ctx.under(ast.unparse(stmt.test)))
            self.block(stmt.orelse, ctx.under(_negated(stmt.test)) if isinstance(stmt, ast.If) else ctx)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and ctx.qualname is None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if stmt.value is not None:
                self.expr(stmt.value, ctx.scope(names[0]) if names else ctx)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            if stmt.value is not None:
                self.expr(stmt.value, ctx)
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        # A local name is the object it was assigned from (None: not a config, whatever its name).
                        ctx.env[target.id] = self.place(stmt.value, ctx.env)
                    else:
                        self.expr(target, ctx)
        else:
            for field, value in ast.iter_fields(stmt):
                if isinstance(value, list) and value and all(isinstance(v, ast.stmt) for v in value):
                    self.block(value, ctx)
                elif isinstance(value, list):
                    for v in value:
                        if isinstance(v, ast.ExceptHandler):
                            self.block(v.body, ctx)
                        elif isinstance(v, ast.AST):
                            self.expr(v, ctx)
                elif isinstance(value, ast.AST) and field != "ctx":
                    self.expr(value, ctx)


class _Ctx:
    """Where a node sits: its conditions (innermost first), its citable qualname, the local names' places."""

    def __init__(self, conds: tuple[str, ...], qualname: str | None, env: dict[str, str | None]) -> None:
        self.conds, self.qualname, self.env = conds, qualname, env

    def under(self, cond: str) -> _Ctx:
        return _Ctx((cond, *self.conds), self.qualname, self.env)

    def scope(self, name: str) -> _Ctx:
        # A def or class opens a new scope: no condition of the code around it, no local name of it.
        return _Ctx((), name if self.qualname is None else f"{self.qualname}.{name}", {})


def scan(path: str, source: bytes) -> set[tuple[str, str, str, str]]:
    """(pointer, qualname, default, condition) of every read in one file's source."""
    found = _Scan(path)
    found.block(ast.parse(source).body, _Ctx((), None, {}))
    return found.found


def lines(site: Path, engine: Engine, tag: str = "") -> dict[tuple[str, str, str], frozenset[str]]:
    """(pointer, citation, condition) of every read of `engine` under `site`, as in `extract` -> its source lines,
    each `PATH:LINE`: where a run's recorded sites (dflash_adapter_keys.sites) show the read was reached."""
    out: dict[tuple[str, str, str], set[str]] = {}
    for path in files(site, engine):
        found = _Scan(path)
        found.block(ast.parse((site / path).read_bytes()).body, _Ctx((), None, {}))
        for (pointer, qualname, cond), numbers in found.lines.items():
            out.setdefault((pointer, f"{path}:{qualname}{tag}", cond), set()).update(f"{path}:{n}" for n in numbers)
    return {k: frozenset(v) for k, v in out.items()}


def files(site: Path, engine: Engine) -> list[str]:
    """The DFlash-family source files of `engine` under `site`, as paths relative to it, sorted."""
    top = site / engine
    every = sorted(str(p.relative_to(site)) for p in top.rglob("*.py")) if top.is_dir() else []
    return [p for p in every if any(fnmatch.fnmatch(p, g) for g in FILES[engine])]


def extract(site: Path, engine: Engine, tag: str = "") -> Entry:
    """pointer -> its reads, for `engine` installed under `site`; each citation tagged with `tag` ("@0.33.0")."""
    reads: dict[tuple[str, str, str], set[str]] = {}
    for path in files(site, engine):
        for pointer, qualname, default, cond in scan(path, (site / path).read_bytes()):
            reads.setdefault((pointer, f"{path}:{qualname}{tag}", cond), set()).add(default)
    entry: dict[str, list[Read]] = {}
    for (pointer, citation, cond), defaults in sorted(reads.items()):
        # One default per read: the first in order when one function gives two.
        entry.setdefault(pointer, []).append((citation, sorted(defaults)[0], cond))
    return {p: tuple(sorted(r)) for p, r in sorted(entry.items())}


def installed(python: str | Path) -> tuple[Path, dict[str, str]]:
    """The site-packages of `python` and the release of each engine installed there."""
    code = (
        "import sysconfig, json, importlib.metadata as m\n"
        "def v(d):\n"
        "    try: return m.version(d)\n"
        "    except m.PackageNotFoundError: return None\n"
        f"print(json.dumps([sysconfig.get_paths()['purelib'], {{d: v(d) for d in {sorted(FILES)!r}}}]))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout
    site, versions = json.loads(out)
    return Path(site), {e: r for e, r in versions.items() if r}


def table(path: Path = TABLE) -> Table:
    """The committed table."""
    value: Table = generated.committed(path, "KEYS")
    return value


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in release.split("."))


def render(data: Table) -> str:
    lines = [_HEAD, "# engine -> release -> JSON pointer -> ((citation, default, condition), ...)"]
    lines.append("KEYS: dict[str, dict[str, dict[str, tuple[tuple[str, str, str], ...]]]] = {")
    for engine in sorted(data):
        lines.append(f"    {engine!r}: {{")
        for release in sorted(data[engine], key=_release_key):
            lines.append(f"        {release!r}: {{")
            for pointer, reads in sorted(data[engine][release].items()):
                lines.append(f"            {json.dumps(pointer)}: (")
                lines += [f"                ({', '.join(json.dumps(x) for x in r)})," for r in reads]
                lines.append("            ),")
            lines.append("        },")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"


def wanted(site: Path, versions: Mapping[str, str], pinned: Mapping[Engine, str]) -> dict[Engine, tuple[str, Entry]]:
    """engine -> (its release under `site`, its entry), citations tagged for a release other than the pinned one."""
    return {
        e: (versions[e], extract(site, e, "" if pinned.get(e) == versions[e] else f"@{versions[e]}"))
        for e in sorted(FILES)
        if e in versions
    }


def main(argv: list[str] | None = None) -> int:
    args = generated.arguments(__doc__, argv)
    from dflash_cfg.pinned import PINNED

    site, versions = installed(args.python)
    data = table()
    found = wanted(site, versions, PINNED)
    for engine, (release, entry) in found.items():
        data.setdefault(engine, {})[release] = entry
    counts = {f"{e} {r}": len(entry) for e, (r, entry) in found.items()}
    return generated.write(TABLE, lambda: render(data), check=args.check, versions=versions, counts=counts)


if __name__ == "__main__":
    raise SystemExit(main())

"""The adapters' stand-ins (engine checks that run only on a GPU worker, reproduced by the adapter) are held to the
installed engine code they name, not to their own constants: the code is there, and so is the raise."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest
from helpers import ROOT

from dflash_cfg.adapters.dflash_adapter_io import StandIn
from tools.engines import citations

sys.path.insert(0, str(ROOT / "dflash_cfg" / "adapters"))  # as the adapters run: their dir first on the path
ADAPTERS = {name: importlib.import_module(f"adapter_{name}") for name in ("vllm", "sglang")}
STAND_INS = [(name, key, check) for name, module in ADAPTERS.items() for key, check in module.STAND_INS.items()]


def _definition(site: Path, cited: str) -> ast.AST:
    path, _, qualname = cited.partition(":")
    node: ast.AST = ast.parse((site / path).read_bytes())
    for part in qualname.split("."):
        node = next(n for n in getattr(node, "body", []) if getattr(n, "name", None) == part)
    return node


def _message(node: ast.AST) -> str | None:
    """A raise's message when it is a string literal (implicit concatenation joins into one constant)."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        value = node.args[0].value
        return value if isinstance(value, str) else None
    return None


@pytest.mark.parametrize(("engine", "key", "check"), STAND_INS, ids=[f"{e}-{k}" for e, k, _ in STAND_INS])
def test_a_stand_in_reproduces_the_installed_check(engine_python: Path, engine: str, key: str, check: StandIn) -> None:
    site = citations.site_packages(engine_python)
    assert citations.resolve(site, check.where) is not None, f"{check.where} is gone from the pinned {engine}"
    definition = _definition(site, check.where)
    want = ast.unparse(ast.parse(check.code, mode="eval").body)
    found = [n for n in ast.walk(definition) if isinstance(n, ast.expr) and ast.unparse(n) == want]
    assert found, f"the pinned {engine} has no `{check.code}` in {check.where}"
    if check.message is None:
        return
    raised: list[ast.expr | None] = []
    for node in ast.walk(definition):
        if isinstance(node, ast.If) and ast.unparse(node.test) == want:
            raised += [r.exc for r in node.body if isinstance(r, ast.Raise)]
    calls = [(ast.unparse(r.func), _message(r)) for r in raised if isinstance(r, ast.Call)]
    assert calls == [(check.kind, check.message)], (
        f"{check.where}: the raise under `{check.code}` is not the stand-in's"
    )

"""Scaffold a new rule: `./dev new-rule DFnnn NAME --family F [--engine vllm>=X] [--reads vllm.KEY,...]`.

Everything about a rule is declared on its `@rule` (the engine read rows behind it, the release change it knows,
its rows of docs/launch-checks.md); this writes that declaration with a stub body into the family's module and its
`RULES`, a new release bound and change into lint/releases.py when `--engine` names one, and a case file with a
row where the rule fires and one where it does not, and prints what is left by hand. Every text left to write
says TODO, and tests/lint/rules/test_registry.py fails while one is left.

    python tools/new_rule.py DF814 launch-draft-foo --family launch_vllm --engine "vllm>=0.35.0" --reads vllm.METHOD
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from dflash_cfg.lint import engines
from dflash_cfg.lint.rules import REGISTRY
from dflash_cfg.model import Requirement, release

ROOT = Path(__file__).resolve().parent.parent
RULES_DIR = ROOT / "dflash_cfg" / "lint" / "rules"
RELEASES = ROOT / "dflash_cfg" / "lint" / "releases.py"
CASES = ROOT / "tests" / "lint" / "rules" / "cases"
NOT_FAMILIES = {"__init__", "base"}
TODO = "TODO"
# The reader modules a `--reads` row may come from, as rule modules import them.
READERS = {
    "vllm": engines.vllm,
    "sglang": engines.sglang,
    "transformers": engines.transformers,
    "speculators": engines.speculators,
}
# A published drafter and its target, present in fixtures/, for the case rows.
BASE, TARGET = "Qwen3.6-27B-DFlash", "Qwen__Qwen3.6-27B"


class Refused(Exception):
    """An argument the scaffold cannot take: said in one line, exit 2."""


@dataclass(frozen=True, kw_only=True)
class Spec:
    """The new rule as the command line asks for it."""

    id: str
    name: str
    family: str
    engine: Requirement | None
    reads: tuple[str, ...]  # "vllm.METHOD"

    @property
    def function(self) -> str:
        return self.name.replace("-", "_")

    @property
    def launch(self) -> bool:
        """A launch rule (DF8xx): its cases run preflight, and it has rows on the launch-checks page."""
        return self.id.startswith("DF8")

    @property
    def bound(self) -> str | None:
        """The release bound's constant in lint/releases.py (VLLM_0_35 for vllm 0.35.0)."""
        if self.engine is None:
            return None
        parts = list(release(self.engine.version) or ())
        while len(parts) > 2 and parts[-1] == 0:
            parts.pop()
        return "_".join([self.engine.engine.upper(), *map(str, parts)])

    @property
    def change(self) -> str | None:
        """The change's constant in lint/releases.py, named after the rule."""
        return None if self.engine is None else self.function.upper()


def spec(rule_id: str, name: str, family: str, engine: str | None, reads: str) -> Spec:
    """The arguments held to what a rule may be; Refused with the cause."""
    if not re.fullmatch(r"DF[0-9]{3}", rule_id):
        raise Refused(f"{rule_id!r} is not a rule id (DF and three digits)")
    if rule_id in REGISTRY:
        raise Refused(f"{rule_id} exists already ({REGISTRY[rule_id].name})")
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name):
        raise Refused(f"{name!r} is not a kebab-case rule name (e.g. launch-draft-window)")
    if taken := [r.id for r in REGISTRY.values() if r.name == name]:
        raise Refused(f"the name {name} is {taken[0]}'s")
    families = sorted(p.stem for p in RULES_DIR.glob("*.py") if p.stem not in NOT_FAMILIES)
    if family not in families:
        raise Refused(f"no family {family!r}: one of {', '.join(families)}")
    required = None
    if engine is not None:
        try:
            required = Requirement.parse(engine)
        except ValueError as e:
            raise Refused(f"--engine: {e}") from None
        if required.op not in (">=", "<"):
            raise Refused(f"--engine {engine}: say the change's release as ENGINE>=X (from X on) or ENGINE<X (before)")
    rows = tuple(r.strip() for r in reads.split(",") if r.strip())
    for row in rows:
        reader, _, constant = row.partition(".")
        if reader not in READERS or not isinstance(getattr(READERS[reader], constant, None), engines.Read):
            raise Refused(f"--reads: {row!r} is no row of dflash_cfg/lint/engines/ (e.g. vllm.MASK_TOKEN_ID)")
    return Spec(id=rule_id, name=name, family=family, engine=required, reads=rows)


def declaration(s: Spec) -> str:
    """The rule's `@rule` and its stub, as the family's module gets it."""
    lines = [
        "@rule(",
        f'    "{s.id}",',
        f'    "{s.name}",',
        "    Severity.ERROR,",
        *(['    "data",', '    "launch",'] if s.launch else []),
        f"    reads=({', '.join(s.reads)}{',' if len(s.reads) == 1 else ''}),",
    ]
    if s.engine is not None:
        lines.append(f"    {'since' if s.engine.op == '>=' else 'until'}={s.change},")
    if s.launch:
        engine = s.engine.engine if s.engine is not None else "vllm"
        lines += [
            "    checks=(",
            "        LaunchCheck(",
            f'            engine="{engine}",',
            f'            check="{TODO}: the check the engine makes",',
            f'            where="{TODO}: `path/to/module.py:qualname` of the code making it",',
            f'            preflight="{s.id}",',
            "        ),",
            "    ),",
        ]
    lines += [
        ")",
        f"def {s.function}(ctx: Context) -> Iterator[Problem]:",
        f'    """{TODO}: what the rule reports, in one line.',
        "",
        f"    {TODO}: why it matters, and what the engines do (the read rows are added from the declaration).",
        "",
        f"    Fail: ``{TODO}``",
        f"    Pass: ``{TODO}``",
        '    """',
        "    return",
        "    yield",
    ]
    return "\n".join(lines) + "\n"


def with_rule(module: str, s: Spec) -> str:
    """The family's module with the rule before its `RULES` and in it, and the names the rule uses imported."""
    head, sep, registry = module.partition("\nRULES = (")
    body, close, rest = registry.partition(")")
    if not sep or not close:
        raise Refused(f"dflash_cfg/lint/rules/{s.family}.py has no `RULES = (...)` registry")
    listed = body.rstrip().rstrip(",")
    module = f"{head.rstrip()}\n\n\n{declaration(s)}\n{sep}{listed}, {s.function}{close}{rest}"
    imports = [
        "from collections.abc import Iterator",
        "from dflash_cfg.lint.rules.base import Context, rule",
        "from dflash_cfg.model import Problem, Severity",
    ]
    if s.launch:
        imports.append("from dflash_cfg.lint.rules.base import LaunchCheck")
    if s.change is not None:
        imports.append(f"from dflash_cfg.lint.releases import {s.change}")
    readers = sorted({r.split(".")[0] for r in s.reads})
    if readers:
        imports.append(f"from dflash_cfg.lint.engines import {', '.join(readers)}")
    # After the module's `from __future__` line; ruff then merges and sorts them.
    future = "from __future__ import annotations\n"
    return module.replace(future, future + "\n" + "\n".join(imports) + "\n", 1)


def with_change(releases: str, s: Spec) -> str:
    """lint/releases.py with the rule's release bound (when new) and its change at the end."""
    if s.engine is None or s.bound is None:
        return releases
    out = releases.rstrip() + "\n"
    if not re.search(rf"^{s.bound} = ", out, re.M):
        out += f'\n{s.bound} = Since("{s.engine.engine}", "{s.engine.version}")\n'
    out += (
        f"\n{s.change} = Change(\n    {s.bound},\n"
        f'    "{TODO}: what {s.engine.engine} {s.engine.version} changed that {s.id} knows.",\n)\n'
    )
    return out


def cases(s: Spec) -> str:
    """DFnnn.yaml: a row where the rule fires (to fill in) and one where it does not."""
    target = f"  target: {TARGET}\n"
    launch = ""
    if s.launch:
        release_ = f', release: "{s.engine.version}"' if s.engine is not None else ""
        launch = f"  launch: {{num_speculative_tokens: 15{release_}}}\n"
    scope = f", engines: [{s.engine}]" if s.engine is not None else ""
    return (
        f"fires:\n  # {TODO}: the smallest change of a published drafter (or its launch) that makes {s.id} fire.\n"
        f"  base: {BASE}\n{target if s.launch else ''}{launch}  set: {{}}\n"
        f"  expect:\n    - {{finding: {s.id} error /{TODO}{scope}}}\n\n"
        f"as-published:\n  base: {BASE}\n{target if s.launch else ''}{launch}  absent: [{s.id}]\n"
    )


def left(s: Spec) -> list[str]:
    """What the scaffold cannot write: said after it ran."""
    steps = [
        f"dflash_cfg/lint/rules/{s.family}.py: the body of {s.function} and its docstring (its TODOs).",
        f"tests/lint/rules/cases/{s.id}.yaml: the row where it fires (its TODOs); more rows for each severity.",
    ]
    if not s.reads:
        steps.append(
            "reads=: the engine rows behind the rule (a row of dflash_cfg/lint/engines/, new if none says it), "
            "or own_check=True for a check of dflash-cfg's own."
        )
    if s.change is not None:
        steps.append(f"dflash_cfg/lint/releases.py: what {s.change} is (its TODO); findings scoped by {s.bound}.")
    if s.launch:
        steps.append(f"the LaunchCheck of {s.id}: the engine check and where its code is (docs/launch-checks.md).")
    steps.append("./dev docs, then ./dev test -m 'not slow'.")
    return steps


def write(s: Spec) -> list[Path]:
    module = RULES_DIR / f"{s.family}.py"
    case_file = CASES / f"{s.id}.yaml"
    if case_file.exists():
        raise Refused(f"{case_file.relative_to(ROOT)} exists already")
    written = [module, case_file]
    module.write_text(with_rule(module.read_text(encoding="utf-8"), s), encoding="utf-8")
    if s.change is not None:
        RELEASES.write_text(with_change(RELEASES.read_text(encoding="utf-8"), s), encoding="utf-8")
        written.append(RELEASES)
    case_file.write_text(cases(s), encoding="utf-8")
    python_files = [str(p) for p in written if p.suffix == ".py"]
    # Formatted first: a registry grown past the line limit is wrapped, not refused by the check.
    for args in (
        ["format", "--quiet", *python_files],
        ["check", "--fix", "--quiet", *python_files],
        ["format", "--quiet", *python_files],
    ):
        subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, check=True)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./dev new-rule", description=__doc__.split("\n\n")[0])
    parser.add_argument("id", help="DFnnn")
    parser.add_argument("name", help="kebab-case, e.g. launch-draft-window")
    parser.add_argument("--family", required=True, help="its module under dflash_cfg/lint/rules/, e.g. launch_vllm")
    parser.add_argument("--engine", help='the release change it knows: "vllm>=0.35.0" (from it on) or "vllm<0.35.0"')
    parser.add_argument("--reads", default="", help="the read rows behind it, e.g. vllm.METHOD,sglang.BLOCK_SIZE")
    args = parser.parse_args(argv)
    try:
        s = spec(args.id, args.name, args.family, args.engine, args.reads)
        written = write(s)
    except Refused as e:
        print(f"new-rule: {e}", file=sys.stderr)
        return 2
    print(f"wrote {s.id} {s.name}: " + ", ".join(str(p.relative_to(ROOT)) for p in written))
    print("left by hand:")
    for step in left(s):
        print(f"  - {step}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

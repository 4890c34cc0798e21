"""The rule cases' verdict: a row's findings (as `check --format json` reports them, whichever way they were
linted) against its `expect` and `absent`, and its safe fixes applied by an independent RFC 6902
implementation. The row vocabulary is harness.py's docstring."""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections import Counter
from collections.abc import Callable
from functools import cache
from importlib import metadata
from typing import Any

import jsonpatch
from harness import Expected, Row, dump
from helpers import Result

from dflash_cfg.cli import cli, run
from dflash_cfg.pinned import expand

Findings = list[dict[str, Any]]


@cache
def declarations() -> dict[str, dict[str, Any]]:
    """Rule id -> its entry in `dflash-cfg rules --format json` (run once, outside any test's fixtures)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run(cli, ["rules", "--format", "json"]) == 0
    return {r["id"]: r for r in json.loads(out.getvalue())}


def catalogue() -> dict[str, str]:
    """Rule id -> name."""
    return {rule: entry["name"] for rule, entry in declarations().items()}


def fragment(text: str) -> str:
    return expand(text.replace("{transformers}", _transformers()))


@cache
def _transformers() -> str:
    return metadata.version("transformers")  # the package's metadata parsed: 10 ms


def matches(expected: Expected, found: dict[str, Any]) -> bool:
    if expected.key != (found["rule"], found["severity"], found["pointer"]):
        return False
    if not all(fragment(m) in found["message"] for m in expected.message):
        return False
    if any(fragment(m) in found["message"] for m in expected.message_without):
        return False
    if list(expected.engines) != found.get("engines", []):
        return False
    if expected.fix is not None:
        fix = found["fix"] or {}
        for key, want in expected.fix.items():
            if key == "summary" and want not in fix.get("summary", ""):
                return False
            if key != "summary" and fix.get(key) != want:
                return False
    return True


def assign(expected: list[Expected], found: Findings) -> bool:
    """Whether each expected finding can be given its own found finding (the lists are short)."""
    if not expected:
        return True
    first, rest = expected[0], expected[1:]
    return any(matches(first, f) and assign(rest, found[:i] + found[i + 1 :]) for i, f in enumerate(found))


def shown(findings: Findings) -> str:
    return "\n".join(
        f"  {f['rule']} {f['severity']} {f['pointer'] or '(file)'} {f['line']}:{f['column']}  {f['message']}"
        + (f"\n      fix: {json.dumps(f['fix'])}" if f["fix"] else "")
        for f in findings
    )


def findings_of(result: Result) -> Findings:
    """The findings of a CLI run that checked one file."""
    assert result.code in (0, 1), f"exit {result.code}: {result.err}"
    # Nothing on stderr but the gate's one-line hints: warnings alone fail the run (--strict), findings about some
    # engines only fail nothing for want of knowing what serves the drafter, and the command that repairs a file
    # (upstream's bytes for DF601, the comparison and the repair for DF205).
    lines = result.err.splitlines()
    hints = (" only: not gating, since ", " in DFlash-critical fields (DF601); write upstream's bytes: ")
    assert all(
        line.startswith("dflash-cfg: failed on warnings only")
        or any(hint in line for hint in hints)
        or re.match(r"dflash-cfg: \S+ has the stale-file signature \(DF205\): ", line)
        for line in lines
    ), result.err
    (report,) = result.json()["files"]
    return linted(report)


def linted(report: dict[str, Any]) -> Findings:
    """The findings of a file's entry in the JSON document, which must have been linted, not skipped."""
    assert report["kind"] != "skipped", f"not linted as a drafter: {report}"
    findings: Findings = report["findings"]
    return findings


def judge(row: Row, found: Findings) -> None:
    names = catalogue()
    for rule in sorted(row.expected_rules):
        mine = [f for f in found if f["rule"] == rule]
        wanted = [e for e in row.expect if e.rule == rule]
        exact = Counter(f"{f['rule']} {f['severity']} {f['pointer']}" for f in mine) == Counter(
            f"{e.rule} {e.severity} {e.pointer}" for e in wanted
        )
        assert exact and assign(wanted, mine), (
            f"{rule}: expected\n" + "\n".join(f"  {e}" for e in wanted) + f"\nfound\n{shown(mine)}"
        )
        for f in mine:
            assert isinstance(f["line"], int) and f["line"] >= 1, shown([f])
            assert isinstance(f["column"], int) and f["column"] >= 1, shown([f])
            assert f["message"] and "\n" not in f["message"], shown([f])
            assert f["name"] == names[rule], shown([f])
    forbidden = [f for f in found if row.forbids(f["rule"])]
    assert forbidden == [], f"must not fire ({', '.join(row.absent)}):\n{shown(forbidden)}"


def check_fixes(row: Row, found: Findings, original: bytes, relint: Callable[[bytes], Findings]) -> None:
    """Each safe JSON-patch fix of a finding under test, applied alone and then all together to `original` (the
    config.json's bytes), clears it; `relint` lints other bytes the way `found` was linted."""
    fixable = [
        f for f in found if f["rule"] in row.expected_rules and f["fix"] and f["fix"]["safe"] and f["fix"]["patch"]
    ]
    assert fixable or "fix_brings" not in row.spec, f"{row.id}: fix_brings, but no safe fix to apply"
    if not fixable or "setup" in row.spec:
        return
    # Where an error or warning already was: a fix may change which rule reports a place (fixing the depth
    # turns a tap past the target into a tap past num_target_layers), but it must not make a new one.
    serious = {f["pointer"] for f in found if f["severity"] != "info"}
    declared = set(row.spec.get("fix_brings", ()))
    brought: set[str] = set()

    def after(patches: list[list[dict[str, Any]]]) -> Findings:
        data = json.loads(original)
        for patch in patches:
            data = jsonpatch.apply_patch(data, patch)
        return relint(dump(data))

    for f in fixable:
        left = after([f["fix"]["patch"]])
        still = [g for g in left if (g["rule"], g["pointer"]) == (f["rule"], f["pointer"])]
        assert still == [], f"the fix of {f['rule']} {f['pointer']} leaves:\n{shown(still)}"
        new = [g for g in left if g["severity"] != "info" and g["pointer"] not in serious]
        brought |= {f"{g['rule']} {g['severity']} {g['pointer']}" for g in new}
        new = [g for g in new if f"{g['rule']} {g['severity']} {g['pointer']}" not in declared]
        assert new == [], f"the fix of {f['rule']} {f['pointer']} brings:\n{shown(new)}"
    assert declared <= brought, f"no fix brings {sorted(declared - brought)}"
    if len(fixable) > 1:
        fixed = {(f["rule"], f["pointer"]) for f in fixable}
        still = [g for g in after([f["fix"]["patch"] for f in fixable]) if (g["rule"], g["pointer"]) in fixed]
        assert still == [], f"all fixes together leave:\n{shown(still)}"

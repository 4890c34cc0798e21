"""What fails a run: findings at the failing severity, with the gates' two allowances. Pure.

A warning is by definition something a real published drafter may do on purpose, so in a gate
(preflight, the pre-commit hooks) a file proven byte-identical to its upstream at a known commit
(DF603) fails only on errors: its publisher chose those warnings. A failure caused only by warnings
says the three ways forward.
"""

from __future__ import annotations

from dataclasses import dataclass

from dflash_cfg.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from dflash_cfg.model import Finding, Report, Severity

IDENTICAL = "DF603"


@dataclass(frozen=True)
class Verdict:
    code: int
    failing: tuple[tuple[str, Finding], ...] = ()  # (file path, finding)
    advice: str = ""


def verdict(report: Report, fail_on: Severity, *, gate: bool = False) -> Verdict:
    if report.errors:
        return Verdict(EXIT_USAGE)
    failing = []
    for f in report.files:
        identical = gate and any(x.rule == IDENTICAL for x in f.findings)
        bar = Severity.ERROR if identical else fail_on
        failing += [(f.path, x) for x in f.findings if x.severity >= bar]
    if not failing:
        return Verdict(EXIT_OK)
    advice = ""
    if all(x.severity < Severity.ERROR for _, x in failing):
        path, first = failing[0]
        advice = (
            "failed on warnings only: a warning is something a published drafter may do on purpose. Either "
            "compare with its upstream repo (--from-hub ORG/NAME, or `upstream` in a [[tool.dflash-cfg.models]] "
            'entry; a file identical to its upstream passes), accept them for the project (fail-on = "error"), '
            f'or for this file (per-file-ignores = {{ "{path}" = ["{first.rule}"] }})'
        )
    return Verdict(EXIT_FINDINGS, tuple(failing), advice)

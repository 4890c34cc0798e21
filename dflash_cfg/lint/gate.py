"""What fails a run: findings at the failing severity, with the gates' allowances. Pure.

A warning is by definition something a real published drafter may do on purpose, so in a gate
(preflight, the pre-commit hooks) a file proven byte-identical to its upstream at a known commit
(DF603) fails only on errors: its publisher chose those warnings. A failure caused only by warnings
says the three ways forward.

A finding about some engines only (`Finding.engines`: SGLang refuses a speculators-format directory, MLX
requires a key) fails a run only where those engines serve the drafters (`Report.served`: the launch's, or
`--engine` / the project's `engines`). When nothing says what serves them, such a finding is shown and fails
nothing, error or warning: a publisher's gate must not fail on one engine's limits, and the summary says how to
gate on them. The incident's signatures concern every engine, so it fails every gate as before.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

from dflash_cfg.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from dflash_cfg.model import NAMES, Finding, Report, Severity

# A file proven byte-identical to a published revision: its upstream's copy (DF603), or the catalog's (DF605).
IDENTICAL = ("DF603", "DF605")
ENGINE_ANSWER = "DF9"  # what the launch's own engine answered (preflight's engine step)
DEFAULT_REVISION = "main"  # the Hub's, which `--from-hub` takes without --revision


@dataclass(frozen=True, kw_only=True)
class Verdict:
    code: int
    failing: tuple[tuple[str, Finding], ...] = ()  # (file path, finding)
    advice: str = ""
    # Findings at the failing severity that fail nothing because nothing says which engines serve the file.
    unscoped: tuple[tuple[str, Finding], ...] = ()
    note: str = ""  # what `unscoped` means, and how to gate on them
    # The commands that settle a failing file, said before the advice: upstream's bytes for a file that
    # differs from its upstream (DF601); the comparison and the repair for the stale-file signature (DF205).
    next_steps: tuple[str, ...] = ()


def verdict(report: Report, fail_on: Severity, *, gate: bool = False) -> Verdict:
    if report.errors:
        return Verdict(code=EXIT_USAGE)
    failing, unscoped = [], []
    for f in report.files:
        identical = gate and any(x.rule in IDENTICAL for x in f.findings)
        for x in f.findings:
            # The publisher chose what its file says, not what an engine on this host answers (DF9xx), nor
            # the limits of an engine it may not serve with (a scoped finding, where that engine serves).
            waived = identical and not x.rule.startswith(ENGINE_ANSWER) and not x.engines
            bar = Severity.ERROR if waived else fail_on
            if x.severity < bar:
                continue
            holds = report.gating(x)
            if holds:
                failing.append((f.path, x))
            elif holds is None:
                unscoped.append((f.path, x))
    note = _note(unscoped)
    if not failing:
        return Verdict(code=EXIT_OK, unscoped=tuple(unscoped), note=note)
    advice = ""
    steps = _next_steps(report, failing)
    if all(x.severity < Severity.ERROR for _, x in failing):
        # Every rule that failed, for every file that failed: the example, followed, makes the run pass.
        rules: dict[str, set[str]] = {}
        for path, x in failing:
            rules.setdefault(path, set()).add(x.rule)
        # JSON strings are TOML basic strings: a path with a quote or a backslash stays one key.
        entries = ", ".join(f"{json.dumps(path)} = {json.dumps(sorted(ids))}" for path, ids in rules.items())
        advice = (
            "failed on warnings only: a warning is something a published drafter may do on purpose. Either "
            "compare with its upstream repo (--from-hub ORG/NAME, or `upstream` in a [[tool.dflash-cfg.models]] "
            'entry; a file identical to its upstream passes), accept them for the project (fail-on = "error"), '
            f"or for {'this file' if len(rules) == 1 else 'these files'} (per-file-ignores = {{ {entries} }})"
        )
        if any(STALE in ids for ids in rules.values()):
            advice += (
                f"; an ignore of {STALE} hides the stale-file signature itself (a layer layout that is not the one "
                "the drafter was trained with, which runs at a fraction of its acceptance): repair the file unless "
                "its layout is the trained one"
            )
    return Verdict(
        code=EXIT_FINDINGS,
        failing=tuple(failing),
        advice=advice,
        unscoped=tuple(unscoped),
        note=note,
        next_steps=steps,
    )


STALE = "DF205"  # the stale-file signature: a window kept, the sliding layout lost
CRITICAL = "DF601"  # a DFlash-critical field differs from the upstream it was compared with


def _next_steps(report: Report, failing: list[tuple[str, Finding]]) -> tuple[str, ...]:
    """For each failing file whose repair is known, the command that makes it: `fix --from-hub` with the repo
    (and the revision it was compared at), after the `diff` that shows what it changes."""
    steps = []
    for f in report.files:
        failed = {x.rule for path, x in failing if path == f.path}
        shown = shlex.quote(f.path)
        if CRITICAL in failed and f.upstream is not None:
            up = f.upstream
            hub = f"--from-hub {shlex.quote(up.repo)}"
            if up.revision != DEFAULT_REVISION:
                hub += f" --revision {shlex.quote(up.revision)}"
            if up.unreachable:
                hub += " --offline"
            steps.append(
                f"{f.path} differs from {up.repo}@{up.commit[:12]} in DFlash-critical fields ({CRITICAL}); "
                f"write upstream's bytes: dflash-cfg fix {shown} {hub}"
            )
        elif STALE in failed:
            known = f.upstream.repo if f.upstream is not None else f.identity.repo if f.identity is not None else None
            repo = shlex.quote(known) if known else "ORG/NAME"
            steps.append(
                f"{f.path} has the stale-file signature ({STALE}): compare it with its upstream, "
                f"dflash-cfg diff {shown} --from-hub {repo}, then write upstream's bytes: "
                f"dflash-cfg fix {shown} --from-hub {repo}"
            )
    return tuple(steps)


def _note(unscoped: list[tuple[str, Finding]]) -> str:
    """ "2 warnings for SGLang only: not gating; ..." for the findings that fail nothing for want of an engine."""
    if not unscoped:
        return ""
    names: list[str] = []
    for _, x in unscoped:
        for r in x.engines:
            name = NAMES[r.engine]
            if name not in names:
                names.append(name)
    counts = [
        f"{n} {kind}{'s' if n > 1 else ''}"
        for kind, level in (("error", Severity.ERROR), ("warning", Severity.WARNING), ("info", Severity.INFO))
        if (n := sum(x.severity == level for _, x in unscoped))
    ]
    return (
        f"{' and '.join(counts)} for {', '.join(names)} only: not gating, since nothing says "
        'which engines serve the drafter; set engines = ["vllm"] (or "sglang", ...) in the project config, or '
        "--engine, to gate on them"
    )

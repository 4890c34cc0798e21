"""What diff, fix, verify, where and preflight print: values in, strings out, no I/O.

Their JSON documents share check's envelope: "version" (1), "tool" {"name", "version"}, and "errors"
(present only when the run could not be done, exit 2; then the other keys may be missing).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Any

import click

from dflash_cfg.jsondoc.document import git_blob_sha1
from dflash_cfg.jsondoc.encode import dumps_printable
from dflash_cfg.model import (
    MISSING,
    NOT_READ,
    DiffResult,
    EngineStep,
    Entry,
    FixResult,
    HubFile,
    Left,
    Location,
    Outcome,
    Plan,
    Preflight,
    Report,
    Severity,
    Verification,
    display,
)
from dflash_cfg.report.check import JSON_VERSION
from dflash_cfg.report.escape import printable


def _cell(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def diff_text(result: DiffResult) -> str:
    """One table: field, local raw, local through Qwen3Config, upstream; critical rows first, marked `*`, and
    each row's state in a word ("differs", "equal"): a symbol such as `!=` reads as "not equal"."""
    up = result.upstream
    source = printable(f"{up.repo}@{up.commit}  ({up.revision})")
    head = [f"{click.style(printable(result.path), bold=True)}  vs  {source}"]
    if result.identical:
        head.append(click.style(f"identical to upstream (git blob {up.blob_id})", fg="green"))
    else:
        local = result.git_blob_sha1[:12]
        head.append(f"differs from upstream: local git blob {local}, upstream {up.blob_id[:12]}")
    header = ("", "field", "local", "local via Qwen3Config", "upstream")
    table = [header]
    for r, shown in zip(result.rows, result.shown, strict=True):
        changed = r.differs or r.differs_effective
        if not (changed or r.critical):
            continue
        mark = ("*" if r.critical else " ") + (" differs" if changed else " equal")
        local, seen, theirs = (_cell(side) for side in shown)
        table.append((mark, printable(r.pointer[1:]), printable(local), printable(seen), printable(theirs)))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [*head, ""]
    for i, row in enumerate(table):
        line = "  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip()
        if i and "differs" in row[0]:
            line = click.style(line, fg="red" if "*" in row[0] else "yellow")
        lines.append(line)
    same = sum(1 for r in result.rows if not (r.differs or r.differs_effective or r.critical))
    lines.append("")
    lines.append("* DFlash-critical (shown even when equal); differs / equal: the local file against upstream, raw or")
    lines.append('  through Qwen3Config; a blank cell under "local via Qwen3Config": the class does not interpret that')
    lines.append("  field, and the engine reads the file's value")
    lines.append(f"{same} other fields identical and not shown (transformers {result.transformers_version})")
    return "\n".join(lines) + "\n"


def _envelope(tool_version: str) -> dict[str, Any]:
    return {"version": JSON_VERSION, "tool": {"name": "dflash-cfg", "version": tool_version}}


def error_json(command: str, tool_version: str, message: str) -> str:
    """The document of a diff, fix, verify or where run that could not be done (exit 2)."""
    doc = _envelope(tool_version)
    if command == "fix":
        doc["files"] = []
    doc["errors"] = [message]
    return dumps_printable(doc, indent=2) + "\n"


def _upstream(up: HubFile | None) -> dict[str, Any] | None:
    if up is None:
        return None
    return {"repo": up.repo, "revision": up.revision, "commit": up.commit, "git_blob_sha1": up.blob_id}


def diff_json(result: DiffResult, tool_version: str) -> str:
    def value(v: Any) -> Any:
        return None if v is MISSING or v is NOT_READ else v

    doc = {
        **_envelope(tool_version),
        "path": result.path,
        "git_blob_sha1": result.git_blob_sha1,
        "upstream": _upstream(result.upstream),
        "identical": result.identical,
        "critical_differences": result.critical,
        "transformers_version": result.transformers_version,
        "rows": [
            {
                "pointer": r.pointer,
                "critical": r.critical,
                "differs": r.differs,
                "differs_effective": r.differs_effective,
                "local": value(r.local),
                "local_present": r.local is not MISSING,
                "local_effective": value(r.local_effective),
                "upstream": value(r.upstream),
                "upstream_present": r.upstream is not MISSING,
                "upstream_effective": value(r.upstream_effective),
            }
            for r in result.rows
        ],
    }
    return dumps_printable(doc, indent=2) + "\n"


def fix_plan_text(p: Plan) -> str:
    """The change fix is about to make (or would make, on a dry run): the unified diff, then each change in words."""
    changes = "".join(f"  - {summary}\n" for summary in p.applied)
    return printable(p.diff(), keep="\n\t") + printable(changes, keep="\n")


def fix_prompt(p: Plan) -> str:
    return f"Write {p.path}?"


def fix_result_text(result: FixResult) -> str:
    """One file's outcome: nothing to change, or what was written ("" for a change not written: its diff
    was shown when it was planned)."""
    p = result.plan
    if not p.changed:
        return _unchanged_text(p) + "\n"
    if result.outcome is None:
        return ""
    return _written_text(p, result.outcome)


def fix_advice(result: FixResult) -> list[str]:
    """What is left to do about one file, for stderr: errors only upstream or a human can settle, and
    where its trained values come from."""
    p = result.plan
    lines = []
    if result.remaining_errors:
        what = "error(s) or warning(s)" if result.warnings_fail else "error(s)"
        lines.append(
            f"{result.remaining_errors} {what} remain that need upstream values or a human: "
            f"{result.recheck or f'dflash-cfg check {p.path.parent}'}"
        )
    if result.upstream_hint is not None and result.hint_in_project:
        lines.append(
            f"dflash-cfg: {p.path} has findings no safe fix settles: the trained values (taps, mask id, "
            f"layer types, window, RoPE) come from its upstream repo, {result.upstream_hint} (the project config's "
            f"`upstream` for it): dflash-cfg fix {p.path.parent} --from-hub (add --only-critical to keep local edits)"
        )
    elif result.upstream_hint is not None:
        repo = result.upstream_hint or "ORG/NAME"
        lines.append(
            f"dflash-cfg: {p.path} has findings no safe fix settles: the trained values (taps, mask id, "
            f"layer types, window, RoPE) come from its upstream repo: dflash-cfg fix {p.path.parent} "
            f"--from-hub {repo} (add --only-critical to keep local edits); or name it as `upstream` in a "
            "[[tool.dflash-cfg.models]] entry so every check compares with it"
        )
    return lines


def _unchanged_text(p: Plan) -> str:
    same = f" (identical to {p.upstream.repo}@{p.upstream.commit})" if p.upstream and p.identical_to_upstream else ""
    return printable(f"{p.path}: nothing to change{same}")


def _written_text(p: Plan, out: Outcome) -> str:
    """What was written, with the hashes to check it by on another host."""
    w = out.written
    same = f"  identical to {p.upstream.repo}@{p.upstream.commit}" if p.upstream and p.identical_to_upstream else ""
    if w.pull_request is not None:  # the Hub: proposed, not written
        lines = [f"opened a pull request for {w.path}: {w.pull_request}", f"  sha256   {w.sha256}"]
        return printable("\n".join([*lines, f"  git blob {w.git_blob_sha1}{same}"]) + "\n", keep="\n")
    lines = [f"wrote {w.path}", f"  sha256   {w.sha256}", f"  git blob {w.git_blob_sha1}{same}"]
    if w.replaced_link:
        lines.append(f"  replaced the symlink to {w.replaced_link} with a regular file (the target is untouched)")
    if w.backup:
        lines.append(f"  backup   {w.backup}")
    folder = os.path.dirname(w.path)  # w.path is absolute
    left = out.recorded.left if out.recorded is not None else None
    if out.lock_file and p.repair == "safe-fixes" and left is not None and left.count:
        # Not a repair to roll out: `verify` would prove only that the file is unchanged since.
        lines.append(
            f"  recorded in {out.lock_file}: safe fixes only, {_left(left)} left; not a repair to roll out "
            "(its trained values come from upstream)"
        )
    elif out.lock_file:
        lines.append(f"  recorded in {out.lock_file}; on each serving host: dflash-cfg verify {folder}")
    lines.append(f"  check it anywhere with: dflash-cfg check {folder} --expect-sha256 {w.sha256}")
    return printable("\n".join(lines) + "\n", keep="\n")


def _hashes(data: bytes) -> dict[str, str]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "git_blob_sha1": git_blob_sha1(data)}


def fix_json(
    results: Sequence[FixResult], tool_version: str, *, dry_run: bool = False, errors: Sequence[str] = ()
) -> str:
    """One document for a fix run: per file what changes (or would, with dry_run), and what was written."""
    files = []
    for result in results:
        p, out = result.plan, result.outcome
        written = None
        if out is not None:
            w = out.written
            written = {
                "path": w.path,
                "sha256": w.sha256,
                "git_blob_sha1": w.git_blob_sha1,
                "backup": w.backup,
                "lock_file": out.lock_file,
                "replaced_link": w.replaced_link,
            }
        files.append(
            {
                "path": str(p.path),
                "changed": p.changed,
                "applied": list(p.applied),
                "diff": p.diff() if p.changed else "",
                "before": _hashes(p.old),
                "after": _hashes(p.new),
                "upstream": _upstream(p.upstream),
                "identical_to_upstream": p.identical_to_upstream,
                "written": written,
                "remaining_errors": result.remaining_errors,
                # the repo the trained values come from when findings remain that no safe fix settles
                # ("" when it cannot be known), else null
                "upstream_hint": result.upstream_hint,
            }
        )
    doc: dict[str, Any] = {**_envelope(tool_version), "dry_run": dry_run, "files": files}
    if errors:
        doc["errors"] = list(errors)
    return dumps_printable(doc, indent=2) + "\n"


def _entry(entry: Entry | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    source = entry.source
    left = entry.left
    return {
        "path": entry.path,
        "sha256": entry.sha256,
        "git_blob_sha1": entry.git_blob_sha1,
        "source": None
        if source is None
        else {"repo": source.repo, "revision": source.revision, "commit": source.commit},
        "written_at": entry.written_at,
        "tool_version": entry.tool_version,
        "repair": entry.repair,
        "left": None if left is None else {"errors": left.errors, "warnings": left.warnings},
    }


def _left(left: Left) -> str:
    """`3 findings (1 error, 2 warnings)`."""
    parts = [f"{n} {word}{'' if n == 1 else 's'}" for n, word in ((left.errors, "error"), (left.warnings, "warning"))]
    return f"{left.count} finding{'' if left.count == 1 else 's'} ({', '.join(parts)})"


def proven(entry: Entry, folder: str) -> str:
    """What the lock's write was, so what a file that still matches it is: upstream's bytes at a commit, or a
    file that safe fixes alone made, with what they left (which the match does not make a repair). `folder`: the
    model dir verified, for the `check` to run."""
    source, left = entry.source, entry.left
    at = f"{source.repo}@{source.commit} ({source.revision})" if source is not None else ""
    check = f"dflash-cfg check {folder}"
    if entry.repair == "upstream":
        return f"the upstream bytes of {at}"
    if entry.repair == "critical-fields":
        still = f"; {_left(left)} left: {check}" if left is not None and left.count else ""
        return f"the DFlash-critical fields of {at}, other local edits kept{still}"
    if entry.repair == "safe-fixes" and left is not None and left.count:
        return (
            f"safe fixes only, no upstream; {_left(left)} left, so this proves the file unchanged since, not "
            f"repaired: {check}"
        )
    if entry.repair == "safe-fixes":
        return "safe fixes only, no upstream; no warning or error left"
    if source is not None:  # a lock written before the write's kind was recorded
        return f"from {at}"
    return f"a local fix, no upstream (this lock does not say what it left: {check})"


def verify_text(v: Verification, with_origin: bool) -> str:
    """ "ok" (stdout) or "MISMATCH" (stderr) with both hashes; `with_origin`: the expected sha256 is the
    lock's, so say when that write was made and what it was."""
    entry = v.entry
    origin = ""
    if entry is not None and with_origin:
        what = proven(entry, str(v.path.parent))
        origin = f"\n  written {entry.written_at} by dflash-cfg {entry.tool_version}: {what}"
    if v.ok:
        return printable(f"ok: {v.path} sha256 {v.sha256}{origin}", keep="\n") + "\n"
    return printable(f"MISMATCH: {v.path}\n  sha256   {v.sha256}\n  expected {v.expected}{origin}", keep="\n") + "\n"


def verify_doc(v: Verification, with_origin: bool) -> dict[str, Any]:
    """One file's verification, as the JSON document holds it."""
    return {
        "path": str(v.path),
        "ok": v.ok,
        "sha256": v.sha256,
        "expected": v.expected,
        "lock": _entry(v.entry),
        # What a match proves, in the words of the text output (null: compared with --expect-sha256, or no lock).
        "proven": proven(v.entry, str(v.path.parent)) if v.entry is not None and with_origin else None,
    }


def verify_json(
    results: Sequence[Verification], tool_version: str, *, with_origin: bool = True, errors: Sequence[str] = ()
) -> str:
    """One PATH: its verification's keys at the top level. Several: one per file under "files", and the PATHs
    that could not be verified under "errors"."""
    doc: dict[str, Any] = _envelope(tool_version)
    if len(results) == 1 and not errors:
        doc.update(verify_doc(results[0], with_origin))
    else:
        doc["files"] = [verify_doc(v, with_origin) for v in results]
        if errors:
            doc["errors"] = list(errors)
    return dumps_printable(doc, indent=2) + "\n"


def where_text(loc: Location) -> str:
    rows = [("model", f"{loc.name}  ({loc.source})"), ("config", str(loc.config))]
    if loc.is_link:
        rows.append(("reads", f"{loc.resolved}  (symlink target)"))
    if loc.repo:
        ref = f"  ({loc.revision} -> commit)" if loc.revision and loc.revision != loc.commit else ""
        rows.append(("repo", loc.repo))
        rows.append(("commit", f"{loc.commit}{ref}"))
    rows += [("sha256", loc.sha256), ("git blob", loc.git_blob_sha1)]
    return "".join(f"{k:<9} {printable(v)}\n" for k, v in rows)


def where_json(loc: Location, tool_version: str) -> str:
    doc = {
        **_envelope(tool_version),
        "model": loc.name,
        "source": loc.source,
        "config": str(loc.config),
        "resolved": str(loc.resolved),
        "repo": loc.repo,
        "revision": loc.revision,
        "commit": loc.commit,
        "sha256": loc.sha256,
        "git_blob_sha1": loc.git_blob_sha1,
    }
    return dumps_printable(doc, indent=2) + "\n"


def preflight_text(p: Preflight) -> str:
    launch = p.launch
    tokens = (
        f"num_speculative_tokens {launch.num_speculative_tokens}"
        if launch.engine == "vllm"
        else f"num_draft_tokens {launch.num_draft_tokens}"
    )
    lines = [
        f"preflight {launch.engine}{' ' + launch.engine_version if launch.engine_version else ''}:"
        f" method {launch.method or '(auto)'}, {tokens}, "
        f"tensor-parallel {launch.tensor_parallel_size}",
        f"  target  {launch.target} -> {p.target.config}" + (f" @ {p.target.commit[:12]}" if p.target.commit else ""),
        f"  drafter {launch.drafter} -> {p.drafter.config}"
        + (f" @ {p.drafter.commit[:12]}" if p.drafter.commit else ""),
    ]
    if p.engine_step is not None:
        lines.append(f"  engine check: {_engine_line(p.engine_step, _disagreements(p.report))}")
    return printable("\n".join(lines) + "\n", keep="\n")


def _disagreements(report: Report) -> tuple[str, ...]:
    """The rules that found the engine reading the drafter other than the file says (DF902): what makes an
    engine that ran disagree."""
    found = {x.rule for f in report.files for x in f.findings if x.rule == "DF902" and x.severity >= Severity.WARNING}
    return tuple(sorted(found))


def _engine_line(step: EngineStep, disagree: tuple[str, ...] = ()) -> str:
    """One line for every launch, so a reader never has to infer from silence whether the engine was asked:
    `vLLM 0.34.0 (/venv/bin/python): reads the file as written, 12.9 s` (or `cached`): its reads are what the
    file says, which is no verdict on the file (a stale file is read as written too); `...: reads the file
    otherwise (DF902), ...`,
    `...: refused the drafter (DF901), ...`, `...: timeout: REASON`, `...: failed: REASON`, or
    `skipped: REASON`."""
    if step.status == "skipped":
        return f"skipped: {step.reason}"
    name = f"{display(step.engine, step.version)} ({step.python})"
    when = "cached" if step.cached else f"{step.seconds:.1f} s" if step.seconds is not None else ""
    if step.status == "ran":
        verdict = f"reads the file otherwise ({', '.join(disagree)})" if disagree else "reads the file as written"
        return f"{name}: {verdict}" + (f", {when}" if when else "")
    if step.status == "refused":
        return f"{name}: refused the drafter ({step.reason})" + (f", {when}" if when else "")
    return f"{name}: {step.status}: {step.reason}"


def engine_step_json(step: EngineStep, release: str | None) -> dict[str, Any]:
    """preflight's "engine_check" object; `release`: the engine release whose rules were applied (the one that
    answered, else the one installed where the launch runs; None: not known)."""
    return {
        "status": step.status,
        "engine": step.engine,
        "version": step.version,
        "release": release,
        "python": step.python,
        "seconds": step.seconds,
        "cached": step.cached,
        "reason": step.reason,
    }

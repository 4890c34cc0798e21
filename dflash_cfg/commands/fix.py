"""fix: plan a repair (reads only), show it, write it through the verified writer and record it in the lock."""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from dflash_cfg.commands.common import (
    Views,
    known_upstream,
    load_target_option,
    named_upstream,
    one_config,
    project_entry,
    upstream_for,
)
from dflash_cfg.errors import EXIT_FINDINGS, EXIT_OK, DflashCfgError, PatchError, UsageError
from dflash_cfg.jsondoc.document import git_blob_sha1, parse
from dflash_cfg.lint.compare import MISSING, compare
from dflash_cfg.lint.linter import Inputs, classify, lint, needs
from dflash_cfg.model import (
    ByteEdit,
    Entry,
    FileReport,
    FixResult,
    HubFile,
    HubOptions,
    Left,
    Made,
    Outcome,
    PatchOp,
    Plan,
    Repair,
    Served,
    Severity,
    Source,
    Target,
    Written,
    concerns,
)
from dflash_cfg.sources import catalog, files, remote, storage
from dflash_cfg.sources.lockfile import lock_path, refuse_unrecordable
from dflash_cfg.version import __version__

MAX_PASSES = 5  # mechanical fixes can enable each other (a BOM strip lets the JSON parse); they settle fast


@dataclass(frozen=True, kw_only=True)
class FixOptions:
    hub: HubOptions | None = None
    only_critical: bool = False
    target: str | None = None
    # Fixes of findings below this are skipped: the pre-commit hook repairs problems (warnings and
    # errors) without rewriting published files for portability (the information-level mirrors).
    min_severity: Severity = Severity.INFO


def fix_options(
    *,
    hub: HubOptions | None = None,
    only_critical: bool = False,
    target: str | os.PathLike[str] | None = None,
    min_severity: str = "info",
) -> FixOptions:
    """The fix command's options as its two callers hold them, the CLI's parsed options and the public API's
    arguments (a severity by its name), for every path."""
    if only_critical and hub is None:
        raise UsageError("--only-critical adopts fields from upstream: it needs --from-hub")
    return FixOptions(
        hub=hub,
        only_critical=only_critical,
        target=None if target is None else os.fspath(target),
        min_severity=Severity[min_severity.upper()],
    )


@dataclass(frozen=True)
class Failed:
    """A PATH (or one config.json under it) that fix could not do, and why: the run goes on with the rest."""

    path: str  # as given
    error: DflashCfgError
    file: str = ""  # the config.json under it that failed, as given ("": the PATH itself)

    @property
    def message(self) -> str:
        """The cause, naming the file when it does not already (an upstream the Hub cannot give names the repo)."""
        text = str(self.error)
        return f"{self.file}: {text}" if self.file and self.file not in text else text


def configs_of(given: str) -> list[tuple[storage.Where, bool]]:
    """The config.json files a PATH names, absolute, each with whether the user named it (the file, a model dir's
    own config.json) rather than a tree it was found in: a model dir's own config.json (its subdirs are not
    searched), the file, else each config.json under the tree, as `check` finds them."""
    where = storage.locate(given)
    if storage.is_remote(where):  # listed once: the listing says what it is (the file, a model dir, a tree)
        found = storage.discover(where)
        if where / files.CONFIG in found:
            return [(where / files.CONFIG, True)]
    elif storage.probe(where) == "dir" and storage.probe(where / files.CONFIG) != "file":
        found = storage.discover(where)
    else:
        return [(one_config(given), True)]
    if not found:  # a typo in a path must not pass as "nothing to change"
        raise UsageError(f"no config.json under {storage.display(where)}")
    return [(_absolute(p), where in (p, p.parent)) for p in found]


def _absolute(where: storage.Where) -> storage.Where:
    return where if storage.is_remote(where) else Path(os.path.abspath(where))


def as_given(given: str, config: storage.Where) -> str:
    """`config` as the user named it, for the diff's header: under a relative PATH it stays relative
    (`fix models/*` shows models/a/config.json, models/b/config.json); absolute or remote, whole."""
    given = os.path.expanduser(given)
    if storage.is_remote(config) or os.path.isabs(given):
        return storage.display(config)
    base = os.path.normpath(given)
    inside = os.path.relpath(config, os.path.abspath(base))
    return files.display(base if inside == "." else os.path.normpath(os.path.join(base, inside)))


def _plan(
    path: storage.Where,
    old: bytes,
    new: bytes,
    applied: tuple[str, ...],
    upstream: HubFile | None = None,
    repair: Repair = "safe-fixes",
) -> Plan:
    same = upstream is not None and git_blob_sha1(new) == upstream.blob_id
    return Plan(
        path=path,
        old=old,
        new=new,
        applied=applied,
        upstream=upstream,
        identical_to_upstream=same,
        repair=repair,
    )


def plan(path: storage.Where, options: FixOptions, *, explicit: bool = True) -> Plan:
    """The repair of one config.json (`explicit`: the user named it, rather than a tree it was found in)."""
    old = storage.read(path)
    refuse_unrecordable(path)  # a lock the write could not be recorded in: refused now, not after writing
    if options.hub is None:
        new, applied = mechanical(path, old, load_target_option(options.target), options.min_severity)
        return _plan(path, old, new, applied)
    if not explicit and classify(parse(old), explicit)[0] == "skipped":
        return _plan(path, old, old, ())  # another model's config.json in the tree: no upstream of a drafter
    hub, _ = named_upstream(options.hub, project_entry(path), options.hub.offline)  # as `check` compares it
    upstream = upstream_for(path, hub or options.hub)
    if not options.only_critical:
        # The upstream bytes exactly: then the file's git blob sha1 is the Hub's blob id, which proves it landed.
        applied = (f"the upstream bytes of {upstream.repo}@{upstream.commit}",)
        return _plan(path, old, upstream.data, applied, upstream, "upstream")
    return adopt_critical(path, old, upstream)


def mechanical(
    path: storage.Where, old: bytes, target: Target | None, min_severity: Severity = Severity.INFO
) -> tuple[bytes, tuple[str, ...]]:
    """Apply the catalogue's safe fixes until none is left. Trained values are never touched: only
    rules that copy a value the file (or the target) already states offer safe fixes."""
    views = Views()
    current, applied = old, list[str]()
    for _ in range(MAX_PASSES):
        doc = parse(current)
        report = lint(Inputs(path=str(path), doc=doc, target=target, view=views.of(doc)))
        fixes = [f.fix for f in report.findings if f.fix is not None and f.fix.safe and f.severity >= min_severity]
        if not fixes:
            return current, tuple(applied)
        from dflash_cfg.jsondoc.textpatch import apply_byte_edits, apply_to_text  # only when there is a fix

        byte_level = [fx for fx in fixes if fx.edits]
        if byte_level:  # below JSON (the BOM), so they go first and the rest is re-linted after them
            edits: list[ByteEdit] = [e for fx in byte_level for e in fx.edits]
            try:
                current = apply_byte_edits(current, edits)
            except PatchError as exc:
                raise PatchError(f"{path}: cannot apply the fixes: {exc}") from None
            applied.extend(fx.summary for fx in byte_level)
            continue
        ops: list[PatchOp] = []
        for fx in fixes:
            if any(op.path == other.path for op in fx.patch for other in ops):
                continue  # two fixes for one place: the next pass re-lints and decides
            ops.extend(fx.patch)
            applied.append(fx.summary)
        try:
            updated = apply_to_text(current.decode("utf-8"), ops).encode("utf-8")
        except PatchError as exc:
            raise PatchError(f"{path}: cannot apply the fixes: {exc}") from None
        if updated == current:
            return current, tuple(applied)
        current = updated
    raise UsageError(f"{path}: the fixes did not settle after {MAX_PASSES} passes (please report this file)")


def adopt_critical(path: storage.Where, old: bytes, upstream: HubFile) -> Plan:
    """Take only the DFlash-critical fields from upstream; every other local edit stays."""
    mine, theirs = parse(old).data, parse(upstream.data).data
    if not isinstance(mine, dict) or not isinstance(theirs, dict):
        raise UsageError(
            f"{path}: --only-critical needs both files to be JSON objects; without it, fix takes the upstream bytes"
        )
    from dflash_cfg.jsondoc.textpatch import apply_to_text

    ops: list[PatchOp] = []
    applied = []
    for row in compare(mine, theirs):
        if not (row.critical and row.differs):
            continue
        if row.upstream is MISSING:
            ops.append(PatchOp("remove", row.pointer))
        else:
            ops.append(PatchOp("replace" if row.local is not MISSING else "add", row.pointer, row.upstream))
        applied.append(f"{row.pointer[1:]} from {upstream.repo}@{upstream.commit[:12]}")
    if not ops:
        return _plan(path, old, old, (), upstream, "critical-fields")
    try:
        new = apply_to_text(old.decode("utf-8"), ops).encode("utf-8")
    except (PatchError, UnicodeDecodeError) as exc:
        raise PatchError(
            f"{path}: cannot adopt the critical fields: {exc}; without --only-critical, fix takes the upstream bytes"
        ) from None
    return _plan(path, old, new, tuple(applied), upstream, "critical-fields")


def write(p: Plan, made: Made, backup: bool = True, record_lock: bool = True) -> tuple[Written, Entry | None]:
    """Write the plan through the verified writer and record it in the lock file as `made` (an hf:// path: open a
    pull request on the commit it was read at, and record nothing)."""
    if storage.is_remote(p.path):
        from dflash_cfg.write.remote import open_pull_request, record_remote, write_conditional

        if p.path.scheme == "gcs":
            raise UsageError(
                f"{p.path}: writes to gs:// are not supported yet (only s3:// has a conditional write here); "
                "fix a copy and upload it, or use --dry-run to see the change"
            )
        if p.path.scheme == "hf":  # the Hub: a pull request on the commit it was read at, not a write
            return open_pull_request(p.path, p.new, "\n".join(p.applied)), None
        written = write_conditional(p.path, p.new, hashlib.sha256(p.old).hexdigest(), backup=backup)
        return written, record_remote(p.path, written, made, __version__) if record_lock else None
    from dflash_cfg.write.lock import record
    from dflash_cfg.write.verified import write_verified

    written = write_verified(p.path, p.new, hashlib.sha256(p.old).hexdigest(), backup=backup)
    return written, record(p.path, written, made, __version__) if record_lock else None


def _lock_file(written: Written, recorded: Entry | None) -> str | None:
    if recorded is None:
        return None
    path = written.path
    return str(lock_path(remote.parse(path) if remote.is_url(path) else Path(path)))


@dataclass(frozen=True)
class ConfirmPolicy:
    """When fix asks before writing a plan that changes a file. `dry_run`: show it, write nothing; `yes`:
    show it and write; neither: show it and ask, which needs a terminal (a hook or a CI job cannot answer,
    so it is refused rather than left waiting); `document` (one JSON document for the run): nothing is
    shown or asked, so it needs `yes` or `dry_run`."""

    dry_run: bool = False
    yes: bool = False
    document: bool = False

    def __post_init__(self) -> None:
        if self.document and not (self.yes or self.dry_run):
            raise UsageError("--format json cannot ask before writing: pass --yes (or --dry-run)")


def confirmation(
    policy: ConfirmPolicy,
    show: Callable[[Plan], None],
    ask: Callable[[Plan], bool],
    is_terminal: Callable[[], bool],
) -> Callable[[Plan], bool]:
    """The `confirm` of `fix_each` under `policy`: `show` prints a plan, `ask` puts the question to the user,
    `is_terminal` says whether anyone can answer (asked only when it matters: stdin may be closed)."""

    def confirm(p: Plan) -> bool:
        if policy.document:
            return not policy.dry_run
        show(p)
        if policy.dry_run:
            return False
        if policy.yes:
            return True
        if not is_terminal():
            raise UsageError("stdin is not a terminal: pass --yes to write without asking (or --dry-run)")
        return ask(p)

    return confirm


def fix_each(
    paths: Sequence[str],
    options: FixOptions,
    confirm: Callable[[Plan], bool],
    *,
    backup: bool = True,
    record_lock: bool = True,
) -> Iterator[FixResult]:
    """`fix_paths` that stops at the first PATH it cannot do, raising why (the public API's `fix`)."""
    for result in fix_paths(paths, options, confirm, backup=backup, record_lock=record_lock):
        if isinstance(result, Failed):
            raise result.error
        yield result


def fix_paths(
    paths: Sequence[str],
    options: FixOptions,
    confirm: Callable[[Plan], bool],
    *,
    backup: bool = True,
    record_lock: bool = True,
) -> Iterator[FixResult | Failed]:
    """Plan, confirm and write each config.json of each PATH in turn (a model dir, a file, or a tree: each of its
    files), one result each as soon as it is done. A PATH that cannot be done (missing, no config.json, its
    upstream unreachable, a refused write) is a `Failed` in its place, and the rest go on.

    `confirm` is the caller's say on a plan that changes the file (show it, ask, or refuse for a dry run); what
    it raises holds for every file (no terminal to ask on) and ends the run.
    """
    named: list[tuple[str, list[tuple[storage.Where, bool]] | DflashCfgError]] = []
    for given in paths:
        try:
            named.append((given, configs_of(given)))
        except DflashCfgError as exc:
            named.append((given, exc))
    if options.hub is not None and options.hub.repo and sum(len(c) for _, c in named if isinstance(c, list)) > 1:
        raise UsageError("--from-hub REPO repairs one PATH at a time")
    for given, configs in named:
        if isinstance(configs, DflashCfgError):
            yield Failed(given, configs)
            continue
        for config, explicit in configs:
            shown = as_given(given, config)
            try:
                p = replace(plan(config, options, explicit=explicit), shown=shown)
            except DflashCfgError as exc:
                yield Failed(given, exc, shown)
                continue
            if p.changed and not confirm(p):
                yield FixResult(plan=p, outcome=None, remaining_errors=0)
                continue
            try:
                yield _done(p, options, backup=backup, record_lock=record_lock)
            except DflashCfgError as exc:
                yield Failed(given, exc, shown)


def _done(p: Plan, options: FixOptions, *, backup: bool, record_lock: bool) -> FixResult:
    """Write a confirmed plan (if it changes the file) and check the result as `check` would."""
    stored = None
    if p.changed:
        # What the lock records: the new bytes' findings, as the re-check finds them before the write.
        planned, _, _ = after(p, options, written=False)
        stored = write(p, made(p, planned), backup=backup, record_lock=record_lock)
    left, fail_on, served = after(p, options, written=stored is not None)  # once: the count and hint read it
    errors = remaining_errors(left, fail_on, served)
    outcome = None if stored is None else Outcome(*stored, errors, _lock_file(*stored))
    hint, in_project = _hint(p, left)
    return FixResult(
        plan=p,
        outcome=outcome,
        remaining_errors=errors,
        upstream_hint=hint,
        hint_in_project=in_project,
        recheck=recheck(p, options),
        warnings_fail=fail_on <= Severity.WARNING,
    )


def made(p: Plan, left: FileReport) -> Made:
    """How the plan's bytes were made, and the findings they still have (warnings and errors), for the lock."""
    source = None if p.upstream is None else Source(p.upstream.repo, p.upstream.revision, p.upstream.commit)
    counts = Left(
        errors=sum(1 for f in left.findings if f.severity is Severity.ERROR),
        warnings=sum(1 for f in left.findings if f.severity is Severity.WARNING),
    )
    return Made(source, p.repair, counts)


def recheck(p: Plan, options: FixOptions) -> str:
    """The `check` command line with fix's inputs: the one whose answer fix's exit code gives."""
    words = ["dflash-cfg", "check", str(p.path.parent)]
    if options.target is not None:
        words += ["--target", options.target]
    if p.upstream is not None and options.hub is not None:
        words += ["--from-hub", p.upstream.repo, "--revision", p.upstream.commit]
    if options.hub is not None and options.hub.offline:
        words.append("--offline")
    return shlex.join(words)


def after(p: Plan, options: FixOptions, *, written: bool) -> tuple[FileReport, Severity, Served]:
    """The fixed bytes checked as `check` with fix's inputs would check the written file, the severity
    that fails that check, and what serves the drafter (the project's `engines`: a finding about other engines
    fails nothing). Fix's exit code is that check's answer, so every input counts: the target, the
    weights beside the file, the upstream it was compared with, and the project config (its rules, per-file
    ignores, target, upstream and fail-on). A file left at the failing severity must not pass as repaired."""
    from dflash_cfg.commands.check import (
        CheckOptions,
        drafter_inputs,
        integrity,
        resolved,
        served,
        settings_for,
        weights_beside,
    )

    offline = options.hub.offline if options.hub is not None else False
    given = CheckOptions(paths=(str(p.path),), target=options.target, hub=options.hub, offline=offline)
    given, _, rules, fail_on = resolved(given)
    settings = settings_for(p.path, given, rules)
    target = load_target_option(settings.target, offline=offline)
    upstream = p.upstream
    if upstream is None and settings.hub is not None and settings.hub.repo:
        try:  # the project's upstream: `check` compares with it, so the re-check does too
            upstream = upstream_for(p.path, settings.hub)
        except DflashCfgError:
            # The file is written by now; an unreachable Hub must not hide that. The comparison is left
            # to the next `check`, which says why it cannot make it.
            upstream = None
    inputs = drafter_inputs(
        path=str(p.path),
        doc=parse(p.new),
        explicit=True,
        settings=settings,
        target=target,
        weights=weights_beside(p.path.parent, {}) if needs(settings.rules, "weights") else (None, None),
        views=Views() if needs(settings.rules, "effective") else None,
        upstream=upstream,
        found_by=None,
        # The lock as the write left it: an unwritten plan (a dry run) has no lock entry to match yet.
        facts=integrity(p.path, p.new, None) if written else None,
        # As `check` compares a file no upstream is named for with the published drafters.
        published=catalog.load() if needs(settings.rules, "catalog") else None,
    )
    return lint(inputs, settings.rules), fail_on, served(given)


def _hint(p: Plan, left: FileReport) -> tuple[str | None, bool]:
    """Where the trained values of a file that still has findings only upstream can settle come from, and
    whether the project config names it already."""
    if p.upstream is not None:
        return None, False
    if not any(f.severity >= Severity.WARNING and (f.fix is None or not f.fix.safe) for f in left.findings):
        return None, False
    entry = project_entry(p.path)
    if entry is not None and entry.upstream is not None:
        return entry.upstream, True
    known = known_upstream(p.path)
    if known:
        return known[0], False
    # The published drafter the catalog took it for (DF604 names it).
    return left.identity.repo if left.identity is not None and left.identity.found_by == "catalog" else "", False


def remaining_errors(left: FileReport, fail_on: Severity = Severity.ERROR, served: Served = ()) -> int:
    """Findings the planned bytes still have that fail a check (errors, unless the project says warnings, about
    the engines that serve the drafter): what only upstream values or a human can settle."""
    return sum(1 for f in left.findings if f.severity >= fail_on and concerns(f, served))


def exit_code(result: FixResult, exit_non_zero_on_fix: bool = False) -> int:
    """1 when a change was not written (a dry run), when errors remain, or (`exit_non_zero_on_fix`, as
    pre-commit fixers do) when the file was changed; else 0."""
    if result.remaining_errors:
        return EXIT_FINDINGS
    if result.plan.changed and (result.outcome is None or exit_non_zero_on_fix):
        return EXIT_FINDINGS
    return EXIT_OK

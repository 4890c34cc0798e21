"""lint(inputs) -> FileReport: run the selected rules on one file. Pure: every input is a value the
edge (commands/) gathered beforehand, so linting never reads a file, the network or transformers."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from dflash_cfg.jsondoc.document import MAX_BYTES, Document, git_blob_sha1
from dflash_cfg.lint.published import Judgement, candidates, judge, shape_of
from dflash_cfg.lint.rules import ALL, Context, Rule
from dflash_cfg.lint.rules.attention import FULL, SLIDING, strip
from dflash_cfg.lint.rules.base import show
from dflash_cfg.lint.speculators import Translation, is_speculators, translate
from dflash_cfg.model import (
    Effective,
    EngineCheck,
    FileReport,
    Finding,
    Fix,
    HubFile,
    Integrity,
    Kind,
    Launch,
    PatchOp,
    Problem,
    Severity,
    Target,
    Upstream,
    Weights,
    release_order,
)
from dflash_cfg.model.catalog import Catalog, FoundBy, Identity, Published


@dataclass(frozen=True, kw_only=True)
class Inputs:
    """One file and everything it is linted against."""

    path: str  # as displayed
    doc: Document
    explicit: bool = True  # the user named this file (or its model dir), rather than a tree it was found in
    target: Target | None = None
    weights: Weights | None = None
    weights_error: str | None = None  # why the checkpoint beside the file could not be read
    view: Effective | None = None  # the engine's config class on the file (None: no rule asked for it)
    upstream: HubFile | None = None  # --from-hub
    upstream_doc: Document | None = None
    upstream_view: Effective | None = None
    integrity: Integrity | None = None
    launch: Launch | None = None
    engine: EngineCheck | None = None  # preflight's engine step: what the launch's engine answered
    # The published drafters (None: not consulted: `upstream = "none"`, or no rule needs it), and how `upstream`
    # was found.
    catalog: Catalog | None = None
    found_by: FoundBy | None = None
    target_repo: str | None = None


def needs(rules: Iterable[Rule], need: str) -> bool:
    """Whether any of `rules` needs this input: the edge gathers only what will be read."""
    return any(need in r.needs for r in rules)


def classify(doc: Document, explicit: bool = True) -> tuple[Kind, str]:
    """Which kind of file this is, and for a skipped one, why.

    `explicit`: the user named this file (or its model dir) rather than a tree it was found in.
    """
    data = doc.data
    if not isinstance(data, dict):
        # Not an object, so we cannot see what it is. A file the user named is always linted; in a tree,
        # one that mentions DFlash (in any of the encodings DF003 reports) is, so a broken drafter config
        # is never skipped while a broken unrelated config.json is.
        if explicit or b"dflash" in doc.raw.lower().replace(b"\0", b""):  # NULs: UTF-16/32 text
            return "dflash", ""
        return "skipped", "not a DFlash drafter config (not a JSON object, no mention of DFlash)"
    archs = data.get("architectures")
    names = [a for a in archs if isinstance(a, str)] if isinstance(archs, list) else []
    if is_speculators(data):
        return "speculators", ""
    if data.get("speculators_model_type") is not None:
        return "skipped", f"speculators-format config ({data.get('speculators_model_type')!r}): not a DFlash drafter"
    if "DFlash2DraftModel" in names:
        return "dflash2", ""
    if "dflash_config" in data or any("dflash" in n.lower() for n in names):
        return "dflash", ""
    shown = f"architectures {names}" if names else f"model_type {data.get('model_type')!r}"
    return "skipped", f"not a DFlash drafter ({shown}, no dflash_config)"


def available(ctx: Context) -> frozenset[str]:
    """What a file offers the rules (`Rule.needs`), worked out once per file."""
    has = {
        "bytes": True,
        "data": isinstance(ctx.doc.data, dict),
        "effective": ctx.view is not None,
        "target": ctx.target is not None,
        "weights": ctx.weights is not None,
        "upstream": ctx.upstream is not None,
        "integrity": ctx.integrity is not None,
        "launch": ctx.launch is not None,
        "engine": ctx.engine is not None,
        "catalog": ctx.published is not None or ctx.base is not None,
    }
    return frozenset(need for need, present in has.items() if present)


def runnable(r: Rule, ctx: Context, offered: frozenset[str]) -> bool:
    if ctx.kind not in r.kinds:
        return False
    if r.id == "DF500" and ctx.weights_error is not None:  # the one rule about weights that could not be read
        return all(n in offered for n in r.needs if n != "weights")
    return all(n in offered for n in r.needs)


# The rules that run, by the rule list (kept, so its id is not reused), the kind, what the file offers and whether
# its weights failed to read: a tree's files fall in a handful of such groups, and each would filter 60 rules again.
_RUNNABLE: dict[tuple[int, str, frozenset[str], bool], tuple[Iterable[Rule], tuple[Rule, ...]]] = {}


def _runnable(rules: Iterable[Rule], ctx: Context) -> Iterable[Rule]:
    offered = available(ctx)
    if not isinstance(rules, tuple):
        return [r for r in rules if runnable(r, ctx, offered)]
    key = (id(rules), ctx.kind, offered, ctx.weights_error is not None)
    kept = _RUNNABLE.get(key)
    if kept is None or kept[0] is not rules:
        if len(_RUNNABLE) > 256:
            _RUNNABLE.clear()
        kept = _RUNNABLE[key] = (rules, tuple(r for r in rules if runnable(r, ctx, offered)))
    return kept[1]


def lint(inputs: Inputs, rules: Iterable[Rule] = ALL) -> FileReport:
    doc = inputs.doc
    raw = doc.raw
    kind, note = classify(doc, inputs.explicit)
    whole = len(raw) <= MAX_BYTES  # larger files were read only in part: their hashes would mislead
    sha256 = hashlib.sha256(raw).hexdigest() if whole else None
    blob = git_blob_sha1(raw) if whole else None
    if kind == "skipped":
        return FileReport(path=inputs.path, kind=kind, sha256=sha256, git_blob_sha1=blob, note=note)
    # A speculators-format file is linted as vLLM reads it: translated; findings point back into the file.
    translation = translate(doc.data) if kind == "speculators" and isinstance(doc.data, dict) else None
    linted = doc if translation is None else dataclasses.replace(doc, data=translation.data)
    judgement = _judged(inputs, linted, kind, sha256, blob)
    ctx = Context(
        inputs=inputs,
        doc=linted,
        kind=kind,
        written=doc.data if translation is not None else None,
        published=judgement,
        base=_base(inputs, judgement),
    )
    findings = []
    for r in _runnable(rules, ctx):
        for problem in r.run(ctx):
            severity = r.severity if problem.severity is None else problem.severity
            declared(r, problem, severity)
            if translation is not None:
                problem = _into_file(problem, translation)
            where = problem.at or doc.locate(problem.pointer) or (None, None)
            findings.append(
                Finding(
                    rule=r.id,
                    name=r.name,
                    severity=severity,
                    pointer=problem.pointer,
                    line=where[0],
                    column=where[1],
                    message=problem.message,
                    fix=problem.fix,
                    engines=problem.engines,
                )
            )
    findings.sort(key=lambda f: (f.line or 0, f.column or 0, f.rule, f.pointer))
    up = inputs.upstream
    source = (
        None
        if up is None
        else Upstream(
            repo=up.repo, revision=up.revision, commit=up.commit, git_blob_sha1=up.blob_id, unreachable=up.unreachable
        )
    )
    through = inputs.view.config_class if inputs.view is not None else None
    return FileReport(
        path=inputs.path,
        kind=kind,
        sha256=sha256,
        git_blob_sha1=blob,
        findings=tuple(findings),
        picture=picture(ctx),
        upstream=source,
        config_class=through,
        identity=identity(inputs, judgement),
    )


def _judged(inputs: Inputs, doc: Document, kind: Kind, sha256: str | None, blob: str | None) -> Judgement | None:
    """The file against the catalog, when its upstream is not known otherwise (a known upstream is compared with
    its own copy, DF601-DF603) and it is not a cache snapshot (that is its own upstream, or DF704's)."""
    if inputs.catalog is None or inputs.upstream is not None or not isinstance(doc.data, dict):
        return None
    if inputs.integrity is not None and inputs.integrity.edited_snapshot is not None:
        return None
    shape = shape_of(doc.data, kind)
    return judge(doc.data, sha256, blob, candidates(inputs.catalog, shape, sha256, blob))


def _base(inputs: Inputs, judgement: Judgement | None) -> Published | None:
    """The catalog's entry of the drafter the file is: its upstream's, else the revision it was proven to be."""
    if inputs.catalog is None:
        return None
    if inputs.upstream is not None:
        return inputs.catalog.get(inputs.upstream.repo)
    snapshot = inputs.integrity.edited_snapshot if inputs.integrity is not None else None
    if snapshot is not None:
        return inputs.catalog.get(snapshot[0])
    if judgement is not None and judgement.match != "differs":
        return judgement.entry
    return None


def identity(inputs: Inputs, judgement: Judgement | None) -> Identity | None:
    """Which published drafter the file is, and how that was found."""
    up = inputs.upstream
    if up is not None:
        return Identity(repo=up.repo, commit=up.commit, found_by=inputs.found_by or "option")
    snapshot = inputs.integrity.edited_snapshot if inputs.integrity is not None else None
    if snapshot is not None:
        return Identity(repo=snapshot[0], commit=snapshot[1], found_by="cache", match="edited")
    if judgement is None:
        return None
    return Identity(
        repo=judgement.entry.repo,
        commit=judgement.revision.commit,
        found_by="catalog",
        match=judgement.match,
        others=judgement.others,
    )


class UndeclaredFinding(Exception):
    """A rule yielded a finding its `@rule` declaration does not allow (a severity, a fix, a release bound): a bug in
    dflash-cfg, never the user's, so it is raised to the CLI's internal-error line, not reported as a
    finding."""


def declared(r: Rule, problem: Problem, severity: Severity) -> None:
    """Refuse a finding outside the rule's declaration, which the catalogue documents (`Severity:`,
    `Fix:`): a rule that changed what it yields without its declaration would make its doc wrong."""
    if severity not in r.severities:
        allowed = ", ".join(s.label for s in r.severities)
        raise UndeclaredFinding(f"{r.id} yielded a {severity.label} finding; it declares {allowed}")
    if problem.fix is not None and not (r.fix and problem.fix.safe):
        what = "an unsafe fix" if r.fix else "a fix"
        raise UndeclaredFinding(f"{r.id} yielded {what} it does not declare")
    for req in problem.engines:
        bound = release_order(req.version)
        if req.op and not any(b.engine == req.engine and release_order(b.version) == bound for b in r.bounds(req.op)):
            side = "since" if req.op == ">=" else "until" if req.op == "<" else "since or until"
            raise UndeclaredFinding(f"{r.id} yielded a finding for {req}; it declares no change of it as {side}")


def _into_file(problem: Problem, translation: Translation) -> Problem:
    """A problem found on the translated dict, pointed at the file as written; a fix is kept only when
    every operation lands on a key the file itself holds (its own keys, never vLLM's translated ones)."""
    mapped = translation.to_file(problem.pointer)
    where = mapped if mapped is not None else problem.pointer
    message = problem.message
    if mapped is not None and mapped != problem.pointer:
        message += f" (vLLM's translation reads it as {problem.pointer or '/'})"
    fix = problem.fix
    if fix is not None:
        ops = [(op, translation.to_file(op.path)) for op in fix.patch]
        if all(path for _, path in ops) and not fix.edits:
            fix = Fix(fix.summary, tuple(PatchOp(op.op, path or "", op.value) for op, path in ops), fix.safe)
        elif fix.patch:
            fix = None
    return dataclasses.replace(problem, pointer=where, message=message, fix=fix)


def picture(ctx: Context) -> tuple[str, ...]:
    """The attention layout and the taps, drawn compactly for people (text output only)."""
    if not isinstance(ctx.doc.data, dict):
        return ()
    lines = []
    types = ctx.layer_types()
    window = ctx.data.get("sliding_window")
    if types:
        counts = f"{types.count(SLIDING)} sliding, {types.count(FULL)} full"
        line = f"layers  {strip(types)}  ({counts}; window {show(window)})"
        if ctx.view is not None and ctx.view.values is not None:
            seen = ctx.view.values
            if seen.get("sliding_window") != window or seen.get("layer_types") != types:
                line += f"  -> engines see {strip(seen.get('layer_types'))}, window {show(seen.get('sliding_window'))}"
        lines.append(line)
    elif ctx.view is not None and ctx.view.values is not None:
        seen = ctx.view.values
        lines.append(
            f"layers  (absent) -> engines see {strip(seen.get('layer_types')) or 'no layer_types'}, "
            f"window {show(seen.get('sliding_window'))}"
        )
    taps = ctx.taps()
    depth = ctx.target.num_hidden_layers if ctx.target and ctx.target.num_hidden_layers else None
    source = "target" if depth else "num_target_layers"
    depth = depth or ctx.num_target_layers()
    if taps and len(taps) <= 64:
        line = f"taps    {' '.join(map(str, taps))}"
        # A strip only for real depths; a hostile tap of 10**12 must not become a 10**12-char string.
        if depth and depth <= 512 and max(taps) < 1024:
            tapped = set(taps)
            marks = "".join("|" if i in tapped else "." for i in range(max(depth, max(taps) + 1)))
            line += f"  of {depth} ({source})  {marks[:depth]}"
            if len(marks) > depth:
                line += "  ! " + marks[depth:]
        lines.append(line)
    return tuple(lines)

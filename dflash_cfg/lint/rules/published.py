"""Rules that compare the file with the published drafters of the catalog, offline, when nobody named its upstream.

The incident's user never named one: a stale copy and a trained file looked the same. A file of the shape of a
published drafter (architecture, widths, depth, heads, target depth) is judged against every revision of it that
the catalog holds (lint/published.py); `dflash-cfg catalog update` adds revisions from the Hub. Checks of
dflash-cfg's own: no engine compares a drafter with anything, so these rules name no engine read; the values they
compare are the ones the engines draft with (the rules that own each field say how).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dflash_cfg.lint.published import LABELS, Judgement
from dflash_cfg.lint.rules.base import Context, rule
from dflash_cfg.lint.rules.upstream import show_compared
from dflash_cfg.model import Problem, Severity
from dflash_cfg.model.catalog import Revision


def _judgement(ctx: Context) -> Judgement | None:
    return ctx.published


def at(repo: str, revision: Revision) -> str:
    """`z-lab/X@28cadb796e2f`, or `z-lab/X (commit unknown)` for a shipped copy whose commit is not known."""
    if revision.commit:
        return f"{repo}@{revision.commit[:12]}"
    return f"{repo} (commit unknown)"


def _short(revision: Revision) -> str:
    return revision.commit[:7] if revision.commit else "commit unknown"


def _value(value: Any) -> str:
    shown = show_compared(value)
    return shown.replace(", ", ",") if shown.startswith("[") else shown


def _label(name: str) -> str:
    return LABELS.get(name, name)


@rule(
    "DF604", "published-values-differ", Severity.WARNING, "data", "catalog", severities=(Severity.INFO,), own_check=True
)
def values_differ(ctx: Context) -> Iterator[Problem]:
    """The file has the shape of a published drafter, but a trained value matches no published revision of it.

    The catalog (the published drafters dflash-cfg ships, plus what ``dflash-cfg catalog update`` read from the
    Hub) knows every revision of each drafter it has seen: its taps, mask id, layer layout, window, block size,
    RoPE and vocabulary. A file with the architecture, widths, depth, heads and target depth of one of them is
    taken for a copy of it, and each value that no revision has is reported with the closest revision's value:
    a stale or guessed copy (the incident: taps, mask and layout) is found without naming the upstream. A
    warning, as the stale-file signature is: the gates fail on it. An info when the closest published copy is a
    partial one (the keys it lacks are unknown). A newer revision the catalog has not read looks the same:
    ``dflash-cfg catalog update AUTHOR`` reads it. A drafter of your own with a published shape: set
    ``upstream = "none"`` for it; ``--from-hub`` or ``upstream`` compares with one repo instead. A check of
    dflash-cfg's own: no engine compares a drafter with its published revisions.

    Fail: taps ``[1, 17, 33, 49, 63]`` where every revision of z-lab/Qwen3.6-27B-DFlash has ``[1, 16, 31, 46, 61]``
    Pass: a file whose trained values are those of a published revision, or a shape no published drafter has
    """
    found = _judgement(ctx)
    if found is None or found.match != "differs":
        return
    entry, revision = found.entry, found.revision
    others = f"; the shape of {', '.join(found.others)} too" if found.others else ""
    level = None if revision.complete else Severity.INFO
    partial = "" if revision.complete else " (a partial copy: only the keys it has are compared)"
    # A same-name retrain the catalog has not read yet looks the same: say how to learn it.
    newer = f"; a newer revision? `dflash-cfg catalog update {entry.repo.split('/')[0]}` reads it"
    for d in found.differences:
        yield Problem(
            pointer=d.pointer,
            message=f"{_label(d.name)} {_value(d.local)} {'match' if d.name == 'target_layer_ids' else 'matches'} no "
            f"published revision of {entry.repo} ({_short(revision)}: {_value(d.published)}){partial}{others}"
            f"{newer}",
            severity=level,
        )


@rule("DF605", "published-identical", Severity.INFO, "data", "catalog", own_check=True)
def identical(ctx: Context) -> Iterator[Problem]:
    """The file is byte for byte a published revision of a drafter the catalog knows.

    Information, found offline: it says which drafter and revision the file is, so a later report can be checked;
    the gates treat it as a file identical to its upstream (DF603): its publisher chose its warnings. When the
    catalog knows a newer revision that changed trained values, the message names it. A check of dflash-cfg's
    own: no engine compares a drafter with its published revisions.

    Fail (info): a file with the bytes of z-lab/Qwen3.8-27B-DFlash2's config.json at 50307d4
    Pass (no finding): a file that is no published revision
    """
    found = _judgement(ctx)
    if found is None or found.match != "identical":
        return
    yield Problem(
        pointer="",
        message=f"identical to the published {at(found.entry.repo, found.revision)}, "
        f"as the catalog holds it{_newer(found)}",
    )


@rule("DF606", "published-revision", Severity.INFO, "data", "catalog", own_check=True)
def trained_as(ctx: Context) -> Iterator[Problem]:
    """The file's trained values are those of a published revision (its other bytes differ: formatting, keys
    that change nothing the drafter computes).

    Information: names the drafter and revision the file matches; a file that matches an older revision is told
    which newer revision the catalog knows and which trained values it changed (a same-name retrain changes taps
    or window under users who pinned nothing). A check of dflash-cfg's own: no engine compares a drafter with
    its published revisions.

    Fail (info): the trained values of z-lab/Qwen3.6-27B-DFlash@28cadb7, re-indented
    Pass (no finding): a file that matches no published revision, or is one byte for byte (DF605)
    """
    found = _judgement(ctx)
    if found is None or found.match not in ("trained", "older"):
        return
    yield Problem(
        pointer="",
        message=f"the trained values of the published {at(found.entry.repo, found.revision)}, as the catalog holds it"
        f"{_newer(found)}",
    )


def _newer(found: Judgement) -> str:
    if found.newer is None:
        return ""
    when = f" ({found.newer.date[:10]})" if found.newer.date else ""
    changed = ", ".join(_label(n) for n in found.changed)
    return f"; a newer revision, {at(found.entry.repo, found.newer)}{when}, changed {changed}"


@rule(
    "DF607",
    "target-not-published-base",
    Severity.ERROR,
    "target",
    "catalog",
    severities=(Severity.WARNING,),
    own_check=True,
)
def not_the_base(ctx: Context) -> Iterator[Problem]:
    """The target is not the model the drafter was published for (its model card's ``base_model``).

    A drafter reads the hidden states of the target layers it was trained on. On another target of the same
    width (a gpt-oss-20b drafter on gpt-oss-120b) its taps still fit, nothing refuses it, and it drafts from
    the wrong layers. Compared when the drafter is known (its upstream, a cache snapshot, or a published
    revision it matches): an error when the target's depth differs from the published target's (the taps read
    other layers), a warning when its width or vocabulary differs. A target of the same shape under another
    repo id (a quantized or renamed copy of the same model) serves it as well: nothing is said. A check of
    dflash-cfg's own: no engine knows which target a drafter was published for.

    Fail: z-lab/gpt-oss-20b-DFlash (published for openai/gpt-oss-20b, 24 layers) with a 36-layer target
    Pass: the drafter with its published target, or a copy of the same shape
    """
    entry = ctx.base
    target = ctx.target
    assert target is not None
    shape = entry.base_shape if entry is not None else None
    if entry is None or shape is None:
        return
    named = f"{entry.repo} was published for {entry.base_model or 'a target'}"
    shown = f"{ctx.target_repo} ({target.path})" if ctx.target_repo else target.path
    depth = shape.num_hidden_layers
    if depth is not None and target.num_hidden_layers is not None and depth != target.num_hidden_layers:
        yield Problem(
            pointer=ctx.draft_pointer("target_layer_ids"),
            message=f"{named} ({depth} layers), but the target {shown} has {target.num_hidden_layers} layers: its taps "
            "read other layers than it was trained on; launch it with its published target",
        )
        return
    wrong = [
        f"{what} {mine} (published target: {want})"
        for what, mine, want in (
            ("width", target.hidden_size, shape.hidden_size),
            ("vocabulary", target.vocab_size, shape.vocab_size),
        )
        if want is not None and mine is not None and mine != want
    ]
    if wrong:
        yield Problem(
            pointer="",
            message=f"{named}; the target {shown} has {', '.join(wrong)}: "
            "is it the model the drafter was trained with?",
            severity=Severity.WARNING,
        )


RULES = (values_differ, identical, trained_as, not_the_base)

"""Engine rules (``dflash-cfg preflight``'s engine step): the launch's own engine, run on this host by its
adapter, refuses the drafter or reads it other than the file says. `check` and the hooks never run them."""

from __future__ import annotations

from collections.abc import Iterator

from dflash_cfg.lint.engine_reads import differences, file_says
from dflash_cfg.lint.rules.base import Context, rule
from dflash_cfg.model import EngineRecord, Problem, Severity
from dflash_cfg.pinned import named

_POINTERS = {
    "target_layer_ids": "target_layer_ids",
    "mask_token_id": "mask_token_id",
    "layer_types": "layer_types",
    "sliding_window": "sliding_window",
}


def unchecked(record: EngineRecord) -> str:
    """ "", or why an answer from this version carries less weight."""
    return "" if record.checked else " (the adapter was not checked against this version)"


def _records(ctx: Context) -> tuple[EngineRecord, ...]:
    return ctx.engine.records if ctx.engine is not None else ()


@rule("DF901", "engine-refuses", Severity.ERROR, "data", "engine", severities=(Severity.WARNING,), own_check=True)
def engine_refuses(ctx: Context) -> Iterator[Problem]:
    """The launch's own engine, run on this host, refuses this drafter: the server would fail to start.

    ``preflight`` runs the engine the launch runs (its interpreter: ``python -m sglang.launch_server`` that
    python, ``vllm serve`` the one in vllm's shebang) with the launch's speculative method, drafts per step
    and tensor-parallel size, through its adapter: the engine's own config code builds the drafter on CPU,
    without weights. This is a check of dflash-cfg's own in that no transcribed engine read stands behind
    it: the installed engine answers. The finding quotes the engine's exception and its source line. An
    engine version the adapters were not checked against reports a warning. ``--no-engine-check`` (or
    ``engine-check = false`` in the project config) skips the step.

    Fail: {SGLang} with taps ``[1, 17, 33, 49, 63]`` on a 64-layer Qwen3.5 target: IndexError
    Pass: the same launch with taps ``[1, 16, 31, 46, 61]``
    """
    for record in _records(ctx):
        if record.refused is None:
            continue
        where = f" at {record.refused.where}" if record.refused.where else ""
        yield Problem(
            pointer="",
            message=f"{record.label} refuses this drafter: {record.refused.type}: {record.refused.message}{where}"
            f"{unchecked(record)}",
            severity=None if record.checked else Severity.WARNING,
        )


@rule(
    "DF902",
    "engine-reads-differently",
    Severity.ERROR,
    "data",
    "engine",
    severities=(Severity.WARNING,),
    own_check=True,
)
def engine_reads_differently(ctx: Context) -> Iterator[Problem]:
    """The launch's own engine reads a DFlash-critical field other than the file says.

    The taps, the mask token, the layer types and the sliding window decide what the drafter drafts; the
    engine's adapter reports the values the engine builds the drafter with, and any that differs from the
    file's (a key the engine does not read where it is, a window it rewrites) is an error. A check of
    dflash-cfg's own in that the installed engine, not a transcription of its code, says what it reads.
    An engine version the adapters were not checked against reports a warning.

    Fail: the file says ``layer_types`` ``S S S S F`` and the engine builds ``F F F F F``
    Pass: the engine builds the layers, taps, mask and window the file says
    """
    says = file_says(ctx.written if ctx.written is not None else ctx.data)
    for record in _records(ctx):
        if record.reads is None:
            continue
        for diff in differences(says, record.reads):
            if not diff.critical:
                continue
            yield Problem(
                pointer=ctx.draft_pointer(_POINTERS[diff.field])
                if diff.field in ("target_layer_ids", "mask_token_id")
                else "/" + _POINTERS[diff.field],
                message=f"{record.label} reads {diff.field} {diff.engine}, the file says "
                f"{diff.file}{unchecked(record)}",
                severity=None if record.checked else Severity.WARNING,
            )


@rule("DF904", "engine-shortens-context", Severity.WARNING, "data", "engine", own_check=True)
def engine_shortens_context(ctx: Context) -> Iterator[Problem]:
    """The launch's own engine serves a shorter context with this drafter than without it.

    vLLM's V2 model runner cannot skip speculation for sequences longer than the drafter can serve, so when
    the drafter's length is below the target's it lowers the whole server's ``max_model_len`` to the
    drafter's, with only a log line (``VllmConfig._limit_max_model_len_to_draft``): long requests the target
    alone would serve are refused. The adapter builds the launch's configuration with and without the drafter
    and compares the two lengths: a check of dflash-cfg's own, the installed engine answering. DF810 says the
    same from the file when the launch gives ``--max-model-len``; this one also covers the target's own length,
    which only the engine derives.

    Fail (warning): a drafter with YaRN RoPE and ``max_position_embeddings`` 4096 on a 40960-token target
    Pass: a drafter with default RoPE (vLLM raises its length to the target's)
    """
    for record in _records(ctx):
        shortened = record.shortened_context
        if shortened is not None:
            served, alone = shortened
            yield Problem(
                pointer="/max_position_embeddings",
                message=f"{record.label} serves max_model_len {served} with this drafter, {alone} without it: it"
                f" lowers the server's length to the drafter's{unchecked(record)}",
            )


@rule("DF903", "engine-not-asked", Severity.INFO, "data", "engine", own_check=True)
def engine_not_asked(ctx: Context) -> Iterator[Problem]:
    """The launch's engine was not run, or its adapter could not answer: the static rules still apply.

    Said once per reason: the launch runs in a container (the engine is inside the image), its
    interpreter cannot import the engine here, the engine's version is not one the adapters were checked
    against, or the adapter failed (its reason, never a traceback). A check of dflash-cfg's own: it reports
    on the engine step, and never stands in for the static rules' verdict.

    Fail (info): ``docker run ... vllm/vllm-openai ...``: the engine runs inside the image, not run here
    Pass: the launch's interpreter imports the engine and its adapter answers
    """
    if ctx.engine is None:
        return
    for note in ctx.engine.notes:
        yield Problem(pointer="", message=f"engine check: {note}; the static rules still apply")
    for record in _records(ctx):
        if record.failed is not None:
            reason = " ".join(str(record.failed).split())[:300]
            yield Problem(pointer="", message=f"engine check: {record.label}'s adapter could not answer: {reason}")
        elif not record.checked:
            yield Problem(
                pointer="",
                message=f"engine check: {record.label} is not a version the adapters were checked against "
                f"(they pin {named('vllm')}, {named('sglang')}); the static rules still apply",
            )


RULES = (engine_refuses, engine_reads_differently, engine_not_asked, engine_shortens_context)

"""Rules that need the target model (``--target``): the drafter reuses its embeddings, lm_head and
hidden states, so sizes, depth and the mask token must match it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from dflash_cfg.lint.engines import sglang, vllm
from dflash_cfg.lint.releases import CANDIDATE_VOCABULARY
from dflash_cfg.lint.rules.base import Context, is_int, rule, show
from dflash_cfg.lint.rules.taps import SGLANG_NO_LAST_LAYER_CAPTURE
from dflash_cfg.model import Fix, PatchOp, Problem, Requirement, Severity, Target


def _target(ctx: Context) -> Target:
    assert ctx.target is not None
    return ctx.target


@rule(
    "DF401",
    "target-hidden-size",
    Severity.ERROR,
    "data",
    "target",
    reads=(vllm.HIDDEN_SIZE, vllm.TARGET_HIDDEN_SIZE, sglang.HIDDEN_SIZE),
)
def target_hidden_size(ctx: Context) -> Iterator[Problem]:
    """The drafter's ``hidden_size`` (or ``target_hidden_size``) differs from the target's.

    The drafter has no embeddings or ``lm_head`` of its own: vLLM hands it the target's modules without a
    width check, SGLang feeds it the target's embeddings, and ``fc`` takes K × target-hidden inputs
    (vLLM: ``target_hidden_size`` or ``hidden_size``; SGLang: ``hidden_size``). A drafter of another width
    cannot run on the target: the engines fail when the tensors meet.

    Fail: drafter ``"hidden_size": 4096`` for Qwen3-4B (2560)
    Pass: ``"hidden_size": 2560`` for Qwen3-4B
    """
    target = _target(ctx)
    want = target.hidden_size
    if want is None:
        return
    declared = ctx.data.get("target_hidden_size")
    if is_int(declared):
        if declared != want:
            yield Problem(
                pointer="/target_hidden_size",
                message=f"target_hidden_size {declared} but the target's hidden_size is {want}",
            )
        return
    hidden = ctx.int_field("hidden_size")
    if hidden is not None and hidden != want:
        yield Problem(pointer="/hidden_size", message=f"hidden_size {hidden} but the target ({target.path}) has {want}")


# Rows a target's embedding is padded by (to a multiple of 64..1024): a smaller drafter vocabulary, itself padded
# (a multiple of 64), that cuts no more than this is taken for one that leaves out the target's padding.
PADDING_ROWS = 1024


@rule(
    "DF402",
    "target-vocab-size",
    Severity.ERROR,
    "data",
    "target",
    reads=(vllm.VOCAB_SIZE, vllm.DRAFT_VOCAB_SIZE),
    severities=(Severity.WARNING, Severity.INFO),
    until=CANDIDATE_VOCABULARY,
)
def target_vocab_size(ctx: Context) -> Iterator[Problem]:
    """The drafter's ``vocab_size`` differs from the target's.

    Logits come from the target's lm_head. vLLM takes ``draft_vocab_size`` from ``vocab_size`` and, when it
    differs from the target's vocabulary, builds a draft-to-target id map that is the identity unless the
    checkpoint ships ``d2t``, and cuts the logits to ``draft_vocab_size``. Error: a vocabulary larger than
    the target's (the draft logits would need lm_head rows the target does not have). Warning: a smaller
    one, done on purpose by published drafters (XiaomiMiMo/MiMo-V2.5-Pro-FP4-DFlash: 152064 for a target
    padded to 152576): ids past it are never drafted; info when the target's tokenizer ends below it (only
    padding rows are cut) or, with the tokenizer not at hand, when a vocabulary that is a multiple of 64 cuts at
    most 1024 rows (what padding the
    embedding to a multiple of 64 to 1024 leaves; a drafter made for another vocabulary misses far more). A file
    with its own ``draft_vocab_size`` is not checked, except a
    ``DFlashLagunaForCausalLM`` drafter: {vLLM}'s Laguna drafter raises unless its
    ``draft_vocab_size`` equals the target's vocabulary (an error; checked by running it). A DFlash2 drafter's
    candidate head draws from min(target vocabulary, ``vocab_size``) in vLLM 0.34 and from the target's in 0.33
    (``vllm/model_executor/models/qwen3_dflash2.py:DFlash2Qwen3ForCausalLM.__init__``): neither refuses a
    mismatch, a smaller ``vocab_size`` drafts from its own rows in both, and a larger one makes 0.33 propose ids
    past the target's vocabulary while 0.34 cuts them, so the error stands for the releases before 0.34 and for
    every other drafter.

    Fail: ``"vocab_size": 262144`` for Qwen3.6-27B (248320)
    Pass: ``"vocab_size": 248320`` for Qwen3.6-27B
    """
    target = _target(ctx)
    want, vocab = target.vocab_size, ctx.int_field("vocab_size")
    archs = ctx.data.get("architectures")
    draft = ctx.int_field("draft_vocab_size")
    if isinstance(archs, list) and "DFlashLagunaForCausalLM" in archs and want is not None:
        if draft is not None and draft != want:
            yield Problem(
                pointer="/draft_vocab_size",
                message=f"draft_vocab_size {draft} but the target's vocab_size is {want}: vLLM's Laguna drafter "
                "requires them equal and refuses the file",
            )
        return
    if want is None or vocab is None or vocab == want or "draft_vocab_size" in ctx.data:
        return
    if vocab > want:
        yield Problem(
            pointer="/vocab_size",
            message=f"vocab_size {vocab} but the target's vocab_size is {want}: the draft logits need lm_head rows "
            "the target does not have",
        )
        return
    tokens = target.token_count()
    if tokens is not None and tokens <= vocab:
        yield Problem(
            pointer="/vocab_size",
            message=f"vocab_size {vocab} is below the target's {want}, but the target's tokenizer ends at id "
            f"{tokens - 1}: only padding rows are never drafted",
            severity=Severity.INFO,
        )
        return
    padding = want - vocab <= PADDING_ROWS and vocab % 64 == 0
    yield Problem(
        pointer="/vocab_size",
        message=f"vocab_size {vocab} is below the target's {want}: ids {vocab}..{want - 1} are never drafted; "
        + ("so few rows are usually the target's padding" if padding else "fine if trained that way")
        + ", check against upstream",
        severity=Severity.INFO if padding else Severity.WARNING,
    )


# The ports that size their capture with num_target_layers (vLLM does not read it; SGLang uses the target's depth).
PORTS = (Requirement("mlx"), Requirement("reference"))


@rule("DF403", "target-depth", Severity.WARNING, "data", "target", reads=(sglang.NUM_TARGET_LAYERS,), fix=True)
def target_depth(ctx: Context) -> Iterator[Problem]:
    """``num_target_layers`` differs from the target's number of decoder layers (``text_config`` for
    composite models such as Qwen3.6-27B's ``qwen3_5``).

    A warning about the April reference and MLX only, which size their capture with it (it fails a gate only
    where one of them serves the drafter): vLLM does not read it, and SGLang captures with the running target's
    depth (logging the difference; a tap past the file's value is DF104, one past the target DF405). Safe fix: take
    the target's depth (a fact of the target, not a
    trained value of the drafter).

    Fail: ``"num_target_layers": 36`` for Qwen3.6-27B (64)
    Pass: ``"num_target_layers": 64`` for Qwen3.6-27B
    """
    depth = _target(ctx).num_hidden_layers
    if depth is None:
        return
    # Both copies are checked: old loaders read the top level, SGLang dflash_config first.
    places = [
        p
        for p, block in (("/num_target_layers", ctx.data), ("/dflash_config/num_target_layers", ctx.dflash))
        if "num_target_layers" in block
    ]
    for where in places or ["/num_target_layers"]:
        block = ctx.dflash if where.startswith("/dflash_config") else ctx.data
        value = block.get("num_target_layers")
        if not places:
            # Absent: DF122 says what the engines then do; the target's depth is a fact of the target, so
            # it is a safe fix.
            yield Problem(
                pointer=where,
                message=f"num_target_layers is absent; the target has {depth} layers",
                fix=Fix(f"set num_target_layers to the target's {depth}", (PatchOp("add", where, depth),)),
                engines=PORTS,
            )
        elif value != depth:
            op: Literal["add", "replace"] = "replace" if value is not None else "add"
            yield Problem(
                pointer=where,
                message=f"num_target_layers is {show(value)} but the target has {depth} layers (SGLang captures with "
                "the target's; the April reference and MLX with this value)",
                fix=Fix(f"set num_target_layers to the target's {depth}", (PatchOp(op, where, depth),)),
                engines=PORTS,
            )


@rule(
    "DF404",
    "mask-token",
    Severity.ERROR,
    "data",
    "target",
    reads=(sglang.MASK_TOKEN_ID, vllm.MASK_TOKEN_ID),
    severities=(Severity.WARNING, Severity.INFO),
)
def mask_token(ctx: Context) -> Iterator[Problem]:
    """The mask token id is not a usable mask for the target tokenizer.

    Errors (an engine refuses the file): the id is outside the target vocabulary (SGLang raises; vLLM
    looks it up in the target's embedding); the tokenizer declares a ``mask_token`` with a different id
    (SGLang raises). Warnings (the engines draft with the file's id; whether it is the trained one only
    upstream can tell): the id is the target's eos/bos/pad or another control id from its configs
    (RedHatAI/DeepSeek-V4-Flash-speculator.dflash masks with its target's eos id 1, on purpose); an
    ordinary text token of the tokenizer's base vocabulary; an added token that is not special (text like
    ``<think>`` the model emits). Passes: a special added token, or an id past the tokenizer's tokens (an
    embedding row of its own, which is what ``add_special_tokens({"mask_token": "<|MASK|>"})`` yields, e.g.
    151669 for Qwen3).

    Fail: ``"mask_token_id": 151936`` for Qwen3-4B (its vocabulary is ids 0..151935)
    Fail (info): ``"mask_token_id": 151645`` for Qwen3 (``<|im_end|>``, the eos token)
    Pass: ``"mask_token_id": 151669`` for Qwen3
    """
    target = _target(ctx)
    inner = "mask_token_id" in ctx.dflash
    mask = ctx.dflash.get("mask_token_id") if inner else ctx.data.get("mask_token_id")
    if not is_int(mask) or mask < 0:
        return
    where = "/dflash_config/mask_token_id" if inner else "/mask_token_id"
    names = target.named_special(mask)
    token = target.token(mask)
    shown = f"{mask} ({show(token.content)})" if token else str(mask)
    if names:
        yield Problem(
            pointer=where,
            message=f"mask_token_id {shown} is the target's {', '.join(names)}: the drafter fills its block with a "
            "control token; fine if it was trained that way, check against upstream",
            severity=Severity.INFO,
        )
    if target.vocab_size is not None and mask >= target.vocab_size:
        yield Problem(
            pointer=where, message=f"mask_token_id {mask} is outside the target vocabulary [0, {target.vocab_size})"
        )
    if target.mask_token is not None and target.mask_token[1] is not None and target.mask_token[1] != mask:
        content, tid = target.mask_token
        yield Problem(
            pointer=where,
            message=f"the target tokenizer's mask_token {show(content)} "
            f"is id {tid}, not {mask} (SGLang refuses the mismatch)",
        )
    if token is None and not names:
        first_added = min((t.id for t in target.added_tokens), default=None)
        base = target.base_vocab_size if target.base_vocab_size is not None else first_added
        if base is not None and mask < base:
            yield Problem(
                pointer=where,
                message=f"mask_token_id {mask} is an ordinary token of the target tokenizer's base "
                f"vocabulary (ids below {base}): text uses it too; fine only if it was trained that way, "
                "check against upstream",
                severity=Severity.WARNING,
            )
    elif token is not None and not token.special and not names:
        yield Problem(
            pointer=where,
            message=f"mask_token_id {shown} is an added token that is not special: the model emits it as text",
            severity=Severity.WARNING,
        )


@rule(
    "DF405",
    "taps-past-target",
    Severity.ERROR,
    "data",
    "target",
    reads=(sglang.TARGET_LAYER_IDS, vllm.TARGET_LAYER_IDS_CAPTURE),
)
def taps_past_target(ctx: Context) -> Iterator[Problem]:
    """A tap is ≥ the target's real depth, whatever ``num_target_layers`` in the file says.

    SGLang's runner bounds the taps with the running target's depth and raises; vLLM never reaches that
    layer, so ``fc`` gets too few features and vLLM raises at the first step.

    Fail: tap 63 for a 48-layer target
    Pass: every tap below the target's ``num_hidden_layers``
    """
    depth, taps = _target(ctx).num_hidden_layers, ctx.taps()
    if depth is None or taps is None:
        return
    where = ctx.draft_pointer("target_layer_ids")
    for i, tap in enumerate(taps):
        if tap >= depth:
            yield Problem(
                pointer=f"{where}/{i}",
                message=f"tap {tap} does not exist in the target ({depth} layers, 0..{depth - 1})",
            )


# Targets whose SGLang model marks self.layers[tap + 1] to capture a tap (qwen3_5.py; text_config model_type
# first, as Target reads it), so a tap on the last layer raises IndexError there.


@rule(
    "DF406",
    "tap-on-last-target-layer",
    Severity.ERROR,
    "data",
    "target",
    reads=(sglang.TARGET_LAYER_IDS_CAPTURE, vllm.TARGET_LAYER_IDS_CAPTURE),
)
def tap_on_last_target_layer(ctx: Context) -> Iterator[Problem]:
    """A tap reads the last layer of a Qwen3.5-family target, which SGLang cannot capture.

    SGLang captures the output of layer t as the state entering layer t + 1; its Qwen3.5 model marks
    ``layers[t + 1]``, which does not exist for the last layer, and the server stops at start-up with
    IndexError (sgl-project/sglang #32204; the fix, PR #32206, is not merged). vLLM captures it on this
    target. So the error concerns SGLang only: it fails a gate where SGLang serves the drafter (an SGLang
    launch, ``engines = ["sglang"]``, ``--engine sglang``). DF105 speaks of a last-layer tap for other targets.

    Fail: ``"target_layer_ids": [1, 17, 33, 49, 63]`` for Qwen3.6-27B (64 layers, ``qwen3_5``)
    Pass: ``"target_layer_ids": [1, 16, 31, 46, 61]`` for Qwen3.6-27B
    """
    target, taps = _target(ctx), ctx.taps()
    depth = target.num_hidden_layers
    if taps is None or depth is None or target.model_type not in SGLANG_NO_LAST_LAYER_CAPTURE:
        return
    where = ctx.draft_pointer("target_layer_ids")
    for i, tap in enumerate(taps):
        if tap == depth - 1:
            yield Problem(
                pointer=f"{where}/{i}",
                message=f"tap {tap} is the last layer of the target ({target.model_type}, {depth} layers): SGLang's "
                "Qwen3.5 model cannot capture it and stops at start-up (IndexError)",
                engines=(Requirement("sglang"),),
            )


RULES = (target_hidden_size, target_vocab_size, target_depth, mask_token, taps_past_target, tap_on_last_target_layer)

"""Rules that compare the config with the checkpoint's safetensors headers in the drafter dir.

Only the headers are read (weights.py), so these cost milliseconds even next to multi-GB shards. Files that
are Git LFS pointers (a clone without `git lfs pull`) are not weights: DF504 says so, DF505 checks the size
they record, and the shape rules see only the files that are real.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

from dflash_cfg.lint.engines import sglang, transformers, vllm
from dflash_cfg.lint.rules.base import Context, is_int, rule
from dflash_cfg.model import Problem, Severity, Weights

SHARD_SUFFIX = ".safetensors"


def _weights(ctx: Context) -> Weights:
    assert ctx.weights is not None
    return ctx.weights


@rule(
    "DF500",
    "weights-unreadable",
    Severity.ERROR,
    "data",
    "weights",
    reads=(vllm.CHECKPOINT_TENSORS, sglang.CHECKPOINT_TENSORS),
)
def weights_unreadable(ctx: Context) -> Iterator[Problem]:
    """A safetensors file (or its index) beside config.json cannot be read: a corrupt or truncated
    header, a shard the index names but the dir lacks, a permission problem.

    The engines read the weights with safetensors and fail to load the checkpoint.

    Fail: ``model.safetensors`` of 3 bytes
    Pass: readable headers
    """
    if ctx.weights_error is not None:
        yield Problem(pointer="", message=f"checkpoint: {ctx.weights_error}")


@rule(
    "DF501",
    "fc-width",
    Severity.ERROR,
    "data",
    "weights",
    reads=(vllm.TARGET_HIDDEN_SIZE, sglang.HIDDEN_SIZE, vllm.CHECKPOINT_TENSORS, sglang.CHECKPOINT_TENSORS),
)
def fc_width(ctx: Context) -> Iterator[Problem]:
    """``fc.weight`` does not have K × hidden input features (K = number of taps, hidden =
    ``target_hidden_size`` or ``hidden_size``), or its output width is not ``hidden_size``.

    The fusion layer was trained on exactly that many concatenated target states; vLLM builds ``fc`` from
    the taps and ``target_hidden_size`` (SGLang from ``hidden_size``, DF154), so a tap list of the wrong
    length fails at load time: vLLM's weight loader asserts the shape, SGLang raises "DFLASH fc.weight
    shape mismatch".

    Fail: 5 taps, hidden 2560, ``fc.weight`` [2560, 20480] (8 taps' worth)
    Pass: 5 taps, hidden 2560, ``fc.weight`` [2560, 12800]
    """
    fc = _weights(ctx).get("fc.weight")
    taps, hidden = ctx.taps(), ctx.int_field("hidden_size")
    if fc is None or taps is None or hidden is None or len(fc.shape) != 2:
        return
    width = ctx.int_field("target_hidden_size") or hidden
    expected = len(taps) * width
    if fc.shape[1] != expected:
        taps_in_weights = f" ({fc.shape[1] // width} taps' worth)" if fc.shape[1] % width == 0 else ""
        where = ctx.draft_pointer("target_layer_ids")
        yield Problem(
            pointer=where,
            message=f"{fc.name} in {fc.file} has {fc.shape[1]} input features{taps_in_weights}, but "
            f"{len(taps)} taps × {_n(width)} = {_n(expected)}",
        )
    if fc.shape[0] != hidden:
        yield Problem(
            pointer="/hidden_size", message=f"{fc.name} has {fc.shape[0]} output features, hidden_size is {_n(hidden)}"
        )


@rule(
    "DF502",
    "layer-count",
    Severity.ERROR,
    "data",
    "weights",
    reads=(vllm.CHECKPOINT_TENSORS, sglang.CHECKPOINT_TENSORS),
)
def layer_count(ctx: Context) -> Iterator[Problem]:
    """The checkpoint's number of ``layers.N`` differs from ``num_hidden_layers``.

    vLLM refuses a tensor it has no layer for and a layer no tensor fills. SGLang skips tensors it has no
    layer for without a word (a checkpoint with more layers runs with fewer than trained) and does not
    check that every layer was filled (one with fewer runs layers it never loaded).

    When some shards are Git LFS pointers (DF504), the others may hold the missing layers: then only a
    layer at or past ``num_hidden_layers`` in the shards that were read is reported.

    Fail: ``num_hidden_layers`` 5, tensors for ``layers.0``..``layers.5``
    Pass: ``layers.0``..``layers.4`` for 5 layers
    """
    weights = _weights(ctx)
    indices, depth = weights.layer_indices(), ctx.int_field("num_hidden_layers")
    if not indices or depth is None:
        return
    if weights.pointers:
        # The other layers may be in the shards that are LFS pointers: only a layer past the depth is sure.
        beyond = [i for i in indices if i >= depth]
        if beyond:
            yield Problem(
                pointer="/num_hidden_layers",
                message=f"num_hidden_layers is {depth} but the shards that were read have layers "
                f"{_ranges(tuple(beyond))} (the LFS pointer shards were not read)",
            )
        return
    if len(indices) != depth or indices != tuple(range(len(indices))):
        yield Problem(
            pointer="/num_hidden_layers",
            message=f"num_hidden_layers is {depth} but the checkpoint has layers {_ranges(indices)}",
        )


def _ranges(indices: tuple[int, ...]) -> str:
    contiguous = indices == tuple(range(indices[0], indices[-1] + 1))
    return f"{indices[0]}..{indices[-1]}" if contiguous else ", ".join(map(str, indices))


@rule(
    "DF503",
    "layer-shapes",
    Severity.ERROR,
    "data",
    "weights",
    reads=(
        transformers.CONFIG_CLASS,
        sglang.INTERMEDIATE_SIZE,
        vllm.CHECKPOINT_TENSORS,
        sglang.CHECKPOINT_TENSORS,
    ),
)
def layer_shapes(ctx: Context) -> Iterator[Problem]:
    """Attention or MLP weight shapes disagree with ``num_attention_heads``, ``num_key_value_heads``,
    ``head_dim``, ``hidden_size`` or ``intermediate_size`` (checked on the first layer the checkpoint has).

    The engines build the layers from the config (as its config class fills it in) and then fail to load
    the weights: both weight loaders assert equal shapes. An absent ``head_dim`` or ``num_key_value_heads``
    is checked at the default the class gives it (``Qwen3Config``: 128, 32).

    Fail: ``num_key_value_heads`` 8, ``k_proj.weight`` [512, 2560] with head_dim 128 (4 KV heads)
    Pass: ``k_proj.weight`` [1024, 2560]
    """
    weights = _weights(ctx)
    indices = weights.layer_indices()
    data = ctx.data
    # What engines build: the config class's values, so an absent head_dim or num_key_value_heads is checked
    # at the default it silently gets (128, 32), not skipped.
    seen = ctx.view.values if ctx.view is not None and ctx.view.values else data
    names = ("hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size")
    values = {n: seen.get(n) if is_int(seen.get(n)) else None for n in names}
    if not indices:
        return
    hidden, heads, kv, head_dim, inter = (values[n] for n in names)
    layer = indices[0]

    def dims(*parts: int | None) -> tuple[int, ...] | None:
        return None if any(p is None for p in parts) else tuple(p for p in parts if p is not None)

    def times(a: int | None, b: int | None) -> int | None:
        return None if a is None or b is None else a * b

    q_heads, kv_heads = "num_attention_heads × head_dim", "num_key_value_heads × head_dim"
    expected = {
        "self_attn.q_proj.weight": (dims(times(heads, head_dim), hidden), q_heads, "/num_attention_heads"),
        "self_attn.k_proj.weight": (dims(times(kv, head_dim), hidden), kv_heads, "/num_key_value_heads"),
        "self_attn.v_proj.weight": (dims(times(kv, head_dim), hidden), kv_heads, "/num_key_value_heads"),
        "self_attn.o_proj.weight": (dims(hidden, times(heads, head_dim)), q_heads, "/num_attention_heads"),
        "self_attn.q_norm.weight": (dims(head_dim), "head_dim", "/head_dim"),
        "self_attn.k_norm.weight": (dims(head_dim), "head_dim", "/head_dim"),
        "mlp.gate_proj.weight": (dims(inter, hidden), "intermediate_size", "/intermediate_size"),
        "mlp.up_proj.weight": (dims(inter, hidden), "intermediate_size", "/intermediate_size"),
        "mlp.down_proj.weight": (dims(hidden, inter), "intermediate_size", "/intermediate_size"),
    }
    for suffix, (shape, meaning, where) in expected.items():
        tensor = weights.get(f"layers.{layer}.{suffix}")
        if tensor is None or shape is None or tensor.shape == shape:
            continue
        defaulted = [n for n in names if n in meaning and n not in data]
        through = ctx.view.through if ctx.view is not None else "the config class"
        note = f"; {', '.join(defaulted)} absent, so {through}'s default is used" if defaulted else ""
        yield Problem(
            pointer=where,
            message=f"{tensor.name} is {list(tensor.shape)} in {tensor.file}, the config implies "
            f"{_shape(shape)} ({meaning}{note})",
        )


@rule("DF504", "weights-lfs-pointer", Severity.INFO, "data", "weights", own_check=True)
def weights_lfs_pointer(ctx: Context) -> Iterator[Problem]:
    """Weight files beside config.json are Git LFS pointer files, not the weights, so they were not read.

    The dir is a git clone of a Hub repo made without Git LFS (or with ``GIT_LFS_SKIP_SMUDGE=1``, as CI
    checkouts often are). DF501-DF503 checked only the files that are real; DF505 still checks the sizes
    the pointers record. Reported once, with the ``git lfs pull --include ...`` that fetches exactly them
    (patterns from the top of the work tree, so a drafter in a subdir of its target's repo does not pull
    the target's weights).

    Information, not a defect of the config: the clone holds what the Hub repo holds. An engine needs
    the real files, and with them every weights rule runs. A check of dflash-cfg's own, about the local
    clone rather than anything an engine reads from config.json.

    Fail: a 135-byte ``model.safetensors``: ``version https://git-lfs.github.com/spec/v1``,
    ``oid sha256:...``, ``size 1073741824``
    Pass: the real ``model.safetensors``
    """
    weights = _weights(ctx)
    pointers = weights.pointers
    if not pointers:
        return
    names = [p.file for p in pointers]
    total = _bytes(sum(p.size for p in pointers))
    if len(pointers) == 1:
        what, it = f"{names[0]} is a Git LFS pointer file, not the weights ({total} on the LFS server)", "it"
    else:
        shown = ", ".join(names) if len(names) <= 3 else f"{names[0]} ... {names[-1]}"
        what, it = (
            f"{len(names)} weight files are Git LFS pointer files, not the weights ({shown}; {total} in all)",
            "them",
        )
    real = len(weights.files)
    read = "" if not real else " (the other weight file was)" if real == 1 else f" (the other {real} weight files were)"
    command = _pull(weights)
    how = (
        f"run `{command}` in the clone"
        if command
        else "this dir is in no git work tree: run `git lfs pull` in the clone they came from"
    )
    yield Problem(
        pointer="", message=f"{what}, so {it} {'was' if it == 'it' else 'were'} not read{read}; to check {it}, {how}"
    )


def _pull(weights: Weights) -> str | None:
    """The command that fetches exactly the pointer files (None outside a git work tree). git-lfs matches
    --include patterns (comma separated, gitignore-style) against paths from the top of the work tree, so
    a drafter in a subdir of a bigger repo (its target's) names that dir: a bare *.safetensors would fetch
    the target's weights too."""
    if weights.lfs_dir is None:
        return None
    names = [p.file for p in weights.pointers]
    if not all(_PLAIN.fullmatch(part) for part in [*weights.lfs_dir.split("/"), *names] if part):
        return "git lfs pull"  # a comma or glob character in a path would change what a pattern matches
    folder = weights.lfs_dir + "/" if weights.lfs_dir else ""
    if weights.files:  # some weight files are real: only the others
        patterns = [folder + n for n in names]
    else:
        patterns = [folder + n for n in names if not n.endswith(SHARD_SUFFIX)] + [folder + "*" + SHARD_SUFFIX]
    return f"git lfs pull --include {_quote(','.join(patterns))}"


# A path component git-lfs's gitignore-style matching takes literally (no separator, glob or escape).
_PLAIN = re.compile(r"[^,*?\[\]\\!#\x00-\x1f]+")


def _quote(text: str) -> str:
    return f'"{text}"' if re.fullmatch(r"[A-Za-z0-9_./*,+=@%-]+", text) else shlex.quote(text)


def _bytes(n: int) -> str:
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= size:
            tenths = (n * 10 + size // 2) // size  # integers: a config's product can be past any float
            fraction = f".{tenths % 10}" if tenths < 10**_SHOWN_DIGITS else ""
            return f"{_n(tenths // 10)}{fraction} {unit}"
    return f"{n} bytes"


# Past this many digits a computed size is shown by its length: no real shape comes near it, and a product
# of two config values of thousands of digits each is past Python's int -> str limit (4,300 digits).
_SHOWN_DIGITS = 30


def _n(n: int) -> str:
    """An integer the rules computed (a product or sum of config values), as a message shows it."""
    magnitude = abs(n)
    if magnitude < 10**_SHOWN_DIGITS:
        return str(n)
    digits = int((magnitude.bit_length() - 1) * 0.30102999566398120)  # log10(2): at most the true count
    while 10**digits <= magnitude:
        digits += 1
    return f"{'-' if n < 0 else ''}(a {digits}-digit number)"


def _shape(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(_n(d) for d in shape) + "]"


# The fewest bits per parameter a weights file may use. Unquantized, vLLM and SGLang load BF16/FP16/FP32
# or FP8 (8 bits); ModelOpt's NVFP4/INT4 exports can describe their 4-bit packing in hf_quant_config.json
# rather than config.json, so 4 bits is the floor without a quantization_config. With one, any scheme is
# possible (AQLM, ternary): 1 bit.
BITS_UNQUANTIZED = 4
BITS_QUANTIZED = 1
_MOE_KEYS = ("num_experts", "num_local_experts", "n_routed_experts", "moe_intermediate_size")
_MLA_KEYS = ("kv_lora_rank", "q_lora_rank")
_ATTENTION_TYPES = ("full_attention", "sliding_attention")


def min_parameters(ctx: Context) -> tuple[int, str]:
    """A lower bound on the parameters the config's shapes need, and how it was counted.

    Counted from values the file states (an absent or odd one drops the terms it enters, never guesses):
    fc (taps × target hidden × hidden), per layer q and o (heads × head_dim × hidden each, o with
    ``v_head_dim`` when smaller), k and v (kv heads × head_dim × hidden), the MLP's up and down
    projections (2 × hidden × intermediate; a gated MLP has a third, not counted), and the two layer
    norms, plus the final norm. Not counted: embeddings and lm_head (DFlash drafters share the target's),
    biases, q/k norms, DFlash2's conv and selector, the MLP of an MoE config (experts' sizes vary) and the
    attention of an MLA one (low-rank projections).
    """

    def positive(name: str) -> int | None:
        value = ctx.int_field(name)
        return value if value is not None and value > 0 else None

    hidden, layers = positive("hidden_size"), positive("num_hidden_layers") or 0
    if hidden is None:
        return 0, "no hidden_size"
    data = ctx.data
    taps = ctx.taps()
    fc = len(taps) * (positive("target_hidden_size") or hidden) * hidden if taps else 0
    heads, kv, head_dim = positive("num_attention_heads"), positive("num_key_value_heads"), positive("head_dim")
    v_dim = min(head_dim, positive("v_head_dim") or head_dim) if head_dim else None
    attention = 0
    if not any(k in data for k in _MLA_KEYS) and head_dim and v_dim:
        attention += (heads or 0) * (head_dim + v_dim) * hidden + (kv or 0) * (head_dim + v_dim) * hidden
    types = ctx.layer_types()
    attention_layers = layers if types is None else min(layers, sum(t in _ATTENTION_TYPES for t in types))
    inter = positive("intermediate_size")
    mlp = 2 * hidden * inter if inter and not any(k in data for k in _MOE_KEYS) else 0
    total = fc + attention_layers * attention + layers * (mlp + 2 * hidden) + hidden
    per_layer = f"{_n(layers)} × (MLP {_n(mlp)} + norms {_n(2 * hidden)})"
    return total, f"fc {_n(fc)}, {_n(attention_layers)} × attention {_n(attention)}, {per_layer}, norm {_n(hidden)}"


@rule(
    "DF505",
    "weights-too-small",
    Severity.ERROR,
    "data",
    "weights",
    reads=(vllm.CHECKPOINT_TENSORS, sglang.CHECKPOINT_TENSORS),
)
def weights_too_small(ctx: Context) -> Iterator[Problem]:
    """The weights' Git LFS pointer files record fewer bytes in all than the config's shapes need.

    Runs when every weights file is an LFS pointer (DF504), from the sizes they record: the real files
    cannot hold the tensors the config describes, so an engine fails to load them (or the pointers are of
    other files). The bound cannot trip on a real drafter: it counts only tensors every drafter of this
    config has (see below), each at the fewest bits a loadable format uses, 4 (FP4/INT4, packed two per
    byte; FP8 and BF16 take 2 and 4 times more), or 1 when config.json has a ``quantization_config``;
    safetensors headers, scales and the uncounted tensors only add bytes. Counted: ``fc`` (taps × target
    hidden × hidden), per attention layer q, k, v and o (from heads, KV heads, ``head_dim``), per layer the
    MLP's up and down projections and two norms, and the final norm; not counted: embeddings and lm_head
    (shared with the target), a gated MLP's third projection, biases, MoE MLPs and MLA attention.

    Fail: the Qwen3-4B-DFlash-b16 config (413M parameters counted: 206 MB at 4 bits), one pointer with
    ``size 1048576``
    Pass: a pointer with ``size 1075000000`` (its BF16 file)
    """
    weights = _weights(ctx)
    pointers = weights.pointers
    # With some files real, their tensors were checked directly; a pointer with extensions may record a
    # transformed (e.g. compressed) size; a pointer index hides which shards are the checkpoint.
    if not pointers or weights.files or any(p.extensions or not p.file.endswith(SHARD_SUFFIX) for p in pointers):
        return
    params, how = min_parameters(ctx)
    quantized = ctx.data.get("quantization_config") is not None or ctx.data.get("compression_config") is not None
    bits = BITS_QUANTIZED if quantized else BITS_UNQUANTIZED
    need = params * bits // 8
    total = sum(p.size for p in pointers)
    if total < need:
        shards = "the LFS pointer records" if len(pointers) == 1 else f"the {len(pointers)} LFS pointers record"
        yield Problem(
            pointer="",
            message=f"{shards} {total} bytes of weights ({_bytes(total)}), but the config's shapes need at least "
            f"{_n(params)} parameters ({how}): {_n(need)} bytes ({_bytes(need)}) even at {bits} bit"
            f"{'s' if bits > 1 else ''} each",
        )


RULES = (weights_unreadable, fc_width, layer_count, layer_shapes, weights_lfs_pointer, weights_too_small)

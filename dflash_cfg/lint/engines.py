"""What vLLM and SGLang read from a DFlash drafter config, as data, with the code that says so. Pure.

Each `Read` is one key as one engine's code reads it: where it looks (in order), the default when the key is
absent, what a value of the wrong type does, and the file and commit (or the snapshot the index holds) it was
read from. Rules name the reads behind them (`Rule.engine_reads`), and `dflash-cfg rules ID` shows them.
Re-read the code before relying on a row: these engines change monthly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Engine = Literal["vLLM", "SGLang", "speculators"]

# The code read. The stored-code index gives a commit for some files and only a snapshot id for others
# (a late-2026 state it did not date); both are written down as found.
VLLM_MODEL = (
    "vllm-project/vllm vllm/model_executor/models/qwen3_dflash.py (late-2026 state with use_swa, "
    "attention sinks and is_neox_style; index snapshot 68673178189; earlier state @d952bda8)"
)
VLLM_AUX = (
    "vllm-project/vllm vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py @0cfdd2e1 "
    "(get_eagle3_aux_layers_from_config)"
)
VLLM_PROPOSER = "vllm-project/vllm vllm/v1/spec_decode/dflash.py @01046b9a"
VLLM_DFLASH_LOAD = (
    "vllm-project/vllm vllm/v1/worker/gpu/spec_decode/dflash/utils.py (load_dflash_model, from #51655; "
    "index snapshot 59772817163)"
)
VLLM_LAGUNA = (
    "vllm-project/vllm vllm/model_executor/models/laguna_dflash.py (DFlashLagunaForCausalLM.__init__; "
    "index snapshot 54778415314)"
)
SPECULATORS_TRANSLATOR = (
    "vllm-project/vllm vllm/transformers_utils/configs/speculators/algos.py (update_dflash, post-#40727; "
    "index snapshot 70479728584) and base.py (SpeculatorsConfig.extract_transformers_pre_trained_config)"
)
SGLANG_PARSE = "sgl-project/sglang python/sglang/srt/speculative/dflash_utils.py @00731f0b (parse_dflash_draft_config)"
SGLANG_MODEL = "sgl-project/sglang python/sglang/srt/models/dflash.py @003b23d7"
SGLANG_RUNNER = (
    "sgl-project/sglang python/sglang/srt/model_executor/model_runner.py (DFLASH set-up: "
    "resolve_target_layer_ids(target_num_layers=the target's num_hidden_layers); index snapshot 56123357206)"
)
SPECULATORS_CONFIG = "vllm-project/speculators src/speculators/models/dflash/config.py @c05b95b3"


@dataclass(frozen=True)
class Read:
    engine: Engine
    key: str
    order: str  # where the engine looks, first to last
    default: str  # when absent
    bad_type: str  # what a value of the wrong type does
    source: str


READS: dict[str, Read] = {
    r.engine + ":" + r.key: r
    for r in (
        # --- vLLM, z-lab/engine format ---
        Read(
            "vLLM",
            "architectures",
            "top level: DFlashDraftModel -> qwen3_dflash.DFlashQwen3ForCausalLM, "
            "DFlashLagunaForCausalLM -> laguna_dflash, DFlash2DraftModel -> qwen3_dflash2 (#52816)",
            "model not found",
            "model not found",
            "vllm-project/vllm vllm/model_executor/models/registry.py "
            "(speculative decoding models; index snapshot 58726081308)",
        ),
        Read(
            "vLLM",
            "model_type",
            "top level, through AutoConfig (the class registered for it)",
            "AutoConfig cannot load the config",
            "AutoConfig cannot load the config",
            "vllm-project/vllm vllm/transformers_utils/config.py (get_config -> AutoConfig)",
        ),
        Read(
            "vLLM",
            "target_layer_ids",
            "eagle_aux_hidden_state_layer_ids (used as is) -> "
            "dflash_config.target_layer_ids + 1 -> top-level target_layer_ids + 1 -> dflash_config.layer_ids",
            "the target's EAGLE3 default layers, with a warning",
            "int() of each element, TypeError",
            VLLM_AUX,
        ),
        Read(
            "vLLM",
            "mask_token_id",
            "dflash_config.mask_token_id (the model merges eagle_config and "
            "dflash_config); the proposer: dflash_config['mask_token_id']",
            "ValueError in the proposer",
            "used as a token id",
            VLLM_MODEL + "; " + VLLM_PROPOSER,
        ),
        Read(
            "vLLM",
            "layer_types",
            "top level",
            "every layer full attention (sliding only if dflash_config.use_swa)",
            "compared per layer with 'sliding_attention'",
            VLLM_MODEL + " (_resolve_layer_attention)",
        ),
        Read(
            "vLLM",
            "sliding_window",
            "dflash_config.swa_window_size -> top-level sliding_window",
            "ValueError 'DFlash sliding attention requires a window size' for a sliding layer",
            "passed to the attention backend",
            VLLM_MODEL + " (_resolve_layer_attention)",
        ),
        Read(
            "vLLM",
            "use_swa",
            "dflash_config.use_swa: every layer sliding when layer_types is absent or all full",
            "false",
            "truthiness",
            VLLM_MODEL + " (_resolve_layer_attention)",
        ),
        Read(
            "vLLM",
            "is_causal",
            "top-level is_causal -> dflash_config.is_causal (later) -> dflash_config.causal",
            "sliding layers causal, full layers non-causal",
            "bool()",
            VLLM_MODEL + " (_dflash_layer_causal)",
        ),
        Read(
            "vLLM",
            "attention_sink_bias",
            "dflash_config.attention_sink_bias -> top-level add_swa_attention_sink_bias",
            "false (no sink parameter)",
            "truthiness: any non-empty value adds a sink parameter",
            VLLM_MODEL + " (DFlashQwen3DecoderLayer)",
        ),
        Read(
            "vLLM",
            "is_neox_style",
            "config.is_neox_style, overwritten at load time by the target's RoPE layout "
            "(load_dflash_model: the file's value counts only for a target without RoPE)",
            "true",
            "passed to get_rope",
            VLLM_MODEL + " (dflash_target_rope_is_neox_style); " + VLLM_DFLASH_LOAD,
        ),
        Read(
            "vLLM",
            "draft_vocab_size",
            "top level (DFlashLagunaForCausalLM)",
            "ValueError 'Laguna DFlash config requires `draft_vocab_size`'",
            "sizes the draft vocabulary",
            VLLM_LAGUNA,
        ),
        Read(
            "vLLM",
            "use_aux_hidden_state",
            "eagle_config then dflash_config .use_aux_hidden_state",
            "true",
            "truthiness: false builds no fc layer and drops the target features",
            VLLM_MODEL,
        ),
        Read(
            "vLLM",
            "hidden_act",
            "top level, through Qwen2MLP",
            "the config class default",
            "Qwen2MLP raises ValueError 'Unsupported activation ... Only silu is supported for now'",
            VLLM_MODEL + " (Qwen3MLP = qwen2.Qwen2MLP)",
        ),
        Read(
            "vLLM",
            "rope_theta",
            "config.rope_parameters after set_default_rope_theta",
            "1000000 (set_default_rope_theta default_theta)",
            "passed to get_rope",
            VLLM_MODEL,
        ),
        Read("vLLM", "block_size", "not read: the launch's num_speculative_tokens decides", "-", "-", VLLM_MODEL),
        Read("vLLM", "target_hidden_size", "top level", "hidden_size", "multiplies the fc width", VLLM_MODEL),
        # --- SGLang ---
        Read(
            "SGLang",
            "architectures",
            "top level: DFlashDraftModel, DFlash2DraftModel, DFlashLagunaForCausalLM, MuseGlimmerAssistantModel",
            "model not found",
            "model not found",
            "sgl-project/sglang test_dflash_uniform_swa (registered architectures; index snapshot 60343441378)",
        ),
        Read(
            "SGLang",
            "target_layer_ids",
            "dflash_config.target_layer_ids -> top-level target_layer_ids",
            "the build_target_layer_ids formula (taps guessed from the draft depth)",
            "ValueError unless a list; each element int(); out of [0, num_target_layers) ValueError",
            SGLANG_PARSE,
        ),
        Read(
            "SGLang",
            "num_target_layers",
            "dflash_config.num_target_layers -> top level; only compared with the running target "
            "(a warning when they differ): the taps are bounded by the target's own num_hidden_layers",
            "nothing (the running target's depth is used)",
            "ValueError unless an int >= 1",
            SGLANG_PARSE + "; " + SGLANG_RUNNER,
        ),
        Read(
            "SGLang",
            "mask_token_id",
            "dflash_config.mask_token_id -> top-level mask_token_id",
            "resolves mask_token (default '<|MASK|>') through the tokenizer, adding it if missing",
            "ValueError unless a non-negative int (bool refused)",
            SGLANG_PARSE,
        ),
        Read(
            "SGLang",
            "block_size",
            "dflash_config.block_size -> top level",
            "16",
            "ValueError unless an int >= 1",
            SGLANG_PARSE,
        ),
        Read(
            "SGLang",
            "layer_types",
            "text_config.layer_types -> top level",
            "every layer full attention, non-causal (use_swa is not read)",
            "ValueError unless a sequence; an entry other than full_attention/sliding_attention ValueError",
            SGLANG_MODEL + " (_get_dflash_layer_attention_params)",
        ),
        Read(
            "SGLang",
            "sliding_window",
            "text_config.sliding_window -> top level (swa_window_size only for the Nemotron-3.5 layout)",
            "ValueError 'DFLASH sliding_attention layers require config.sliding_window'",
            "int(); window_left = sliding_window - 1",
            SGLANG_PARSE + " (get_dflash_attention_sliding_window_size)",
        ),
        Read("SGLang", "is_causal", "not read: sliding layers causal, full layers non-causal", "-", "-", SGLANG_MODEL),
        Read(
            "SGLang",
            "attention_sink_bias",
            "dflash_config.attention_sink_bias",
            "false",
            "ValueError unless a bool",
            SGLANG_PARSE,
        ),
        Read(
            "SGLang",
            "attention_value_scale",
            "dflash_config.attention_value_scale",
            "none",
            "ValueError unless int/float (bool refused)",
            SGLANG_PARSE,
        ),
        Read(
            "SGLang",
            "is_neox_style",
            "rope_is_neox_style -> is_neox_style (top level)",
            "true",
            "bool()",
            SGLANG_MODEL + " (DFlashAttention)",
        ),
        Read(
            "SGLang",
            "hidden_act",
            "top level",
            "silu",
            "ValueError 'Unsupported DFlash activation' unless silu",
            SGLANG_MODEL + " (DFlashMLP)",
        ),
        Read(
            "SGLang",
            "intermediate_size",
            "top level",
            "0 -> ValueError",
            "int(); <= 0 ValueError",
            SGLANG_MODEL + " (DFlashMLP)",
        ),
        Read(
            "SGLang",
            "dflash2_keys",
            "dflash_config.conv_kernel_size/conv_group_size, selector_rank/selector_top_k",
            "0 (off)",
            "ValueError unless ints >= 0; each pair set together",
            SGLANG_PARSE,
        ),
        # --- vLLM's speculators translator ---
        Read(
            "speculators",
            "aux_hidden_state_layer_ids",
            "top level; becomes eagle_aux_hidden_state_layer_ids "
            "as is and dflash_config.target_layer_ids = each id - 1",
            "KeyError: vLLM refuses the file",
            "arithmetic on each element, TypeError",
            SPECULATORS_TRANSLATOR,
        ),
        Read(
            "speculators",
            "mask_token_id",
            "top level; becomes dflash_config.mask_token_id",
            "KeyError: vLLM refuses the file",
            "used as a token id",
            SPECULATORS_TRANSLATOR,
        ),
        Read(
            "speculators",
            "transformer_layer_config",
            "the base of the translated config (every decoder key)",
            "ValueError 'Must provide transformer_layer_config'",
            "TypeError unless an object",
            SPECULATORS_TRANSLATOR,
        ),
        Read(
            "speculators",
            "speculators_config",
            "speculators_config.proposal_methods[0].speculative_tokens and verifier.name_or_path",
            "ValueError 'Invalid speculators config structure'",
            "ValueError 'Invalid speculators config structure'",
            SPECULATORS_TRANSLATOR,
        ),
        Read(
            "speculators",
            "sliding_window",
            "top-level layer_types, use_sliding_window, sliding_window, "
            "max_window_layers are passed through (newer vLLM), else transformer_layer_config's",
            "transformer_layer_config's values",
            "as in the DFlash model",
            SPECULATORS_TRANSLATOR,
        ),
        Read(
            "speculators",
            "block_size",
            "not read by vLLM (speculative_tokens and the launch decide); the speculators library's field, default 8",
            "8 (speculators library)",
            "pydantic ValidationError",
            SPECULATORS_CONFIG,
        ),
    )
}

# Architectures an engine registers for a DFlash drafter (an architecture no engine registers is refused).
REGISTERED_ARCHITECTURES: dict[str, tuple[Engine, ...]] = {
    "DFlashDraftModel": ("vLLM", "SGLang"),
    "DFlash2DraftModel": ("vLLM", "SGLang"),
    "DFlashLagunaForCausalLM": ("vLLM", "SGLang"),
    "MuseGlimmerAssistantModel": ("SGLang",),
}


def reads(*keys: str) -> tuple[Read, ...]:
    """The reads of these keys, every engine, in catalogue order."""
    return tuple(r for r in READS.values() if r.key in keys)


def describe(read: Read) -> str:
    """One read as a paragraph of a rule's documentation."""
    return (
        f"{read.engine} reads {read.key}: {read.order}. Absent: {read.default}. Wrong type: {read.bad_type}. "
        f"Source: {read.source}."
    )

"""SGLang's rows of the engine reads (lint.engines.READS): how its DFlash code reads the z-lab/engine format."""

from __future__ import annotations

from dflash_cfg.lint.engines.read import CHECKED, UNCHECKED, Read, config_keys, unexecutable

# The code read: a commit where the stored-code index gives one, else its snapshot id (lint.engines).
SGLANG_PARSE = "sgl-project/sglang python/sglang/srt/speculative/dflash_utils.py @00731f0b (parse_dflash_draft_config)"
SGLANG_MODEL = "sgl-project/sglang python/sglang/srt/models/dflash.py @003b23d7"
SGLANG_RUNNER = (
    "sgl-project/sglang python/sglang/srt/model_executor/model_runner.py (DFLASH set-up: "
    "resolve_target_layer_ids(target_num_layers=the target's num_hidden_layers); index snapshot 56123357206)"
)
SGLANG_WORKER = (
    "sgl-project/sglang python/sglang/srt/speculative/dflash_worker.py @0468412f (DFlashWorker.__init__); "
    "_resolve_mask_token_id: index snapshot 67143010715"
)
SGLANG_WEIGHTS = "sgl-project/sglang python/sglang/srt/model_loader/weight_utils.py @00b08c49 (default_weight_loader)"
SGLANG_CAPTURE = (
    "sgl-project/sglang Qwen3.5 model set_dflash_layers_to_capture (index snapshot 65828419522); "
    "issue #32204, fix PR #32206 (open)"
)
SGLANG_CAUSAL = (
    "sgl-project/sglang PR #34524 (merged 2026-08-12: explicit is_causal honoured for every layer; its "
    "code as carried by index snapshot 69510373060) and models/dflash.py @003b23d7 (before it)"
)


CONFIG_JSON_KEYS = config_keys("sglang")

MODEL_TYPE = Read(
    reader="sglang",
    key="model_type",
    order="top level, through transformers' AutoConfig (ModelConfig -> get_config)",
    default="refused: 'Unrecognized model ... Should have a `model_type` key' (the speculators format has none)",
    bad_type="refused the same way",
    source=CHECKED + " sglang/srt/utils/hf_transformers/config.py:get_config, "
    "sglang/srt/utils/hf_transformers/config.py:HfModelConfigParser.parse (AutoConfig.from_pretrained)",
)

ARCHITECTURES = Read(
    reader="sglang",
    key="architectures",
    order="top level: DFlashDraftModel, DFlash2DraftModel, DFlashLagunaForCausalLM, MuseGlimmerAssistantModel, "
    "DFlash2BeamDraftModel, MiniMaxDFlash2DraftModel (the last three aliases of the DFlash and DFlash2 "
    "models); no XPress class (Qwen3XPressModel, DFlashQwen3XPressModel): an unregistered name falls back "
    "to the Transformers backend, which asks for the drafter's remote code and refuses the file (OSError)",
    default="model not found",
    bad_type="model not found",
    source=CHECKED
    + " sglang/srt/models/dflash.py:EntryClass, sglang/srt/models/transformers.py:TransformersBase.__init__",
)

TARGET_LAYER_IDS = Read(
    reader="sglang",
    key="target_layer_ids",
    order="dflash_config.target_layer_ids -> top-level target_layer_ids",
    default="the build_target_layer_ids formula (taps guessed from the draft depth)",
    bad_type="ValueError unless a list or tuple; each element int() (a float is truncated, a numeric string "
    "parsed, a bool read as 0/1); empty or out of [0, bound) ValueError; repeats and order accepted",
    source=CHECKED + " sglang/srt/speculative/dflash_utils.py:DFlashDraftConfig.resolve_target_layer_ids, "
    "sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config",
)

TARGET_LAYER_IDS_CAPTURE = Read(
    reader="sglang",
    key="target_layer_ids capture",
    order="the target captures the state before layer tap + 1 (set_dflash_layers_to_capture adds 1); "
    "the Qwen3.5 target marks self.layers[tap + 1]",
    default="-",
    bad_type="a tap on the target's last layer: IndexError at start-up on Qwen3.5 targets (issue #32204)",
    source=CHECKED + " sglang/srt/models/qwen3_5.py:Qwen3_5ForCausalLM.set_dflash_layers_to_capture",
)

NUM_TARGET_LAYERS = Read(
    reader="sglang",
    key="num_target_layers",
    order="dflash_config.num_target_layers -> top level; DFlashDraftModel bounds the taps with it (ValueError "
    "for a tap at or past it), then the runner compares it with the running target (a log warning "
    "when they differ) and captures with the target's own num_hidden_layers as the bound",
    default="DFlashDraftModel bounds the taps by max(taps) + 1 and builds the model",
    bad_type="int() (a numeric string or an integral float is read as meant); ValueError unless >= 1",
    source=CHECKED + " sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config, "
    "sglang/srt/models/dflash.py:DFlashDraftModel.__init__; " + SGLANG_RUNNER,
)

MASK_TOKEN_ID = Read(
    reader="sglang",
    key="mask_token_id",
    order="dflash_config.mask_token_id -> top-level mask_token_id; the worker then checks it against the "
    "target: at or past the target's vocab_size ValueError, and when the tokenizer's vocabulary has "
    "mask_token (default '<|MASK|>') under another id ValueError",
    default="resolves mask_token through the tokenizer, adding it if missing",
    bad_type="ValueError unless a non-negative int (bool, float and string refused)",
    source=CHECKED + " sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config; " + SGLANG_WORKER,
)

BLOCK_SIZE = Read(
    reader="sglang",
    key="block_size",
    order="dflash_config.block_size -> top level; it is the default of --speculative-num-draft-tokens, and the "
    "worker drafts the launch's speculative_num_draft_tokens per step (a different config value only "
    "logs 'DFLASH block size mismatch')",
    default="16",
    bad_type="int() (_parse_optional_int): a numeric string or an integral float is read as meant; "
    "ValueError unless >= 1",
    source=CHECKED + " sglang/srt/speculative/dflash_utils.py:_parse_optional_int, "
    "sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config; " + SGLANG_WORKER,
)

NO_ROPE_LAYERS = Read(
    reader="sglang",
    key="no_rope_layers",
    order="not read by the DFlash drafters (only by the muse_glimmer and iquest_q1 target models): RoPE on every layer",
    default="RoPE on every layer",
    bad_type="-",
    source=CHECKED + " sglang/srt/models/dflash.py:DFlash2DraftModel",
)

LAYER_TYPES = Read(
    reader="sglang",
    key="layer_types",
    order="text_config.layer_types -> top level, indexed per draft layer: a list of another length than "
    "num_hidden_layers is refused before, by transformers' validate_layer_type (the config class), extra "
    "entries never reach the model",
    default="every layer full attention, non-causal (use_swa is not read)",
    bad_type="ValueError unless a sequence; an entry other than full_attention/sliding_attention ValueError",
    source=CHECKED + " sglang/srt/models/dflash.py:_get_dflash_layer_attention_params; "
    "sglang/srt/utils/hf_transformers/config.py:HfModelConfigParser.parse (AutoConfig.from_pretrained)",
)

SLIDING_WINDOW = Read(
    reader="sglang",
    key="sliding_window",
    order="text_config.sliding_window -> top level (swa_window_size only for the Nemotron-3.5 layout)",
    default="ValueError 'DFLASH sliding_attention layers require config.sliding_window' (also for null)",
    bad_type="int(); window_left = sliding_window - 1, so 0 gives -1: the sliding layers run unwindowed",
    source=CHECKED + " sglang/srt/speculative/dflash_utils.py:get_dflash_attention_sliding_window_size",
)

IS_CAUSAL = Read(
    reader="sglang",
    key="is_causal",
    order="top level (text config): an explicit true/false applies to every layer",
    default="sliding layers causal, full layers non-causal",
    bad_type="-",
    source=CHECKED + " sglang/srt/models/dflash.py:_get_dflash_attention_type",
)

ATTENTION_SINK_BIAS = Read(
    reader="sglang",
    key="attention_sink_bias",
    order="dflash_config.attention_sink_bias",
    default="false",
    bad_type="ValueError unless a bool",
    source=CHECKED + " sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config",
)

ROPE_THETA = Read(
    reader="sglang",
    key="rope_theta",
    order="the config class's rope_parameters / rope_theta; for Laguna, SGLang's own LagunaConfig: a "
    "drafter without full-attention layers uses the file's rope_theta for every layer",
    default="10000 (the config class default)",
    bad_type="passed to get_rope: a string raises TypeError",
    source=CHECKED + " sglang/srt/configs/laguna.py:LagunaConfig.__init__",
)

ROPE_SCALING = Read(
    reader="sglang",
    key="rope_scaling",
    order="the config class's rope_scaling / rope_parameters: with both a modern rope_type and a legacy "
    "type, the rope_type's scaling is built on every layer",
    default="no scaling",
    bad_type="-",
    source=CHECKED + " (run: a yarn rope_type with a linear type builds YaRNScalingRotaryEmbedding)",
)

DFLASH_CONFIG_ONLY_KEYS = Read(
    reader="sglang",
    key="dflash_config-only keys",
    order="dflash_config.attention_sink_bias, output_multiplier, final_logit_softcapping",
    default="no sink; output_multiplier 1.0; no soft cap (a top-level copy is not read)",
    bad_type="sink: ValueError unless a bool; output_multiplier: float(), ValueError unless > 0",
    source=CHECKED + " sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config",
)

SAMPLE_FROM_ANCHOR = Read(
    reader="sglang",
    key="sample_from_anchor",
    order="not read by the DFlash worker or model: only is_nemotron_35_draft_config reads it, as one marker of "
    "the Nemotron-3.5 layout (false there, with has_embed_tokens, no lm_head and W4A16_NVFP4 weights); "
    "SGLang's DSpark drafters read it "
    "(sglang/srt/speculative/dspark_components/dspark_config.py:get_dspark_sample_from_anchor)",
    default="-",
    bad_type="-",
    source=CHECKED + " sglang/srt/speculative/dflash_utils.py:is_nemotron_35_draft_config",
)

ATTENTION_VALUE_SCALE = Read(
    reader="sglang",
    key="attention_value_scale",
    order="dflash_config.attention_value_scale",
    default="none",
    bad_type="ValueError unless int/float (bool refused)",
    source=CHECKED + " sglang/srt/speculative/dflash_utils.py (parse_dflash_draft_config)",
)

IS_NEOX_STYLE = Read(
    reader="sglang",
    key="is_neox_style",
    order="rope_is_neox_style -> is_neox_style (top level)",
    default="true",
    bad_type="bool()",
    source=CHECKED + " sglang/srt/models/dflash.py:DFlashAttention.__init__",
)

HIDDEN_ACT = Read(
    reader="sglang",
    key="hidden_act",
    order="top level: silu, or swigluoai (which also needs swiglu_alpha and swiglu_limit)",
    default="silu",
    bad_type="ValueError 'Unsupported DFlash activation: ... Supported activations are silu and swigluoai.'",
    source=CHECKED + " sglang/srt/models/dflash.py:DFlashMLP.__init__",
)

INTERMEDIATE_SIZE = Read(
    reader="sglang",
    key="intermediate_size",
    order="top level",
    default="0 -> ValueError",
    bad_type="int(); <= 0 ValueError",
    source=UNCHECKED + " sglang/srt/models/dflash.py:DFlashMLP.__init__ as installed",
)

DFLASH2_KEYS = Read(
    reader="sglang",
    key="dflash2_keys",
    order="dflash_config.conv_kernel_size/conv_group_size, selector_rank/selector_top_k; DFlashDraftModel "
    "builds the convolution from the conv keys, only DFlash2DraftModel adds the selector (vLLM's v1 "
    "DFlashDraftModel reads none of them)",
    default="0 (off)",
    bad_type="ValueError unless ints >= 0; each pair set together",
    source=CHECKED + " sglang/srt/models/dflash.py:DFlashDraftModel.__init__.grouped_conv, "
    "sglang/srt/models/dflash.py:DFlash2DraftModel.__init__",
)

HIDDEN_SIZE = Read(
    reader="sglang",
    key="hidden_size",
    order="top level: every draft layer, and fc = len(taps) x hidden_size -> hidden_size (target_hidden_size "
    "is not read); the target's embeddings are fed in",
    default="-",
    bad_type="int()",
    source=CHECKED + " sglang/srt/models/dflash.py:DFlashDraftModel.__init__",
)

CHECKPOINT_TENSORS = Read(
    reader="sglang",
    key="checkpoint tensors",
    order="load_weights maps each tensor name onto the model the config built (q/k/v_proj -> qkv_proj, "
    "gate/up_proj -> gate_up_proj)",
    default="-",
    bad_type="fc.weight of another shape: ValueError 'DFLASH fc.weight shape mismatch'; any other tensor of "
    "another shape: default_weight_loader's assertion; a tensor with no parameter (e.g. layers.N past "
    "num_hidden_layers) is skipped silently ('Ignore unexpected weights'), and nothing checks that "
    "every parameter was filled",
    source=unexecutable("weights") + " " + SGLANG_MODEL + " (load_weights); " + SGLANG_WEIGHTS,
)

NUM_ATTENTION_HEADS = Read(
    reader="sglang",
    key="num_attention_heads",
    order="top level, with num_key_value_heads: DFlashAttention asserts num_attention_heads % tp == 0, and "
    "num_key_value_heads % tp == 0 (or tp % num_key_value_heads == 0 when fewer)",
    default="-",
    bad_type="AssertionError at start-up for a tensor-parallel size that does not divide them",
    source=unexecutable("a tensor-parallel size above 1 needs several devices")
    + " "
    + SGLANG_MODEL
    + " (DFlashAttention)",
)

PP_SIZE = Read(
    reader="sglang",
    key="pp_size",
    order="the launch's --pp-size (alias --pipeline-parallel-size), not the file: DFLASH refuses any value "
    "but 1 when it is set up",
    default="-",
    bad_type="-",
    source=CHECKED + " sglang/srt/arg_groups/speculative_hook.py:_handle_dflash (its pp_size check; run by "
    "tests/engines/test_launch_checks.py)",
)

ATTN_DP_SIZE = Read(
    reader="sglang",
    key="attn_dp_size",
    order="the launch's --attn-dp-size, else the deprecated --dp-size with --enable-dp-attention "
    "(handle_deprecated_dp_attention), not the file: above 1, DFLASH requires --enable-dp-lm-head, "
    "--attn-cp-size 1 and SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION off",
    default="-",
    bad_type="-",
    source=CHECKED + " sglang/srt/arg_groups/speculative_hook.py:_handle_dflash (its dp attention checks), "
    "sglang/srt/arg_groups/parallel_hook.py:handle_deprecated_dp_attention (run by "
    "tests/engines/test_launch_checks.py)",
)

PROJECTOR_TYPE = Read(
    reader="sglang",
    key="projector_type",
    order='dflash_config.projector_type -> top level; "domino" builds the Domino projector and then reads '
    "shift_label (a bool), pure_draft_prefix_len (must be 1), gru_hidden_dim and emb_dim (dflash_config, else top "
    "level; emb_dim in both must agree), and a block_size above 1",
    default="no projector (the plain DFlash model)",
    bad_type="ValueError at start-up for a Domino field missing, of the wrong type or value",
    source=CHECKED + " sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config, "
    "sglang/srt/models/dflash.py:DFlashDraftModel.__init__",
)

NEMOTRON_35_LAYOUT = Read(
    reader="sglang",
    key="the Nemotron 3.5 layout (has_embed_tokens, has_lm_head, top-level attention_sink_bias)",
    order="top level, only on the Nemotron 3.5 layout (is_nemotron_35_draft_config: architectures DFlashDraftModel "
    "or Qwen3DSparkModel, has_embed_tokens true, has_lm_head false, quantization_config.quant_algo "
    "W4A16_NVFP4, eagle_aux_hidden_state_layer_ids = target_layer_ids + 1, sample_from_anchor false): a true "
    "value builds attention sinks, which need --speculative-draft-attention-backend trtllm_mha",
    default="false",
    bad_type="truthiness",
    source=CHECKED + " sglang/srt/speculative/dflash_utils.py:is_nemotron_35_draft_config, "
    "sglang/srt/models/dflash.py:DFlashAttention.__init__",
)

NEMOTRON_35_SINK_BACKEND = Read(
    reader="sglang",
    key="--speculative-draft-attention-backend (the Nemotron 3.5 attention sinks)",
    order="the draft's option, else the server's prefill backend (--prefill-attention-backend, else "
    "--attention-backend, as the server resolved it), else flashinfer (triton on ROCm and XPU); trtllm_mha is kept "
    "only when every draft layer is sliding or is_causal is true, else it falls back (fa4 on sm100). The draft "
    "model's Nemotron 3.5 sinks (top-level attention_sink_bias) need trtllm_mha: ValueError 'Nemotron 3.5 DSpark "
    "attention sinks require --speculative-draft-attention-backend trtllm_mha'",
    default="flashinfer",
    bad_type="a backend the draft worker does not support falls back too",
    source=unexecutable(
        "the draft model is built on a GPU worker; the backend's resolution runs: tests/engines/test_launch_checks.py"
    )
    + " sglang/srt/arg_groups/speculative_hook.py:_resolve_dflash_draft_attention_backend, "
    "sglang/srt/models/dflash.py:DFlashAttention.__init__",
)

DRAFT_CONTEXT = Read(
    reader="sglang",
    key="max_position_embeddings (the drafter's context length)",
    order="the first of max_sequence_length, seq_length, max_seq_len, model_max_length, max_position_embeddings "
    "(the config class's value), times the RoPE scaling factor unless the scaling names its original length or is "
    "llama3; the draft worker is built with the target's context length (--context-length, else the target's own) "
    "and refuses one longer than the drafter's, unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN raises the "
    "drafter's max_position_embeddings to it",
    default="2048 (none of the keys)",
    bad_type="-",
    source=CHECKED + " sglang/srt/configs/model_config.py:ModelConfig._derive_context_length, "
    "sglang/srt/utils/hf_transformers/common.py:get_context_length, "
    "sglang/srt/speculative/draft_worker_common.py",
)

DSPARK_MARKOV_RANK = Read(
    reader="sglang",
    key="markov_rank",
    order="top level (or dspark_markov_rank), on a Qwen3DSparkModel drafter: the DSpark draft requires a Markov head",
    default="ValueError 'DSpark draft requires markov_rank > 0' (0, its default, too)",
    bad_type="ValueError for a rank that is not a positive integer",
    source=CHECKED + " sglang/srt/speculative/dspark_components/dspark_config.py:parse_dspark_draft_config, "
    "sglang/srt/models/dspark.py:DSparkDraftMixin.__init__",
)

MODEL_OVERRIDES = Read(
    reader="sglang",
    key="--json-model-override-args",
    order="the launch option, applied to the drafter's config as to the target's: the draft worker's ModelConfig "
    "is built from the same server arguments, and get_config sets each key of the object on the config it read "
    "(rope_scaling / rope_parameters merged into the file's, any other value replaced); _handle_dflash reads the "
    "block size through it too",
    default="{} (nothing changed)",
    bad_type="json.loads: text that is not JSON, or JSON that is not an object, stops the launch",
    source=CHECKED + " sglang/srt/arg_groups/speculative_hook.py:_handle_dflash (an override of block_size or "
    "dflash_config is the block it drafts: tests/engines/test_launch_checks.py), "
    "sglang/srt/utils/hf_transformers/config.py:get_config, "
    "sglang/srt/configs/model_config.py:ModelConfig.from_server_args",
)

ROWS: tuple[Read, ...] = (
    MODEL_OVERRIDES,
    DRAFT_CONTEXT,
    NEMOTRON_35_SINK_BACKEND,
    DSPARK_MARKOV_RANK,
    PROJECTOR_TYPE,
    NEMOTRON_35_LAYOUT,
    CONFIG_JSON_KEYS,
    MODEL_TYPE,
    ARCHITECTURES,
    TARGET_LAYER_IDS,
    TARGET_LAYER_IDS_CAPTURE,
    NUM_TARGET_LAYERS,
    MASK_TOKEN_ID,
    BLOCK_SIZE,
    NO_ROPE_LAYERS,
    LAYER_TYPES,
    SLIDING_WINDOW,
    IS_CAUSAL,
    ATTENTION_SINK_BIAS,
    ROPE_THETA,
    ROPE_SCALING,
    DFLASH_CONFIG_ONLY_KEYS,
    SAMPLE_FROM_ANCHOR,
    ATTENTION_VALUE_SCALE,
    IS_NEOX_STYLE,
    HIDDEN_ACT,
    INTERMEDIATE_SIZE,
    DFLASH2_KEYS,
    HIDDEN_SIZE,
    CHECKPOINT_TENSORS,
    NUM_ATTENTION_HEADS,
    PP_SIZE,
    ATTN_DP_SIZE,
)

"""vLLM's rows of the engine reads (lint.engines.READS): how its DFlash code reads the z-lab/engine format."""

from __future__ import annotations

from dflash_cfg.lint.engines.read import CHECKED, UNCHECKED, Read, config_keys, unexecutable

# The code read: a commit where the stored-code index gives one, else its snapshot id (lint.engines).
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
# The clean upstream state of the DFlash model (the late-2026 snapshot above carries a fork's patches).
VLLM_MODEL_UPSTREAM = "vllm-project/vllm vllm/model_executor/models/qwen3_dflash.py @036a00d1"
VLLM_QWEN2 = (
    "vllm-project/vllm vllm/model_executor/models/qwen2.py @013a2792 (Qwen2MLP; the only copy of the file "
    "the index holds, an older one: later copies were not read)"
)
VLLM_CAPTURE = (
    "vllm-project/vllm vllm/model_executor/models/qwen3_next.py @002d6073 (Qwen3NextModel.forward, which "
    "Qwen3_5Model inherits) and interfaces.py EagleModelMixin._maybe_add_hidden_state (index snapshot "
    "58075744538); the Llama-style loop that captures only before a layer: index snapshot 51787521031"
)
VLLM_SHARE = (
    "vllm-project/vllm vllm/v1/worker/gpu/spec_decode/dflash/utils.py and eagle/utils.py @055e47c2 "
    "(load_dflash_model, _should_share)"
)
VLLM_WEIGHTS = (
    "vllm-project/vllm vllm/model_executor/model_loader/weight_utils.py @0035bdf2 (default_weight_loader, "
    "safetensors_weights_iterator); the two loader messages as vLLM logs quote them (index snapshots "
    "51891195477, 71243218755), the loader code not read"
)


CONFIG_JSON_KEYS = config_keys("vllm")

ARCHITECTURES = Read(
    reader="vllm",
    key="architectures",
    order="top level: DFlashDraftModel -> qwen3_dflash.DFlashQwen3ForCausalLM (MuseGlimmerAssistantModel too, "
    "as DFlashMuseGlimmerAssistantModel), DFlashLagunaForCausalLM -> laguna_dflash, DFlash2DraftModel -> "
    "qwen3_dflash2, Qwen3XPressModel and DFlashQwen3XPressModel -> qwen3_xpress (the DFlash model plus an "
    "XPress refiner head); DFlash2BeamDraftModel is registered but refuses a file without "
    "dflash_config.final_logit_softcapping (KeyError); MiniMaxDFlash2DraftModel is not registered",
    default="model not found",
    bad_type="model not found",
    source=CHECKED + " vllm/model_executor/models/registry.py:_SPECULATIVE_DECODING_MODELS, "
    "vllm/config/speculative.py:XPRESS_ARCHITECTURES@0.33.0, "
    "vllm/models/beam/nvidia/dflash2.py:DFlash2BeamForCausalLM.__init__ (final_logit_softcapping)",
)

MODEL_TYPE = Read(
    reader="vllm",
    key="model_type",
    order="top level, through AutoConfig (the class registered for it)",
    default="AutoConfig cannot load the config: SpeculativeConfig ValidationError",
    bad_type="an unregistered model_type: '... has model type `qwen3_dflash` but Transformers does not "
    "recognize this architecture'",
    source=CHECKED + " vllm/transformers_utils/config.py:get_config, "
    "vllm/transformers_utils/config.py:HFConfigParser.parse (AutoConfig.from_pretrained)",
)

TARGET_LAYER_IDS = Read(
    reader="vllm",
    key="target_layer_ids",
    order="eagle_aux_hidden_state_layer_ids (used as is) -> dflash_config.target_layer_ids + 1 -> "
    "dspark_target_layer_ids + 1 -> top-level target_layer_ids + 1 -> dflash_config/eagle_config.layer_ids",
    default="the target's EAGLE3 default layers, with a warning",
    bad_type="`i + 1` on each element: a string raises TypeError, a float or a bool is used as a number",
    source=CHECKED + " vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py:get_eagle3_aux_layers_from_config",
)

TARGET_LAYER_IDS_CAPTURE = Read(
    reader="vllm",
    key="target_layer_ids capture",
    order="the target appends the residual stream at aux id a for each a (tap + 1): 0 before the first layer, "
    "a after layer a - 1, so a = N after the last; ids are deduplicated and sorted (the order of the list does "
    "not matter); Llama-style and Qwen3-Next/Qwen3.5 targets both capture after the last layer in "
    "{vLLM}; the fc layer expects len(aux ids) x target hidden features",
    default="-",
    bad_type="an aux id no layer reaches (past the target, a duplicate, a non-integer) leaves fc short of "
    "features: combine_hidden_states raises 'DFlash drafter expects ... concatenated aux hidden features'; "
    "tap -1 becomes aux id 0, the embedding output",
    source=unexecutable("a target forward pass") + " vllm/model_executor/models/llama.py:LlamaModel.forward, "
    "vllm/model_executor/models/qwen3_next.py:Qwen3NextModel.forward, "
    "vllm/model_executor/models/interfaces.py:EagleModelMixin._set_aux_hidden_state_layers, "
    "vllm/model_executor/models/interfaces.py:EagleModelMixin._maybe_add_hidden_state, "
    "vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3ForCausalLM.combine_hidden_states",
)

MASK_TOKEN_ID = Read(
    reader="vllm",
    key="mask_token_id",
    order="dflash_config.mask_token_id -> top-level mask_token_id (get_parallel_drafting_token_id, the "
    "proposer's _init_parallel_drafting_params and DFlashQwen3Model.__init__ all fall back to the top level)",
    default="ValueError 'Model config must specify `dflash_config.mask_token_id`, `mask_token_id`, ...'",
    bad_type="int() in get_parallel_drafting_token_id: a numeric string or an integral float is read as meant",
    source=CHECKED + " vllm/v1/worker/gpu/spec_decode/utils.py:get_parallel_drafting_token_id, "
    "vllm/v1/spec_decode/llm_base_proposer.py:SpecDecodeBaseProposer._init_parallel_drafting_params@0.33.0, "
    "vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3Model.__init__",
)

NO_ROPE_LAYERS = Read(
    reader="vllm",
    key="no_rope_layers",
    order="vLLM 0.34: top level, when the first architecture is DFlash2DraftModel and the value is truthy: the "
    "drafter becomes DFlash2RicursiveDraftModel (RicursiveDFlash2ForCausalLM) and each entry names a layer "
    "that runs without RoPE. vLLM 0.33 does not read it for a drafter (RoPE on every layer)",
    default="RoPE on every layer",
    bad_type="entries are layer indices (a 0/1 flag list names layers 0 and 1); true: TypeError at the build",
    source=CHECKED + " vllm/config/speculative.py:SpeculativeConfig.hf_config_override, "
    "vllm/model_executor/models/ricursive_dflash2.py:RicursiveDFlash2ForCausalLM",
)

LAYER_TYPES = Read(
    reader="vllm",
    key="layer_types",
    order="top level, as the config class left it, indexed per draft layer (layer_types[layer_idx]): a list of "
    "another length than num_hidden_layers is refused before, by transformers' validate_layer_type; vLLM "
    "0.33: mixed sliding and full layers need the V2 model runner (NotImplementedError on V1; 0.34 has no V1)",
    default="every layer full attention (sliding only if dflash_config.use_swa)",
    bad_type="compared per layer with 'sliding_attention': any other entry runs as full attention",
    source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:_resolve_layer_attention",
)

SLIDING_WINDOW = Read(
    reader="vllm",
    key="sliding_window",
    order="dflash_config.swa_window_size -> top-level sliding_window",
    default="ValueError 'DFlash sliding attention requires a window size' for a sliding layer",
    bad_type="0 reaches the model as no window: the same ValueError; otherwise passed to the attention backend",
    source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:_resolve_layer_attention",
)

USE_SWA = Read(
    reader="vllm",
    key="use_swa",
    order="dflash_config.use_swa: every layer sliding when layer_types is absent or all full (MiMo-V2.5-Pro)",
    default="false",
    bad_type="truthiness",
    source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:_resolve_layer_attention",
)

IS_CAUSAL = Read(
    reader="vllm",
    key="is_causal",
    order="top-level is_causal -> dflash_config.is_causal (later) -> dflash_config.causal",
    default="sliding layers causal, full layers non-causal",
    bad_type="bool(): 0 and 1 are read as false and true, a non-empty string as true",
    source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:_dflash_layer_causal",
)

ATTENTION_SINK_BIAS = Read(
    reader="vllm",
    key="attention_sink_bias",
    order="dflash_config.attention_sink_bias -> top-level add_swa_attention_sink_bias",
    default="false (no sink parameter)",
    bad_type="truthiness: any non-empty value adds a sink parameter",
    source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3DecoderLayer.__init__",
)

IS_NEOX_STYLE = Read(
    reader="vllm",
    key="is_neox_style",
    order="top-level is_neox_style only (rope_is_neox_style is not read), passed to the layer's get_rope; "
    "the target's layout plays no part",
    default="true",
    bad_type="passed to get_rope as is: truthiness",
    source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3DecoderLayer.__init__",
)

DRAFT_VOCAB_SIZE = Read(
    reader="vllm",
    key="draft_vocab_size",
    order="top level (DFlashLagunaForCausalLM): it must equal the target's vocabulary",
    default="ValueError 'Laguna DFlash config requires `draft_vocab_size`'",
    bad_type="a value other than the target's vocab_size: ValueError '... requires `draft_vocab_size` to "
    "match the target vocabulary size'",
    source=CHECKED + " vllm/model_executor/models/laguna_dflash.py:DFlashLagunaForCausalLM.__init__",
)

USE_AUX_HIDDEN_STATE = Read(
    reader="vllm",
    key="use_aux_hidden_state",
    order="dflash_config merged over eagle_config, then the top level: dflash_config wins over "
    "eagle_config, which wins over the top level",
    default="true",
    bad_type="truthiness (null is false): false builds no fc layer and drops the target features",
    source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3Model.__init__",
)

SAMPLE_FROM_ANCHOR = Read(
    reader="vllm",
    key="sample_from_anchor",
    order="dflash_config.sample_from_anchor, by the V2 model runner's DFlash speculator (the DFlash2 and "
    "XPress speculators inherit the check); XPress's also reads the top-level key; the speculators "
    "translator writes a top-level key into dflash_config; the V1 runner does not read it",
    default="false: the DFlash layout, the anchor is the bonus token and only the masks are predicted",
    bad_type="any truthy value: ValueError 'sample_from_anchor=True is not supported for DFlash' (XPress: "
    "'... for XPress') at start-up",
    source=unexecutable("the speculator is built only on a GPU worker; the adapter stands in for its check")
    + " vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:DFlashSpeculator.__init__, "
    "vllm/v1/worker/gpu/spec_decode/xpress/speculator.py:XPressSpeculator.__init__; "
    "vllm/transformers_utils/configs/speculators/algos.py:update_dflash",
)

HIDDEN_ACT = Read(
    reader="vllm",
    key="hidden_act",
    order="top level, passed to qwen2.Qwen2MLP (qwen3_dflash imports it as Qwen3MLP)",
    default="the config class default (Qwen3Config: silu)",
    bad_type="any value other than 'silu': Qwen2MLP raises ValueError 'Unsupported activation: ... "
    "Only silu is supported for now.'",
    source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3DecoderLayer.__init__ (its "
    "Qwen3MLP), vllm/model_executor/models/qwen2.py:Qwen2MLP.__init__",
)

ROPE_THETA = Read(
    reader="vllm",
    key="rope_theta",
    order="config.rope_parameters after set_default_rope_theta; for Laguna, transformers' LagunaConfig keeps "
    "RoPE per layer type: the file's rope_theta goes to the full-attention layers, sliding layers take "
    "the config's 10000",
    default="10000: the config class fills rope_parameters with its default theta before "
    "set_default_rope_theta(default_theta=1000000) runs, which then finds rope_theta set",
    bad_type="passed to get_rope: a string raises TypeError",
    source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3DecoderLayer.__init__, "
    "vllm/transformers_utils/config.py:set_default_rope_theta; "
    "transformers/models/laguna/configuration_laguna.py:LagunaConfig.__post_init__",
)

ROPE_SCALING = Read(
    reader="vllm",
    key="rope_scaling",
    order="get_config's patch_rope_parameters: rope_scaling / rope_parameters; a modern rope_type and a "
    "legacy type are both accepted only when they agree (or su/longrope, mrope/default)",
    default="no scaling",
    bad_type="ValueError 'Found conflicts between 'rope_type=...' (modern field) and 'type=...' (legacy field)'",
    source=CHECKED + " vllm/transformers_utils/config.py:patch_legacy_rope_type, "
    "vllm/transformers_utils/config.py:get_config (its patch_rope_parameters calls)",
)

DFLASH_CONFIG_ONLY_KEYS = Read(
    reader="vllm",
    key="dflash_config-only keys",
    order="dflash_config.attention_sink_bias (then the top-level add_swa_attention_sink_bias, not "
    "attention_sink_bias); DFlash2: dflash_config.output_multiplier and final_logit_softcapping",
    default="no sink; output_multiplier 1.0; no soft cap (a top-level copy is not read)",
    bad_type="truthiness (sink); float() (multiplier, soft cap)",
    source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3DecoderLayer.__init__, "
    "vllm/model_executor/models/qwen3_dflash2.py:DFlash2Qwen3ForCausalLM.__init__",
)

BLOCK_SIZE = Read(
    reader="vllm",
    key="block_size",
    order="not read: the launch's num_speculative_tokens decides",
    default="-",
    bad_type="-",
    source=CHECKED + " a block_size of another type runs as the unmutated file (the adapter's block_size is "
    "None: vllm/model_executor/models/qwen3_dflash.py reads none)",
)

TARGET_HIDDEN_SIZE = Read(
    reader="vllm",
    key="target_hidden_size",
    order="top level: fc input = len(aux ids) x target_hidden_size",
    default="hidden_size",
    bad_type="multiplies the fc width",
    source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:_get_dflash_fc_input_size",
)

HIDDEN_SIZE = Read(
    reader="vllm",
    key="hidden_size",
    order="top level: the draft layers, norms and fc output are built with it; load_dflash_model then "
    "hands the drafter the target's own embed_tokens and lm_head modules (the checkpoint has none), "
    "with no width check",
    default="the config class default (Qwen3Config: 4096)",
    bad_type="-",
    source=unexecutable("weights: load_dflash_model shares the target's modules at load time")
    + " vllm/v1/worker/gpu/spec_decode/dflash/utils.py:load_dflash_model",
)

VOCAB_SIZE = Read(
    reader="vllm",
    key="vocab_size",
    order="top level; draft_vocab_size defaults to it; the drafter uses the target's embed_tokens and "
    "lm_head (load_dflash_model)",
    default="the config class default",
    bad_type="a draft_vocab_size other than the target's vocabulary builds a draft_id_to_target_id map (zeros, "
    "i.e. the identity, unless the checkpoint ships d2t) and a LogitsProcessor of draft_vocab_size "
    "over the target's lm_head",
    source=UNCHECKED
    + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3ForCausalLM.__init__ as installed; "
    + VLLM_SHARE,
)

CHECKPOINT_TENSORS = Read(
    reader="vllm",
    key="checkpoint tensors",
    order="the safetensors files (safe_open); load_weights maps each tensor name onto the model the config "
    "built (q/k/v_proj -> qkv_proj, gate/up_proj -> gate_up_proj)",
    default="-",
    bad_type="a tensor of another shape: the weight loaders assert equal sizes and the server does not start; "
    "a tensor with no parameter (e.g. layers.N past num_hidden_layers): ValueError 'There is no "
    "module or parameter named ...'; a parameter no tensor fills: ValueError 'Following weights were "
    "not initialized from checkpoint'; a file safetensors cannot open fails the load",
    source=unexecutable("weights")
    + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3ForCausalLM.load_weights; "
    + VLLM_WEIGHTS,
)

NUM_SPECULATIVE_TOKENS = Read(
    reader="vllm",
    key="num_speculative_tokens",
    order="the launch's speculative config, not the file: the DFlash proposer queries 1 + "
    "num_speculative_tokens slots per request (the anchor and the masks); the drafter's block_size "
    "is not read",
    default="-",
    bad_type="-",
    source=unexecutable("the proposer runs on a GPU worker") + " " + VLLM_PROPOSER,
)

METHOD = Read(
    reader="vllm",
    key="method",
    order="the launch's speculative_config.method. vLLM 0.33: as given; absent or 'draft_model', 'dflash' "
    "when the drafter's path says dflash, else a plain draft model (the architecture is not looked at). "
    "vLLM 0.34: absent, the method the drafter's class declares ('dflash' for DFlash and DFlash2); an "
    "explicit method that differs from it is refused",
    default="-",
    bad_type="0.33: a method outside its literal list is refused (dflash2 too); 0.34: 'Unknown speculative "
    "method' with the built-in list",
    source=CHECKED + " vllm/config/speculative.py:SpeculativeConfig.__post_init__@0.33.0, "
    "vllm/v1/worker/gpu/spec_decode/speculator_config.py:_resolve_checkpoint_config_class, "
    "vllm/config/speculative.py:SpeculativeConfig._validate_method "
    "(run by tests/engines/test_launch_checks.py)",
)

SPECULATIVE_CONFIG_KEYS = Read(
    reader="vllm",
    key="speculative_config keys",
    order="the launch's --speculative-config dict, not the file: every key a keyword of SpeculativeConfig "
    "(the fields of each release: lint/speculative_fields.py, read from the installed code by the engine "
    "suite)",
    default="-",
    bad_type="a key that is not a field: ValidationError 'Unexpected keyword argument', the server does not start",
    source=CHECKED + " vllm/engine/arg_utils.py:EngineArgs.create_speculative_config "
    "(tests/engines/test_speculative_fields.py)",
)

DRAFT_DECODE_CONTEXT_PARALLEL_SIZE = Read(
    reader="vllm",
    key="draft_decode_context_parallel_size",
    order="the launch's --speculative-config (vLLM 0.34 on; 0.33 refuses the key): the drafter's decode "
    "context parallel size, 1 or the target's; unset, 1 for a drafter with any sliding layer "
    "(dflash_config.use_swa or sliding_attention in layer_types)",
    default="1 for DFlash (a full-attention MLA drafter takes the target's)",
    bad_type="> 1 with sliding layers: ValueError when the speculator loads the drafter on the GPU worker",
    source=unexecutable("the drafter loads on a GPU worker")
    + " vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:DFlashSpeculator.load_model, "
    "vllm/model_executor/models/qwen3_dflash.py:dflash_has_any_sliding",
)

VLLM_USE_V2_MODEL_RUNNER = Read(
    reader="vllm",
    key="VLLM_USE_V2_MODEL_RUNNER",
    order="the engine's environment, not the file. vLLM 0.33: set, it chooses the model runner (false: V1, "
    "which refuses mixed sliding/full and candidate-head drafters); unset, V1 runs for what V2 lacks "
    "(pipeline parallelism under external_launcher). vLLM 0.34: V1 is removed; a false value refuses every "
    "launch, and so does pipeline parallelism under external_launcher",
    default="unset: the V2 runner",
    bad_type="bool(int(value)); a value that is not an integer fails vLLM's start on its own",
    source=CHECKED + " vllm/platforms/interface.py:Platform.validate_environ, vllm/config/vllm.py:VllmConfig"
    ".use_v2_model_runner@0.33.0 (run by tests/engines/test_launch_checks.py)",
)

MAX_POSITION_EMBEDDINGS = Read(
    reader="vllm",
    key="max_position_embeddings",
    order="top level: the draft ModelConfig's length, times the RoPE factor for types not pre-scaled "
    "(_get_and_verify_max_len); raised to the target's max_model_len when every RoPE type only sizes a "
    "cache (default, linear, llama3, ntk, proportional), else the V2 runner lowers the served "
    "max_model_len to it (a warning in the log)",
    default="the target's max_model_len",
    bad_type="-",
    source=CHECKED + " vllm/config/speculative.py:SpeculativeConfig._maybe_override_draft_max_position_embeddings, "
    "vllm/config/vllm.py:VllmConfig._limit_max_model_len_to_draft (run by "
    "tests/engines/test_launch_checks.py)",
)

NUM_ATTENTION_HEADS = Read(
    reader="vllm",
    key="num_attention_heads",
    order="top level, with num_key_value_heads: DFlashQwen3Attention asserts num_attention_heads % tp == 0, "
    "and num_key_value_heads % tp == 0 (or tp % num_key_value_heads == 0 when fewer)",
    default="the config class default",
    bad_type="AssertionError at start-up for a tensor-parallel size that does not divide them",
    source=unexecutable("a tensor-parallel size above 1 needs several devices")
    + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3Attention.__init__",
)

DSPARK_MARKOV_RANK = Read(
    reader="vllm",
    key="markov_rank",
    order="top level, on a Qwen3DSparkModel drafter (vllm serve with --speculative-config method dspark; under "
    "method dflash vLLM refuses a DSpark checkpoint): the Markov head's rank, read unconditionally",
    default="AttributeError: the config has no markov_rank, and the drafter is not built",
    bad_type="-",
    source=CHECKED + " vllm/model_executor/models/qwen3_dspark.py:Qwen3DSparkModel.__init__",
)

ROWS: tuple[Read, ...] = (
    DSPARK_MARKOV_RANK,
    CONFIG_JSON_KEYS,
    ARCHITECTURES,
    MODEL_TYPE,
    TARGET_LAYER_IDS,
    TARGET_LAYER_IDS_CAPTURE,
    MASK_TOKEN_ID,
    NO_ROPE_LAYERS,
    LAYER_TYPES,
    SLIDING_WINDOW,
    USE_SWA,
    IS_CAUSAL,
    ATTENTION_SINK_BIAS,
    IS_NEOX_STYLE,
    DRAFT_VOCAB_SIZE,
    USE_AUX_HIDDEN_STATE,
    SAMPLE_FROM_ANCHOR,
    HIDDEN_ACT,
    ROPE_THETA,
    ROPE_SCALING,
    DFLASH_CONFIG_ONLY_KEYS,
    BLOCK_SIZE,
    TARGET_HIDDEN_SIZE,
    HIDDEN_SIZE,
    VOCAB_SIZE,
    CHECKPOINT_TENSORS,
    NUM_SPECULATIVE_TOKENS,
    METHOD,
    SPECULATIVE_CONFIG_KEYS,
    DRAFT_DECODE_CONTEXT_PARALLEL_SIZE,
    VLLM_USE_V2_MODEL_RUNNER,
    MAX_POSITION_EMBEDDINGS,
    NUM_ATTENTION_HEADS,
)

"""What vLLM and SGLang read from a DFlash drafter config, as data, with the code that says so. Pure.

Each `Read` is one key as one reader's code reads it (`Reader`: an engine, vLLM's speculators translator, or
transformers): where it looks (in order), the default when the key is absent, what a value of the wrong type
does, and the file and commit (or the snapshot the index holds) it was read from. A few rows are about
something other than one key (how config.json itself is parsed, how the checkpoint's tensors are loaded, a
launch option); their `key` says what they are about. Rules name the reads behind them (`Rule.reads`), and
`dflash-cfg rules ID` shows them. "transformers" rows are the library both engines load config.json through
(`AutoConfig`), so what it does the engines get.
Re-read the code before relying on a row: these engines change monthly.

Every row says how it was verified, by the prefix of its source (MARKERS; a test holds that each row has one):
- `CHECKED`: checked by execution. The engine suite (tests/engines/, `./dev test`) ran the engine's own code in
  the pinned engine venv (`dflash_cfg.pinned`) on drafters built for the purpose, and tests/engines/test_truth.py
  pins what it did; the code cited (`path:qualname`, lint/citations.py) is the installed one.
- `TRANSFORMERS_CHECKED`: the same for transformers (the release pinned with the engines) loading config.json.
- `unexecutable(why)`: the behaviour needs what this CPU-only suite lacks (a GPU worker, weights, a target
  forward pass, several devices); the row cites the installed code, read by hand.
- `UNCHECKED`: not yet checked by execution, with the code it was transcribed from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dflash_cfg.lint.citations import with_lines
from dflash_cfg.lint.cited_lines import LINES, VERSIONS
from dflash_cfg.pinned import expand, named

# Who reads the file: the two engines, vLLM's speculators translator, and transformers, which both engines
# load config.json through. (The launch parser's `Engine` is another thing: the id of the engine a
# command line starts.)
Reader = Literal["vLLM", "SGLang", "speculators", "transformers"]

# The engine versions the suite runs (tests/engines/requirements.lock.txt); a row checked against them cites the
# installed code (`path:qualname`) after this prefix.
CHECKED = (
    f"checked by execution against {named('vllm')}, {named('sglang')}, {named('speculators')} "
    "(tests/engines/test_truth.py):"
)

# The transformers rows checked by execution: the library both engines load config.json through, in the version
# pinned with them.
TRANSFORMERS_CHECKED = (
    f"checked by execution against {named('transformers')}, as pinned with the engines (tests/engines/test_truth.py):"
)
# A row whose behaviour cannot be executed here (no GPU, no weights, no target forward pass): it says why and
# cites the code of the pinned versions instead, read by hand.
UNEXECUTABLE = "not executable on this CPU-only suite"
# A row not yet checked by execution, with the code it was transcribed from: said, never silent.
UNCHECKED = "not yet checked by execution; transcribed from"
# Every row's source starts with one of these (tests/lint/rules/test_registry.py holds it).
MARKERS = (CHECKED, TRANSFORMERS_CHECKED, UNEXECUTABLE, UNCHECKED)


def unexecutable(why: str) -> str:
    """The source prefix of a row that cannot be executed here, saying why."""
    return f"{UNEXECUTABLE} ({why}); read in the installed {named('vllm')} / {named('sglang')} code:"


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
TRANSFORMERS_CONFIG = (
    "huggingface/transformers src/transformers/configuration_utils.py, v5.24.0 as installed "
    "(PretrainedConfig._dict_from_json_file and _get_config_dict, validate_layer_type, "
    "_LEGACY_LAYER_TYPE_REMAP) and models/auto/configuration_auto.py (AutoConfig.from_pretrained)"
)
TRANSFORMERS_QWEN3 = (
    "huggingface/transformers src/transformers/models/qwen3/configuration_qwen3.py, v5.24.0 as installed "
    "(Qwen3Config.__post_init__)"
)


@dataclass(frozen=True)
class Read:
    reader: Reader
    key: str
    order: str  # where it looks, first to last
    default: str  # when absent
    bad_type: str  # what a value of the wrong type (or a wrong value) does
    source: str

    def to_json(self) -> dict[str, str | None]:
        """The row as plain fields (`dflash-cfg rules --format json`); a field that does not apply is null."""
        row = {
            "reader": self.reader,
            "key": self.key,
            "order": self.order,
            "default": self.default,
            "bad_type": self.bad_type,
            "source": self.source,
        }
        return {name: None if value == NOT_APPLICABLE else expand(value) for name, value in row.items()}


READS: dict[str, Read] = {
    r.reader + ":" + r.key: r
    for r in (
        # --- vLLM, z-lab/engine format ---
        Read(
            reader="vLLM",
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
        ),
        Read(
            reader="vLLM",
            key="model_type",
            order="top level, through AutoConfig (the class registered for it)",
            default="AutoConfig cannot load the config: SpeculativeConfig ValidationError",
            bad_type="an unregistered model_type: '... has model type `qwen3_dflash` but Transformers does not "
            "recognize this architecture'",
            source=CHECKED + " vllm/transformers_utils/config.py:get_config, "
            "vllm/transformers_utils/config.py:HFConfigParser.parse (AutoConfig.from_pretrained)",
        ),
        Read(
            reader="vLLM",
            key="target_layer_ids",
            order="eagle_aux_hidden_state_layer_ids (used as is) -> dflash_config.target_layer_ids + 1 -> "
            "dspark_target_layer_ids + 1 -> top-level target_layer_ids + 1 -> dflash_config/eagle_config.layer_ids",
            default="the target's EAGLE3 default layers, with a warning",
            bad_type="`i + 1` on each element: a string raises TypeError, a float or a bool is used as a number",
            source=CHECKED + " vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py:get_eagle3_aux_layers_from_config",
        ),
        Read(
            reader="vLLM",
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
        ),
        Read(
            reader="vLLM",
            key="mask_token_id",
            order="dflash_config.mask_token_id -> top-level mask_token_id (get_parallel_drafting_token_id, the "
            "proposer's _init_parallel_drafting_params and DFlashQwen3Model.__init__ all fall back to the top level)",
            default="ValueError 'Model config must specify `dflash_config.mask_token_id`, `mask_token_id`, ...'",
            bad_type="int() in get_parallel_drafting_token_id: a numeric string or an integral float is read as meant",
            source=CHECKED + " vllm/v1/worker/gpu/spec_decode/utils.py:get_parallel_drafting_token_id, "
            "vllm/v1/spec_decode/llm_base_proposer.py:SpecDecodeBaseProposer._init_parallel_drafting_params@0.33.0, "
            "vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3Model.__init__",
        ),
        Read(
            reader="vLLM",
            key="no_rope_layers",
            order="vLLM 0.34: top level, when the first architecture is DFlash2DraftModel and the value is truthy: the "
            "drafter becomes DFlash2RicursiveDraftModel (RicursiveDFlash2ForCausalLM) and each entry names a layer "
            "that runs without RoPE. vLLM 0.33 does not read it for a drafter (RoPE on every layer)",
            default="RoPE on every layer",
            bad_type="entries are layer indices (a 0/1 flag list names layers 0 and 1); true: TypeError at the build",
            source=CHECKED + " vllm/config/speculative.py:SpeculativeConfig.hf_config_override, "
            "vllm/model_executor/models/ricursive_dflash2.py:RicursiveDFlash2ForCausalLM",
        ),
        Read(
            reader="vLLM",
            key="layer_types",
            order="top level, as the config class left it, indexed per draft layer (layer_types[layer_idx]): a list of "
            "another length than num_hidden_layers is refused before, by transformers' validate_layer_type; vLLM "
            "0.33: mixed sliding and full layers need the V2 model runner (NotImplementedError on V1; 0.34 has no V1)",
            default="every layer full attention (sliding only if dflash_config.use_swa)",
            bad_type="compared per layer with 'sliding_attention': any other entry runs as full attention",
            source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:_resolve_layer_attention",
        ),
        Read(
            reader="vLLM",
            key="sliding_window",
            order="dflash_config.swa_window_size -> top-level sliding_window",
            default="ValueError 'DFlash sliding attention requires a window size' for a sliding layer",
            bad_type="0 reaches the model as no window: the same ValueError; otherwise passed to the attention backend",
            source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:_resolve_layer_attention",
        ),
        Read(
            reader="vLLM",
            key="use_swa",
            order="dflash_config.use_swa: every layer sliding when layer_types is absent or all full (MiMo-V2.5-Pro)",
            default="false",
            bad_type="truthiness",
            source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:_resolve_layer_attention",
        ),
        Read(
            reader="vLLM",
            key="is_causal",
            order="top-level is_causal -> dflash_config.is_causal (later) -> dflash_config.causal",
            default="sliding layers causal, full layers non-causal",
            bad_type="bool(): 0 and 1 are read as false and true, a non-empty string as true",
            source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:_dflash_layer_causal",
        ),
        Read(
            reader="vLLM",
            key="attention_sink_bias",
            order="dflash_config.attention_sink_bias -> top-level add_swa_attention_sink_bias",
            default="false (no sink parameter)",
            bad_type="truthiness: any non-empty value adds a sink parameter",
            source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3DecoderLayer.__init__",
        ),
        Read(
            reader="vLLM",
            key="is_neox_style",
            order="top-level is_neox_style only (rope_is_neox_style is not read), passed to the layer's get_rope; "
            "the target's layout plays no part",
            default="true",
            bad_type="passed to get_rope as is: truthiness",
            source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3DecoderLayer.__init__",
        ),
        Read(
            reader="vLLM",
            key="draft_vocab_size",
            order="top level (DFlashLagunaForCausalLM): it must equal the target's vocabulary",
            default="ValueError 'Laguna DFlash config requires `draft_vocab_size`'",
            bad_type="a value other than the target's vocab_size: ValueError '... requires `draft_vocab_size` to "
            "match the target vocabulary size'",
            source=CHECKED + " vllm/model_executor/models/laguna_dflash.py:DFlashLagunaForCausalLM.__init__",
        ),
        Read(
            reader="vLLM",
            key="use_aux_hidden_state",
            order="dflash_config merged over eagle_config, then the top level: dflash_config wins over "
            "eagle_config, which wins over the top level",
            default="true",
            bad_type="truthiness (null is false): false builds no fc layer and drops the target features",
            source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3Model.__init__",
        ),
        Read(
            reader="vLLM",
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
        ),
        Read(
            reader="vLLM",
            key="hidden_act",
            order="top level, passed to qwen2.Qwen2MLP (qwen3_dflash imports it as Qwen3MLP)",
            default="the config class default (Qwen3Config: silu)",
            bad_type="any value other than 'silu': Qwen2MLP raises ValueError 'Unsupported activation: ... "
            "Only silu is supported for now.'",
            source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3DecoderLayer.__init__ (its "
            "Qwen3MLP), vllm/model_executor/models/qwen2.py:Qwen2MLP.__init__",
        ),
        Read(
            reader="vLLM",
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
        ),
        Read(
            reader="vLLM",
            key="rope_scaling",
            order="get_config's patch_rope_parameters: rope_scaling / rope_parameters; a modern rope_type and a "
            "legacy type are both accepted only when they agree (or su/longrope, mrope/default)",
            default="no scaling",
            bad_type="ValueError 'Found conflicts between 'rope_type=...' (modern field) and 'type=...' (legacy "
            "field)'",
            source=CHECKED + " vllm/transformers_utils/config.py:patch_legacy_rope_type, "
            "vllm/transformers_utils/config.py:get_config (its patch_rope_parameters calls)",
        ),
        Read(
            reader="vLLM",
            key="dflash_config-only keys",
            order="dflash_config.attention_sink_bias (then the top-level add_swa_attention_sink_bias, not "
            "attention_sink_bias); DFlash2: dflash_config.output_multiplier and final_logit_softcapping",
            default="no sink; output_multiplier 1.0; no soft cap (a top-level copy is not read)",
            bad_type="truthiness (sink); float() (multiplier, soft cap)",
            source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3DecoderLayer.__init__, "
            "vllm/model_executor/models/qwen3_dflash2.py:DFlash2Qwen3ForCausalLM.__init__",
        ),
        Read(
            reader="vLLM",
            key="block_size",
            order="not read: the launch's num_speculative_tokens decides",
            default="-",
            bad_type="-",
            source=CHECKED + " a block_size of another type runs as the unmutated file (the adapter's block_size is "
            "None: vllm/model_executor/models/qwen3_dflash.py reads none)",
        ),
        Read(
            reader="vLLM",
            key="target_hidden_size",
            order="top level: fc input = len(aux ids) x target_hidden_size",
            default="hidden_size",
            bad_type="multiplies the fc width",
            source=CHECKED + " vllm/model_executor/models/qwen3_dflash.py:_get_dflash_fc_input_size",
        ),
        Read(
            reader="vLLM",
            key="hidden_size",
            order="top level: the draft layers, norms and fc output are built with it; load_dflash_model then "
            "hands the drafter the target's own embed_tokens and lm_head modules (the checkpoint has none), "
            "with no width check",
            default="the config class default (Qwen3Config: 4096)",
            bad_type="-",
            source=unexecutable("weights: load_dflash_model shares the target's modules at load time")
            + " vllm/v1/worker/gpu/spec_decode/dflash/utils.py:load_dflash_model",
        ),
        Read(
            reader="vLLM",
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
        ),
        Read(
            reader="vLLM",
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
        ),
        Read(
            reader="vLLM",
            key="num_speculative_tokens",
            order="the launch's speculative config, not the file: the DFlash proposer queries 1 + "
            "num_speculative_tokens slots per request (the anchor and the masks); the drafter's block_size "
            "is not read",
            default="-",
            bad_type="-",
            source=unexecutable("the proposer runs on a GPU worker") + " " + VLLM_PROPOSER,
        ),
        Read(
            reader="vLLM",
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
        ),
        Read(
            reader="vLLM",
            key="speculative_config keys",
            order="the launch's --speculative-config dict, not the file: every key a keyword of SpeculativeConfig "
            "(the fields of each release: lint/speculative_fields.py, read from the installed code by the engine "
            "suite)",
            default="-",
            bad_type="a key that is not a field: ValidationError 'Unexpected keyword argument', the server does not "
            "start",
            source=CHECKED + " vllm/engine/arg_utils.py:EngineArgs.create_speculative_config "
            "(tests/engines/test_speculative_fields.py)",
        ),
        Read(
            reader="vLLM",
            key="draft_decode_context_parallel_size",
            order="the launch's --speculative-config (vLLM 0.34 on; 0.33 refuses the key): the drafter's decode "
            "context parallel size, 1 or the target's; unset, 1 for a drafter with any sliding layer "
            "(dflash_config.use_swa or sliding_attention in layer_types)",
            default="1 for DFlash (a full-attention MLA drafter takes the target's)",
            bad_type="> 1 with sliding layers: ValueError when the speculator loads the drafter on the GPU worker",
            source=unexecutable("the drafter loads on a GPU worker")
            + " vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:DFlashSpeculator.load_model, "
            "vllm/model_executor/models/qwen3_dflash.py:dflash_has_any_sliding",
        ),
        Read(
            reader="vLLM",
            key="VLLM_USE_V2_MODEL_RUNNER",
            order="the engine's environment, not the file. vLLM 0.33: set, it chooses the model runner (false: V1, "
            "which refuses mixed sliding/full and candidate-head drafters); unset, V1 runs for what V2 lacks "
            "(pipeline parallelism under external_launcher). vLLM 0.34: V1 is removed; a false value refuses every "
            "launch, and so does pipeline parallelism under external_launcher",
            default="unset: the V2 runner",
            bad_type="bool(int(value)); a value that is not an integer fails vLLM's start on its own",
            source=CHECKED + " vllm/platforms/interface.py:Platform.validate_environ, vllm/config/vllm.py:VllmConfig"
            ".use_v2_model_runner@0.33.0 (run by tests/engines/test_launch_checks.py)",
        ),
        Read(
            reader="vLLM",
            key="max_position_embeddings",
            order="top level: the draft ModelConfig's length, times the RoPE factor for types not pre-scaled "
            "(_get_and_verify_max_len); raised to the target's max_model_len when every RoPE type only sizes a "
            "cache (default, linear, llama3, ntk, proportional), else the V2 runner lowers the served "
            "max_model_len to it (a warning in the log)",
            default="the target's max_model_len",
            bad_type="-",
            source=CHECKED
            + " vllm/config/speculative.py:SpeculativeConfig._maybe_override_draft_max_position_embeddings, "
            "vllm/config/vllm.py:VllmConfig._limit_max_model_len_to_draft (run by "
            "tests/engines/test_launch_checks.py)",
        ),
        Read(
            reader="vLLM",
            key="num_attention_heads",
            order="top level, with num_key_value_heads: DFlashQwen3Attention asserts num_attention_heads % tp == 0, "
            "and num_key_value_heads % tp == 0 (or tp % num_key_value_heads == 0 when fewer)",
            default="the config class default",
            bad_type="AssertionError at start-up for a tensor-parallel size that does not divide them",
            source=unexecutable("a tensor-parallel size above 1 needs several devices")
            + " vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3Attention.__init__",
        ),
        # --- SGLang ---
        Read(
            reader="SGLang",
            key="model_type",
            order="top level, through transformers' AutoConfig (ModelConfig -> get_config)",
            default="refused: 'Unrecognized model ... Should have a `model_type` key' (the speculators format has "
            "none)",
            bad_type="refused the same way",
            source=CHECKED + " sglang/srt/utils/hf_transformers/config.py:get_config, "
            "sglang/srt/utils/hf_transformers/config.py:HfModelConfigParser.parse (AutoConfig.from_pretrained)",
        ),
        Read(
            reader="SGLang",
            key="architectures",
            order="top level: DFlashDraftModel, DFlash2DraftModel, DFlashLagunaForCausalLM, MuseGlimmerAssistantModel, "
            "DFlash2BeamDraftModel, MiniMaxDFlash2DraftModel (the last three aliases of the DFlash and DFlash2 "
            "models); no XPress class (Qwen3XPressModel, DFlashQwen3XPressModel): an unregistered name falls back "
            "to the Transformers backend, which asks for the drafter's remote code and refuses the file (OSError)",
            default="model not found",
            bad_type="model not found",
            source=CHECKED
            + " sglang/srt/models/dflash.py:EntryClass, sglang/srt/models/transformers.py:TransformersBase.__init__",
        ),
        Read(
            reader="SGLang",
            key="target_layer_ids",
            order="dflash_config.target_layer_ids -> top-level target_layer_ids",
            default="the build_target_layer_ids formula (taps guessed from the draft depth)",
            bad_type="ValueError unless a list or tuple; each element int() (a float is truncated, a numeric string "
            "parsed, a bool read as 0/1); empty or out of [0, bound) ValueError; repeats and order accepted",
            source=CHECKED + " sglang/srt/speculative/dflash_utils.py:DFlashDraftConfig.resolve_target_layer_ids, "
            "sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config",
        ),
        Read(
            reader="SGLang",
            key="target_layer_ids capture",
            order="the target captures the state before layer tap + 1 (set_dflash_layers_to_capture adds 1); "
            "the Qwen3.5 target marks self.layers[tap + 1]",
            default="-",
            bad_type="a tap on the target's last layer: IndexError at start-up on Qwen3.5 targets (issue #32204)",
            source=CHECKED + " sglang/srt/models/qwen3_5.py:Qwen3_5ForCausalLM.set_dflash_layers_to_capture",
        ),
        Read(
            reader="SGLang",
            key="num_target_layers",
            order="dflash_config.num_target_layers -> top level; DFlashDraftModel bounds the taps with it (ValueError "
            "for a tap at or past it), then the runner compares it with the running target (a log warning "
            "when they differ) and captures with the target's own num_hidden_layers as the bound",
            default="DFlashDraftModel bounds the taps by max(taps) + 1 and builds the model",
            bad_type="int() (a numeric string or an integral float is read as meant); ValueError unless >= 1",
            source=CHECKED + " sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config, "
            "sglang/srt/models/dflash.py:DFlashDraftModel.__init__; " + SGLANG_RUNNER,
        ),
        Read(
            reader="SGLang",
            key="mask_token_id",
            order="dflash_config.mask_token_id -> top-level mask_token_id; the worker then checks it against the "
            "target: at or past the target's vocab_size ValueError, and when the tokenizer's vocabulary has "
            "mask_token (default '<|MASK|>') under another id ValueError",
            default="resolves mask_token through the tokenizer, adding it if missing",
            bad_type="ValueError unless a non-negative int (bool, float and string refused)",
            source=CHECKED + " sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config; " + SGLANG_WORKER,
        ),
        Read(
            reader="SGLang",
            key="block_size",
            order="dflash_config.block_size -> top level; it is the default of --speculative-num-draft-tokens, and the "
            "worker drafts the launch's speculative_num_draft_tokens per step (a different config value only "
            "logs 'DFLASH block size mismatch')",
            default="16",
            bad_type="int() (_parse_optional_int): a numeric string or an integral float is read as meant; "
            "ValueError unless >= 1",
            source=CHECKED + " sglang/srt/speculative/dflash_utils.py:_parse_optional_int, "
            "sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config; " + SGLANG_WORKER,
        ),
        Read(
            reader="SGLang",
            key="no_rope_layers",
            order="not read by the DFlash drafters (only by the muse_glimmer and iquest_q1 target models): RoPE on "
            "every layer",
            default="RoPE on every layer",
            bad_type="-",
            source=CHECKED + " sglang/srt/models/dflash.py:DFlash2DraftModel",
        ),
        Read(
            reader="SGLang",
            key="layer_types",
            order="text_config.layer_types -> top level, indexed per draft layer: a list of another length than "
            "num_hidden_layers is refused before, by transformers' validate_layer_type (the config class), extra "
            "entries never reach the model",
            default="every layer full attention, non-causal (use_swa is not read)",
            bad_type="ValueError unless a sequence; an entry other than full_attention/sliding_attention ValueError",
            source=CHECKED + " sglang/srt/models/dflash.py:_get_dflash_layer_attention_params; "
            "sglang/srt/utils/hf_transformers/config.py:HfModelConfigParser.parse (AutoConfig.from_pretrained)",
        ),
        Read(
            reader="SGLang",
            key="sliding_window",
            order="text_config.sliding_window -> top level (swa_window_size only for the Nemotron-3.5 layout)",
            default="ValueError 'DFLASH sliding_attention layers require config.sliding_window' (also for null)",
            bad_type="int(); window_left = sliding_window - 1, so 0 gives -1: the sliding layers run unwindowed",
            source=CHECKED + " sglang/srt/speculative/dflash_utils.py:get_dflash_attention_sliding_window_size",
        ),
        Read(
            reader="SGLang",
            key="is_causal",
            order="top level (text config): an explicit true/false applies to every layer",
            default="sliding layers causal, full layers non-causal",
            bad_type="-",
            source=CHECKED + " sglang/srt/models/dflash.py:_get_dflash_attention_type",
        ),
        Read(
            reader="SGLang",
            key="attention_sink_bias",
            order="dflash_config.attention_sink_bias",
            default="false",
            bad_type="ValueError unless a bool",
            source=CHECKED + " sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config",
        ),
        Read(
            reader="SGLang",
            key="rope_theta",
            order="the config class's rope_parameters / rope_theta; for Laguna, SGLang's own LagunaConfig: a "
            "drafter without full-attention layers uses the file's rope_theta for every layer",
            default="10000 (the config class default)",
            bad_type="passed to get_rope: a string raises TypeError",
            source=CHECKED + " sglang/srt/configs/laguna.py:LagunaConfig.__init__",
        ),
        Read(
            reader="SGLang",
            key="rope_scaling",
            order="the config class's rope_scaling / rope_parameters: with both a modern rope_type and a legacy "
            "type, the rope_type's scaling is built on every layer",
            default="no scaling",
            bad_type="-",
            source=CHECKED + " (run: a yarn rope_type with a linear type builds YaRNScalingRotaryEmbedding)",
        ),
        Read(
            reader="SGLang",
            key="dflash_config-only keys",
            order="dflash_config.attention_sink_bias, output_multiplier, final_logit_softcapping",
            default="no sink; output_multiplier 1.0; no soft cap (a top-level copy is not read)",
            bad_type="sink: ValueError unless a bool; output_multiplier: float(), ValueError unless > 0",
            source=CHECKED + " sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config",
        ),
        Read(
            reader="SGLang",
            key="sample_from_anchor",
            order="not read by the DFlash worker or model: only is_nemotron_35_draft_config reads it, as one marker of "
            "the Nemotron-3.5 layout (false there, with has_embed_tokens, no lm_head and W4A16_NVFP4 weights); "
            "SGLang's DSpark drafters read it "
            "(sglang/srt/speculative/dspark_components/dspark_config.py:get_dspark_sample_from_anchor)",
            default="-",
            bad_type="-",
            source=CHECKED + " sglang/srt/speculative/dflash_utils.py:is_nemotron_35_draft_config",
        ),
        Read(
            reader="SGLang",
            key="attention_value_scale",
            order="dflash_config.attention_value_scale",
            default="none",
            bad_type="ValueError unless int/float (bool refused)",
            source=CHECKED + " sglang/srt/speculative/dflash_utils.py (parse_dflash_draft_config)",
        ),
        Read(
            reader="SGLang",
            key="is_neox_style",
            order="rope_is_neox_style -> is_neox_style (top level)",
            default="true",
            bad_type="bool()",
            source=CHECKED + " sglang/srt/models/dflash.py:DFlashAttention.__init__",
        ),
        Read(
            reader="SGLang",
            key="hidden_act",
            order="top level: silu, or swigluoai (which also needs swiglu_alpha and swiglu_limit)",
            default="silu",
            bad_type="ValueError 'Unsupported DFlash activation: ... Supported activations are silu and swigluoai.'",
            source=CHECKED + " sglang/srt/models/dflash.py:DFlashMLP.__init__",
        ),
        Read(
            reader="SGLang",
            key="intermediate_size",
            order="top level",
            default="0 -> ValueError",
            bad_type="int(); <= 0 ValueError",
            source=UNCHECKED + " sglang/srt/models/dflash.py:DFlashMLP.__init__ as installed",
        ),
        Read(
            reader="SGLang",
            key="dflash2_keys",
            order="dflash_config.conv_kernel_size/conv_group_size, selector_rank/selector_top_k; DFlashDraftModel "
            "builds the convolution from the conv keys, only DFlash2DraftModel adds the selector (vLLM's v1 "
            "DFlashDraftModel reads none of them)",
            default="0 (off)",
            bad_type="ValueError unless ints >= 0; each pair set together",
            source=CHECKED + " sglang/srt/models/dflash.py:DFlashDraftModel.__init__.grouped_conv, "
            "sglang/srt/models/dflash.py:DFlash2DraftModel.__init__",
        ),
        Read(
            reader="SGLang",
            key="hidden_size",
            order="top level: every draft layer, and fc = len(taps) x hidden_size -> hidden_size (target_hidden_size "
            "is not read); the target's embeddings are fed in",
            default="-",
            bad_type="int()",
            source=CHECKED + " sglang/srt/models/dflash.py:DFlashDraftModel.__init__",
        ),
        Read(
            reader="SGLang",
            key="checkpoint tensors",
            order="load_weights maps each tensor name onto the model the config built (q/k/v_proj -> qkv_proj, "
            "gate/up_proj -> gate_up_proj)",
            default="-",
            bad_type="fc.weight of another shape: ValueError 'DFLASH fc.weight shape mismatch'; any other tensor of "
            "another shape: default_weight_loader's assertion; a tensor with no parameter (e.g. layers.N past "
            "num_hidden_layers) is skipped silently ('Ignore unexpected weights'), and nothing checks that "
            "every parameter was filled",
            source=unexecutable("weights") + " " + SGLANG_MODEL + " (load_weights); " + SGLANG_WEIGHTS,
        ),
        Read(
            reader="SGLang",
            key="num_attention_heads",
            order="top level, with num_key_value_heads: DFlashAttention asserts num_attention_heads % tp == 0, and "
            "num_key_value_heads % tp == 0 (or tp % num_key_value_heads == 0 when fewer)",
            default="-",
            bad_type="AssertionError at start-up for a tensor-parallel size that does not divide them",
            source=unexecutable("a tensor-parallel size above 1 needs several devices")
            + " "
            + SGLANG_MODEL
            + " (DFlashAttention)",
        ),
        Read(
            reader="SGLang",
            key="pp_size",
            order="the launch's --pp-size (alias --pipeline-parallel-size), not the file: DFLASH refuses any value "
            "but 1 when it is set up",
            default="-",
            bad_type="-",
            source=CHECKED + " sglang/srt/arg_groups/speculative_hook.py:_handle_dflash (its pp_size check; run by "
            "tests/engines/test_launch_checks.py)",
        ),
        Read(
            reader="SGLang",
            key="attn_dp_size",
            order="the launch's --attn-dp-size, else the deprecated --dp-size with --enable-dp-attention "
            "(handle_deprecated_dp_attention), not the file: above 1, DFLASH requires --enable-dp-lm-head, "
            "--attn-cp-size 1 and SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION off",
            default="-",
            bad_type="-",
            source=CHECKED + " sglang/srt/arg_groups/speculative_hook.py:_handle_dflash (its dp attention checks), "
            "sglang/srt/arg_groups/parallel_hook.py:handle_deprecated_dp_attention (run by "
            "tests/engines/test_launch_checks.py)",
        ),
        # --- transformers: how both engines get config.json (AutoConfig) ---
        Read(
            reader="transformers",
            key="config.json",
            order="the whole file: open(path, encoding='utf-8').read(), then json.loads; AutoConfig then picks the "
            "class registered for the object's model_type",
            default="OSError: no configuration file",
            bad_type="invalid JSON, an empty or cut-off file, a UTF-8 byte-order mark ('Unexpected UTF-8 BOM') or "
            "bytes that are not UTF-8: OSError 'not a valid JSON file'; a top level that is not an object "
            "has no model_type: AutoConfig raises ValueError",
            source=TRANSFORMERS_CHECKED + " transformers/configuration_utils.py:PreTrainedConfig._get_config_dict, "
            "transformers/configuration_utils.py:PreTrainedConfig._dict_from_json_file",
        ),
        Read(
            reader="transformers",
            key="config.json duplicate keys",
            order="json.loads keeps the last value of a key repeated in one object, without a word",
            default="-",
            bad_type="-",
            source=TRANSFORMERS_CHECKED
            + " transformers/configuration_utils.py:PreTrainedConfig._dict_from_json_file; Python's json",
        ),
        Read(
            reader="transformers",
            key="config.json numbers",
            order="json.loads accepts NaN, Infinity and -Infinity (not JSON) as floats, and a literal too large for "
            "a float (1e400) becomes inf; _decode_special_floats passes them on",
            default="-",
            bad_type="-",
            source=TRANSFORMERS_CHECKED
            + " transformers/configuration_utils.py:PreTrainedConfig._decode_special_floats; Python's json",
        ),
        Read(
            reader="transformers",
            key="layer_types",
            order="top level; the legacy name 'attention' is renamed 'full_attention' (_LEGACY_LAYER_TYPE_REMAP), "
            "then validate_layer_type checks it; engines read the list the class keeps",
            default="derived by the config class (Qwen3Config: from sliding_window and max_window_layers)",
            bad_type="an entry outside the allowed attention types, or a length other than num_hidden_layers: "
            "a validation error (DF301 shows what the installed version does)",
            source=TRANSFORMERS_CHECKED + " transformers/configuration_utils.py:_LEGACY_LAYER_TYPE_REMAP, "
            "transformers/configuration_utils.py:remap_legacy_layer_types, "
            "transformers/configuration_utils.py:PreTrainedConfig.validate_layer_type",
        ),
        Read(
            reader="transformers",
            key="config class",
            order="AutoConfig builds the class registered for model_type and the engines read its attributes: "
            "Qwen3Config.__post_init__ sets sliding_window to None unless use_sliding_window is true, "
            "num_key_value_heads null to num_attention_heads (absent: the class default), and derives layer_types when "
            "absent",
            default="the class defaults (Qwen3Config: hidden_size 4096, num_key_value_heads 32, head_dim 128)",
            bad_type="transformers type-checks fields ('head_dim' expected int, got str) and raises",
            source=TRANSFORMERS_CHECKED + " transformers/models/qwen3/configuration_qwen3.py:Qwen3Config.__post_init__",
        ),
        # --- vLLM's speculators translator ---
        Read(
            reader="speculators",
            key="aux_hidden_state_layer_ids",
            order="top level; becomes eagle_aux_hidden_state_layer_ids "
            "as is and dflash_config.target_layer_ids = each id - 1",
            default="KeyError (update_dflash): vLLM refuses the file, served or through --speculative-config",
            bad_type="arithmetic on each element, TypeError",
            source=CHECKED + " vllm/transformers_utils/configs/speculators/algos.py:update_dflash",
        ),
        Read(
            reader="speculators",
            key="mask_token_id",
            order="top level; becomes dflash_config.mask_token_id",
            default="KeyError (update_dflash): vLLM refuses the file, served or through --speculative-config",
            bad_type="used as a token id",
            source=CHECKED + " vllm/transformers_utils/configs/speculators/algos.py:update_dflash",
        ),
        Read(
            reader="speculators",
            key="sample_from_anchor",
            order="top level; becomes dflash_config.sample_from_anchor (false when absent), which vLLM's DFlash "
            "speculator reads",
            default="false",
            bad_type="a truthy value: vLLM refuses the file at start-up (see vLLM's sample_from_anchor)",
            source=CHECKED + " vllm/transformers_utils/configs/speculators/algos.py:update_dflash",
        ),
        Read(
            reader="speculators",
            key="transformer_layer_config",
            order="the base of the translated config (every decoder key)",
            default="`vllm serve <dir>`: ValueError 'Must provide transformer_layer_config' "
            "(validate_speculators_config); --speculative-config accepts the file without it",
            bad_type="TypeError unless an object",
            source=CHECKED
            + " vllm/transformers_utils/configs/speculators/base.py:SpeculatorsConfig.validate_speculators_config",
        ),
        Read(
            reader="speculators",
            key="speculators_config",
            order="speculators_config.proposal_methods[0].speculative_tokens and verifier.name_or_path",
            default="`vllm serve <dir>`: ValueError 'Invalid speculators config structure' "
            "(validate_speculators_config); --speculative-config accepts the file without it",
            bad_type="ValueError 'Invalid speculators config structure'",
            source=CHECKED
            + " vllm/transformers_utils/configs/speculators/base.py:SpeculatorsConfig.validate_speculators_config",
        ),
        Read(
            reader="speculators",
            key="sliding_window",
            order="transformer_layer_config's layer_types, use_sliding_window, sliding_window and max_window_layers; "
            "top-level copies are not passed through (update_dflash copies only the DFlash fields)",
            default="transformer_layer_config's values",
            bad_type="as in the DFlash model",
            source=CHECKED + " vllm/transformers_utils/configs/speculators/algos.py:update_dflash",
        ),
        Read(
            reader="speculators",
            key="block_size",
            order="not read by vLLM (speculative_tokens and the launch decide); the speculators library's field, "
            "default 8",
            default="8 (speculators library)",
            bad_type="pydantic ValidationError",
            source=UNCHECKED + " " + SPECULATORS_CONFIG,
        ),
    )
}

# Architectures an engine registers for a DFlash drafter (an architecture no engine registers is refused).
# Checked by running both engines on each (tests/engines/test_truth.py): vLLM registers DFlash2BeamDraftModel too,
# but its beam drafter refuses a DFlash2 file without final_logit_softcapping, so only SGLang builds it.
# XPress: a DFlash drafter with a refiner head, served under method dflash (vLLM's EAGLEConfig rewrites the
# architecture to DFlash{arch}, so both names are registered:
# vllm/config/speculative.py:XPRESS_ARCHITECTURES@0.33.0); the pinned SGLang has no XPress model.
XPRESS_ARCHITECTURES = ("Qwen3XPressModel", "DFlashQwen3XPressModel")

REGISTERED_ARCHITECTURES: dict[str, tuple[Reader, ...]] = {
    "DFlashDraftModel": ("vLLM", "SGLang"),
    "DFlash2DraftModel": ("vLLM", "SGLang"),
    "DFlashLagunaForCausalLM": ("vLLM", "SGLang"),
    "MuseGlimmerAssistantModel": ("vLLM", "SGLang"),
    "DFlash2BeamDraftModel": ("SGLang",),
    "MiniMaxDFlash2DraftModel": ("SGLang",),
    **{name: ("vLLM",) for name in XPRESS_ARCHITECTURES},
}


def reads(*keys: str) -> tuple[Read, ...]:
    """The reads of these keys, every engine, in catalogue order."""
    return tuple(r for r in READS.values() if r.key in keys)


NOT_APPLICABLE = "-"  # a field that does not apply to the row (a launch option has no "absent" in the file)


def describe(read: Read) -> str:
    """One read as a paragraph of a rule's documentation; fields that do not apply are left out."""
    parts = [f"{read.reader} reads {read.key}: {read.order}."]
    if read.default != NOT_APPLICABLE:
        parts.append(f"Absent: {read.default}.")
    if read.bad_type != NOT_APPLICABLE:
        parts.append(f"Wrong type or value: {read.bad_type}.")
    parts.append(f"Source: {with_lines(read.source, LINES, VERSIONS)}.")
    return expand(" ".join(parts))

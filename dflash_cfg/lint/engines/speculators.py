"""The speculators rows of the engine reads (lint.engines.READS): how vLLM's speculators translator reads a file in
the speculators format."""

from __future__ import annotations

from dflash_cfg.lint.engines.read import CHECKED, UNCHECKED, Read

# The code read: a commit where the stored-code index gives one, else its snapshot id (lint.engines).
SPECULATORS_TRANSLATOR = (
    "vllm-project/vllm vllm/transformers_utils/configs/speculators/algos.py (update_dflash, post-#40727; "
    "index snapshot 70479728584) and base.py (SpeculatorsConfig.extract_transformers_pre_trained_config)"
)
SPECULATORS_CODE = "vllm-project/speculators src/speculators/models/dflash/config.py @c05b95b3"


AUX_HIDDEN_STATE_LAYER_IDS = Read(
    reader="speculators",
    key="aux_hidden_state_layer_ids",
    order="top level; becomes eagle_aux_hidden_state_layer_ids as is and dflash_config.target_layer_ids = each id - 1",
    default="KeyError (update_dflash): vLLM refuses the file, served or through --speculative-config",
    bad_type="arithmetic on each element, TypeError",
    source=CHECKED + " vllm/transformers_utils/configs/speculators/algos.py:update_dflash",
)

MASK_TOKEN_ID = Read(
    reader="speculators",
    key="mask_token_id",
    order="top level; becomes dflash_config.mask_token_id",
    default="KeyError (update_dflash): vLLM refuses the file, served or through --speculative-config",
    bad_type="used as a token id",
    source=CHECKED + " vllm/transformers_utils/configs/speculators/algos.py:update_dflash",
)

SAMPLE_FROM_ANCHOR = Read(
    reader="speculators",
    key="sample_from_anchor",
    order="top level; becomes dflash_config.sample_from_anchor (false when absent), which vLLM's DFlash "
    "speculator reads",
    default="false",
    bad_type="a truthy value: vLLM refuses the file at start-up (see vLLM's sample_from_anchor)",
    source=CHECKED + " vllm/transformers_utils/configs/speculators/algos.py:update_dflash",
)

TRANSFORMER_LAYER_CONFIG = Read(
    reader="speculators",
    key="transformer_layer_config",
    order="the base of the translated config (every decoder key)",
    default="`vllm serve <dir>`: ValueError 'Must provide transformer_layer_config' "
    "(validate_speculators_config); --speculative-config accepts the file without it",
    bad_type="TypeError unless an object",
    source=CHECKED
    + " vllm/transformers_utils/configs/speculators/base.py:SpeculatorsConfig.validate_speculators_config",
)

SPECULATORS_CONFIG = Read(
    reader="speculators",
    key="speculators_config",
    order="speculators_config.proposal_methods[0].speculative_tokens and verifier.name_or_path",
    default="`vllm serve <dir>`: ValueError 'Invalid speculators config structure' "
    "(validate_speculators_config); --speculative-config accepts the file without it",
    bad_type="ValueError 'Invalid speculators config structure'",
    source=CHECKED
    + " vllm/transformers_utils/configs/speculators/base.py:SpeculatorsConfig.validate_speculators_config",
)

SLIDING_WINDOW = Read(
    reader="speculators",
    key="sliding_window",
    order="transformer_layer_config's layer_types, use_sliding_window, sliding_window and max_window_layers; "
    "top-level copies are not passed through (update_dflash copies only the DFlash fields)",
    default="transformer_layer_config's values",
    bad_type="as in the DFlash model",
    source=CHECKED + " vllm/transformers_utils/configs/speculators/algos.py:update_dflash",
)

BLOCK_SIZE = Read(
    reader="speculators",
    key="block_size",
    order="not read by vLLM (speculative_tokens and the launch decide); the speculators library's field, default 8",
    default="8 (speculators library)",
    bad_type="pydantic ValidationError",
    source=UNCHECKED + " " + SPECULATORS_CODE,
)

SLIDING_WINDOW_NON_CAUSAL = Read(
    reader="speculators",
    key="sliding_window_non_causal",
    order="top level; becomes dflash_config.causal = not sliding_window_non_causal, which vLLM applies to every "
    "layer; the speculators library's own default (the trained model's when the file omits it) is false for a "
    "dflash file (speculators/models/dflash/config.py) and true for dflash2",
    default="true in vLLM's translation: every layer non-causal",
    bad_type="not negated as a bool: any truthy value is non-causal",
    source=CHECKED + " vllm/transformers_utils/configs/speculators/algos.py:update_dflash",
)

ROWS: tuple[Read, ...] = (
    SLIDING_WINDOW_NON_CAUSAL,
    AUX_HIDDEN_STATE_LAYER_IDS,
    MASK_TOKEN_ID,
    SAMPLE_FROM_ANCHOR,
    TRANSFORMER_LAYER_CONFIG,
    SPECULATORS_CONFIG,
    SLIDING_WINDOW,
    BLOCK_SIZE,
)

"""transformers' rows of the engine reads (lint.engines.READS): how both engines get config.json (`AutoConfig`), in
the release pinned with them."""

from __future__ import annotations

from dflash_cfg.lint.engines.read import TRANSFORMERS_CHECKED, Read

# The code read: a commit where the stored-code index gives one, else its snapshot id (lint.engines).
TRANSFORMERS_CONFIG = (
    "huggingface/transformers src/transformers/configuration_utils.py, v5.24.0 as installed "
    "(PretrainedConfig._dict_from_json_file and _get_config_dict, validate_layer_type, "
    "_LEGACY_LAYER_TYPE_REMAP) and models/auto/configuration_auto.py (AutoConfig.from_pretrained)"
)
TRANSFORMERS_QWEN3 = (
    "huggingface/transformers src/transformers/models/qwen3/configuration_qwen3.py, v5.24.0 as installed "
    "(Qwen3Config.__post_init__)"
)


CONFIG_JSON = Read(
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
)

CONFIG_JSON_DUPLICATE_KEYS = Read(
    reader="transformers",
    key="config.json duplicate keys",
    order="json.loads keeps the last value of a key repeated in one object, without a word",
    default="-",
    bad_type="-",
    source=TRANSFORMERS_CHECKED
    + " transformers/configuration_utils.py:PreTrainedConfig._dict_from_json_file; Python's json",
)

CONFIG_JSON_NUMBERS = Read(
    reader="transformers",
    key="config.json numbers",
    order="json.loads accepts NaN, Infinity and -Infinity (not JSON) as floats, and a literal too large for "
    "a float (1e400) becomes inf; _decode_special_floats passes them on",
    default="-",
    bad_type="-",
    source=TRANSFORMERS_CHECKED
    + " transformers/configuration_utils.py:PreTrainedConfig._decode_special_floats; Python's json",
)

LAYER_TYPES = Read(
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
)

CONFIG_CLASS = Read(
    reader="transformers",
    key="config class",
    order="AutoConfig builds the class registered for model_type and the engines read its attributes: "
    "Qwen3Config.__post_init__ sets sliding_window to None unless use_sliding_window is true, "
    "num_key_value_heads null to num_attention_heads (absent: the class default), and derives layer_types when "
    "absent",
    default="the class defaults (Qwen3Config: hidden_size 4096, num_key_value_heads 32, head_dim 128)",
    bad_type="transformers type-checks fields ('head_dim' expected int, got str) and raises",
    source=TRANSFORMERS_CHECKED + " transformers/models/qwen3/configuration_qwen3.py:Qwen3Config.__post_init__",
)

ROWS: tuple[Read, ...] = (
    CONFIG_JSON,
    CONFIG_JSON_DUPLICATE_KEYS,
    CONFIG_JSON_NUMBERS,
    LAYER_TYPES,
    CONFIG_CLASS,
)

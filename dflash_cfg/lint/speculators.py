"""vLLM's translation of a speculators-format DFlash config into the dict its DFlash model reads. Pure.

A speculators file (``speculators_model_type: "dflash"``, from vllm-project/speculators) keeps the decoder in
``transformer_layer_config`` and the DFlash fields at the top level, with ``aux_hidden_state_layer_ids`` in
EAGLE semantics (the z-lab tap + 1). vLLM never reads it as written: ``SpeculatorsConfig`` copies
``transformer_layer_config`` and lets ``update_dflash`` add the DFlash keys
(engines.speculators.SPECULATORS_TRANSLATOR names the code). The rules lint that translated dict, and every finding
is pointed back into the file as written through the map `translate` returns; fixes are re-addressed to the file's
own keys.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from dflash_cfg.jsondoc.pointer import pointer

# Top-level decoder keys vLLM passes through from the file into the translated config: none in the pinned vLLM
# (update_dflash copies only draft_vocab_size, target_hidden_size, aux_hidden_state_layer_ids and mask_token_id;
# a top-level layer_types or sliding_window is ignored, transformer_layer_config's counts; checked by running it).
PASSED_THROUGH: tuple[str, ...] = ()


def is_speculators(data: Any) -> bool:
    """A speculators-format DFlash file: labelled dflash, or any label with ``speculators_config.algorithm``
    dflash (a mislabelled DFlash file is linted, DF161 reports the label, rather than skipped)."""
    if not isinstance(data, dict) or data.get("speculators_model_type") is None:
        return False
    spec = data.get("speculators_config")
    algorithm = spec.get("algorithm") if isinstance(spec, dict) else None
    return "dflash" in (data.get("speculators_model_type"), algorithm)


@dataclass(frozen=True)
class Translation:
    data: dict[str, Any]
    # translated pointer -> pointer into the file as written (for keys that came from the file)
    origin: dict[str, str]

    def to_file(self, where: str) -> str | None:
        """The file pointer a translated pointer comes from (the longest mapped prefix), or None."""
        probe = where
        while True:
            if probe in self.origin:
                return self.origin[probe] + where[len(probe) :]
            if not probe:
                return None
            probe = probe.rsplit("/", 1)[0]


def translate(data: dict[str, Any]) -> Translation:
    """What vLLM's ``update_dflash`` builds from a speculators-format dict (keys the file lacks stay absent,
    where vLLM would raise: the speculators rule reports those)."""
    layer = data.get("transformer_layer_config")
    base = layer if isinstance(layer, dict) else {}
    out: dict[str, Any] = copy.deepcopy(base)
    origin: dict[str, str] = {pointer(k): pointer("transformer_layer_config", k) for k in base}
    out["architectures"] = ["DFlashDraftModel"]
    origin["/architectures"] = "/speculators_model_type"
    if "draft_vocab_size" in data:
        out["draft_vocab_size"] = data["draft_vocab_size"]
        origin["/draft_vocab_size"] = "/draft_vocab_size"
    if data.get("target_hidden_size") is not None:
        out["target_hidden_size"] = data["target_hidden_size"]
        origin["/target_hidden_size"] = "/target_hidden_size"
    for key in PASSED_THROUGH:
        if key in data:
            out[key] = copy.deepcopy(data[key])
            origin[pointer(key)] = pointer(key)
    block: dict[str, Any] = {}
    origin["/dflash_config"] = ""
    aux = data.get("aux_hidden_state_layer_ids")
    if aux is not None:
        out["eagle_aux_hidden_state_layer_ids"] = copy.deepcopy(aux)
        origin["/eagle_aux_hidden_state_layer_ids"] = "/aux_hidden_state_layer_ids"
        origin["/dflash_config/target_layer_ids"] = "/aux_hidden_state_layer_ids"
        if isinstance(aux, list) and all(isinstance(a, int) and not isinstance(a, bool) for a in aux):
            block["target_layer_ids"] = [a - 1 for a in aux]  # #40727: speculators ids are the tap + 1
        else:
            block["target_layer_ids"] = copy.deepcopy(aux)
    if "mask_token_id" in data:
        block["mask_token_id"] = data["mask_token_id"]
        origin["/dflash_config/mask_token_id"] = "/mask_token_id"
    if "sample_from_anchor" in data:  # update_dflash writes it (false when absent) where the speculator reads it
        block["sample_from_anchor"] = data["sample_from_anchor"]
        origin["/dflash_config/sample_from_anchor"] = "/sample_from_anchor"
    # vLLM does not read block_size (the launch's num_speculative_tokens decides); the rules see the file's
    # value in both places, so they check it without asking for a dflash_config the format does not have.
    if "block_size" in data:
        block["block_size"] = data["block_size"]
        out["block_size"] = data["block_size"]
        origin["/dflash_config/block_size"] = "/block_size"
        origin["/block_size"] = "/block_size"
    out["dflash_config"] = block
    return Translation(out, origin)

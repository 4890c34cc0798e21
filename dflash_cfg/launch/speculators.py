"""`vllm serve SPEC_DIR`: a speculators-format drafter served as the model, read as vLLM reads it.

vLLM opens the served model's config before anything else (EngineArgs.create_engine_config ->
vllm/transformers_utils/config.py:maybe_override_with_speculators). When it has a
`speculators_config`, the launch is rewritten: the drafter becomes the served model, the target becomes
the verifier the file names, the method is the file's `speculators_model_type` (`dflash2` drafts as
`dflash`), and a `--speculative-config` given on the command line only adds keys (its `model` and
`method` are overwritten). The drafts per step stay the launch's if it sets them, else vLLM takes the
file's `speculative_tokens` (DF805 checks those). No argv shows any of this, so preflight reads the served
model's config.json and hands it here.

vLLM refuses such a launch when the file's structure is incomplete
(vllm/transformers_utils/configs/speculators/base.py:SpeculatorsConfig.validate_speculators_config) or when the
verifier is not a Hub repo id, or names a path that exists (maybe_override_with_speculators: "Select local
verifiers explicitly with --model and --speculative-config"); so does this.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from dflash_cfg.errors import LaunchError
from dflash_cfg.model import Launch

# huggingface_hub.utils.validate_repo_id, which vLLM calls on the verifier.
_REPO_ID = re.compile(r"(\b[\w\-.]{1,96}\b/)?\b[\w\-.]{1,96}\b")


def served_speculators(launch: Launch, config: Any, exists: Callable[[str], bool]) -> Launch:
    """The launch vLLM runs when its served model's config.json (`config`, parsed) is in the speculators
    format; otherwise the launch unchanged. `exists(path)`: whether a path exists where the engine runs."""
    if launch.engine != "vllm" or not isinstance(config, dict) or config.get("speculators_config") is None:
        return launch
    where = f"{launch.target}: a speculators-format model"
    spec = config["speculators_config"]
    try:
        first = spec["proposal_methods"][0]
        first["speculative_tokens"]
        verifier = spec["verifier"]["name_or_path"]
        config["speculators_model_type"]
    except (KeyError, IndexError, TypeError):
        raise LaunchError(
            f"{where} whose speculators_config lacks proposal_methods[0].speculative_tokens, verifier.name_or_path"
            " or speculators_model_type; vLLM refuses it ('Invalid speculators config structure')"
        ) from None
    if not isinstance(config.get("transformer_layer_config"), dict):
        raise LaunchError(f"{where} without a transformer_layer_config object; vLLM refuses it")
    if first.get("speculative_tokens") is None:
        raise LaunchError(f"{where} whose speculative_tokens is null; vLLM refuses it")
    if not _repo_id(verifier) or exists(verifier):
        raise LaunchError(
            f"{where} whose verifier {verifier!r} is not a Hub repo id (or is a path here); vLLM refuses it:"
            " serve the target with --speculative-config naming this drafter instead"
        )
    method = config["speculators_model_type"]
    method = {"dflash2": "dflash", "peagle": "eagle3"}.get(method, method) if isinstance(method, str) else method
    if not isinstance(method, str):
        raise LaunchError(f"{where} whose speculators_model_type is not a string")
    return replace(
        launch,
        target=verifier,
        drafter=launch.target,
        # SpeculativeConfig(revision=...) keeps a --speculative-config revision; the launch's --revision
        # stays the model's, now the verifier's.
        method=method,
    )


def _repo_id(name: Any) -> bool:
    return (
        isinstance(name, str)
        and name.count("/") <= 1
        and _REPO_ID.fullmatch(name) is not None
        and "--" not in name
        and ".." not in name
        and not name.endswith(".git")
    )

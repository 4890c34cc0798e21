"""The branches of the engines' DFlash-family code, and the drafters that turn each one on.

A branch is a function of an engine release and a condition under which it reads config keys: every conditional
read of dflash_cfg/lint/engine_source_keys.py (extracted from the source by tools/engines/source_keys.py), grouped by
(function, condition). A switch is an edit of a base drafter that makes an extracted condition true (each names the
condition text it turns on: `turns_on`, substrings of the extracted conditions, held to them by a test so that none
goes stale); for every switch the drafter as switched, then each key read inside the branches it turns on set to
another value, dropped, moved between the top level and dflash_config and retyped (engines.key_mutants' edits), is a
mutant. Pure and deterministic, like tests/engines/mutants.py; tools/engines/branches.py runs them through the engines
and reports which branches the runs reached.

A branch no run reaches is labelled from its source when the reason is known (`UNREACHABLE`: a GPU worker's code, a
forward pass or weight loading, another speculative method's path), each label with the engine code it cites."""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dflash_cfg.lint.engine_source_keys import KEYS
from engines import key_mutants
from engines.cases import load
from engines.mutants import BASES, Base

Config = dict[str, Any]
DC = "dflash_config"


@dataclass(frozen=True)
class Branch:
    engine: str
    release: str
    citation: str  # PATH:QUALNAME (tagged @RELEASE for a release other than the pinned one)
    condition: str  # innermost first, as engine_source_keys writes it
    pointers: tuple[str, ...]  # the keys read under it


def found(engine: str, release: str) -> list[Branch]:
    """Every branch of `engine` at `release` in the extracted source reads, in a fixed order."""
    grouped: dict[tuple[str, str], set[str]] = {}
    for pointer, reads in KEYS.get(engine, {}).get(release, {}).items():
        for citation, _default, condition in reads:
            if condition:
                grouped.setdefault((citation, condition), set()).add(pointer)
    return [Branch(engine, release, c, cond, tuple(sorted(p))) for (c, cond), p in sorted(grouped.items())]


@dataclass(frozen=True)
class Label:
    """Why no CPU run reaches a branch: `kind` "gpu" (code only a GPU worker runs) or "other" (not a DFlash
    drafter's path), matched by the branch's citation (a glob on PATH:QUALNAME, without the release tag) and, when
    given, a substring of its condition; `cites` is the engine code that says so."""

    kind: str
    citation: str
    reason: str
    cites: str
    condition: str = ""

    def matches(self, branch: Branch) -> bool:
        citation = branch.citation.split("@", 1)[0]
        return fnmatch.fnmatchcase(citation, self.citation) and self.condition in branch.condition


_WORKER = "the speculative worker's model runner, built only on a GPU host (the adapters build the configs and the "
_FORWARD = "a forward pass (it needs the draft's tensors on the device)"
UNREACHABLE: tuple[Label, ...] = (
    Label(
        "gpu",
        "vllm/v1/worker/gpu/spec_decode/*/utils.py:*",
        _WORKER + "draft model on the meta device)",
        "vllm/v1/worker/gpu/spec_decode/dflash/utils.py:load_dflash_model and "
        "vllm/v1/worker/gpu/spec_decode/dspark/utils.py:load_dspark_model (the GPU model runner's load_model)",
    ),
    Label(
        "other",
        "vllm/v1/worker/gpu/spec_decode/dspark/config.py:DSparkSpeculatorConfig.*",
        "a DSpark launch's own options (no draft model named, no num_speculative_tokens, dspark_draft_topk, the "
        "target's model type): configuration code that runs on CPU, on launch paths the branch suite's launches "
        "(the drafter and the token count given) do not take",
        "vllm/config/speculative.py:SpeculativeConfig.__post_init__ (default_model, apply_options)",
    ),
    Label(
        "gpu",
        "sglang/srt/speculative/*worker*",
        _WORKER + "draft model on the meta device)",
        "sglang/srt/speculative/dflash_worker_v2.py:DFlashWorkerV2.__init__ (TpModelWorker on the scheduler's GPU)",
    ),
    Label("gpu", "*.forward", _FORWARD, "the model's forward"),
    Label("gpu", "*._backbone_forward", _FORWARD, "speculators/models/dflash/core.py:DFlashDraftModel.forward"),
    Label("gpu", "*.compute_logits", _FORWARD, "vllm/model_executor/models/qwen3_dflash.py:DFlashQwen3ForCausalLM"),
    Label(
        "gpu",
        "*.project_target_hidden",
        _FORWARD + ": the target's hidden states",
        "sglang/srt/models/dflash.py:DFlashDraftModel.project_target_hidden",
    ),
    Label(
        "gpu",
        "*.load_weights",
        "weight loading (the adapters load no weights)",
        "sglang/srt/models/dflash.py:DFlashDraftModel.load_weights",
    ),
    Label(
        "gpu",
        "sglang/srt/models/deepseek_v4_dspark.py:*",
        "DeepSeek-V4's DSpark draft: its stages are built with the CUDA platform's kernels and multi-stream set-up",
        "sglang/srt/models/deepseek_v4_dspark.py:DeepseekV4ForCausalLMDSpark.__init__ (get_platform().is_blackwell, "
        "torch.version.cuda)",
    ),
    Label(
        "gpu",
        "sglang/srt/models/*dspark*.py:*confidence_head*",
        "the ragged verify mode is the GPU worker's (read_ragged_verify_mode, set by the DSpark worker)",
        "sglang/srt/models/dspark.py:build_confidence_head",
        condition="read_ragged_verify_mode()",
    ),
    Label(
        "other",
        "vllm/config/speculative.py:SpeculativeConfig.*",
        "another speculative method (MTP and the targets' own draft heads) or another model's config",
        "vllm/config/speculative.py:SpeculativeConfig.hf_config_override",
    ),
    Label(
        "other",
        "vllm/config/speculative.py:_validate_qwen3_omni_dspark",
        "a DSpark drafter of a Qwen3-Omni target (the fixtures hold no such target)",
        "vllm/config/speculative.py:_validate_qwen3_omni_dspark",
    ),
    Label(
        "other",
        "speculators/models/*",
        "speculators' training model, which no engine builds: the adapter reads the config "
        "(SpeculatorModelConfig.from_pretrained), vLLM translates it (DF161)",
        "speculators/models/dflash/core.py:DFlashDraftModel.__init__",
    ),
    Label(
        "other",
        "vllm/model_executor/models/gemma4_dspark.py:*",
        "a Gemma 4 DSpark drafter, whose config is Gemma 4's per-layer text config (the fixtures hold none)",
        "vllm/model_executor/models/gemma4_dspark.py:Gemma4DSparkAttention.__init__ (config.per_layer_config)",
    ),
    Label(
        "other",
        "sglang/srt/speculative/dflash_utils.py:_get_dflash_config",
        "a config passed as a plain dict, which the engine's callers never do (they pass the loaded config)",
        "sglang/srt/speculative/dflash_utils.py:parse_dflash_draft_config (draft_hf_config=model_config.hf_config)",
        condition="isinstance(config, dict)",
    ),
    Label(
        "other",
        "vllm/model_executor/models/laguna_dflash.py:_get_dflash_layer_types",
        "a layer_types of another length than num_hidden_layers, which the config class refuses before (DF201)",
        "transformers LagunaConfig validate_architecture (the laguna-types-short switch shows it)",
        condition="len(layer_types) != config.num_hidden_layers",
    ),
    Label(
        "other",
        "vllm/model_executor/models/qwen3_dspark.py:Qwen3DSparkModel.__init__",
        "a Qwen3 DSpark model without draft_vocab_size, which the class that builds it always sets first",
        "vllm/model_executor/models/qwen3_dspark.py:Qwen3DSparkForCausalLM.__init__",
        condition="not getattr(config, 'draft_vocab_size', None)",
    ),
    Label(
        "other",
        "vllm/config/speculative.py:_get_attention_head_dim",
        "a config without head_dim, which the config class always fills (Qwen3Config's default)",
        "vllm/config/speculative.py:_get_attention_head_dim",
        condition="head_dim is None",
    ),
    Label(
        "other",
        "*:_get_text_config",
        "a composite config (text_config), which no DFlash drafter has",
        "sglang/srt/speculative/dflash_utils.py:_get_text_config",
    ),
)


def label(branch: Branch) -> Label | None:
    return next((lab for lab in UNREACHABLE if lab.matches(branch)), None)


@dataclass(frozen=True)
class Switch:
    """An edit of a base that turns branches on: the conditions it makes true (substrings of extracted ones)."""

    name: str
    description: str
    turns_on: tuple[str, ...]
    bases: tuple[str, ...]
    edit: Callable[[Config], bool]
    method: str = "dflash"  # the speculative method vLLM is launched with


def _nemotron(sink: bool) -> Callable[[Config], bool]:
    def edit(d: Config) -> bool:
        taps = (d.get(DC) or {}).get("target_layer_ids")
        if not isinstance(taps, list) or d.get("architectures") != ["DFlashDraftModel"]:
            return False
        d.update(
            has_embed_tokens=True,
            has_lm_head=False,
            quantization_config={"quant_algo": "W4A16_NVFP4"},
            eagle_aux_hidden_state_layer_ids=[t + 1 for t in taps],
        )
        d[DC]["sample_from_anchor"] = False
        if sink:
            d["attention_sink_bias"] = True
        return True

    return edit


def _nemotron_swa(d: Config) -> bool:
    # An explicit null: absent, the config class fills its default window and SGLang never falls back.
    if not _nemotron(False)(d) or not isinstance(d.get("sliding_window"), int):
        return False
    d[DC]["swa_window_size"], d["sliding_window"] = d["sliding_window"], None
    return True


def _put(**values: Any) -> Callable[[Config], bool]:
    def edit(d: Config) -> bool:
        d.update(copy.deepcopy(values))
        return True

    return edit


def _put_dc(**values: Any) -> Callable[[Config], bool]:
    def edit(d: Config) -> bool:
        if not isinstance(d.get(DC), dict):
            return False
        d[DC].update(copy.deepcopy(values))
        return True

    return edit


_DOMINO = {"projector_type": "domino", "shift_label": True, "pure_draft_prefix_len": 1, "gru_hidden_dim": 256}


def _domino(top: bool) -> Callable[[Config], bool]:
    def edit(d: Config) -> bool:
        width = d.get("hidden_size")
        if not isinstance(width, int) or not isinstance(d.get(DC), dict):
            return False
        (d if top else d[DC]).update({**_DOMINO, "emb_dim": width})
        return True

    return edit


def _dspark(arch: str, **extra: Any) -> Callable[[Config], bool]:
    def edit(d: Config) -> bool:
        if d.get("architectures") != ["DFlashDraftModel"]:
            return False
        d["architectures"] = [arch]
        d.update(copy.deepcopy(extra))
        return True

    return edit


def _drop_mask(d: Config) -> bool:
    if not isinstance(d.get(DC), dict) or "mask_token_id" not in d[DC]:
        return False
    del d[DC]["mask_token_id"]
    d[DC]["mask_token"] = "<|MASK|>"
    return True


def _smaller_vocab(d: Config) -> bool:
    vocab = d.get("vocab_size")
    if not isinstance(vocab, int):
        return False
    d["draft_vocab_size"] = vocab // 2
    return True


def _short_types(d: Config) -> bool:
    types = d.get("layer_types")
    if not isinstance(types, list) or len(types) < 2:
        return False
    d["layer_types"] = types[:-1]
    return True


def _drop(key: str) -> Callable[[Config], bool]:
    def edit(d: Config) -> bool:
        return d.pop(key, None) is not None

    return edit


_MARKOV = {
    "markov_rank": 64,
    "markov_head_type": "vanilla",
    "enable_confidence_head": True,
    "confidence_head_with_markov": True,
}
_NEMOTRON_ON = (
    "is_nemotron_35_draft_config(config)",
    "self.is_nemotron_35_draft",
    "{'DFlashDraftModel', 'Qwen3DSparkModel'}.intersection(architectures)",
    "bool(_cfg_get(config, 'has_embed_tokens', False))",
    "not bool(_cfg_get(config, 'has_lm_head', False))",
    "_cfg_get(quant_config, 'quant_algo', None) == 'W4A16_NVFP4'",
    "len(target_layer_ids) == len(aux_layer_ids)",
)
SWITCHES: tuple[Switch, ...] = (
    Switch(
        "nemotron-35",
        "SGLang's Nemotron 3.5 layout: has_embed_tokens, no lm_head, W4A16_NVFP4, eagle aux = taps + 1, "
        "dflash_config.sample_from_anchor false",
        _NEMOTRON_ON,
        ("qwen3-4b",),
        _nemotron(False),
    ),
    Switch(
        "nemotron-35-sink",
        "the Nemotron 3.5 layout with the top-level attention_sink_bias true",
        _NEMOTRON_ON,
        ("qwen3-4b",),
        _nemotron(True),
    ),
    Switch(
        "nemotron-35-swa",
        "the Nemotron 3.5 layout on sliding layers, its window only as dflash_config.swa_window_size",
        ("sliding_window is None and is_nemotron_35_draft_config(config)", "is_sliding"),
        ("gemma4-26b",),
        _nemotron_swa,
    ),
    Switch(
        "domino",
        "SGLang's Domino projector in dflash_config (projector_type, shift_label, pure_draft_prefix_len, "
        "gru_hidden_dim, emb_dim)",
        ("projector_type == 'domino'", "draft_config.is_domino"),
        ("qwen3-4b", "gemma4-26b"),
        _domino(False),
    ),
    Switch(
        "domino-top",
        "the Domino projector's keys at the top level",
        ("projector_type == 'domino'", "draft_config.is_domino"),
        ("qwen3-4b",),
        _domino(True),
    ),
    Switch(
        "dflash-causal",
        "dflash_config.causal true (vLLM's causality override for every layer)",
        ("is_causal is None",),
        ("qwen3-4b", "gemma4-26b"),
        _put_dc(causal=True),
    ),
    Switch(
        "dflash-non-causal",
        "dflash_config.causal false",
        ("is_causal is None",),
        ("gemma4-26b", "laguna"),
        _put_dc(causal=False),
    ),
    Switch("is-causal", "top-level is_causal true", ("is_causal is None",), ("qwen3-4b",), _put(is_causal=True)),
    Switch(
        "swigluoai",
        "hidden_act swigluoai with its swiglu_alpha and swiglu_limit",
        ("hidden_act == 'swigluoai'",),
        ("qwen3-4b",),
        _put(hidden_act="swigluoai", swiglu_alpha=1.702, swiglu_limit=7.0),
    ),
    Switch(
        "draft-vocab",
        "draft_vocab_size half the vocabulary",
        ("self.config.draft_vocab_size != target_vocab_size", "self.config.draft_vocab_size < self.target_vocab_size"),
        ("qwen3-4b", "laguna"),
        _smaller_vocab,
    ),
    Switch(
        "target-hidden",
        "target_hidden_size set",
        ("self.use_aux_hidden_state",),
        ("qwen3-4b",),
        lambda d: isinstance(d.get("hidden_size"), int) and _put(target_hidden_size=d["hidden_size"])(d),
    ),
    Switch(
        "mask-fallback",
        "no mask_token_id: dflash_config.mask_token only (SGLang resolves it with the tokenizer)",
        ("not (not isinstance(mask_token, str) or not mask_token)",),
        ("qwen3-4b",),
        _drop_mask,
    ),
    Switch(
        "layer-types-absent",
        "layer_types dropped (the engines' layer defaults)",
        ("override is None; is_causal is None",),
        ("gemma4-26b",),
        _drop("layer_types"),
    ),
    Switch(
        "dspark-qwen3",
        "architectures Qwen3DSparkModel with a Markov head and confidence head (vLLM launched with method dspark)",
        (
            "markov_rank > 0",
            "getattr(config, 'enable_confidence_head', False)",
            "markov_head_type == 'vanilla'",
            "dspark_config.require_markov()",
            "prefixed_markov_rank is None",
        ),
        ("qwen3-4b",),
        _dspark("Qwen3DSparkModel", **_MARKOV),
        method="dspark",
    ),
    Switch(
        "dspark-qwen3-as-dflash",
        "the Qwen3 DSpark drafter with its Markov head, launched with method dflash",
        (),
        ("qwen3-4b",),
        _dspark("Qwen3DSparkModel", **_MARKOV),
    ),
    Switch(
        "dspark-qwen3-bare",
        "architectures Qwen3DSparkModel without a Markov head",
        ("prefixed_markov_rank is None",),
        ("qwen3-4b",),
        _dspark("Qwen3DSparkModel"),
        method="dspark",
    ),
    Switch(
        "dspark-qwen3-draft-vocab",
        "the Qwen3 DSpark drafter with draft_vocab_size half the vocabulary",
        ("self.config.draft_vocab_size < self.target_vocab_size",),
        ("qwen3-4b",),
        lambda d: _dspark("Qwen3DSparkModel", **_MARKOV)(d) and _smaller_vocab(d),
        method="dspark",
    ),
    Switch(
        "dspark-gemma4",
        "architectures Gemma4DSparkModel with a Markov head (vLLM launched with method dspark): both engines stop in "
        "its build (a Gemma 4 per-layer text config is needed), past vLLM's configuration of it",
        ("initial_architecture == 'Gemma4DSparkModel'", "not getattr(config, 'dspark_target_layer_ids', None)"),
        ("gemma4-26b",),
        _dspark("Gemma4DSparkModel", model_type="gemma4_text", **_MARKOV),
        method="dspark",
    ),
    Switch(
        "nemotron-35-dspark",
        "the Nemotron 3.5 layout on a Qwen3 DSpark drafter with a vanilla Markov head",
        ("markov_head_type == 'vanilla'",),
        ("qwen3-4b",),
        lambda d: _nemotron(False)(d) and _dspark("Qwen3DSparkModel", **_MARKOV)(d),
        method="dspark",
    ),
    Switch(
        "laguna-types-short",
        "a Laguna drafter's layer_types one entry short (the config class refuses it first)",
        (),
        ("laguna",),
        _short_types,
    ),
    Switch(
        "speculators-non-causal-absent",
        "a speculators dflash file without sliding_window_non_causal (vLLM's translation defaults it)",
        (),
        ("dsv4-spec",),
        _drop("sliding_window_non_causal"),
    ),
    Switch(
        "speculators-non-causal",
        "a speculators dflash file with sliding_window_non_causal true",
        (),
        ("dsv4-spec",),
        _put(sliding_window_non_causal=True),
    ),
)
# Key edits per switched drafter: bounded, so that the runs stay minutes.
EDITS_PER_SWITCH = 16


@dataclass(frozen=True)
class Mutant:
    id: str  # branch/SWITCH[+EDIT]/BASE
    switch: Switch
    base: Base
    base_id: str  # the case it is held against: the fixture for a switched drafter, the switched one for an edit
    description: str
    data: Config


def inside(switch: Switch, branches: list[Branch]) -> tuple[str, ...]:
    """The top-level and dflash_config keys read in the branches the switch turns on."""
    pointers = {
        p
        for b in branches
        if any(t in b.condition for t in switch.turns_on)
        for p in b.pointers
        if p.count("/") == 1 or (p.startswith(f"/{DC}/") and p.count("/") == 2)
    }
    return tuple(sorted(pointers))


def every_branch() -> list[Branch]:
    return [
        b for engine, releases in sorted(KEYS.items()) for release in sorted(releases) for b in found(engine, release)
    ]


def generate() -> list[Mutant]:
    """Every switched drafter, then up to EDITS_PER_SWITCH key edits of it, in a fixed order."""
    branches = every_branch()
    by_name = {b.name: b for b in BASES}
    out: list[Mutant] = []
    for switch in SWITCHES:
        for name in switch.bases:
            base = by_name[name]
            original = load(base.rel)
            data = copy.deepcopy(original)
            if not switch.edit(data) or data == original:
                raise ValueError(f"switch {switch.name} does not apply to {name}")
            switched = f"branch/{switch.name}/{name}"
            out.append(Mutant(switched, switch, base, f"fixture/{base.rel}", switch.description, data))
            edits = list(_key_edits(inside(switch, branches), data))[:EDITS_PER_SWITCH]
            for kind, description, mutated in edits:
                out.append(
                    Mutant(
                        f"branch/{switch.name}+{kind}/{name}",
                        switch,
                        base,
                        switched,
                        f"{switch.description}; {description}",
                        mutated,
                    )
                )
    return out


def _key_edits(pointers: tuple[str, ...], data: Config) -> Iterator[tuple[str, str, Config]]:
    for pointer in pointers:
        for kind, description, edit in key_mutants.edits(pointer):
            mutated = copy.deepcopy(data)
            if edit(mutated) and mutated != data:
                yield kind, description, mutated


def by_id(mutants: list[Mutant]) -> Mapping[str, Mutant]:
    return {m.id: m for m in mutants}

"""The differential suite's mutants: seeded, deterministic edits of the fixture drafters that load cleanly in
vLLM and SGLang (and of the speculators-format fixture), each one the kind of defect a hand-edited or
mis-converted drafter config carries. Pure: `generate()` returns the same list on every call and machine.

A mutant's id is `family/kind/base`: the family is one of the issue's mutation classes, the kind names the exact
edit (the by-design and pending matchers glob on it), the base is the short name of the unmutated fixture."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from engines import key_mutants
from engines.cases import load

SEED = 20261201
# How many mutants the suite runs: every edit on at least one base, the rest sampled with the seed. A vLLM case
# costs ~1.5 s on 2 cores, so this bounds the differential at several minutes.
LIMIT = 540
Config = dict[str, Any]
S, F = "sliding_attention", "full_attention"


@dataclass(frozen=True)
class Base:
    name: str  # short, stable: the last part of every mutant id
    rel: str  # under fixtures/
    target: str | None  # under fixtures/targets/, or None (the adapters stand one in)
    speculators: bool = False


# The fixture drafters that both vLLM and SGLang load as they are (the partial copies lack model_type, the
# incident is stale), with their targets, and the speculators-format one (vLLM and speculators load it).
BASES: tuple[Base, ...] = (
    Base("qwen3-4b", "upstream/z-lab__Qwen3-4B-DFlash-b16/config.json", "Qwen__Qwen3-4B"),
    Base("qwen35-4b", "upstream/z-lab__Qwen3.5-4B-DFlash/config.json", None),
    Base("qwen36-27b", "upstream/z-lab__Qwen3.6-27B-DFlash/config.json", "Qwen__Qwen3.6-27B"),
    Base("mimo", "upstream/XiaomiMiMo__MiMo-V2.5-Pro-FP4-DFlash/dflash/config.json", "XiaomiMiMo__MiMo-V2.5-Pro"),
    Base("laguna", "upstream/poolside__Laguna-XS-2.1-DFlash/config.json", None),
    Base("glimmer2", "upstream/z-lab__Muse-Glimmer-30B-DFlash2/config.json", None),
    Base("qwen38-2", "upstream/z-lab__Qwen3.8-27B-DFlash2/config.json", None),
    Base("gemma4-26b", "upstream/z-lab__gemma-4-26B-A4B-it-DFlash/config.json", None),
    Base(
        "dsv4-spec",
        "upstream/RedHatAI__DeepSeek-V4-Flash-speculator.dflash/config.json",
        "deepseek-ai__DeepSeek-V4-Flash",
        speculators=True,
    ),
)


@dataclass(frozen=True)
class Mutant:
    id: str
    family: str
    kind: str
    base: Base
    description: str
    data: Config

    def to_json(self) -> str:
        return json.dumps(self.data, indent=2) + "\n"


DC = "dflash_config"
_MISSING = object()
# Keys SGLang or vLLM read inside dflash_config (or that a published drafter puts there), and top-level keys a
# converter may push into it: each moved to the other place, or added at the wrong one when the base lacks it.
_MOVABLE = (
    "mask_token_id",
    "target_layer_ids",
    "block_size",
    "num_target_layers",
    "attention_sink_bias",
    "output_multiplier",
    "final_logit_softcapping",
    "use_swa",
    "swa_window_size",
    "causal",
    "attention_value_scale",
    "sliding_window",
    "layer_types",
)
# A plausible non-default value for a key the base does not set, placed where the engines do not read it.
_PLANTED = {
    "attention_sink_bias": True,
    "output_multiplier": 0.25,
    "final_logit_softcapping": 30.0,
    "use_swa": True,
    "swa_window_size": 1024,
    "causal": True,
    "attention_value_scale": 0.5,
}
_RENAMES = {
    "target_layer_ids": ("target_layers_ids", "target_layer_id", "targetLayerIds"),
    "mask_token_id": ("mask_token", "mask_id", "mask_token_ids"),
    "sliding_window": ("slidingwindow", "sliding_window_size", "window_size"),
    "layer_types": ("layer_type", "layers_types"),
    "num_target_layers": ("num_target_layer", "target_num_layers"),
    "rope_theta": ("rope_base", "rotary_base"),
    "block_size": ("blocksize", "block_len"),
    "use_sliding_window": ("use_slidingwindow",),
    "rope_parameters": ("rope_params",),
}
_DROPS = (
    "layer_types",
    "num_target_layers",
    "use_sliding_window",
    "rope_theta",
    "rope_parameters",
    "rope_scaling",
    "sliding_window",
    "max_window_layers",
    "block_size",
    "is_causal",
    "head_dim",
    "tie_word_embeddings",
    "architectures",
    "model_type",
)


def _where(data: Config, key: str) -> Config | None:
    """The dict holding `key`: dflash_config first (the place the engines read the DFlash keys), else the top."""
    inner = data.get(DC)
    if isinstance(inner, dict) and key in inner:
        return inner
    return data if key in data else None


def _set_key(data: Config, key: str, value: Any) -> bool:
    holder = _where(data, key)
    if holder is None:
        return False
    holder[key] = value
    return True


def _taps(data: Config) -> list[int] | None:
    holder = _where(data, "target_layer_ids")
    taps = holder["target_layer_ids"] if holder else None
    return list(taps) if isinstance(taps, list) else None


def _theta(data: Config) -> Any:
    if "rope_theta" in data:
        return data["rope_theta"]
    params = data.get("rope_parameters")
    return params.get("rope_theta") if isinstance(params, dict) else None


Edit = tuple[str, str, Callable[[Config], bool]]  # kind, description, edit (False: does not apply to this base)


def _move_edits() -> Iterator[Edit]:
    for key in _MOVABLE:

        def to_top(d: Config, key: str = key) -> bool:
            inner = d.get(DC)
            if not isinstance(inner, dict) or key not in inner:
                return False
            d[key] = inner.pop(key)
            return True

        def to_dc(d: Config, key: str = key) -> bool:
            if key not in d or not isinstance(d.get(DC), dict):
                return False
            d[DC][key] = d.pop(key)
            return True

        yield f"{key}-to-top", f"{key} moved from dflash_config to the top level", to_top
        yield f"{key}-to-dflash_config", f"{key} moved from the top level into dflash_config", to_dc
        if key in _PLANTED:

            def plant_top(d: Config, key: str = key) -> bool:
                if _where(d, key) is not None:
                    return False
                d[key] = _PLANTED[key]
                return True

            yield f"{key}-planted-top", f"{key}={_PLANTED[key]!r} added at the top level only", plant_top


def _rename_edits() -> Iterator[Edit]:
    for key, wrongs in _RENAMES.items():
        for wrong in wrongs:

            def rename(d: Config, key: str = key, wrong: str = wrong) -> bool:
                holder = _where(d, key)
                if holder is None:
                    return False
                holder[wrong] = holder.pop(key)
                return True

            yield f"{key}-as-{wrong}", f"{key} renamed to {wrong}", rename


def _drop_edits() -> Iterator[Edit]:
    for key in _DROPS:

        def drop(d: Config, key: str = key) -> bool:
            holder = _where(d, key)
            if holder is None:
                return False
            del holder[key]
            return True

        yield key, f"{key} dropped", drop


def _retype(key: str, how: str) -> Callable[[Config], bool]:
    def edit(d: Config) -> bool:
        holder = _where(d, key)
        if holder is None:
            return False
        value = holder[key]
        if how == "float" and type(value) is int:
            holder[key] = float(value)
        elif how == "str" and type(value) in (int, float):
            holder[key] = str(value)
        elif how == "int" and type(value) is bool:
            holder[key] = int(value)
        elif how == "str" and type(value) is bool:
            holder[key] = str(value).lower()
        elif how == "liststr" and isinstance(value, list):
            holder[key] = str(tuple(value))
        elif how == "floats" and isinstance(value, list) and all(type(v) is int for v in value):
            holder[key] = [float(v) for v in value]
        else:
            return False
        return True

    return edit


_RETYPES = (
    ("block_size", ("float", "str")),
    ("num_target_layers", ("float", "str")),
    ("mask_token_id", ("float", "str")),
    ("sliding_window", ("float", "str")),
    ("rope_theta", ("str",)),
    ("num_hidden_layers", ("float",)),
    ("use_sliding_window", ("int", "str")),
    ("tie_word_embeddings", ("int",)),
    ("attention_sink_bias", ("int",)),
    ("use_swa", ("int",)),
    ("is_causal", ("int",)),
    ("causal", ("int",)),
    ("target_layer_ids", ("liststr", "floats")),
    ("layer_types", ("liststr",)),
)


def _type_edits() -> Iterator[Edit]:
    for key, hows in _RETYPES:
        for how in hows:
            yield f"{key}-{how}", f"{key} given as {how}", _retype(key, how)


def _tap_edits(rng: random.Random, siblings: list[list[int]]) -> Iterator[Edit]:
    def shift_all(delta: int) -> Callable[[Config], bool]:
        return lambda d: _set_key(d, "target_layer_ids", [t + delta for t in _taps(d) or []]) and bool(_taps(d))

    yield "shift-all+1", "every tap one layer deeper", shift_all(1)
    yield "shift-all-1", "every tap one layer shallower", shift_all(-1)
    for which in ("first", "last"):
        for delta in (1, -1):

            def shift_one(d: Config, which: str = which, delta: int = delta) -> bool:
                taps = _taps(d)
                if not taps:
                    return False
                taps[0 if which == "first" else -1] += delta
                return _set_key(d, "target_layer_ids", taps)

            yield f"shift-{which}{delta:+d}", f"the {which} tap moved by {delta:+d}", shift_one
    for n in range(2):
        pick = rng.randrange(1 << 30)

        def sibling(d: Config, pick: int = pick) -> bool:
            taps = _taps(d)
            others = [s for s in siblings if s != taps]
            return bool(taps) and _set_key(d, "target_layer_ids", others[pick % len(others)])

        yield f"sibling-{n}", "taps taken from another published drafter", sibling

    yield "duplicate", "the first tap repeated, the last one lost", _on_taps(lambda t: [t[0], *t[:-1]])
    yield "reversed", "taps in reverse order", _on_taps(lambda t: t[::-1])


def _on_taps(change: Callable[[list[int]], list[int]]) -> Callable[[Config], bool]:
    def edit(d: Config) -> bool:
        taps = _taps(d)
        return bool(taps) and _set_key(d, "target_layer_ids", change(taps))  # type: ignore[arg-type]

    return edit


def _rope_edits() -> Iterator[Edit]:
    def to_modern(d: Config) -> bool:
        if "rope_theta" not in d or "rope_parameters" in d:
            return False
        d["rope_parameters"] = {"rope_theta": d.pop("rope_theta"), "rope_type": "default"}
        d.pop("rope_scaling", None)
        return True

    def to_legacy(d: Config) -> bool:
        params = d.get("rope_parameters")
        if not isinstance(params, dict) or "rope_theta" not in params:
            return False
        d.pop("rope_parameters")
        d["rope_theta"] = params["rope_theta"]
        return True

    def both(factor: float) -> Callable[[Config], bool]:
        def edit(d: Config) -> bool:
            theta = _theta(d)
            if theta is None:
                return False
            d["rope_theta"] = theta * factor
            d["rope_parameters"] = {"rope_theta": theta, "rope_type": "default"}
            return True

        return edit

    def scaling(value: dict[str, Any]) -> Callable[[Config], bool]:
        def edit(d: Config) -> bool:
            if _theta(d) is None:
                return False
            if isinstance(d.get("rope_parameters"), dict):
                d["rope_parameters"] = {**d["rope_parameters"], **value}
            else:
                d["rope_scaling"] = dict(value)
            return True

        return edit

    yield "theta-to-rope_parameters", "legacy rope_theta respelled as rope_parameters", to_modern
    yield "rope_parameters-to-theta", "rope_parameters respelled as legacy rope_theta", to_legacy
    yield "both-agree", "rope_theta and rope_parameters both set, equal", both(1.0)
    yield "both-conflict", "rope_theta (x10) and rope_parameters.rope_theta disagree", both(10.0)
    yield "scaling-legacy-type", 'rope scaling with only the legacy "type"', scaling({"type": "linear", "factor": 2.0})
    yield (
        "scaling-modern-type",
        'rope scaling with only the modern "rope_type"',
        scaling({"rope_type": "linear", "factor": 2.0}),
    )
    yield (
        "scaling-type-conflict",
        "rope_type and type disagree",
        scaling({"rope_type": "yarn", "type": "linear", "factor": 4.0}),
    )
    yield (
        "scaling-yarn",
        "yarn scaling factor 4 added",
        scaling({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}),
    )
    yield "theta-x10", "RoPE theta multiplied by 10", lambda d: _set_rope_theta(d, 10.0)
    yield "theta-1e4", "RoPE theta set to 10000", lambda d: _set_rope_theta(d, None)


def _set_rope_theta(d: Config, factor: float | None) -> bool:
    theta = _theta(d)
    if theta is None:
        return False
    new = 10000 if factor is None else theta * factor
    if new == theta:
        return False
    if "rope_theta" in d:
        d["rope_theta"] = new
    else:
        d["rope_parameters"] = {**d["rope_parameters"], "rope_theta": new}
    return True


def _layer_edits(rng: random.Random) -> Iterator[Edit]:
    def types(d: Config) -> list[str] | None:
        holder = _where(d, "layer_types")
        value = holder["layer_types"] if holder else None
        return list(value) if isinstance(value, list) else None

    def put(d: Config, value: Any) -> bool:
        return _set_key(d, "layer_types", value)

    def flip(index: int) -> Callable[[Config], bool]:
        def edit(d: Config) -> bool:
            current = types(d)
            if not current or index >= len(current):
                return False
            current[index] = F if current[index] == S else S
            return put(d, current)

        return edit

    for index in (0, rng.randrange(1, 4), -1):
        yield f"flip-{index}", f"layer {index} switched between sliding and full", flip(index)

    def on_types(change: Callable[[list[str]], list[str]]) -> Callable[[Config], bool]:
        def edit(d: Config) -> bool:
            current = types(d)
            return current is not None and bool(current) and put(d, change(current))

        return edit

    yield "all-full", "every layer full attention", on_types(lambda t: [F] * len(t))
    yield "all-sliding", "every layer sliding attention", on_types(lambda t: [S] * len(t))
    yield "unknown", 'one layer "local_attention"', on_types(lambda t: ["local_attention", *t[1:]])
    yield "legacy-name", 'one layer "attention" (the legacy name)', on_types(lambda t: ["attention", *t[1:]])
    yield "short", "one entry fewer than layers", on_types(lambda t: t[:-1])
    yield "long", "one entry more than layers", on_types(lambda t: [*t, F])


def _window_edits() -> Iterator[Edit]:
    for name, value in (("0", 0), ("null", None), ("-1", -1), ("negative", -2048), ("1", 1), ("double", "x2")):

        def edit(d: Config, value: Any = value) -> bool:
            holder = _where(d, "sliding_window")
            if holder is None or holder["sliding_window"] is None:
                return False
            new = holder["sliding_window"] * 2 if value == "x2" else value
            holder["sliding_window"] = new
            return True

        yield name, f"sliding_window set to {value}", edit

    def swa(d: Config) -> bool:
        inner = d.get(DC)
        if not isinstance(inner, dict) or "swa_window_size" not in inner:
            return False
        inner["swa_window_size"] = inner["swa_window_size"] * 2
        return True

    yield "swa-disagrees", "dflash_config.swa_window_size doubled, sliding_window unchanged", swa


def _label_edits() -> Iterator[Edit]:
    swaps = (
        ("v1-to-v2", "architectures", ["DFlashDraftModel"], ["DFlash2DraftModel"]),
        ("v2-to-v1", "architectures", ["DFlash2DraftModel"], ["DFlashDraftModel"]),
        ("qwen3-to-llama", "model_type", "qwen3", "llama"),
        ("qwen3-to-qwen2", "model_type", "qwen3", "qwen2"),
        ("llama-to-qwen3", "model_type", "llama", "qwen3"),
        ("laguna-to-qwen3", "model_type", "laguna", "qwen3"),
    )
    for kind, key, old, new in swaps:

        def swap(d: Config, key: str = key, old: Any = old, new: Any = new) -> bool:
            if d.get(key) != old:
                return False
            d[key] = new
            return True

        yield kind, f"{key} {old} relabelled {new}", swap
    yield (
        "causal-lm",
        "architectures relabelled to the target's Qwen3ForCausalLM",
        lambda d: "architectures" in d and _put(d, "architectures", ["Qwen3ForCausalLM"]),
    )
    yield (
        "two-archs",
        "a second architecture appended",
        lambda d: isinstance(d.get("architectures"), list) and d["architectures"].append("Qwen3ForCausalLM") is None,
    )


def _layout_edits() -> Iterator[Edit]:
    # The DSpark query layout (the anchor position predicted too) declared on a DFlash drafter: vLLM's DFlash
    # speculator refuses it, SGLang's DFlash path does not read it.
    def sample_from_anchor(d: Config) -> bool:
        inner = d.get(DC)
        if not isinstance(inner, dict):
            return False
        inner["sample_from_anchor"] = True
        return True

    yield "sample-from-anchor", "dflash_config.sample_from_anchor true", sample_from_anchor


def _release_edits() -> Iterator[Edit]:
    # What one engine release reads and another does not (docs/releases/): vLLM 0.34 reads no_rope_layers on a
    # DFlash2DraftModel (the listed layer indices run without RoPE), vLLM 0.33 and SGLang do not.
    def nope(value: Callable[[int], Any], inner: bool = False) -> Callable[[Config], bool]:
        def edit(d: Config) -> bool:
            archs, layers = d.get("architectures"), d.get("num_hidden_layers")
            if not isinstance(archs, list) or not archs or archs[0] != "DFlash2DraftModel":
                return False
            if not isinstance(layers, int) or layers < 4:
                return False
            where = d.get(DC) if inner else d
            if not isinstance(where, dict):
                return False
            where["no_rope_layers"] = value(layers)
            return True

        return edit

    def on_dflash(d: Config) -> bool:
        archs = d.get("architectures")
        if not isinstance(archs, list) or not archs or "DFlash2" in str(archs[0]):
            return False
        d["no_rope_layers"] = [1]
        return True

    yield "nope-layers", "no_rope_layers [1, 3]", nope(lambda n: [1, 3])
    yield "nope-flags", "no_rope_layers as per-layer 0/1 flags", nope(lambda n: [1 - i % 2 for i in range(n)])
    yield "nope-true", "no_rope_layers true", nope(lambda n: True)
    yield "nope-empty", "no_rope_layers []", nope(lambda n: [])
    yield "nope-in-dflash-config", "dflash_config.no_rope_layers [1, 3]", nope(lambda n: [1, 3], inner=True)
    yield "nope-on-dflash", "no_rope_layers [1] on a DFlash (not DFlash2) drafter", on_dflash


def _put(d: Config, key: str, value: Any) -> bool:
    d[key] = value
    return True


def _speculators_edits() -> Iterator[Edit]:
    def at(path: str, value: Any) -> Callable[[Config], bool]:
        def edit(d: Config) -> bool:
            *parents, last = path.split(".")
            node: Any = d
            for part in parents:
                node = node[int(part)] if isinstance(node, list) else node.get(part)
                if node is None:
                    return False
            if isinstance(node, dict) and last in node:
                node[last] = value(node[last]) if callable(value) else value
                if value is _MISSING:
                    del node[last]
                return True
            return False

        return edit

    tl = "transformer_layer_config"
    tokens = "speculators_config.proposal_methods.0.speculative_tokens"
    yield (
        "aux-shift+1",
        "aux_hidden_state_layer_ids one layer deeper",
        at("aux_hidden_state_layer_ids", lambda v: [x + 1 for x in v]),
    )
    yield (
        "aux-shift-1",
        "aux_hidden_state_layer_ids one layer shallower",
        at("aux_hidden_state_layer_ids", lambda v: [x - 1 for x in v]),
    )
    yield "aux-drop", "aux_hidden_state_layer_ids dropped", at("aux_hidden_state_layer_ids", _MISSING)
    yield "mask-changed", "mask_token_id 1 -> 2", at("mask_token_id", 2)
    yield "mask-drop", "mask_token_id dropped", at("mask_token_id", _MISSING)
    yield "tokens-3", "speculative_tokens 7 -> 3", at(tokens, 3)
    yield "tokens-drop", "speculative_tokens dropped", at(tokens, _MISSING)
    yield "tokens-str", 'speculative_tokens given as "7"', at(tokens, "7")
    yield "verifier-drop", "verifier.name_or_path dropped", at("speculators_config.verifier.name_or_path", _MISSING)
    yield (
        "algorithm-eagle3",
        "speculators_config.algorithm dflash -> eagle3",
        at("speculators_config.algorithm", "eagle3"),
    )
    yield "model-type-eagle3", "speculators_model_type dflash -> eagle3", at("speculators_model_type", "eagle3")
    yield "block-size-16", "block_size 8 -> 16", at("block_size", 16)
    yield "non-causal", "sliding_window_non_causal false -> true", at("sliding_window_non_causal", True)
    yield "layer-config-drop", "transformer_layer_config dropped", at(tl, _MISSING)
    yield "layer-window-0", "transformer_layer_config.sliding_window 0", at(f"{tl}.sliding_window", 0)
    yield "layer-window-x2", "transformer_layer_config.sliding_window doubled", at(f"{tl}.sliding_window", 4096)
    yield "layer-window-null", "transformer_layer_config.sliding_window null", at(f"{tl}.sliding_window", None)
    yield "layer-types-full", "transformer_layer_config.layer_types all full", at(f"{tl}.layer_types", [F] * 5)
    yield "layer-types-flip", "transformer_layer_config.layer_types last full", at(f"{tl}.layer_types", [S] * 4 + [F])
    yield "layer-types-drop", "transformer_layer_config.layer_types dropped", at(f"{tl}.layer_types", _MISSING)
    yield "layer-theta-1e6", "transformer_layer_config rope_theta 1e6", at(f"{tl}.rope_parameters.rope_theta", 1000000)
    yield "layer-rope-drop", "transformer_layer_config.rope_parameters dropped", at(f"{tl}.rope_parameters", _MISSING)
    yield (
        "layer-model-type-qwen3",
        "transformer_layer_config.model_type llama -> qwen3",
        at(f"{tl}.model_type", "qwen3"),
    )
    yield "layer-count-4", "transformer_layer_config.num_hidden_layers 5 -> 4", at(f"{tl}.num_hidden_layers", 4)
    yield "draft-vocab-drop", "draft_vocab_size dropped", at("draft_vocab_size", _MISSING)
    yield "arch-v2", "architectures DFlashDraftModel -> DFlash2DraftModel", at("architectures", ["DFlash2DraftModel"])
    yield "top-aux-as-dc", "aux ids moved into a dflash_config.target_layer_ids", _spec_to_dc
    yield (
        "sample-from-anchor",
        "sample_from_anchor true (vLLM writes it into dflash_config)",
        lambda d: _put(d, "sample_from_anchor", True),
    )


def _spec_to_dc(d: Config) -> bool:
    aux = d.pop("aux_hidden_state_layer_ids", None)
    if aux is None:
        return False
    d[DC] = {"target_layer_ids": [a - 1 for a in aux], "mask_token_id": d.get("mask_token_id")}
    return True


def generate(seed: int = SEED, limit: int = LIMIT) -> list[Mutant]:
    """Every mutant, in a fixed order. An edit that does not apply to a base (the key is absent), or that
    leaves the file as it was, is skipped for that base."""
    rng = random.Random(seed)
    loaded = {base.name: load(base.rel) for base in BASES}
    siblings = [t for base in BASES if not base.speculators if (t := _taps(loaded[base.name]))]
    families: list[tuple[str, list[Edit]]] = [
        ("move", list(_move_edits())),
        ("rename", list(_rename_edits())),
        ("drop", list(_drop_edits())),
        ("type", list(_type_edits())),
        ("taps", list(_tap_edits(rng, siblings))),
        ("rope", list(_rope_edits())),
        ("layers", list(_layer_edits(rng))),
        ("window", list(_window_edits())),
        ("label", list(_label_edits())),
        ("layout", list(_layout_edits())),
    ]
    speculators = [("speculators", list(_speculators_edits()))]
    candidates = _apply(loaded, lambda base: speculators if base.speculators else families)
    # Every edit of what changed between engine releases, on every base it applies to, after the sample (which
    # they leave as it was): each release's reading is exercised on each of them.
    releases = [("release", list(_release_edits()))]
    released = _apply(loaded, lambda base: [] if base.speculators else releases)
    return [*_sample(rng, candidates, limit), *released, *_keyed(seed, loaded)]


def _keyed(seed: int, loaded: dict[str, Config]) -> list[Mutant]:
    """The mutants of the recorded engine keys (engines.key_mutants), with a seed of their own: adding them leaves
    the sample above as it was."""
    by_name = {base.name: base for base in BASES}
    found = list(key_mutants.candidates([(b.name, loaded[b.name]) for b in BASES if not b.speculators]))
    return [
        Mutant(f"keys/{kind}/{name}", "keys", kind, by_name[name], description, data)
        for kind, description, name, data in key_mutants.sample(random.Random(seed + 1), found)
    ]


def _apply(loaded: dict[str, Config], families: Callable[[Base], list[tuple[str, list[Edit]]]]) -> list[Mutant]:
    """The mutants of every base under its families' edits, in order."""
    out = []
    for base in BASES:
        original = loaded[base.name]
        for family, edits in families(base):
            for kind, description, edit in edits:
                data = copy.deepcopy(original)
                # Compared as JSON: in Python 16.0 == 16 and 0 == False, and those retypes are mutants.
                if not edit(data) or _canonical(data) == _canonical(original):
                    continue
                out.append(Mutant(f"{family}/{kind}/{base.name}", family, kind, base, description, data))
    return out


def _canonical(data: Config) -> str:
    return json.dumps(data, sort_keys=True)


def _sample(rng: random.Random, candidates: list[Mutant], limit: int) -> list[Mutant]:
    """Every edit on one base at least (and every speculators edit), then others up to `limit`, in order."""
    keep: set[str] = {m.id for m in candidates if m.base.speculators}
    by_edit: dict[str, list[str]] = {}
    for m in candidates:
        by_edit.setdefault(f"{m.family}/{m.kind}", []).append(m.id)
    keep.update(rng.choice(ids) for ids in by_edit.values())
    rest = [m.id for m in candidates if m.id not in keep]
    keep.update(rng.sample(rest, max(0, min(len(rest), limit - len(keep)))))
    return [m for m in candidates if m.id in keep]

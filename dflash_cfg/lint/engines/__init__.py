"""What vLLM and SGLang read from a DFlash drafter config, as data, with the code that says so. Pure.

Each `Read` is one key as one reader's code reads it (`Read.reader`, a model `Engine`: an engine, vLLM's
speculators translator, or transformers): where it looks (in order), the default when the key is absent, what a
value of the wrong type does, and the file and commit (or the snapshot the index holds) it was read from. A few rows
are about something other than one key (how config.json itself is parsed, how the checkpoint's tensors are loaded,
a launch option); their `key` says what they are about. Each row is a constant of its reader's module
(`vllm.TARGET_LAYER_IDS`); rules name the rows behind them (`Rule.reads`), and `dflash-cfg rules ID` shows them.
"transformers" rows are the library both engines load config.json through (`AutoConfig`), so what it does the
engines get.
Re-read the code before relying on a row: these engines change monthly.

The rows are in the module of their reader (`vllm`, `sglang`, `transformers`, `speculators`), each with the code it
was read from: a commit where the stored-code index gives one, else the snapshot id it holds (a late-2026 state it
did not date), both written down as found. `read` holds the row type and the markers.

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

from dflash_cfg.lint.engine_architectures import REGISTERED
from dflash_cfg.lint.engines import sglang, speculators, transformers, vllm
from dflash_cfg.lint.engines.read import (
    CHECKED,
    MARKERS,
    NOT_APPLICABLE,
    TRANSFORMERS_CHECKED,
    UNCHECKED,
    UNEXECUTABLE,
    Read,
    describe,
    unexecutable,
)
from dflash_cfg.model import Engine

__all__ = [
    "CHECKED",
    "ENGINE_ORDER",
    "MARKERS",
    "NOT_APPLICABLE",
    "READS",
    "REGISTERED_ARCHITECTURES",
    "TRANSFORMERS_CHECKED",
    "UNCHECKED",
    "UNEXECUTABLE",
    "XPRESS_ARCHITECTURES",
    "Read",
    "describe",
    "reads",
    "registrations",
    "unexecutable",
]

# Every row by its name, "vLLM:target_layer_ids" (what reports call it), in catalogue order: vLLM, SGLang,
# transformers (how both get config.json), vLLM's speculators translator.
READS: dict[str, Read] = {r.name: r for r in (*vllm.ROWS, *sglang.ROWS, *transformers.ROWS, *speculators.ROWS)}

# Architectures an engine registers for a DFlash drafter (an architecture no engine registers is refused).
# Checked by running both engines on each (tests/engines/test_truth.py): vLLM registers DFlash2BeamDraftModel too,
# but its beam drafter refuses a DFlash2 file without final_logit_softcapping, so only SGLang builds it.
# XPress: a DFlash drafter with a refiner head, served under method dflash (vLLM's EAGLEConfig rewrites the
# architecture to DFlash{arch}, so both names are registered:
# vllm/config/speculative.py:XPRESS_ARCHITECTURES@0.33.0); the pinned SGLang has no XPress model.
XPRESS_ARCHITECTURES = ("Qwen3XPressModel", "DFlashQwen3XPressModel")

REGISTERED_ARCHITECTURES: dict[str, tuple[Engine, ...]] = {
    "DFlashDraftModel": ("vllm", "sglang"),
    "DFlash2DraftModel": ("vllm", "sglang"),
    "DFlashLagunaForCausalLM": ("vllm", "sglang"),
    "MuseGlimmerAssistantModel": ("vllm", "sglang"),
    "DFlash2BeamDraftModel": ("sglang",),
    "MiniMaxDFlash2DraftModel": ("sglang",),
    **{name: ("vllm",) for name in XPRESS_ARCHITECTURES},
}


ENGINE_ORDER: tuple[Engine, ...] = ("vllm", "sglang")  # the engines that serve drafters, as reports name them


def registrations(name: str) -> dict[Engine, tuple[str, ...]]:
    """The releases of each engine whose registry holds the drafter class `name` (lint.engine_architectures, from
    the engines' source), registered or not by dflash-cfg's own list of the classes the engine suite builds."""
    found: dict[Engine, tuple[str, ...]] = {}
    for engine in ENGINE_ORDER:
        releases = tuple(r for r, names in REGISTERED.get(engine, {}).items() if name in names)
        if releases:
            found[engine] = releases
    return found


def reads(*keys: str) -> tuple[Read, ...]:
    """The reads of these keys, every engine, in catalogue order."""
    return tuple(r for r in READS.values() if r.key in keys)

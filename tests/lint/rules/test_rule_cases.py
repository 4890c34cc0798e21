"""The rule cases: one table for every rule of the catalogue, run by one harness through the real CLI.

The table is the YAML files in cases/ next to this module: DF204.yaml holds DF204's rows (each names DF204 in
`expect` or in `absent`), clean.yaml the published drafters as they are, alone and with their own target,
weights, upstream or launch. A row is a mapping under its name (a string); the harness writes what the row
describes into tmp_path, runs `check --format json` (or `preflight` when the row has a launch) in-process and
compares the findings. Adding a rule means one rule module plus its DFnnn.yaml here, with a row where it fires,
and a row (there or in clean.yaml) that names it in `absent`.

Why YAML and not Python: a row is data a reviewer reads top to bottom (sqlfluff's rule cases work the same
way), a change is a few JSON Pointers rather than a lambda, and the rows import nothing from the package,
so they survive any reorganisation of the code; the harness rejects an unknown key, a duplicate row name and
YAML 1.1's surprises (`no` is a string here, `1e-06` a number).

The vocabulary of a row (only `base` or `raw` is required):

  base: Qwen3.5-4B-DFlash     a published drafter (BASE_BUILDERS below), dumped as the Hub files are (json indent 2)
  raw: !bytes '{"a": 1}\\n'    or the whole file; `!bytes` reads Python bytes escapes (\\xff, \\n)
  move: {/from: /to}          then `drop`, then `set`, on the base's data (RFC 6901 pointers; `/-` appends)
  drop: [/pointer]
  set: {/pointer: value}      `.nan`, `.inf`, `-.inf`; `!int 1e400` is an integer of 401 digits
  edit: [...]                 then byte edits of the dumped file, in order: {replace: [old, new]} (old occurs
                              once), {prefix: ...}, {suffix: ...}, {keep: 0.5} (that fraction, from the start),
                              {drop_last: 2} (bytes), {reencode: utf-16}
  checkpoint: {...}           safetensors beside config.json, the tensors of checkpoints.small_shapes(**shapes):
                              {shapes: {taps: 8}, tensors: {glob: shape or null}, dtype: float32,
                               sharded: true (two shards and an index), sparse: BYTES (BF16 header, sparse file)}
  pointers: [glob]            those files replaced by the Git LFS pointer of their size (after the checkpoint)
  files: {path: content}      then more files, relative to the drafter dir: !bytes, a string, {json: value},
                              {lfs_pointer: BYTES}, {lfs_pointer: {bits: 4}} (the config's own shapes packed at
                              that many bits per parameter), {fifo: true}; null deletes the file
  clone: dflash               the drafter dir is that subdir ("." the top) of a git work tree
  target: Qwen__Qwen3-4B      --target: a dir of fixtures/targets as it is, or one written for the row from
                              its config.json alone: {config: NAME, set:, drop:, flatten: true (text_config
                              hoisted), tokenizer: qwen3, tokenizer_set: {...}, tokenizer_json: true, files:}
  hub: true                   the unchanged base in an offline Hugging Face cache, and --from-hub its repo
  setup: [step]               fix-then-restore (a lock recorded by `fix`, then other bytes), link-into-cache-blob
  options: [--strict]         more command-line options
  launch: {...}               preflight `vllm serve TARGET --speculative-config SPEC ARGS`: {method: eagle3,
                              num_speculative_tokens: 7, args: [-tp, "4"]} (SPEC defaults: dflash, 15 tokens);
                              env: {NAME: value} prefixes NAME=value; engine: sglang runs `python -m
                              sglang.launch_server --model-path TARGET ... --speculative-draft-model-path DIR ARGS`;
                              release: "0.34.0" runs vLLM in an interpreter with that release installed (its
                              metadata only: the engine step is off), else the release is not known

  expect: ["DF104 error /dflash_config/target_layer_ids/7", ...]
      "RULE SEVERITY POINTER" (no pointer: the whole file), or {finding: "...", message: [fragments],
      message_without: [fragments], count: 2, fix: {safe: true, patch: [...], summary: fragment},
      engines: ["vllm<0.34.0"]} (the releases it holds for; none: a finding about the file, whatever serves it).
      For each rule named here the findings of that rule are exactly these (as a multiset);
      `{transformers}` in a fragment is the installed transformers version.
  absent: [DF104, DF5]        rules, or id prefixes ("DF" for everything), that must not fire, apart from
                              the rules in `expect`
  exit: 1                     the exit code (else 0 or 1)
  fix_brings: ["DF209 warning /dflash_config/use_swa"]
                              what the fixes may bring at a new place, and one of them must: the base's own
                              finding, back where the fix restores the published value
  text_output: [fragments]    of the text report of the same command

Every row also checks: one file reported and linted (not skipped), nothing on stderr, the drafter's
config.json unchanged, each finding of an expected rule located (line and column) with a one-line message
and the catalogue's name; and each safe JSON-patch fix of such a finding, applied by an independent RFC 6902
implementation (jsonpatch), makes it go away without an error or warning at a new place.
"""

from __future__ import annotations

import codecs
import contextlib
import copy
import decimal
import fnmatch
import hashlib
import io
import json
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import jsonpatch
import numpy as np
import pytest
import yaml
from checkpoints import lfs_pointer, save, save_sharded, save_sparse, small_config, small_shapes
from helpers import FIXTURES, Result, installed_release, offline_hub_cache

from dflash_cfg.cli import cli, run

Run = Callable[..., Result]
JSON = Any

CASES_DIR = Path(__file__).with_name("cases")
UPSTREAM = FIXTURES / "upstream"
TARGETS = FIXTURES / "targets"
SEVERITIES = ("error", "warning", "info")


# ------------------------------------------------------------------------------------------ YAML


class CaseLoader(yaml.SafeLoader):
    """YAML read the way JSON reads: only `true`/`false` are booleans and only JSON numbers (plus `.nan`,
    `.inf`, `-.inf`) are numbers, so `no` stays a string and `1e-06` a float; a repeated key is an error
    (PyYAML would keep the last row of two with the same name)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


_YAML11 = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
CaseLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _YAML11]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
CaseLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|false)$"), list("tf"))
CaseLoader.add_implicit_resolver("tag:yaml.org,2002:int", re.compile(r"^-?(?:0|[1-9][0-9]*)$"), list("-0123456789"))
CaseLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|-?\.inf|\.nan)$"),
    list("-0123456789."),
)


def _bytes(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bytes:
    """`!bytes '...'`: the scalar read as a Python bytes literal's body (\\xff, \\n, \\\\)."""
    return codecs.escape_decode(loader.construct_scalar(node).encode("utf-8"))[0]


def _int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    """`!int 1e400`: an integer too long to write out."""
    return int(decimal.Decimal(loader.construct_scalar(node)))


CaseLoader.add_constructor("!bytes", _bytes)
CaseLoader.add_constructor("!int", _int)


# ------------------------------------------------------------------------------------------ bases


@dataclass(frozen=True)
class Base:
    data: dict[str, Any]
    repo: str  # its Hub repo, for `hub: true` rows


def _published(path: str) -> dict[str, Any]:
    data = json.loads((FIXTURES / path).read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    return data


def _speculators_b16() -> dict[str, Any]:
    """A speculators-format file in the layout of the speculators library's DFlashSpeculatorConfig, with the
    b16 drafter as its decoder (no published speculators DFlash config.json was found: see PROVENANCE.md)."""
    b16 = _published("upstream/z-lab__Qwen3-4B-DFlash-b16/config.json")
    return {
        "architectures": ["DFlashSpeculator"],
        "speculators_model_type": "dflash",
        "aux_hidden_state_layer_ids": [t + 1 for t in b16["dflash_config"]["target_layer_ids"]],
        "mask_token_id": 151669,
        "block_size": 16,
        "draft_vocab_size": 151936,
        "speculators_config": {
            "algorithm": "dflash",
            "proposal_methods": [{"proposal_type": "dflash", "speculative_tokens": 15}],
            "default_proposal_method": "dflash",
            "verifier": {"name_or_path": "Qwen/Qwen3-4B", "architectures": ["Qwen3ForCausalLM"]},
        },
        "transformer_layer_config": {
            k: v
            for k, v in b16.items()
            if k not in ("architectures", "auto_map", "block_size", "dflash_config", "num_target_layers")
        },
    }


# name -> how to build it; what each base is (and what the rows rely on) is asserted in test_bases.
BASE_BUILDERS: dict[str, Callable[[], Base]] = {
    # 6 draft layers (5 sliding + 1 full) reading 8 taps of a 32-layer target; block_size and the taps in
    # dflash_config; rope_parameters only.
    "Qwen3.5-4B-DFlash": lambda: Base(
        _published("upstream/z-lab__Qwen3.5-4B-DFlash/config.json"), "z-lab/Qwen3.5-4B-DFlash"
    ),
    # Legacy layout (reconstructed, PROVENANCE.md level D): top-level block_size, flat rope_theta, five
    # full_attention layers, sliding_window null, use_sliding_window false; Qwen3-4B target.
    "Qwen3-4B-DFlash-b16": lambda: Base(
        _published("upstream/z-lab__Qwen3-4B-DFlash-b16/config.json"), "z-lab/Qwen3-4B-DFlash-b16"
    ),
    # DFlash2 (byte-verified, level A): five sliding layers, trained (non-standard) taps, conv/selector keys.
    "Qwen3.8-27B-DFlash2": lambda: Base(
        _published("upstream/z-lab__Qwen3.8-27B-DFlash2/config.json"), "z-lab/Qwen3.8-27B-DFlash2"
    ),
    # The upstream file of the incident (Qwen3.6-27B target, 64 layers, composite config).
    "Qwen3.6-27B-DFlash": lambda: Base(
        _published("upstream/z-lab__Qwen3.6-27B-DFlash/config.json"), "z-lab/Qwen3.6-27B-DFlash"
    ),
    # The incident's stale file: that upstream file with the guessed mask, taps and layer_types.
    "incident": lambda: Base(_published("incident/Qwen3.6-27B-DFlash/config.json"), "z-lab/Qwen3.6-27B-DFlash"),
    # MiMo-V2.5-Pro's drafter (level A): no layer_types, dflash_config.use_swa with swa_window_size.
    "MiMo-V2.5-Pro-FP4-DFlash": lambda: Base(
        _published("upstream/XiaomiMiMo__MiMo-V2.5-Pro-FP4-DFlash/dflash/config.json"),
        "XiaomiMiMo/MiMo-V2.5-Pro-FP4-DFlash",
    ),
    # poolside's Laguna drafter (level C): DFlashLagunaForCausalLM, model_type laguna, five sliding layers.
    "Laguna-XS-2.1-DFlash": lambda: Base(
        _published("upstream/poolside__Laguna-XS-2.1-DFlash/config.json"), "poolside/Laguna-XS-2.1-DFlash"
    ),
    "Muse-Glimmer-30B-DFlash2": lambda: Base(
        _published("upstream/z-lab__Muse-Glimmer-30B-DFlash2/config.json"), "z-lab/Muse-Glimmer-30B-DFlash2"
    ),
    "speculators-b16": lambda: Base(_speculators_b16(), "z-lab/Qwen3-4B-DFlash-b16"),
    # The b16 config shrunk to the sizes checkpoints.small_shapes() writes (the weights rows).
    "small-b16": lambda: Base(small_config(), "z-lab/Qwen3-4B-DFlash-b16"),
}


@cache
def base(name: str) -> Base:
    return BASE_BUILDERS[name]()


def dump(data: JSON) -> bytes:
    """As the Hub files are written: two-space indent, the file's own key order, a final newline."""
    return (json.dumps(data, indent=2) + "\n").encode("utf-8")


# ------------------------------------------------------------------------------------------ rows


@dataclass(frozen=True)
class Expected:
    rule: str
    severity: str
    pointer: str
    message: tuple[str, ...] = ()
    message_without: tuple[str, ...] = ()
    fix: dict[str, Any] | None = None
    engines: tuple[str, ...] = ()  # the releases it holds for: exactly these (empty: absent from the JSON)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.rule, self.severity, self.pointer)

    def __str__(self) -> str:
        return " ".join(filter(None, (self.rule, self.severity, self.pointer))) + "".join(
            f" [{m!r}]" for m in self.message
        )


ROW_KEYS = {
    "base", "raw", "move", "drop", "set", "edit", "checkpoint", "pointers", "files", "clone", "target", "hub",
    "setup", "options", "launch", "expect", "absent", "exit", "text_output", "fix_brings",
}  # fmt: skip
FINDING_KEYS = {"finding", "message", "message_without", "count", "fix", "engines"}


def parse_expected(entry: Any, where: str) -> list[Expected]:
    spec = entry if isinstance(entry, dict) else {"finding": entry}
    assert set(spec) <= FINDING_KEYS, f"{where}: unknown keys {sorted(set(spec) - FINDING_KEYS)}"
    parts = str(spec["finding"]).split(maxsplit=2)
    assert len(parts) >= 2 and parts[1] in SEVERITIES, f"{where}: {spec['finding']!r} is not 'RULE SEVERITY POINTER'"

    def fragments(key: str) -> tuple[str, ...]:
        value = spec.get(key, ())
        return (value,) if isinstance(value, str) else tuple(value)

    one = Expected(
        parts[0],
        parts[1],
        parts[2] if len(parts) == 3 else "",
        fragments("message"),
        fragments("message_without"),
        spec.get("fix"),
        fragments("engines"),
    )
    return [one] * int(spec.get("count", 1))


@dataclass(frozen=True)
class Row:
    file: str  # the case file's stem: a rule id, or "clean"
    name: str
    spec: dict[str, Any] = field(compare=False)
    expect: tuple[Expected, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.file}/{self.name}"

    @property
    def absent(self) -> tuple[str, ...]:
        return tuple(self.spec.get("absent", ()))

    @property
    def expected_rules(self) -> set[str]:
        return {e.rule for e in self.expect}

    def forbids(self, rule: str) -> bool:
        return rule not in self.expected_rules and any(rule.startswith(p) for p in self.absent)


def load_rows() -> list[Row]:
    rows = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        table = yaml.load(path.read_text(encoding="utf-8"), Loader=CaseLoader)
        assert isinstance(table, dict) and table, f"{path.name}: a mapping of row name -> row"
        for name, spec in table.items():
            where = f"{path.name}: {name}"
            assert isinstance(name, str), f"{where}: a row name is a string (quote it)"
            assert isinstance(spec, dict), f"{where}: a row is a mapping"
            assert set(spec) <= ROW_KEYS, f"{where}: unknown keys {sorted(set(spec) - ROW_KEYS)}"
            assert ("base" in spec) != ("raw" in spec), f"{where}: needs one of base and raw"
            assert spec.get("base", "Qwen3.5-4B-DFlash") in BASE_BUILDERS, f"{where}: unknown base"
            assert spec.get("expect") or spec.get("absent"), f"{where}: expects nothing"
            expect = tuple(e for entry in spec.get("expect", ()) for e in parse_expected(entry, where))
            rows.append(Row(path.stem, str(name), spec, expect))
    return rows


ROWS = load_rows()


# ------------------------------------------------------------------------------------------ building


def _walk(data: JSON, pointer: str) -> tuple[Any, str | int]:
    """The container of `pointer`'s last token, and that token (an int for a list, "-" to append)."""
    assert pointer.startswith("/"), pointer
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]
    node = data
    for token in tokens[:-1]:
        node = node[int(token)] if isinstance(node, list) else node[token]
    last = tokens[-1]
    return node, (last if not isinstance(node, list) or last == "-" else int(last))


def put(data: JSON, pointer: str, value: Any) -> None:
    node, key = _walk(data, pointer)
    if key == "-":
        node.append(copy.deepcopy(value))
    else:
        node[key] = copy.deepcopy(value)


def remove(data: JSON, pointer: str) -> None:
    node, key = _walk(data, pointer)
    del node[key]


def changed(data: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """`data` after a row's (or a target's) move, drop and set, in that order."""
    data = copy.deepcopy(data)
    for source, destination in spec.get("move", {}).items():
        node, key = _walk(data, source)
        value = node[key]
        del node[key]
        put(data, destination, value)
    for pointer in spec.get("drop", ()):
        remove(data, pointer)
    for pointer, value in spec.get("set", {}).items():
        put(data, pointer, value)
    return data


def as_bytes(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8")


def edited(raw: bytes, edits: list[dict[str, Any]]) -> bytes:
    for step in edits:
        ((op, arg),) = step.items()
        if op == "replace":
            old, new = (as_bytes(a) for a in arg)
            assert raw.count(old) == 1, f"{old!r} must occur once in the file"
            raw = raw.replace(old, new)
        elif op == "prefix":
            raw = as_bytes(arg) + raw
        elif op == "suffix":
            raw = raw + as_bytes(arg)
        elif op == "keep":
            raw = raw[: int(len(raw) * arg)]
        elif op == "drop_last":
            raw = raw[:-arg]
        elif op == "reencode":
            raw = raw.decode("utf-8").encode(arg)
        else:
            raise AssertionError(f"unknown edit {op!r}")
    return raw


def config_data(row: Row) -> dict[str, Any]:
    return changed(base(row.spec["base"]).data, row.spec)


def config_bytes(row: Row) -> bytes:
    if "raw" in row.spec:
        return as_bytes(row.spec["raw"])
    return edited(dump(config_data(row)), row.spec.get("edit", []))


def shapes_of(config: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """The tensors a z-lab checkpoint of `config` holds (DF505's count, done independently)."""
    return small_shapes(
        hidden=config["hidden_size"],
        heads=config["num_attention_heads"],
        kv=config["num_key_value_heads"],
        head_dim=config["head_dim"],
        inter=config["intermediate_size"],
        layers=config["num_hidden_layers"],
        taps=len(config["dflash_config"]["target_layer_ids"]),
    )


def write_checkpoint(folder: Path, spec: dict[str, Any]) -> None:
    tensors = small_shapes(**spec.get("shapes", {}))
    for pattern, shape in spec.get("tensors", {}).items():
        matching = fnmatch.filter(tensors, pattern) or [pattern]
        for name in matching:
            if shape is None:
                del tensors[name]
            else:
                tensors[name] = tuple(shape)
    dtype = np.dtype(spec.get("dtype", "float16"))
    if spec.get("sharded"):
        save_sharded(folder, tensors, dtype, sparse=spec.get("sparse"))
    elif "sparse" in spec:
        save_sparse(folder / "model.safetensors", tensors, spec["sparse"])
    else:
        save(folder / "model.safetensors", tensors, dtype)


def write_files(folder: Path, files: dict[str, Any], config: dict[str, Any] | None = None) -> None:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is None:
            path.unlink()
        elif isinstance(content, (bytes, str)):
            path.write_bytes(as_bytes(content))
        elif "json" in content:
            path.write_bytes(dump(content["json"]))
        elif "fifo" in content:
            os.mkfifo(path)
        elif isinstance(content["lfs_pointer"], int):
            path.write_bytes(lfs_pointer(content["lfs_pointer"]))
        else:
            assert config is not None
            parameters = sum(int(np.prod(s)) for s in shapes_of(config).values())
            path.write_bytes(lfs_pointer(parameters * content["lfs_pointer"]["bits"] // 8))


# Qwen3's tokenizer_config.json added_tokens_decoder: 151643..151668 (26 added tokens after the 151643-token
# base vocabulary), with their `special` flags; eos <|im_end|>, pad <|endoftext|> (test_bases checks these).
QWEN3_ADDED = [
    ("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True), ("<|object_ref_start|>", True),
    ("<|object_ref_end|>", True), ("<|box_start|>", True), ("<|box_end|>", True), ("<|quad_start|>", True),
    ("<|quad_end|>", True), ("<|vision_start|>", True), ("<|vision_end|>", True), ("<|vision_pad|>", True),
    ("<|image_pad|>", True), ("<|video_pad|>", True), ("<tool_call>", False), ("</tool_call>", False),
    ("<|fim_prefix|>", False), ("<|fim_middle|>", False), ("<|fim_suffix|>", False), ("<|fim_pad|>", False),
    ("<|repo_name|>", False), ("<|file_sep|>", False), ("<tool_response>", False), ("</tool_response>", False),
    ("<think>", False), ("</think>", False),
]  # fmt: skip
QWEN3_BASE_VOCAB = 151643


def qwen3_tokenizer_config() -> dict[str, Any]:
    def added(content: str, special: bool) -> dict[str, Any]:
        flags = dict.fromkeys(("lstrip", "normalized", "rstrip", "single_word"), False)
        return {"content": content, **flags, "special": special}

    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": {str(QWEN3_BASE_VOCAB + i): added(*t) for i, t in enumerate(QWEN3_ADDED)},
        "additional_special_tokens": [c for c, s in QWEN3_ADDED if s][1:],
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 131072,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def tokenizer_json(tokenizer_config: dict[str, Any]) -> dict[str, Any]:
    """A tokenizer.json of QWEN3_BASE_VOCAB base ids and the added tokens of `tokenizer_config`."""
    flags = dict.fromkeys(("single_word", "lstrip", "rstrip", "normalized"), False)
    added = [
        {"id": int(i), "content": e["content"], **flags, "special": e["special"]}
        for i, e in tokenizer_config["added_tokens_decoder"].items()
    ]
    vocab = {f"t{i}": i for i in range(QWEN3_BASE_VOCAB)}
    return {"version": "1.0", "added_tokens": added, "model": {"type": "BPE", "vocab": vocab, "merges": []}}


TARGET_KEYS = {"config", "set", "drop", "flatten", "tokenizer", "tokenizer_set", "tokenizer_json", "files"}


def write_target(spec: str | dict[str, Any], tmp_path: Path) -> Path:
    if isinstance(spec, str):
        return TARGETS / spec
    assert set(spec) <= TARGET_KEYS, f"unknown target keys {sorted(set(spec) - TARGET_KEYS)}"
    folder = tmp_path / "target"
    folder.mkdir()
    config = changed(json.loads((TARGETS / spec["config"] / "config.json").read_bytes()), spec)
    if spec.get("flatten"):
        config = {k: v for k, v in config.items() if k != "text_config"} | config["text_config"]
    (folder / "config.json").write_bytes(dump(config))
    if "tokenizer" in spec:
        assert spec["tokenizer"] == "qwen3", spec["tokenizer"]
        tokenizer = changed(qwen3_tokenizer_config(), {"set": spec.get("tokenizer_set", {})})
        (folder / "tokenizer_config.json").write_bytes(dump(tokenizer))
        if spec.get("tokenizer_json"):
            (folder / "tokenizer.json").write_text(json.dumps(tokenizer_json(tokenizer)), encoding="utf-8")
    write_files(folder, spec.get("files", {}))
    return folder


def fix_then_restore(folder: Path, dflash: Run) -> None:
    """`fix` repairs the file and records it in .dflash-cfg.lock; then other bytes land on it."""
    original = (folder / "config.json").read_bytes()
    broken = json.loads(original)
    broken["use_sliding_window"] = False
    (folder / "config.json").write_bytes(dump(broken))
    assert dflash("fix", folder, "--yes").code == 0
    assert (folder / ".dflash-cfg.lock").exists()
    (folder / "config.json").write_bytes(original)


def link_into_cache_blob(folder: Path, dflash: Run) -> None:
    """config.json becomes a symlink straight at a Hugging Face cache blob (not a snapshot)."""
    data = (folder / "config.json").read_bytes()
    blob = folder.parent / "hub" / "models--z-lab--Qwen3.5-4B-DFlash" / "blobs" / hashlib.sha256(data).hexdigest()
    blob.parent.mkdir(parents=True)
    blob.write_bytes(data)
    (folder / "config.json").unlink()
    (folder / "config.json").symlink_to(blob)


SETUP: dict[str, Callable[[Path, Run], None]] = {
    "fix-then-restore": fix_then_restore,
    "link-into-cache-blob": link_into_cache_blob,
}


def inside_a_work_tree(path: Path) -> bool:
    return any((p / ".git").exists() for p in (path.resolve(), *path.resolve().parents))


@dataclass(frozen=True)
class Prepared:
    """A row written to disk: the drafter dir and the command that checks it."""

    folder: Path
    command: tuple[str, ...]  # without --format

    def run(self, dflash: Run, fmt: str = "json") -> Result:
        verb, *rest = self.command
        if verb == "preflight":
            return dflash("preflight", "--format", fmt, *rest)
        return dflash("check", self.folder, "--format", fmt, *rest)


def prepare(row: Row, dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Prepared:
    spec = row.spec
    top = tmp_path / "clone" if "clone" in spec else tmp_path
    folder = (top / spec["clone"]).resolve() if "clone" in spec else tmp_path / "drafter"
    folder.mkdir(parents=True)
    if "clone" in spec:
        (top / ".git").mkdir()  # all git-lfs needs to match paths
    elif ("pointers" in spec or "files" in spec) and inside_a_work_tree(tmp_path):
        pytest.skip("the test's tmp dir is inside a git work tree")
    (folder / "config.json").write_bytes(config_bytes(row))
    if "checkpoint" in spec:
        write_checkpoint(folder, spec["checkpoint"])
    for pattern in spec.get("pointers", ()):
        for path in sorted(folder.glob(pattern)):
            path.write_bytes(lfs_pointer(path.stat().st_size))
    write_files(folder, spec.get("files", {}), config_data(row) if "base" in spec else None)
    options = [str(o) for o in spec.get("options", ())]
    if spec.get("hub"):
        repo = base(spec["base"]).repo
        offline_hub_cache(repo, dump(base(spec["base"]).data), monkeypatch)
        options += ["--from-hub", repo]
    for step in spec.get("setup", ()):
        SETUP[step](folder, dflash)
    target = write_target(spec["target"], tmp_path) if "target" in spec else None
    if "launch" in spec:
        assert target is not None, "a launch needs the target"
        launch = dict(spec["launch"])
        args = [str(a) for a in launch.pop("args", ())]
        env = [f"{k}={v}" for k, v in launch.pop("env", {}).items()]
        if launch.pop("engine", "vllm") == "sglang":
            command = ["python", "-m", "sglang.launch_server", "--model-path", str(target), "--speculative-algorithm",
                       "DFLASH", "--speculative-draft-model-path", str(folder), *args]  # fmt: skip
            return Prepared(folder, ("preflight", *options, "--", *env, *command))
        release = launch.pop("release", None)
        speculative = {"method": "dflash", "model": str(folder), "num_speculative_tokens": 15} | launch
        serve = ["vllm", "serve", str(target)]
        if release is not None:  # the launch runs an interpreter with that vLLM release installed
            python = installed_release(tmp_path / "engines", "vllm", str(release))
            serve = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(target)]
            options.append("--no-engine-check")
        command = [*serve, "--speculative-config", json.dumps(speculative), *args]
        return Prepared(folder, ("preflight", *options, "--", *env, *command))
    if target is not None:
        options += ["--target", str(target)]
    return Prepared(folder, ("check", *options))


# ------------------------------------------------------------------------------------------ judging


# The engine rules fire only when preflight runs the launch's own engine (an engine import, minutes on this
# host): their cases are in the engine-marked suite, tests/engines/test_engines_command.py, not in this table.
ENGINE_RULES = ("DF901", "DF902", "DF903", "DF904")


@cache
def declarations() -> dict[str, dict[str, Any]]:
    """Rule id -> its entry in `dflash-cfg rules --format json` (run once, outside any test's fixtures), the
    engine rules left out (see ENGINE_RULES)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run(cli, ["rules", "--format", "json"]) == 0
    return {r["id"]: r for r in json.loads(out.getvalue()) if r["id"] not in ENGINE_RULES}


def catalogue() -> dict[str, str]:
    """Rule id -> name."""
    return {rule: entry["name"] for rule, entry in declarations().items()}


def fragment(text: str) -> str:
    return text.replace("{transformers}", metadata.version("transformers"))


def matches(expected: Expected, found: dict[str, Any]) -> bool:
    if expected.key != (found["rule"], found["severity"], found["pointer"]):
        return False
    if not all(fragment(m) in found["message"] for m in expected.message):
        return False
    if any(fragment(m) in found["message"] for m in expected.message_without):
        return False
    if list(expected.engines) != found.get("engines", []):
        return False
    if expected.fix is not None:
        fix = found["fix"] or {}
        for key, want in expected.fix.items():
            if key == "summary" and want not in fix.get("summary", ""):
                return False
            if key != "summary" and fix.get(key) != want:
                return False
    return True


def assign(expected: list[Expected], found: list[dict[str, Any]]) -> bool:
    """Whether each expected finding can be given its own found finding (the lists are short)."""
    if not expected:
        return True
    first, rest = expected[0], expected[1:]
    return any(matches(first, f) and assign(rest, found[:i] + found[i + 1 :]) for i, f in enumerate(found))


def shown(findings: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"  {f['rule']} {f['severity']} {f['pointer'] or '(file)'} {f['line']}:{f['column']}  {f['message']}"
        + (f"\n      fix: {json.dumps(f['fix'])}" if f["fix"] else "")
        for f in findings
    )


def findings_of(result: Result) -> list[dict[str, Any]]:
    assert result.code in (0, 1), f"exit {result.code}: {result.err}"
    # Nothing on stderr but the gate's one-line hint when warnings alone fail the run (--strict).
    assert result.err == "" or result.err.startswith("dflash-cfg: failed on warnings only"), result.err
    (report,) = result.json()["files"]
    assert report["kind"] != "skipped", f"not linted as a drafter: {report}"
    findings: list[dict[str, Any]] = report["findings"]
    return findings


def judge(row: Row, found: list[dict[str, Any]]) -> None:
    names = catalogue()
    for rule in sorted(row.expected_rules):
        mine = [f for f in found if f["rule"] == rule]
        wanted = [e for e in row.expect if e.rule == rule]
        exact = Counter(f"{f['rule']} {f['severity']} {f['pointer']}" for f in mine) == Counter(
            f"{e.rule} {e.severity} {e.pointer}" for e in wanted
        )
        assert exact and assign(wanted, mine), (
            f"{rule}: expected\n" + "\n".join(f"  {e}" for e in wanted) + f"\nfound\n{shown(mine)}"
        )
        for f in mine:
            assert isinstance(f["line"], int) and f["line"] >= 1, shown([f])
            assert isinstance(f["column"], int) and f["column"] >= 1, shown([f])
            assert f["message"] and "\n" not in f["message"], shown([f])
            assert f["name"] == names[rule], shown([f])
    forbidden = [f for f in found if row.forbids(f["rule"])]
    assert forbidden == [], f"must not fire ({', '.join(row.absent)}):\n{shown(forbidden)}"


def check_fixes(row: Row, prepared: Prepared, found: list[dict[str, Any]], dflash: Run) -> None:
    """Each safe JSON-patch fix of a finding under test, applied alone and then all together, clears it."""
    fixable = [
        f for f in found if f["rule"] in row.expected_rules and f["fix"] and f["fix"]["safe"] and f["fix"]["patch"]
    ]
    assert fixable or "fix_brings" not in row.spec, f"{row.id}: fix_brings, but no safe fix to apply"
    if not fixable or "setup" in row.spec:
        return
    config = prepared.folder / "config.json"
    original = config.read_bytes()
    # Where an error or warning already was: a fix may change which rule reports a place (fixing the depth
    # turns a tap past the target into a tap past num_target_layers), but it must not make a new one.
    serious = {f["pointer"] for f in found if f["severity"] != "info"}
    declared = set(row.spec.get("fix_brings", ()))
    brought: set[str] = set()

    def after(patches: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
        data = json.loads(original)
        for patch in patches:
            data = jsonpatch.apply_patch(data, patch)
        config.write_bytes(dump(data))
        try:
            return findings_of(prepared.run(dflash))
        finally:
            config.write_bytes(original)

    for f in fixable:
        left = after([f["fix"]["patch"]])
        still = [g for g in left if (g["rule"], g["pointer"]) == (f["rule"], f["pointer"])]
        assert still == [], f"the fix of {f['rule']} {f['pointer']} leaves:\n{shown(still)}"
        new = [g for g in left if g["severity"] != "info" and g["pointer"] not in serious]
        brought |= {f"{g['rule']} {g['severity']} {g['pointer']}" for g in new}
        new = [g for g in new if f"{g['rule']} {g['severity']} {g['pointer']}" not in declared]
        assert new == [], f"the fix of {f['rule']} {f['pointer']} brings:\n{shown(new)}"
    assert declared <= brought, f"no fix brings {sorted(declared - brought)}"
    if len(fixable) > 1:
        fixed = {(f["rule"], f["pointer"]) for f in fixable}
        still = [g for g in after([f["fix"]["patch"] for f in fixable]) if (g["rule"], g["pointer"]) in fixed]
        assert still == [], f"all fixes together leave:\n{shown(still)}"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_rule_case(row: Row, dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prepared = prepare(row, dflash, tmp_path, monkeypatch)
    before = (prepared.folder / "config.json").read_bytes()
    result = prepared.run(dflash)
    found = findings_of(result)
    assert (prepared.folder / "config.json").read_bytes() == before, "the check changed the file"
    judge(row, found)
    if "exit" in row.spec:
        assert result.code == row.spec["exit"], f"exit {result.code}:\n{shown(found)}"
    if "text_output" in row.spec:
        text = prepared.run(dflash, "text")
        assert text.code == result.code
        for piece in row.spec["text_output"]:
            assert fragment(piece) in text.out, text.out
    check_fixes(row, prepared, found, dflash)


# ------------------------------------------------------------------------------------------ the table


def test_every_rule_has_a_failing_and_a_passing_row() -> None:
    """Each rule of the catalogue has its case file with a row where it fires, and some row (there, or a clean
    input in clean.yaml) names it as a rule that must not fire."""
    ids = set(catalogue())
    files = {p.stem for p in CASES_DIR.glob("*.yaml")}
    assert files - ids == {"clean"}, f"case files of no rule: {sorted(files - ids - {'clean'})}"
    assert ids - files == set(), f"rules without a case file: {sorted(ids - files)}"
    for rule in sorted(ids):
        own = [r for r in ROWS if r.file == rule]
        assert any(rule in r.expected_rules for r in own), f"{rule}.yaml has no row where {rule} fires"
        assert any(rule in r.absent for r in ROWS), f"no row names {rule} in `absent`"
        strays = [r.name for r in own if rule not in r.expected_rules and rule not in r.absent]
        assert strays == [], f"rows of {rule}.yaml about other rules: {strays}"


def test_every_declared_severity_and_fix_is_shown_by_a_row() -> None:
    """The linter refuses a finding outside its rule's declaration (severities, a fix), so every row shows that
    nothing undeclared is produced. This shows each declaration is no wider than the rule: every severity a rule
    declares is expected by some row, and a rule that declares a fix has a row that expects one."""
    wrong = []
    for rule, entry in declarations().items():
        expected = [e for r in ROWS for e in r.expect if e.rule == rule]
        shown = {e.severity for e in expected}
        if shown != set(entry["severities"]):
            wrong.append(f"{rule} declares {entry['severities']}, rows show {sorted(shown)}")
        if any(e.fix is not None for e in expected) != entry["fix"]:
            wrong.append(f"{rule} declares fix={entry['fix']}, but no row expects one (or one does)")
    assert wrong == []


def test_rows_name_known_rules() -> None:
    ids = set(catalogue())
    for row in ROWS:
        unknown = row.expected_rules - ids
        assert not unknown, f"{row.id}: unknown rules {sorted(unknown)}"
        assert all(any(i.startswith(p) for i in ids) for p in row.absent), f"{row.id}: {row.absent}"


def _standard_taps(n: int, k: int) -> list[int]:
    """The DFlash reference's build_target_layer_ids: evenly spaced from 1 to N-3, round-half-even."""
    return [n // 2] if k == 1 else [round(1 + i * (n - 4) / (k - 1)) for i in range(k)]


def test_bases() -> None:
    """What the rows rely on about their bases."""
    v1 = base("Qwen3.5-4B-DFlash").data
    assert v1["architectures"] == ["DFlashDraftModel"] and "rope_theta" not in v1
    assert "block_size" in v1["dflash_config"] and "block_size" not in v1
    assert v1["num_target_layers"] == 32 and v1["dflash_config"]["target_layer_ids"] == _standard_taps(32, 8)
    legacy = base("Qwen3-4B-DFlash-b16").data
    assert legacy["block_size"] == 16 and "block_size" not in legacy["dflash_config"]
    assert "rope_theta" in legacy and "rope_parameters" not in legacy
    assert set(legacy["layer_types"]) == {"full_attention"}
    dflash2 = base("Qwen3.8-27B-DFlash2").data
    assert dflash2["architectures"] == ["DFlash2DraftModel"] and dflash2["is_causal"] is False
    assert dflash2["use_sliding_window"] is True and set(dflash2["layer_types"]) == {"sliding_attention"}
    # Trained taps: DF106 (info) on the unmodified file.
    taps = dflash2["dflash_config"]["target_layer_ids"]
    assert taps != _standard_taps(dflash2["num_target_layers"], len(taps))
    # The test's own copy of the standard-taps formula agrees with published drafters.
    assert _standard_taps(36, 5) == [1, 9, 17, 25, 33] and _standard_taps(64, 5) == [1, 16, 31, 46, 61]
    # The stale incident file is the upstream file with three changes.
    stale = copy.deepcopy(base("Qwen3.6-27B-DFlash").data)
    stale["dflash_config"]["mask_token_id"] = 248064
    stale["dflash_config"]["target_layer_ids"] = [1, 17, 33, 49, 63]
    stale["layer_types"] = ["full_attention"] * 5
    assert base("incident").data == stale
    # The small drafter's sizes are the ones small_shapes() writes.
    small = base("small-b16").data
    assert (small["hidden_size"], small["head_dim"], small["num_hidden_layers"]) == (64, 16, 5)
    assert shapes_of(small) == small_shapes()


def test_qwen3_tokenizer_layout() -> None:
    decoder = qwen3_tokenizer_config()["added_tokens_decoder"]
    assert (decoder["151643"]["content"], decoder["151643"]["special"]) == ("<|endoftext|>", True)
    assert (decoder["151645"]["content"], decoder["151645"]["special"]) == ("<|im_end|>", True)
    assert (decoder["151667"]["content"], decoder["151667"]["special"]) == ("<think>", False)
    assert max(int(i) for i in decoder) == 151668


def test_row_names_are_unique_and_the_loader_is_strict() -> None:
    assert len({r.id for r in ROWS}) == len(ROWS)
    assert yaml.load("a: no\nb: 1e-06\nc: !int 1e3\nd: !bytes '\\xff\\n'\n", Loader=CaseLoader) == {
        "a": "no",
        "b": 1e-06,
        "c": 1000,
        "d": b"\xff\n",
    }
    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate key"):
        yaml.load("a: 1\na: 2\n", Loader=CaseLoader)


def test_the_df505_bound_is_below_the_real_weights(tmp_path: Path) -> None:
    """DF505.yaml's bound for the small drafter, 82272 bytes (its 164544 parameters as DF505 counts them, at 4
    bits), is below a quarter of its real F16 file: the rows' pointers test the bound, not a real size."""
    assert save(tmp_path / "model.safetensors", small_shapes()).stat().st_size // 4 > 82272

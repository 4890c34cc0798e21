"""The rule cases' table: its loader, its bases and the bytes of each row's config.json (the tests that run
it: test_rule_cases.py).

The table is the YAML files in cases/ next to this module: DF204.yaml holds DF204's rows (each names DF204 in
`expect` or in `absent`), clean.yaml the published drafters as they are, alone and with their own target,
weights, upstream or launch. A row is a mapping under its name (a string). A row that is its config.json alone
(only the keys of IN_PROCESS_KEYS) is linted in this process on its bytes, as `check` lints such a file
(harness_in_process.py): most rows need nothing more. Any other row is written into a temporary dir outside any
git work tree (test_rule_cases.py's row_dir) and run through the real CLI, `check --format json` (or `preflight`
when the row has a launch) invoked in-process through click (harness_files.py). Either way the findings are
judged the same (harness_judge.py). Adding a rule means one rule module plus its DFnnn.yaml here, with a row where
it fires, and a row (there or in clean.yaml) that names it in `absent`.

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
  snapshot: true              the drafter dir is the base repo's snapshot in a Hugging Face cache, its config.json a
                              link to the blob named after the unchanged base's git blob id, holding the row's bytes
  setup: [step]               fix-then-restore (a lock recorded by `fix`, then other bytes), link-into-cache-blob
  options: [--strict]         more command-line options
  launch: {...}               preflight `vllm serve TARGET --speculative-config SPEC ARGS`: {method: eagle3,
                              num_speculative_tokens: 7, args: [-tp, "4"]} (SPEC defaults: dflash, 15 tokens);
                              env: {NAME: value} prefixes NAME=value; engine: sglang runs `PYTHON -m
                              sglang.launch_server --model-path TARGET ... --speculative-draft-model-path DIR ARGS`
                              (PYTHON: the tests' own, which has no SGLang);
                              release: "0.34.0" runs vLLM in an interpreter with that release installed (its
                              metadata only: the engine step is off), else the release is not known
  engine: {records: [...], notes: [...]}
                              what preflight's engine step hands the DF90x rules, which no run here can bring
                              (they need the launch's own engine): each record as an adapter writes it (the
                              shape of dflash_adapter_io.record), read by from_json as the step reads it:
                              {engine: vllm (the default) or sglang, version (default: the pinned release, one
                              the adapters were checked against; null: unknown), refused: {type, message, where},
                              reads: {target_layer_ids, mask_token_id, layer_types, sliding_window (one a layer),
                              max_model_len: {served, target}, ...}, failed: why the adapter could not answer};
                              notes: why the engine was not asked. `{}`: asked, no engine there. Linted in
                              process: a row with `engine` has no files, target, launch or options.

  expect: ["DF104 error /dflash_config/target_layer_ids/7", ...]
      "RULE SEVERITY POINTER" (no pointer: the whole file), or {finding: "...", message: [fragments],
      message_without: [fragments], count: 2, fix: {safe: true, patch: [...], summary: fragment},
      engines: ["vllm<0.34.0"]} (the releases it holds for; none: a finding about the file, whatever serves it).
      For each rule named here the findings of that rule are exactly these (as a multiset);
      `{transformers}` in a fragment is the installed transformers version, and `{vLLM}`, `{SGLang}` the pinned
      release as prose names it (`vLLM 0.34.0`).
  absent: [DF104, DF5]        rules, or id prefixes ("DF" for everything), that must not fire, apart from
                              the rules in `expect`
  exit: 1                     the exit code (else 0 or 1)
  fix_brings: ["DF209 warning /dflash_config/use_swa"]
                              what the fixes may bring at a new place, and one of them must: the base's own
                              finding, back where the fix restores the published value
  text_output: [fragments]    of the text report of the same command

Every row also checks: one file reported and linted (not skipped), nothing on stderr, the drafter's
config.json unchanged by a CLI run, each finding of an expected rule located (line and column) with a one-line message
and the catalogue's name; and each safe JSON-patch fix of such a finding, applied by an independent RFC 6902
implementation (jsonpatch), makes it go away without an error or warning at a new place.
"""

from __future__ import annotations

import codecs
import copy
import decimal
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from checkpoints import small_config
from helpers import FIXTURES

JSON = Any

CASES_DIR = Path(__file__).with_name("cases")
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
    # RedHatAI's speculators-format drafter (level A), as published (its file has no final newline).
    "DeepSeek-V4-Flash-speculator": lambda: Base(
        _published("upstream/RedHatAI__DeepSeek-V4-Flash-speculator.dflash/config.json"),
        "RedHatAI/DeepSeek-V4-Flash-speculator.dflash",
    ),
    # The partial copy of gpt-oss-20b-DFlash (level D): the catalog knows it as partial, with its target.
    "gpt-oss-20b-DFlash-partial": lambda: Base(
        _published("upstream/z-lab__gpt-oss-20b-DFlash/config.partial.json"), "z-lab/gpt-oss-20b-DFlash"
    ),
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
    "snapshot", "setup", "options", "launch", "engine", "expect", "absent", "exit", "text_output", "fix_brings",
}  # fmt: skip
FINDING_KEYS = {"finding", "message", "message_without", "count", "fix", "engines"}
# A row of only these keys is its config.json alone: linted in this process on its bytes (harness_in_process).
# The others need files, a target, a launch, the Hub, the CLI's options, its exit code or its text output.
IN_PROCESS_KEYS = {"base", "raw", "move", "drop", "set", "edit", "engine", "expect", "absent", "fix_brings"}


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

    @property
    def in_process(self) -> bool:
        return set(self.spec) <= IN_PROCESS_KEYS


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
            # The engine's records stand in for a preflight run: nothing else of one can come with them.
            assert "engine" not in spec or set(spec) <= IN_PROCESS_KEYS, f"{where}: an engine row is a config alone"
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

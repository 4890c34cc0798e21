"""The launches the launch tests put to the engines' own code (tests/engines/launch_oracle.py): the drafters and
cases of test_launch_checks.py, the generated lines of test_launch_differential.py, and each oracle call of both
as a value (`oracle_runs`), so that `./dev engines --upgrade` puts the same launches to two releases."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from helpers import FIXTURES

ORACLE = Path(__file__).with_name("launch_oracle.py")
B16 = FIXTURES / "upstream" / "z-lab__Qwen3-4B-DFlash-b16" / "config.json"
QWEN3_4B = str(FIXTURES / "targets" / "Qwen__Qwen3-4B")  # 32 heads, 8 KV heads, max_position_embeddings 40960
SLIDING = ["sliding_attention"] * 4 + ["full_attention"]
LINES = 320
SEED = 20261202


@dataclass(frozen=True)
class OracleRun:
    """One launch_oracle.py call: its request, the environment it changes (None: unset) and its working dir."""

    name: str
    request: Mapping[str, Any]
    cwd: Path
    env: Mapping[str, str | None] = field(default_factory=dict)


def ask_oracle(
    python: Path, request: Mapping[str, Any], cwd: Path, env: Mapping[str, str | None] | None = None
) -> list[dict[str, Any]]:
    """launch_oracle.py's answers to `request`, run by the engine venv's `python` in `cwd` (CPU, offline), with
    `env` changing the environment (None: unset)."""
    environment = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1"}
    for name, value in (env or {}).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    done = subprocess.run(
        [str(python), str(ORACLE)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=1500,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answers: list[dict[str, Any]] = json.loads(done.stdout)
    return answers


def drafter(folder: Path, name: str, source: Path = B16, **change: Any) -> Path:
    """A drafter dir: `source`'s config.json with top-level keys changed (None drops one)."""
    data = json.loads(source.read_text())
    for key, value in change.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path = folder / f"{name}-DFlash"
    path.mkdir()
    (path / "config.json").write_text(json.dumps(data, indent=2))
    return path


def dflash_case(target: str, path: Path, **more: Any) -> dict[str, Any]:
    return {"target": target, **more,
            "speculative_config": {"method": "dflash", "model": str(path), "num_speculative_tokens": 15}}  # fmt: skip


# --- test_launch_checks.py ---

# --speculative-config keys some vLLM release lacks (0.34 dropped the first two and added the third), one it
# deprecates, and one no release has.
SPEC_KEYS: tuple[tuple[str, Any], ...] = (
    ("disable_padded_drafter_batch", False),
    ("use_heterogeneous_vocab", False),
    ("draft_decode_context_parallel_size", 1),
    ("parallel_drafting", True),
    ("num_spec_tokens", 15),
)
# Speculative methods on a DFlash drafter in a folder that says dflash (True) or not (False); None: no method.
METHOD_CHOICES: tuple[tuple[bool, str | None], ...] = (
    (True, None), (False, None), (True, "draft_model"), (False, "draft_model"), (True, "eagle3"), (True, "dflash2"),
)  # fmt: skip


def v1_runner_pairs(folder: Path) -> dict[str, tuple[str, Path]]:
    """Drafters the V1 runner refuses (mixed layers, candidate heads, XPress) and ones it builds, with targets."""
    return {
        "full": (QWEN3_4B, drafter(folder, "full")),
        "mixed": (QWEN3_4B, drafter(folder, "mixed", layer_types=SLIDING, sliding_window=2048,
                                    use_sliding_window=True)),
        "sliding": (QWEN3_4B, drafter(folder, "sliding", layer_types=["sliding_attention"] * 5,
                                      sliding_window=2048, use_sliding_window=True)),
        "published-mixed": (str(FIXTURES / "targets" / "Qwen__Qwen3.6-27B"),
                            FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash"),
        "dflash2": (QWEN3_4B, FIXTURES / "upstream" / "z-lab__Qwen3.8-27B-DFlash2"),
        "xpress": (QWEN3_4B, drafter(folder, "xpress", architectures=["DFlashQwen3XPressModel"])),
    }  # fmt: skip


def draft_tp_rows(folder: Path) -> list[dict[str, Any]]:
    """Draft tensor-parallel sizes (1 or the TP size, else refused) and a drafter whose heads do not divide."""
    narrow = drafter(folder, "heads20", num_attention_heads=20, num_key_value_heads=4, head_dim=128)
    plain = drafter(folder, "plain")
    rows: list[tuple[Path, int, int | None]] = [
        (plain, tp, draft) for tp in (1, 2, 4) for draft in (None, 1, 2, 3, 4) if draft is None or draft <= tp
    ]
    rows += [(narrow, tp, None) for tp in (2, 4, 8)]
    cases = []
    for path, tp, draft in rows:
        spec: dict[str, Any] = {"method": "dflash", "model": str(path), "num_speculative_tokens": 15}
        if draft is not None:
            spec["draft_tensor_parallel_size"] = draft
        cases.append({"target": QWEN3_4B, "speculative_config": spec, "tp": tp})
    return cases


def served_speculators_lines(folder: Path) -> list[list[str]]:
    """`vllm serve SPEC_DIR ...` lines (relative to `folder`): the verifier as target, the file's method."""
    source = FIXTURES / "upstream" / "RedHatAI__DeepSeek-V4-Flash-speculator.dflash" / "config.json"
    data = json.loads(source.read_text())
    dirs = {
        "spec": data,
        "spec2": data | {"speculators_model_type": "dflash2"},
        "local": data | {"speculators_config": data["speculators_config"] | {"verifier": {"name_or_path": "local"}}},
        "broken": {k: v for k, v in data.items() if k != "transformer_layer_config"},
    }
    for name, config in dirs.items():
        (folder / name).mkdir()
        (folder / name / "config.json").write_text(json.dumps(config))
    shutil.copytree(B16.parent, folder / "plain-DFlash")
    return [
        ["./spec"],
        ["./spec2", "--revision", "main"],
        ["./spec", "-sc", json.dumps({"model": "z-lab/other", "num_speculative_tokens": 3, "method": "eagle3"})],
        ["./spec", "-sc.num_speculative_tokens", "7", "-tp", "2"],
        ["./local"],
        ["./broken"],
        ["./plain-DFlash", "-sc", json.dumps({"model": "./plain-DFlash", "num_speculative_tokens": 15})],
    ]


def draft_window_argvs(folder: Path) -> list[list[str]]:
    """SGLang DFLASH launches with draft windows below, at and above the drafter's block size."""
    drafters = {
        "b16": B16.parent,
        "b8": drafter(folder, "b8", block_size=8),
        "nested-b10": drafter(
            folder, "nested", dflash_config={**json.loads(B16.read_text())["dflash_config"], "block_size": 10}
        ),
        "none": drafter(folder, "none", block_size=None),
        "string-b8": drafter(folder, "string", block_size="8"),
    }
    lines: list[tuple[str, list[str]]] = []
    for name in drafters:
        for window in ("7", "8", "10", "15", "16"):
            lines.append((name, ["--speculative-draft-window-size", window]))
        lines.append((name, ["--speculative-draft-window-size", "8", "--speculative-num-draft-tokens", "8"]))
        lines.append((name, ["--speculative-draft-window-size", "8", "--speculative-dflash-block-size", "12"]))
    return [["--model-path", QWEN3_4B, "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path",
             str(drafters[name]), *extra] for name, extra in lines]  # fmt: skip


def block_drafters(folder: Path) -> dict[str, Path]:
    """Drafters with a block size at the top level, in dflash_config, as a string, and none at all."""
    nested = {**json.loads(B16.read_text())["dflash_config"], "block_size": 10}
    return {
        "b16": B16.parent,
        "b8": drafter(folder, "b8", block_size=8),
        "nested-b10": drafter(folder, "nested", dflash_config=nested),
        "string-b8": drafter(folder, "string", block_size="8"),
        "none": drafter(folder, "none", block_size=None),
    }


# What each of block_drafters' drafters says its block is, as SGLang int()s it (None: it says none), in its order.
FILE_BLOCKS: dict[str, int | None] = {"b16": 16, "b8": 8, "nested-b10": 10, "string-b8": 8, "none": None}
# The drafts per step a vLLM launch gives (None: none) and the SGLang launch options that set them.
VLLM_BLOCK_TOKENS: tuple[int | None, ...] = (None, 7, 9, 15)
SGLANG_BLOCK_OPTIONS: tuple[tuple[str, ...], ...] = (
    (), ("--speculative-num-draft-tokens", "8"), ("--speculative-dflash-block-size", "12"),
    ("--speculative-num-draft-tokens", "16"),
)  # fmt: skip


def vllm_block_cases(folder: Path) -> list[dict[str, Any]]:
    """Each block drafter under each VLLM_BLOCK_TOKENS (the drafters first, in block_drafters' order)."""
    cases = []
    for path in block_drafters(folder).values():
        for tokens in VLLM_BLOCK_TOKENS:
            spec: dict[str, Any] = {"method": "dflash", "model": str(path)}
            if tokens is not None:
                spec["num_speculative_tokens"] = tokens
            cases.append({"target": QWEN3_4B, "speculative_config": spec})
    return cases


def sglang_block_argvs(folder: Path) -> list[list[str]]:
    """SGLang DFLASH launches of each block drafter under each of SGLANG_BLOCK_OPTIONS."""
    head = ["--model-path", QWEN3_4B, "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path"]
    paths = block_drafters(folder).values()
    return [[*head, str(path), *options] for path in paths for options in SGLANG_BLOCK_OPTIONS]


PARALLEL_ENVS: tuple[dict[str, str], ...] = ({}, {"SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION": "1"})


def parallel_layout_argvs() -> list[list[str]]:
    """SGLang DFLASH launches with pipeline, attention DP and context parallel layouts."""
    layouts = [[], ["--pp-size", "2"], ["--pipeline-parallel-size", "1"], ["--pp-size=3", "--tp-size", "2"],
               ["--dp-size", "2"], ["--dp-size", "2", "--enable-dp-attention"], ["--enable-dp-attention"],
               ["--dp-size", "4", "--enable-dp-attention", "--enable-dp-lm-head"], ["--attn-dp-size", "2"],
               ["--attention-data-parallel-size", "2", "--enable-dp-lm-head"],
               ["--attn-dp-size", "2", "--enable-dp-lm-head", "--attn-cp-size", "2"],
               ["--attn-dp-size", "2", "--dp-size", "4", "--enable-dp-attention", "--enable-dp-lm-head"]]  # fmt: skip
    head = ["--model-path", QWEN3_4B, "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path",
            str(B16.parent)]  # fmt: skip
    return [[*head, *layout] for layout in layouts]


MAX_LENGTHS = ["2048", "4096", "8k", "16K", "32768"]


def vllm_int(text: str) -> int:
    return int(text[:-1]) * (1000 if text.endswith("k") else 1024) if text[-1] in "kK" else int(text)


def max_len_cases(folder: Path) -> list[dict[str, Any]]:
    """Drafters shorter than the target (RoPE scaling of each kind) under --max-model-len values."""
    ropes: dict[str, dict[str, Any] | None] = {
        "default": None,
        "yarn": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
        "linear": {"rope_type": "linear", "factor": 2.0},
        "dynamic": {"rope_type": "dynamic", "factor": 2.0},
        "legacy-type-key": {"type": "yarn", "factor": 2.0},
    }
    drafters = {
        name: drafter(folder, name, max_position_embeddings=4096, rope_scaling=rope) for name, rope in ropes.items()
    }
    return [dflash_case(QWEN3_4B, path, max_model_len=vllm_int(length))
            for path in drafters.values() for length in MAX_LENGTHS]  # fmt: skip


def launch_line_runner_cases(folder: Path) -> list[dict[str, Any]]:
    """Pipeline layouts under external_launcher (V1 chosen by the layout) with drafters V1 refuses or builds."""
    drafters = {
        "full": drafter(folder, "full"),
        "mixed": drafter(folder, "mixed", layer_types=SLIDING, sliding_window=2048, use_sliding_window=True),
        "dflash2": FIXTURES / "upstream" / "z-lab__Qwen3.8-27B-DFlash2",
    }
    layouts: list[dict[str, Any]] = [
        {"executor": "external_launcher", "pp": 2},
        {"executor": "external_launcher", "pp": 1},
        {"pp": 2},
    ]
    return [dflash_case(QWEN3_4B, path, **layout) for path in drafters.values() for layout in layouts]


# --- test_launch_differential.py ---


def _pick(rng: random.Random, *options: Any) -> Any:
    return options[rng.randrange(len(options))]


def vllm_line(rng: random.Random, folder: Path, n: int) -> list[str]:
    target, drafter = _pick(rng, str(folder / "t"), "./t"), _pick(rng, str(folder / "d"), "./d")
    tokens, tp = rng.randint(1, 16), _pick(rng, 1, 2, 4, 8)
    spec: dict[str, Any] = {"model": drafter}
    if rng.random() < 0.7:
        spec["method"] = _pick(rng, "dflash", "eagle3", "dflash")
    if rng.random() < 0.8:
        spec[_pick(rng, "num_speculative_tokens", "num-speculative-tokens")] = tokens
    if rng.random() < 0.2:
        spec["revision"] = _pick(rng, "main", "v2")
    if rng.random() < 0.15:  # vLLM accepts 1 or the TP size
        spec["draft_tensor_parallel_size"] = _pick(rng, 1, 2, 3)
    config: dict[str, Any] = {}
    options: list[list[str]] = []
    form = rng.randrange(6)
    if form == 0:
        options.append([_pick(rng, "--speculative-config", "-sc", "--speculative_config"), json.dumps(spec)])
    elif form == 1:
        options.append([f"{_pick(rng, '--speculative-config', '-sc')}={json.dumps(spec)}"])
    elif form == 2:
        base = _pick(rng, "--speculative-config", "-sc")
        for key, value in spec.items():
            text = value if isinstance(value, str) else json.dumps(value)
            options.append([f"{base}.{key}={text}"] if rng.random() < 0.3 else [f"{base}.{key}", text])
    elif form == 3:
        config["speculative-config"] = spec
    elif form == 4:  # the --spec-* shorthands
        options.append(["--spec-model", drafter])
        if "method" in spec:
            options.append(["--spec-method", spec["method"]])
        options.append(["--spec-tokens", str(tokens)])
    else:  # deprecated: vLLM before 0.8 (the pinned vLLM refuses these)
        options.append(["--speculative-model", drafter, "--num-speculative-tokens", str(tokens)])
    tp_option = _pick(rng, "-tp", "--tensor-parallel-size", "--tensor_parallel_size", "tp=")
    if rng.random() < 0.3:
        config["tensor-parallel-size"] = tp
    else:
        options.append([f"--tensor-parallel-size={tp}"] if tp_option == "tp=" else [tp_option, str(tp)])
    if rng.random() < 0.2:  # repeated: the last wins
        options.append(["-tp", str(_pick(rng, 1, 2))])
    if rng.random() < 0.3:
        options.append(["--revision", _pick(rng, "main", "None")])
    for extra in (["--max-model-len", "4096"], ["--enforce-eager"], ["--trust-remote-code"], ["--port", "8001"],
                  ["--gpu-memory-utilization", "0.9"], ["--served-model-name", "m"]):  # fmt: skip
        if rng.random() < 0.25:
            options.append(extra)
    if rng.random() < 0.3:
        pp = _pick(rng, 1, 2, 4)
        if rng.random() < 0.2:
            config["pipeline-parallel-size"] = pp
        else:
            name = _pick(rng, "-pp", "--pipeline-parallel-size", "--pipeline_parallel_size")
            options.append([f"{name}={pp}"] if rng.random() < 0.3 else [name, str(pp)])
    if rng.random() < 0.3:
        options.append(["--max-model-len", _pick(rng, "4096", "32k", "32K", "25.6k", "auto", "-1")])
    if rng.random() < 0.2:
        options.append(["--distributed-executor-backend", _pick(rng, "mp", "ray", "external_launcher")])
    rng.shuffle(options)
    model_form = rng.randrange(4)
    head: list[str] = []
    if model_form == 0:
        head = [target]
    elif model_form == 1:
        options.insert(rng.randrange(len(options) + 1), ["--model", target])
    elif model_form == 2:
        options.insert(rng.randrange(len(options) + 1), [f"--model={target}"])
    else:
        config["model"] = target
    if model_form != 0 and any(o[0] == "--served-model-name" for o in options):
        options = [o for o in options if o[0] != "--served-model-name"]
    line = head + [token for option in options for token in option]
    if config:
        path = folder / f"vllm-{n}.yaml"
        path.write_text(yaml.safe_dump(config))
        line[len(head) : len(head)] = ["--config", str(path)]
    return line


def sglang_line(rng: random.Random, folder: Path, n: int) -> list[str]:
    target, drafter = _pick(rng, str(folder / "t"), "./t"), _pick(rng, str(folder / "d"), "./d")
    config: dict[str, Any] = {}
    options: list[list[str]] = []

    def put(names: tuple[str, ...], key: str, value: str) -> None:
        if rng.random() < 0.2:
            config[key] = value
            return
        name = _pick(rng, *names)
        options.append([f"{name}={value}"] if rng.random() < 0.3 else [name, value])

    put(("--model-path", "--model"), "model-path", target)
    if rng.random() < 0.9:
        put(("--speculative-algorithm",), "speculative-algorithm", _pick(rng, "DFLASH", "EAGLE3", "DFLASH"))
    put(("--speculative-draft-model-path", "--speculative-draft-model"), "speculative-draft-model-path", drafter)
    tokens = str(rng.randint(1, 16))
    which = rng.randrange(4)
    if which in (0, 2):
        put(("--speculative-num-draft-tokens",), "speculative-num-draft-tokens", tokens)
    if which in (1, 2):
        block = tokens if rng.random() < 0.8 else str(rng.randint(1, 16))
        put(("--speculative-dflash-block-size",), "speculative-dflash-block-size", block)
    if rng.random() < 0.8:
        put(("--tp-size", "--tensor-parallel-size", "--tp"), "tp-size", str(_pick(rng, 1, 2, 4)))
    if rng.random() < 0.2:
        options.append(["--tp-size", str(_pick(rng, 1, 8))])  # repeated: the last wins
    if rng.random() < 0.3:
        put(("--revision",), "revision", _pick(rng, "main", "v1"))
    if rng.random() < 0.2:
        put(("--speculative-draft-window-size",), "speculative-draft-window-size", str(rng.randint(1, 20)))
    if rng.random() < 0.2:
        put(("--speculative-draft-model-revision",), "speculative-draft-model-revision", "v2")
    for extra in (["--mem-fraction-static", "0.8"], ["--trust-remote-code"], ["--port", "30000"],
                  ["--context-length", "4096"], ["--speculative-num-steps", "1"]):  # fmt: skip
        if rng.random() < 0.25:
            options.append(extra)
    if rng.random() < 0.3:
        put(("--pp-size", "--pipeline-parallel-size"), "pp-size", str(_pick(rng, 1, 2)))
    if rng.random() < 0.3:
        put(("--dp-size", "--data-parallel-size", "--dp"), "dp-size", str(_pick(rng, 1, 2, 4)))
    if rng.random() < 0.2:
        put(("--attn-dp-size", "--attention-data-parallel-size"), "attn-dp-size", str(_pick(rng, 1, 2)))
    if rng.random() < 0.2:
        put(("--attn-cp-size", "--attention-context-parallel-size"), "attn-cp-size", str(_pick(rng, 1, 2)))
    for flag in ("--enable-dp-attention", "--enable-dp-lm-head"):
        if rng.random() < 0.25:
            options.append([flag])
    rng.shuffle(options)
    line = [token for option in options for token in option]
    if config:
        path = folder / f"sglang-{n}.yaml"
        path.write_text(yaml.safe_dump(config))
        line[:0] = ["--config", str(path)]
    return line


def generated_lines(engine: str, folder: Path) -> list[list[str]]:
    """The differential's lines for `engine`, with the Qwen3-4B target and its b16 drafter copied into `folder`
    (the engine reads their config.json while it builds its arguments)."""
    if not (folder / "t").exists():
        shutil.copytree(FIXTURES / "targets" / "Qwen__Qwen3-4B", folder / "t")
        shutil.copytree(B16.parent, folder / "d")
    rng = random.Random(f"{SEED}-{engine}")
    make = vllm_line if engine == "vllm" else sglang_line
    return [make(rng, folder, n) for n in range(LINES)]


def oracle_runs(folder: Path) -> list[OracleRun]:
    """Every oracle call of the launch tests, each with its own working dir under `folder` (emptied first)."""
    shutil.rmtree(folder, ignore_errors=True)

    def sub(name: str) -> Path:
        path = folder / name
        path.mkdir(parents=True)
        return path

    runs = []
    here = sub("v1-runner")
    cases = [dflash_case(t, d) for t, d in v1_runner_pairs(here).values()]
    for value in ("0", "1"):
        runs.append(OracleRun(f"v1-runner VLLM_USE_V2_MODEL_RUNNER={value}", {"engine": "vllm-config", "cases": cases},
                              here, {"VLLM_USE_V2_MODEL_RUNNER": value}))  # fmt: skip
    here = sub("draft-tp")
    runs.append(OracleRun("draft-tp", {"engine": "vllm-config", "cases": draft_tp_rows(here)}, here,
                          {"VLLM_USE_V2_MODEL_RUNNER": "1"}))  # fmt: skip
    here = sub("served-speculators")
    lines = served_speculators_lines(here)
    runs.append(OracleRun("served-speculators", {"engine": "vllm", "lines": lines, "speculators": True}, here))
    here = sub("draft-window")
    runs.append(OracleRun("draft-window", {"engine": "sglang-dflash", "lines": draft_window_argvs(here)}, here))
    for env in PARALLEL_ENVS:
        label = " ".join(f"{k}={v}" for k, v in env.items()) or "default"
        request = {"engine": "sglang-dflash", "lines": parallel_layout_argvs()}
        runs.append(OracleRun(f"parallel-layouts {label}", request, folder, dict(env)))
    here = sub("vllm-block")
    runs.append(OracleRun("vllm-block", {"engine": "vllm-config", "cases": vllm_block_cases(here)}, here,
                          {"VLLM_USE_V2_MODEL_RUNNER": "1"}))  # fmt: skip
    here = sub("sglang-block")
    runs.append(OracleRun("sglang-block", {"engine": "sglang-dflash", "lines": sglang_block_argvs(here)}, here))
    here = sub("max-model-len")
    runs.append(OracleRun("max-model-len", {"engine": "vllm-config", "cases": max_len_cases(here)}, here,
                          {"VLLM_USE_V2_MODEL_RUNNER": "1"}))  # fmt: skip
    here = sub("runner-by-layout")
    runs.append(OracleRun("runner-by-layout", {"engine": "vllm-config", "cases": launch_line_runner_cases(here)},
                          here, {"VLLM_USE_V2_MODEL_RUNNER": None}))  # fmt: skip
    for engine in ("vllm", "sglang"):
        here = sub(f"lines-{engine}")
        runs.append(OracleRun(f"lines-{engine}", {"engine": engine, "lines": generated_lines(engine, here)}, here))
    return runs


# SGLang's Nemotron 3.5 layout on B16 (is_nemotron_35_draft_config), with attention sinks at the top level.
NEMOTRON_SINKS: dict[str, Any] = {
    "has_embed_tokens": True,
    "has_lm_head": False,
    "quantization_config": {"quant_algo": "W4A16_NVFP4"},
    "eagle_aux_hidden_state_layer_ids": [2, 10, 18, 26, 34],
    "attention_sink_bias": True,
}
# The draft attention backend options of an SGLang launch (none; the draft's; the server's; the prefill one).
SINK_BACKEND_OPTIONS: tuple[tuple[str, ...], ...] = (
    (), ("--speculative-draft-attention-backend", "trtllm_mha"), ("--speculative-draft-attention-backend", "fa3"),
    ("--attention-backend", "trtllm_mha"),
    ("--attention-backend", "trtllm_mha", "--prefill-attention-backend", "triton"),
)  # fmt: skip


def sink_drafters(folder: Path) -> dict[str, Path]:
    """Nemotron 3.5 drafters with sinks whose layers SGLang keeps on trtllm_mha (all sliding, causal) or not."""
    data = json.loads(B16.read_text())
    block = {**data["dflash_config"], "sample_from_anchor": False}
    sliding: dict[str, Any] = {
        "layer_types": ["sliding_attention"] * 5,
        "sliding_window": 2048,
        "use_sliding_window": True,
    }
    return {
        "full": drafter(folder, "sinks-full", dflash_config=block, **NEMOTRON_SINKS),
        "sliding": drafter(folder, "sinks-sliding", dflash_config=block, **NEMOTRON_SINKS, **sliding),
        "causal": drafter(folder, "sinks-causal", dflash_config=block, **NEMOTRON_SINKS, is_causal=True),
    }


QWEN36 = str(FIXTURES / "targets" / "Qwen__Qwen3.6-27B")  # max_position_embeddings 262144
QWEN36_DRAFTER = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"


def context_drafters(folder: Path) -> dict[str, Path]:
    """Qwen3.6 drafters of 262144 positions, of 32768, and of 32768 scaled by RoPE (YaRN, linear) x 8."""
    short: dict[str, Any] = {"max_position_embeddings": 32768}
    yarn = {"rope_type": "yarn", "factor": 8.0}
    linear = {"rope_type": "linear", "factor": 8.0}
    return {
        "own": QWEN36_DRAFTER.parent,
        "short": drafter(folder, "short", source=QWEN36_DRAFTER, **short),
        "yarn": drafter(folder, "yarn", source=QWEN36_DRAFTER, rope_scaling=yarn, **short),
        "linear": drafter(folder, "linear", source=QWEN36_DRAFTER, rope_scaling=linear, **short),
    }

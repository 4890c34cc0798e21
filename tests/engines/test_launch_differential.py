"""preflight's launch parser held against the engines' own argument parsing (tests/engines/launch_oracle.py, run
in the pinned engine venv) on generated launch lines (fixed seed, >= 300 per engine): flags and their aliases,
`=` forms, vLLM's dotted `--speculative-config.KEY VALUE`, JSON speculative configs, `--config` YAML merged
with the command line, deprecated spellings and repeated flags. Both readings must give the same target,
drafter, revisions, method, drafts per step, tensor- and pipeline-parallel sizes (vLLM: the max model length
and executor; SGLang: the draft window and the attention DP layout as DFLASH checks it); a line the
engine refuses (vLLM: a draft tensor-parallel size other than 1 or the TP size, too) must not be read by
preflight, unless launch_by_design.toml gives the reason. preflight may refuse a line the engine reads
(refusing beats guessing) but rarely."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import FIXTURES

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch import parse_launch

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ORACLE = Path(__file__).with_name("launch_oracle.py")
LINES = 320
SEED = 20261202
MAX_REFUSED = 0.15  # preflight's own refusals (a line the engine reads), as a share of the lines


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


def ours(engine: str, line: list[str]) -> dict[str, Any] | None:
    head = ["vllm", "serve"] if engine == "vllm" else ["python", "-m", "sglang.launch_server"]
    try:
        launch = parse_launch([*head, *line], lambda path: yaml.safe_load(Path(path).read_text()))
    except LaunchError:
        return None
    return {
        "target": launch.target,
        "target_revision": launch.target_revision,
        "drafter": launch.drafter,
        "drafter_revision": launch.drafter_revision,
        "method": launch.method,
        "tokens": launch.num_speculative_tokens if engine == "vllm" else launch.num_draft_tokens,
        "tp": launch.tensor_parallel_size,
        "pp": launch.pipeline_parallel_size,
        **(
            {"max_len": launch.max_model_len, "executor": launch.distributed_executor_backend}
            if engine == "vllm"
            else {
                "window": launch.draft_window_size,
                "attn_dp": launch.attention_dp_size,
                "lm_head": launch.dp_lm_head,
                "attn_cp": launch.attention_cp_size,
            }
        ),
    }


def engine_readings(engine_python: Path, engine: str, lines: list[list[str]], cwd: Path) -> list[dict[str, Any]]:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [str(engine_python), str(ORACLE)],
        input=json.dumps({"engine": engine, "lines": lines}),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    readings: list[dict[str, Any]] = json.loads(done.stdout)
    return readings


def _normal(engine: str, read: dict[str, Any]) -> dict[str, Any]:
    out = dict(read)
    if engine == "vllm" and out["target_revision"] == "None":
        out["target_revision"] = None
    if engine == "vllm" and out["max_len"] == -1:  # `auto`: the target's own length
        out["max_len"] = None
    return out


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_preflight_reads_launch_lines_as_the_engine_does(engine_python: Path, tmp_path: Path, engine: str) -> None:
    # Local model dirs (the engine reads their config.json while it builds its arguments; Hub ids would
    # need the network): the Qwen3-4B target and its b16 drafter.
    shutil.copytree(FIXTURES / "targets" / "Qwen__Qwen3-4B", tmp_path / "t")
    shutil.copytree(FIXTURES / "upstream" / "z-lab__Qwen3-4B-DFlash-b16", tmp_path / "d")
    rng = random.Random(f"{SEED}-{engine}")
    make = vllm_line if engine == "vllm" else sglang_line
    lines = [make(rng, tmp_path, n) for n in range(LINES)]
    readings = engine_readings(engine_python, engine, lines, tmp_path)
    disagree: list[str] = []
    used: set[str] = set()
    refused_by_us = 0
    for line, theirs in zip(lines, readings, strict=True):
        mine = ours(engine, line)
        if "refused" in theirs:
            if mine is not None and not _by_design(engine, line, used):
                disagree.append(f"engine refuses ({theirs['refused']}), preflight reads {mine}: {line}")
            continue
        if mine is None:
            refused_by_us += 1
            continue
        if _normal(engine, mine) != _normal(engine, theirs["read"]):
            disagree.append(f"preflight {mine} != engine {theirs['read']}: {line}")
    assert disagree == [], "\n".join(disagree[:20])
    stale = {name for name, entry in BY_DESIGN.items() if entry["engine"] == engine} - used
    assert not stale, f"launch_by_design.toml entries that match no difference: {sorted(stale)}"
    assert refused_by_us <= MAX_REFUSED * LINES, f"preflight refused {refused_by_us} lines the engine reads"
    assert sum("read" in r for r in readings) >= LINES // 2  # the generator makes mostly valid lines


BY_DESIGN = {
    name: entry for name, entry in tomllib.loads(Path(__file__).with_name("launch_by_design.toml").read_text()).items()
}


def _by_design(engine: str, line: list[str], used: set[str]) -> bool:
    """A difference the reviewed list (launch_by_design.toml) explains, with its reason."""
    for name, entry in BY_DESIGN.items():
        if entry["engine"] == engine and entry["option"] in line:
            used.add(name)
            return True
    return False

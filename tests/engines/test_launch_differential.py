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

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch import parse_launch
from engines.launches import LINES, ask_oracle, generated_lines

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MAX_REFUSED = 0.15  # preflight's own refusals (a line the engine reads), as a share of the lines


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
    lines = generated_lines(engine, tmp_path)
    readings = ask_oracle(engine_python, {"engine": engine, "lines": lines}, tmp_path)
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

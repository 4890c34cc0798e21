"""preflight's cache of engine answers against the pinned engines: a repeated launch is answered from the cache
as the engine answered it, and a change to the files, the launch or the installed engine asks the engine again.
What the user sees: the JSON's engine_check, the findings and the exit code. (The key and the store on their
own: tests/sources/test_engine_cache.py; every input of the key, end to end with a stand-in interpreter:
tests/commands/test_preflight_engine_step.py.)"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers import FIXTURES, Result

from dflash_cfg.model import display
from engines import build
from engines.venvs import other_version, release

Run = Callable[..., Result]

UPSTREAM = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash"
INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
QWEN36 = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"
RUNNING = build.locked()  # the releases the engine venv holds


def preflight(dflash: Run, launch: list[str]) -> tuple[Result, dict[str, Any], list[tuple[str, str, str]]]:
    result = dflash("preflight", "--format", "json", "--", *launch)
    assert result.code in (0, 1) and "Traceback" not in result.err, result.err
    doc = result.json()
    found = [(f["rule"], f["severity"], f["message"]) for f in doc["files"][0]["findings"]]
    return result, doc["engine_check"], found


def vllm(python: Path, drafter: Path, target: Path, *more: str) -> list[str]:
    spec = json.dumps({"method": "dflash", "model": str(drafter), "num_speculative_tokens": 15})
    module = "vllm.entrypoints.openai.api_server"
    return [str(python), "-m", module, "--model", str(target), "--speculative-config", spec, *more]


def test_a_repeated_vllm_preflight_is_answered_from_the_cache(dflash: Run, engine_python: Path, tmp_path: Path) -> None:
    drafter, target = tmp_path / "drafter", tmp_path / "target"
    shutil.copytree(UPSTREAM, drafter)
    shutil.copytree(QWEN36, target)
    launch = vllm(engine_python, drafter, target)
    first, asked, findings = preflight(dflash, launch)
    assert asked["status"] == "ran" and asked["cached"] is False and asked["version"] == RUNNING["vllm"], asked
    second, cached, again = preflight(dflash, launch)
    assert cached["cached"] is True, cached
    assert {k: cached[k] for k in ("status", "engine", "version", "python", "reason")} == {
        k: asked[k] for k in ("status", "engine", "version", "python", "reason")
    }
    assert second.code == first.code and again == findings
    text = dflash("preflight", "--", *launch)
    line = f"  engine check: {display('vllm', RUNNING['vllm'])} ({engine_python}): reads the file as written, cached\n"
    assert line in text.out, text.out

    config = drafter / "config.json"
    config.write_bytes(config.read_bytes().replace(b'"block_size": 16', b'"block_size":  16'))  # same JSON
    _, changed, same = preflight(dflash, launch)
    assert changed["cached"] is False and changed["status"] == "ran"
    # The same findings, but for the catalog's word: no longer the published bytes (DF605), its trained values (DF606).
    assert [f for f in same if f[0] != "DF606"] == [f for f in findings if f[0] != "DF605"]
    assert [f[0] for f in same if f[0] in ("DF605", "DF606")] == ["DF606"]
    (target / "config.json").write_bytes((target / "config.json").read_bytes() + b"\n")
    _, changed, _ = preflight(dflash, launch)
    assert changed["cached"] is False
    _, changed, _ = preflight(dflash, vllm(engine_python, drafter, target, "--tensor-parallel-size", "2"))
    assert changed["cached"] is False
    _, back, _ = preflight(dflash, launch)  # the launch as it was, on the files as they are: cached
    assert back["cached"] is True


def test_another_sglang_version_asks_the_engine_again(dflash: Run, engine_python: Path, tmp_path: Path) -> None:
    """A refusal (SGLang's IndexError on the incident's last-layer tap) is kept; installing another release of
    the engine (its metadata, in a venv over the engine venv's packages) asks again, and that answer is kept."""
    python = other_version(engine_python, tmp_path, {})
    launch = [str(python), "-m", "sglang.launch_server", "--model-path", str(QWEN36), "--speculative-algorithm"]
    launch += ["DFLASH", "--speculative-draft-model-path", str(INCIDENT)]
    first, asked, findings = preflight(dflash, launch)
    assert asked["status"] == "refused" and asked["cached"] is False and asked["version"] == RUNNING["sglang"], asked
    assert asked["reason"].startswith("IndexError") and first.code == 1
    second, cached, again = preflight(dflash, launch)
    assert cached["cached"] is True and cached["status"] == "refused" and second.code == 1 and again == findings
    release(python, "sglang", "0.5.99")
    _, upgraded, findings = preflight(dflash, launch)
    assert upgraded["cached"] is False and upgraded["version"] == "0.5.99", upgraded
    [refusal] = [f for f in findings if f[0] == "DF901"]
    assert refusal[1] == "warning" and "SGLang 0.5.99 refuses" in refusal[2]  # a release not checked against
    _, cached, _ = preflight(dflash, launch)
    assert cached["cached"] is True and cached["version"] == "0.5.99"

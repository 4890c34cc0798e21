"""preflight resolves a launch where the engine will (its environment, its working directory), fails a drafter
argument that leads to no drafter, and reads hostile `--config` YAML with a one-line cause. Real files, real
Hugging Face cache layouts, the real CLI."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, Result

Run = Callable[..., Result]

INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json"
UPSTREAM = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"
SPECULATORS = FIXTURES / "upstream" / "RedHatAI__DeepSeek-V4-Flash-speculator.dflash" / "config.json"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"
DRAFTER = str(UPSTREAM.parent)
DRAFTER = str(UPSTREAM.parent)
REPO = "z-lab/Qwen3.6-27B-DFlash"
COMMIT = "1" * 40


def cache_with(home: Path, drafter: Path) -> Path:
    """An HF_HOME whose hub cache holds REPO at main with `drafter` as its config.json."""
    snapshot = home / "hub" / f"models--{REPO.replace('/', '--')}" / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    shutil.copyfile(drafter, snapshot / "config.json")
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text(COMMIT)
    return snapshot / "config.json"


def spec(model: str, tokens: int | None = 15) -> str:
    body: dict[str, object] = {"method": "dflash", "model": model}
    if tokens is not None:
        body["num_speculative_tokens"] = tokens
    return json.dumps(body)


@pytest.fixture
def caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """dflash-cfg's own HF_HOME holds the upstream drafter; another one, which only the launch names, holds
    the incident's stale drafter."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    cache_with(ours, UPSTREAM)
    cache_with(theirs, INCIDENT)
    monkeypatch.setenv("HF_HOME", str(ours))
    return ours, theirs


def stale(result: Result, theirs: Path) -> bool:
    return result.code == 1 and f"-> {theirs}/hub/models--" in result.out and "DF205" in result.out


@pytest.mark.parametrize(
    "head",
    [
        pytest.param(lambda t: [f"HF_HOME={t}"], id="assignment"),
        pytest.param(lambda t: ["env", f"HF_HOME={t}"], id="env"),
        pytest.param(lambda t: ["env", f"HF_HUB_CACHE={t}/hub"], id="env-hub-cache"),
        pytest.param(lambda t: ["env", "-i", f"HF_HOME={t}"], id="env-i"),
        pytest.param(lambda t: [f"XDG_CACHE_HOME={t}/x", "env", f"HF_HOME={t}", "nohup"], id="chain"),
        pytest.param(lambda t: [f"HF_HOME={t}/../theirs"], id="relative-dots"),
    ],
)
def test_the_launch_environment_picks_the_hub_cache(
    dflash: Run, caches: tuple[Path, Path], head: Callable[[Path], list[str]]
) -> None:
    _, theirs = caches
    assert dflash("preflight", "--", "vllm", "serve", str(TARGET), "--speculative-config", spec(REPO)).code == 0
    result = dflash("preflight", "--", *head(theirs), "vllm", "serve", str(TARGET), "--speculative-config", spec(REPO))
    assert result.code == 1, result.err
    assert f"-> {theirs}" in result.out and "DF205" in result.out


def test_unsetting_and_clearing_the_environment_fall_back_to_home(
    dflash: Run, caches: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    cache_with(home / ".cache" / "huggingface", INCIDENT)
    monkeypatch.setenv("HOME", str(home))
    argv = ["vllm", "serve", str(TARGET), "--speculative-config", spec(REPO)]
    unset = dflash("preflight", "--", "env", "-u", "HF_HOME", *argv)
    assert unset.code == 1 and f"-> {home}/.cache/huggingface/hub/" in unset.out
    # env -i drops HOME too: the home directory of the user then comes from the password database
    cleared = dflash("preflight", "--", "env", "-i", f"HOME={home}", *argv)
    assert cleared.code == 1 and f"-> {home}/.cache/huggingface/hub/" in cleared.out
    modelscope = dflash("preflight", "--", "VLLM_USE_MODELSCOPE=true", *argv)
    assert modelscope.code == 2 and "ModelScope" in modelscope.err and modelscope.err.count("\n") == 1


def test_docker_env_file_and_client_environment_pick_the_container_cache(
    dflash: Run, caches: tuple[Path, Path], tmp_path: Path
) -> None:
    _, theirs = caches
    env_file = tmp_path / "engine.env"
    env_file.write_text("# the container's cache\nHF_HOME=/cache\n")
    docker = ["docker", "run", "-v", f"{theirs}:/cache", "-v", f"{TARGET}:/target"]
    tail = ["vllm/vllm-openai", "/target", "--speculative-config", spec(REPO)]
    from_file = dflash("preflight", "--", *docker, "--env-file", str(env_file), *tail)
    assert stale(from_file, theirs), from_file.err
    # `-e HF_HOME` takes the docker client's value, which the launch sets
    from_client = dflash("preflight", "--", "env", "HF_HOME=/cache", *docker, "-e", "HF_HOME", *tail)
    assert stale(from_client, theirs), from_client.err
    env_file.write_text("HF_HOME /cache\n")
    broken = dflash("preflight", "--", *docker, "--env-file", str(env_file), *tail)
    assert broken.code == 2 and "not NAME=value" in broken.err and broken.err.count("\n") == 1


def offline_in(theirs: Path) -> list[str]:
    return [f"HF_HUB_CACHE={theirs}/hub", "HF_HUB_OFFLINE=1", "vllm", "serve", str(TARGET)]


def offline_in_docker(theirs: Path) -> list[str]:
    hub = ["-v", f"{theirs}:/cache", "-e", "HF_HUB_CACHE=/cache/hub", "-e", "HF_HUB_OFFLINE=1"]
    return ["docker", "run", *hub, "-v", f"{TARGET}:/target", "vllm/vllm-openai", "/target"]


@pytest.mark.parametrize("launch", [offline_in, offline_in_docker], ids=["env", "docker-e"])
def test_the_launch_hub_settings_reach_the_check_as_values(
    dflash: Run, caches: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, launch: Callable[[Path], list[str]]
) -> None:
    """The launch's HF_HUB_CACHE and HF_HUB_OFFLINE decide where the drafter and its upstream are read, as the
    engine would read them, and this process's environment is the same throughout the check: the settings go
    to the Hub functions as values. Ours is online, with its own cache and a closed endpoint: a comparison made
    with our settings would fail (unreachable) or read our cache (the good drafter, so DF601)."""
    import huggingface_hub

    _, theirs = caches
    before = dict(os.environ)
    asked: list[tuple[str | None, bool]] = []  # the cache each lookup read, and whether ours was unchanged then
    real = huggingface_hub.try_to_load_from_cache

    def spy(*args: Any, **kwargs: Any) -> Any:
        asked.append((kwargs.get("cache_dir"), dict(os.environ) == before))
        return real(*args, **kwargs)

    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", spy)
    argv = [*launch(theirs), "--speculative-config", spec(REPO)]
    result = dflash("preflight", "--format", "json", "--from-hub", REPO, "--", *argv)
    assert result.code == 1, result.err
    [report] = result.json()["files"]
    assert report["path"].startswith(f"{theirs}/hub/models--")  # the launch's cache: the incident's drafter
    rules = {f["rule"] for f in report["findings"]}
    assert "DF205" in rules and "DF601" not in rules  # compared offline with the launch cache's own upstream
    assert dict(os.environ) == before
    assert asked and all(unchanged for _, unchanged in asked), asked
    assert {cache for cache, _ in asked} == {f"{theirs}/hub"}


@pytest.mark.parametrize(
    "head",
    [
        pytest.param(lambda d: ["env", "-C", str(d)], id="env-C"),
        pytest.param(lambda d: ["env", f"--chdir={d}"], id="env-chdir"),
        pytest.param(lambda d: ["uv", "run", "--directory", str(d)], id="uv-directory"),
        pytest.param(lambda d: ["env", "-C", str(d.parent), "uv", "run", "--directory", d.name], id="nested"),
    ],
)
def test_the_launch_working_directory_resolves_relative_paths(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, head: Callable[[Path], list[str]]
) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    for root, drafter in ((here, UPSTREAM), (there, INCIDENT)):
        (root / "drafter").mkdir(parents=True)
        shutil.copyfile(drafter, root / "drafter" / "config.json")
        shutil.copytree(TARGET, root / "target")
    monkeypatch.chdir(here)
    argv = ["vllm", "serve", "./target", "--speculative-config", spec("./drafter")]
    assert dflash("preflight", "--", *argv).code == 0
    result = dflash("preflight", "--", *head(there), *argv)
    assert result.code == 1 and f"-> {there}/drafter/config.json" in result.out, result.err
    missing = dflash("preflight", "--", "env", "-C", str(tmp_path / "absent"), *argv)
    assert missing.code == 2 and "not a directory" in missing.err


def test_docker_workdir_resolves_relative_container_paths(dflash: Run, tmp_path: Path) -> None:
    (tmp_path / "drafter").mkdir()
    shutil.copyfile(INCIDENT, tmp_path / "drafter" / "config.json")
    shutil.copytree(TARGET, tmp_path / "target")
    argv = ["docker", "run", "-v", f"{tmp_path}:/work", "-w", "/work", "vllm/vllm-openai", "target",
            "--speculative-config", spec("drafter")]  # fmt: skip
    result = dflash("preflight", "--", *argv)
    assert result.code == 1 and f"-> {tmp_path}/drafter/config.json" in result.out, result.err


def test_uv_env_file_and_unknown_env_options_are_refused(dflash: Run) -> None:
    argv = ["vllm", "serve", str(TARGET), "--speculative-config", spec(REPO)]
    for head in (["uv", "run", "--env-file", ".env"], ["env", "-S", "A=1 B=2"]):
        result = dflash("preflight", "--", *head, *argv)
        assert result.code == 2 and result.err.count("\n") == 1, result.err


def test_a_drafter_path_without_a_drafter_fails_the_gate_naming_where_it_is(dflash: Run, tmp_path: Path) -> None:
    target = tmp_path / "target"
    shutil.copytree(TARGET, target)
    wrong = dflash("preflight", "--", "vllm", "serve", str(target), "--speculative-config", spec(str(target)))
    assert wrong.code == 1 and "Qwen3_5ForConditionalGeneration" in wrong.err and "not a DFlash drafter" in wrong.err
    assert wrong.err.count("\n") == 1
    # A repo root whose drafter lives in a subfolder (with or without a config.json of its own)
    root = tmp_path / "repo"
    (root / "drafter-b16").mkdir(parents=True)
    shutil.copyfile(UPSTREAM, root / "drafter-b16" / "config.json")
    for _ in range(2):
        result = dflash("preflight", "--", "vllm", "serve", str(target), "--speculative-config", spec(str(root)))
        assert result.code == 1 and f"probably {root}/drafter-b16" in result.err, result.err
        shutil.copyfile(TARGET / "config.json", root / "config.json")
    # Another kind of drafter (EAGLE-3)
    eagle = tmp_path / "eagle"
    eagle.mkdir()
    (eagle / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama"}))
    other = dflash("preflight", "--", "vllm", "serve", str(target), "--speculative-config", spec(str(eagle)))
    assert other.code == 1 and "LlamaForCausalLMEagle3" in other.err


def speculators_pair(tmp_path: Path, tokens: int) -> Path:
    drafter = tmp_path / "spec"
    drafter.mkdir()
    data = json.loads(SPECULATORS.read_text())
    data["speculators_config"]["proposal_methods"][0]["speculative_tokens"] = tokens
    (drafter / "config.json").write_text(json.dumps(data, indent=2))
    return drafter


def test_speculators_drafters_are_checked_against_the_launch(dflash: Run, tmp_path: Path) -> None:
    good = speculators_pair(tmp_path, 7)
    argv = ["vllm", "serve", str(TARGET), "--speculative-config", spec(str(good), None), "--format"]
    ok = dflash("preflight", "--format", "json", "--", *argv[:-1])
    assert "DF805" not in ok.out
    (good / "config.json").write_text(
        (good / "config.json").read_text().replace('"speculative_tokens": 7', '"speculative_tokens": 8')
    )
    bad = dflash("preflight", "--format", "json", "--", *argv[:-1])
    found = {f["rule"] for f in bad.json()["files"][0]["findings"]}
    assert bad.code == 1 and "DF805" in found
    sglang = ["python", "-m", "sglang.launch_server", "--model-path", str(TARGET), "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", str(good), "--speculative-num-draft-tokens", "8"]  # fmt: skip
    refused = dflash("preflight", "--format", "json", "--", *sglang)
    rules = {(f["rule"], f["severity"]) for f in refused.json()["files"][0]["findings"]}
    assert refused.code == 1 and ("DF804", "error") in rules


def test_v1_model_runner_with_a_mixed_attention_drafter(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drafter = tmp_path / "Qwen3.6-27B-DFlash"  # the published drafter: 4 sliding layers, 1 full
    drafter.mkdir()
    shutil.copyfile(UPSTREAM, drafter / "config.json")
    monkeypatch.delenv("VLLM_USE_V2_MODEL_RUNNER", raising=False)
    argv = ["vllm", "serve", str(TARGET), "--speculative-config", spec(str(drafter), None)]

    def df806(*head: str) -> bool:
        result = dflash("preflight", "--format", "json", "--", *head, *argv)
        return "DF806" in {f["rule"] for f in result.json()["files"][0]["findings"]}

    assert not df806()
    assert not df806("VLLM_USE_V2_MODEL_RUNNER=1")
    assert df806("VLLM_USE_V2_MODEL_RUNNER=0")
    assert df806("env", "VLLM_USE_V2_MODEL_RUNNER=0")
    monkeypatch.setenv("VLLM_USE_V2_MODEL_RUNNER", "0")
    assert df806()
    assert not df806("env", "-u", "VLLM_USE_V2_MODEL_RUNNER")
    shutil.copyfile(INCIDENT, drafter / "config.json")  # all full attention: V1 builds it
    assert not df806()
    shutil.copyfile(INCIDENT, drafter / "config.json")  # all full attention: V1 builds it
    assert not df806()


# The billion-laughs shape: 9 levels of 9 aliases each, a few hundred bytes, 9**9 values expanded.
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + k)}: &{chr(98 + k)} [{', '.join([f'*{chr(97 + k)}'] * 9)}]\n" for k in range(8)
)


@pytest.mark.parametrize(
    ("yaml_text", "says"),
    [
        pytest.param(BOMB, "aliases are expanded", id="alias-bomb"),
        pytest.param("a: &a [*a]\n", "recursive alias", id="recursive-alias"),
        pytest.param("mem-fraction-static: " + "9" * 5000 + "\n", "value cannot be read", id="huge-int"),
        pytest.param("json-model-override-args: {when: 2024-01-01}\n", "not JSON", id="date-in-mapping"),
        pytest.param("json-model-override-args: {b: !!binary aGVsbG8=}\n", "not JSON", id="binary-in-mapping"),
        pytest.param("json-model-override-args: {s: !!set {a, b}}\n", "not JSON", id="set-in-mapping"),
        pytest.param("a:\n" + "".join("  " * k + "- \n" for k in range(1, 80)), "nested deeper", id="deep"),
    ],
)
@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_hostile_config_yaml_is_one_line(dflash: Run, tmp_path: Path, yaml_text: str, says: str, engine: str) -> None:
    config = tmp_path / "engine.yaml"
    config.write_text(yaml_text)
    if engine == "sglang":
        argv = ["python", "-m", "sglang.launch_server", "--config", str(config), "--model-path", str(TARGET),
                "--speculative-draft-model-path", DRAFTER, "--speculative-algorithm", "DFLASH"]  # fmt: skip
    else:
        argv = [
            "vllm",
            "serve",
            str(TARGET),
            "--config",
            str(config),
            "--speculative-config",
            spec(str(UPSTREAM.parent)),
        ]
    result = dflash("preflight", "--", *argv)
    assert result.code == 2, (result.out, result.err)
    assert says in result.err and result.err.count("\n") == 1 and "internal error" not in result.err


@pytest.mark.parametrize("text", ["1" * 400 + "k", "1" * 5000, "1" * 5000 + "K"], ids=["k", "digits", "K"])
@pytest.mark.parametrize("where", ["argv", "yaml"])
def test_a_max_model_len_too_large_for_vllm_is_a_usage_error(
    dflash: Run, tmp_path: Path, text: str, where: str
) -> None:
    argv = ["vllm", "serve", str(TARGET), "--speculative-config", spec(DRAFTER)]
    if where == "argv":
        argv += ["--max-model-len", text]
    else:
        (tmp_path / "serve.yaml").write_text(f"max-model-len: '{text}'\n")
        argv += ["--config", str(tmp_path / "serve.yaml")]
    result = dflash("preflight", "--no-engine-check", "--", *argv)
    assert result.code == 2, (result.out, result.err)
    assert result.err.count("\n") == 1 and "--max-model-len" in result.err and "too large" in result.err, result.err
    assert "internal error" not in result.err and result.out == ""


VERIFIER = "deepseek-ai/DeepSeek-V4-Flash"  # the verifier SPECULATORS names


def served_speculators(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **change: object) -> Path:
    """A speculators drafter in tmp_path/spec (its speculators_config changed by `change`), its verifier's
    config in the Hugging Face cache the launch uses, and tmp_path as the working directory."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    snapshot = tmp_path / "home" / "hub" / f"models--{VERIFIER.replace('/', '--')}" / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "targets" / "deepseek-ai__DeepSeek-V4-Flash" / "config.json", snapshot / "config.json")
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text(COMMIT)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    drafter = tmp_path / "spec"
    drafter.mkdir()
    data = json.loads(SPECULATORS.read_text())
    data["speculators_config"].update(change)
    (drafter / "config.json").write_text(json.dumps(data, indent=2))
    return drafter


def test_a_served_speculators_model_is_the_drafter_and_its_verifier_the_target(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # vLLM's maybe_override_with_speculators: `vllm serve SPEC_DIR` serves the verifier with SPEC_DIR as the
    # drafter (tests/engines/test_launch_checks.py holds this against vLLM's own code).
    served_speculators(tmp_path, monkeypatch)
    result = dflash("preflight", "--", "vllm", "serve", "./spec")
    assert result.code != 2, result.err
    assert f"target  {VERIFIER} -> {tmp_path}/home/hub/models--" in result.out
    assert "drafter ./spec -> spec/config.json" in result.out and "method dflash" in result.out
    # A --speculative-config only adds keys: its model is replaced by the served model, its drafts kept.
    other = dflash("preflight", "--format", "json", "--", "vllm", "serve", "./spec", "-sc",
                   '{"model": "z-lab/other-DFlash", "num_speculative_tokens": 3}')  # fmt: skip
    found = {f["rule"] for f in other.json()["files"][0]["findings"]}
    assert other.code == 1 and "DF801" in found and other.json()["files"][0]["path"] == "spec/config.json"


def test_a_served_speculators_model_vllm_refuses(dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served_speculators(tmp_path, monkeypatch, verifier={"name_or_path": "./local-target"})
    result = dflash("preflight", "--", "vllm", "serve", "./spec")
    assert result.code == 2 and "verifier './local-target' is not a Hub repo id" in result.err, result.err
    assert result.err.count("\n") == 1


def test_a_served_speculators_model_drafts_its_own_tokens(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    methods = json.loads(SPECULATORS.read_text())["speculators_config"]["proposal_methods"]
    methods[0]["speculative_tokens"] = 3
    served_speculators(tmp_path, monkeypatch, proposal_methods=methods)
    result = dflash("preflight", "--format", "json", "--", "vllm", "serve", "./spec")
    assert result.code == 1 and "DF805" in {f["rule"] for f in result.json()["files"][0]["findings"]}

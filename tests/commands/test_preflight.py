"""preflight and where: launch commands and model ids resolved as the engines would, on real files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import FIXTURES, Result, installed_release
from hubserver import Olah

INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json"
UPSTREAM = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"
REPO = "z-lab/Qwen3.6-27B-DFlash"
TARGET_REPO = "Qwen/Qwen3.6-27B"

Run = Callable[..., Result]


def pair(tmp_path: Path, drafter: Path) -> tuple[Path, Path]:
    d = tmp_path / "Qwen3.6-27B-DFlash"
    d.mkdir()
    shutil.copyfile(drafter, d / "config.json")
    t = tmp_path / "Qwen3.6-27B"
    shutil.copytree(TARGET, t)
    return d, t


def vllm(target: Path | str, drafter: Path | str, tokens: int = 15, *extra: str) -> list[str]:
    spec = json.dumps({"method": "dflash", "model": str(drafter), "num_speculative_tokens": tokens})
    return ["vllm", "serve", str(target), "--speculative-config", spec, *extra]


def rules(result: Result) -> set[tuple[str, str]]:
    return {(f["rule"], f["severity"]) for f in result.json()["files"][0]["findings"]}


def test_incident_pair_stops_the_launch_by_default(dflash: Run, tmp_path: Path) -> None:
    """The incident's stale drafter with its target, nothing else said: the gate fails on its stale-file warnings,
    which concern every engine; its guessed last tap, a layer SGLang's Qwen3.5 target cannot capture, is an error
    shown for SGLang only, so it fails an SGLang launch, not this vLLM one."""
    d, t = pair(tmp_path, INCIDENT)
    result = dflash("preflight", "--", *vllm(t, d))
    assert result.code == 1, result.err
    assert result.out.startswith("preflight vllm: method dflash, num_speculative_tokens 15, tensor-parallel 1")
    assert "DF205 window-without-sliding" in result.out and "DF105 tap-on-last-layer" in result.out
    assert "error DF406 tap-on-last-target-layer" in result.out
    assert "of 64 (target)" in result.out  # the target's depth came from the launch's target dir
    assert "error DF406 tap-on-last-target-layer" in result.out and "[SGLang]" in result.out
    assert "failed on warnings only" in result.err and "DF406" not in result.err
    assert dflash("preflight", "--fail-on", "error", "--", *vllm(t, d)).code == 0  # its only error is SGLang's
    sglang = ["python", "-m", "sglang.launch_server", "--model-path", str(t), "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", str(d), "--speculative-num-draft-tokens", "16"]  # fmt: skip
    on_sglang = dflash("preflight", "--fail-on", "error", "--", *sglang)
    assert on_sglang.code == 1 and "error DF406" in on_sglang.out, on_sglang.err
    # With the error accepted for the file, only warnings fail it: the three ways forward are said.
    (tmp_path / "dflash-cfg.toml").write_text('[per-file-ignores]\n"Qwen3.6-27B-DFlash/" = ["DF406"]\n')
    config = ("--config", tmp_path / "dflash-cfg.toml")
    warned = dflash("preflight", *config, "--", *vllm(t, d))
    assert warned.code == 1 and "failed on warnings only" in warned.err and "--from-hub" in warned.err
    assert 'fail-on = "error"' in warned.err and "per-file-ignores" in warned.err
    relaxed = dflash("preflight", *config, "--fail-on", "error", "--", *vllm(t, d))
    assert relaxed.code == 0 and "failed on warnings" not in relaxed.err


def test_incident_pair_with_from_hub_names_every_stale_field(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    d, t = pair(tmp_path, INCIDENT)
    result = dflash("preflight", "--from-hub", REPO, "--format", "json", "--", *vllm(t, d))
    assert result.code == 1
    stale = {f["pointer"] for f in result.json()["files"][0]["findings"] if f["rule"] == "DF601"}
    assert stale == {"/dflash_config/mask_token_id", "/dflash_config/target_layer_ids", "/layer_types"}


@pytest.mark.parametrize(
    ("argv", "pointer"),
    [
        pytest.param(lambda d, t: vllm(t, d, 7), "/block_size", id="vllm-7-for-block-16"),
        pytest.param(
            lambda d, t: [
                "python",
                "-m",
                "sglang.launch_server",
                "--model-path",
                str(t),
                "--speculative-algorithm",
                "DFLASH",
                "--speculative-draft-model-path",
                str(d),
                "--speculative-num-draft-tokens",
                "15",
            ],
            "/block_size",
            id="sglang-15-for-block-16",
        ),
    ],
)
def test_draft_tokens_must_match_block_size(
    dflash: Run, tmp_path: Path, argv: Callable[[Path, Path], list[str]], pointer: str
) -> None:
    d, t = pair(tmp_path, UPSTREAM)
    result = dflash("preflight", "--format", "json", "--", *argv(d, t))
    assert result.code == 1
    [f] = [f for f in result.json()["files"][0]["findings"] if f["rule"] == "DF801"]
    assert f["pointer"] == pointer and f["severity"] == "error"


def sglang(target: Path, drafter: Path, *extra: str) -> list[str]:
    return ["python", "-m", "sglang.launch_server", "--model-path", str(target), "--speculative-algorithm", "DFLASH",
            "--speculative-draft-model-path", str(drafter), *extra]  # fmt: skip


def test_a_drafter_without_block_size_drafts_the_launchs_block(dflash: Run, tmp_path: Path) -> None:
    """No block_size in the file: vLLM drafts the launch's num_speculative_tokens + 1 and SGLang its
    --speculative-num-draft-tokens (neither reads a default), so the launch is not held to a 16 the file never
    said; only the missing trained value is warned about, naming the launch's block."""
    data = json.loads(UPSTREAM.read_text())
    del data["block_size"]
    d, t = pair(tmp_path, UPSTREAM)
    (d / "config.json").write_text(json.dumps(data, indent=2))
    for argv, said in (
        (vllm(t, d, 7), "the launch's 8 (num_speculative_tokens 7 + 1)"),
        (sglang(t, d, "--speculative-num-draft-tokens", "8"), "the launch's 8 (--speculative-num-draft-tokens 8)"),
        (sglang(t, d, "--speculative-dflash-block-size", "12"), "the launch's 12 (--speculative-num-draft-tokens 12)"),
    ):
        result = dflash("preflight", "--fail-on", "error", "--no-engine-check", "--", *argv)
        assert result.code == 0, result.out
        assert "DF801" not in result.out and "assume 16" not in result.out
        assert f"warning DF121 block-size /block_size: block_size missing: the engine drafts {said}," in result.out
    # The launch that sets no draft tokens is refused by vLLM, whatever the file says (it reads no block_size).
    refused = dflash("preflight", "--fail-on", "error", "--no-engine-check", "--", *vllm(t, d, 7)[:3],
                     "--speculative-config", json.dumps({"method": "dflash", "model": str(d)}))  # fmt: skip
    assert refused.code == 1
    assert "error DF801 launch-draft-tokens /block_size: the vLLM launch gives no num_speculative_tokens" in refused.out


def test_a_drafter_block_size_still_holds_the_launch(dflash: Run, tmp_path: Path) -> None:
    """With a block_size in the file, a launch that drafts another block is still an error, on either engine."""
    d, t = pair(tmp_path, UPSTREAM)  # block_size 16
    for argv, said in (
        (vllm(t, d, 7), "num_speculative_tokens 7 per step, the drafter needs block_size - 1 = 15 (block_size 16)"),
        (sglang(t, d, "--speculative-dflash-block-size", "8"), "the drafter needs block_size = 16 (block_size 16)"),
    ):
        result = dflash("preflight", "--fail-on", "error", "--no-engine-check", "--", *argv)
        assert result.code == 1 and said in result.out, result.out


def test_tensor_parallel_and_method(dflash: Run, tmp_path: Path) -> None:
    d, t = pair(tmp_path, UPSTREAM)
    assert ("DF802", "error") in rules(
        dflash("preflight", "--format", "json", "--", *vllm(t, d, 15, "--tensor-parallel-size", "3"))
    )
    assert dflash("preflight", "--", *vllm(t, d, 15, "-tp", "4")).code == 0
    spec = json.dumps({"method": "eagle3", "model": str(d), "num_speculative_tokens": 15})
    assert ("DF803", "error") in rules(
        dflash("preflight", "--format", "json", "--", "vllm", "serve", str(t), "--speculative-config", spec)
    )


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["nginx", "-g", "daemon off;"], id="not-an-engine"),
        pytest.param(["vllm", "serve", "x", "--speculative-config", "{not json"], id="bad-json"),
        pytest.param(["vllm", "serve", "Qwen/Qwen3-8B"], id="no-drafter"),
        pytest.param(
            [
                "vllm",
                "serve",
                "Qwen/Qwen3-8B",
                "--speculative-config",
                '{"method": "dflash", "model": "z-lab/absent", "num_speculative_tokens": 15}',
            ],
            id="not-cached",
        ),
    ],
)
def test_unusable_launch_commands_are_exit_2(dflash: Run, argv: list[str]) -> None:
    result = dflash("preflight", "--", *argv)
    assert result.code == 2 and result.err.startswith("dflash-cfg: error:") and result.err.count("\n") == 1


def fake_engine(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """An executable standing in for the engine: it records its argv (a harmless `true` with a witness)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    witness = tmp_path / f"{name}.argv"
    script = bin_dir / name
    script.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {witness}\n")
    script.chmod(0o755)
    return bin_dir, witness


def run_process(tmp_path: Path, bin_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "dflash_cfg", *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )


@pytest.mark.slow
def test_exec_starts_the_engine_only_after_a_clean_check(tmp_path: Path) -> None:
    d, t = pair(tmp_path, UPSTREAM)
    bin_dir, witness = fake_engine(tmp_path, "vllm")
    clean = run_process(tmp_path, bin_dir, "preflight", "--exec", "--", *vllm(t, d))
    assert clean.returncode == 0, clean.stderr
    assert witness.read_text().splitlines()[:2] == ["serve", str(t)]
    witness.unlink()
    bad = run_process(tmp_path, bin_dir, "preflight", "--exec", "--", *vllm(t, d, 7))
    assert bad.returncode == 1 and "not launching" in bad.stderr
    assert not witness.exists()


@pytest.mark.slow
def test_exec_keeps_environment_assignments(tmp_path: Path) -> None:
    d, t = pair(tmp_path, UPSTREAM)
    bin_dir, witness = fake_engine(tmp_path, "vllm")
    script = bin_dir / "vllm"
    script.write_text(f'#!/bin/sh\necho "$VLLM_USE_V2_MODEL_RUNNER" > {witness}\n')
    result = run_process(tmp_path, bin_dir, "preflight", "--exec", "--", "VLLM_USE_V2_MODEL_RUNNER=1", *vllm(t, d))
    assert result.returncode == 0, result.stderr
    assert witness.read_text().strip() == "1"


def download(hub: Olah, repo: str, *names: str) -> Path:
    from huggingface_hub import hf_hub_download

    paths = [
        Path(
            hf_hub_download(
                repo, n, revision="main", endpoint=hub.endpoint, cache_dir=os.path.join(os.environ["HF_HOME"], "hub")
            )
        )
        for n in names
    ]
    return paths[0]


def test_model_ids_resolve_in_the_cache_without_network(dflash: Run, hub: Olah, tmp_path: Path) -> None:
    hub.publish(TARGET_REPO, {p.name: p.read_bytes() for p in TARGET.iterdir()})
    download(hub, TARGET_REPO, "config.json", "tokenizer_config.json")
    snapshot = download(hub, REPO, "config.json")
    with hub.stopped():
        where = dflash("where", REPO, "--format", "json")
        assert where.code == 0, where.err
        doc = where.json()
        assert (doc["repo"], doc["commit"], doc["config"]) == (REPO, hub.head(REPO), str(snapshot))
        assert doc["git_blob_sha1"] == Path(doc["resolved"]).name  # the cache blob is named by its git blob id
        text = dflash("where", REPO)
        assert f"commit    {hub.head(REPO)}  (main -> commit)" in text.out and "reads" in text.out
        result = dflash("preflight", "--", *vllm(TARGET_REPO, REPO))
        assert result.code == 0, result.err
        assert f"drafter {REPO} -> {snapshot}" in result.out


def test_where_errors(dflash: Run, tmp_path: Path) -> None:
    missing = dflash("where", "z-lab/not-downloaded")
    assert missing.code == 2 and "hf download z-lab/not-downloaded" in missing.err
    assert dflash("where", str(tmp_path)).code == 2  # a dir without config.json
    assert dflash("where", "not a model").code == 2


def test_docker_run_is_checked_through_its_mounts(dflash: Run, tmp_path: Path) -> None:
    # The vLLM docs' docker shape (deployment/docker.md) with a host model dir mounted at /models.
    d, t = pair(tmp_path, UPSTREAM)
    docker = ["docker", "run", "--gpus", "all", "-v", f"{tmp_path}:/models:ro", "--ipc=host", "vllm/vllm-openai"]
    good = dflash("preflight", "--", *docker, *vllm(f"/models/{t.name}", f"/models/{d.name}")[2:])
    assert good.code == 0, good.err
    assert f"target  /models/{t.name} -> {t / 'config.json'}" in good.out
    bad = dflash("preflight", "--format", "json", "--", *docker, *vllm(f"/models/{t.name}", f"/models/{d.name}", 7)[2:])
    assert bad.code == 1 and ("DF801", "error") in rules(bad)
    unmounted = dflash("preflight", "--", *docker, *vllm("/opt/target", f"/models/{d.name}")[2:])
    assert unmounted.code == 2 and "'/opt/target' is not under any bind mount" in unmounted.err
    assert unmounted.err.count("\n") == 1


def test_docker_hub_id_resolves_in_the_mounted_cache(dflash: Run, tmp_path: Path) -> None:
    cache = tmp_path / "hfcache"
    commit = "0" * 40
    for repo, source in ((REPO, UPSTREAM.parent), (TARGET_REPO, TARGET)):
        folder = cache / "hub" / f"models--{repo.replace('/', '--')}"
        shutil.copytree(source, folder / "snapshots" / commit)
        (folder / "refs").mkdir()
        (folder / "refs" / "main").write_text(commit)
    argv = ["docker", "run", "-v", f"{cache}:/root/.cache/huggingface", "lmsysorg/sglang:latest", "python3", "-m",
            "sglang.launch_server", "--model-path", TARGET_REPO, "--speculative-algorithm", "DFLASH",
            "--speculative-draft-model-path", REPO, "--speculative-num-draft-tokens", "16"]  # fmt: skip
    result = dflash("preflight", "--", *argv)
    assert result.code == 0, result.err
    assert (
        f"drafter {REPO} -> {cache}/hub/models--z-lab--Qwen3.6-27B-DFlash/snapshots/{commit}/config.json" in result.out
    )


def test_config_files_are_read(dflash: Run, tmp_path: Path) -> None:
    # vLLM docs, configuration/serve_args.md: `vllm serve --config config.yaml`, the file naming the model.
    d, t = pair(tmp_path, UPSTREAM)
    config = tmp_path / "serve.yaml"
    config.write_text(
        f"model: {t}\nspeculative-config:\n  method: dflash\n  model: {d}\n  num_speculative_tokens: 7\n"
        "tensor-parallel-size: 2\n"
    )
    result = dflash("preflight", "--format", "json", "--", "vllm", "serve", "--config", str(config))
    assert result.code == 1 and ("DF801", "error") in rules(result)
    # the command line wins over the file
    assert dflash("preflight", "--", "vllm", "serve", "--config", str(config), *vllm(t, d)[3:]).code == 0
    config.write_text("model: [unclosed\n")
    broken = dflash("preflight", "--", "vllm", "serve", "--config", str(config))
    assert broken.code == 2 and "not YAML" in broken.err and broken.err.count("\n") == 1
    missing = dflash("preflight", "--", "vllm", "serve", "--config", str(tmp_path / "absent.yaml"))
    assert missing.code == 2 and "cannot read" in missing.err


def test_the_same_launch_gets_the_verdict_of_the_vllm_release_it_runs(dflash: Run, tmp_path: Path) -> None:
    """One launch line (the V1 runner asked for, a key vLLM 0.34 dropped) under interpreters with vLLM 0.33.0 and
    0.34.0 installed: preflight reads the release from the interpreter's metadata and applies that release's rules;
    where it cannot know (`vllm serve` with no vLLM here), it says what each release does."""
    d, t = pair(tmp_path, UPSTREAM)
    spec = json.dumps(
        {"method": "dflash", "model": str(d), "num_speculative_tokens": 15, "use_heterogeneous_vocab": False}
    )
    verdicts = {}
    for release in ("0.33.0", "0.34.0", None):
        if release is None:
            head = ["vllm", "serve", str(t)]
        else:
            python = installed_release(tmp_path / "engines", "vllm", release)
            head = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(t)]
        argv = ["VLLM_USE_V2_MODEL_RUNNER=0", *head, "--speculative-config", spec]
        result = dflash("preflight", "--no-engine-check", "--format", "json", "--", *argv)
        assert result.code == 1, result.err
        doc = result.json()
        assert doc["engine_check"]["release"] == release
        verdicts[release] = {
            (f["rule"], tuple(f.get("engines", ()))) for f in doc["files"][0]["findings"] if f["rule"].startswith("DF8")
        }
    # 0.33: V1 runs and refuses the mixed sliding/full drafter; the key is one of its fields.
    assert verdicts["0.33.0"] == {("DF806", ("vllm<0.34.0",))}
    # 0.34: no V1 runner to ask for, and no such key.
    assert verdicts["0.34.0"] == {("DF811", ("vllm>=0.34.0",)), ("DF812", ("vllm>=0.34.0",))}
    # Not known: both, each with the releases it holds for.
    assert verdicts[None] == verdicts["0.33.0"] | verdicts["0.34.0"]
    text = dflash(
        "preflight", "--no-engine-check", "--", "VLLM_USE_V2_MODEL_RUNNER=0", "vllm", "serve", str(t), "-sc", spec
    )
    assert "[vLLM before 0.34.0]" in text.out and "[vLLM 0.34.0 and later]" in text.out

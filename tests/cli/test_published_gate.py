"""Every complete published drafter in fixtures/upstream/ passes the gate as a publisher runs it: copied out of any
project, `check --gate DIR` with defaults, with and without its paired target. A gate failure on one of them
would mean a publisher cannot commit the file they publish. The incident still fails every default gate."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import FIXTURES, Result

Run = Callable[..., Result]

UPSTREAM = FIXTURES / "upstream"
TARGETS = FIXTURES / "targets"
INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
# The complete published drafters (config.json, not config.partial.json) and the target each is made for, where
# fixtures/targets/ holds it.
PAIRED: dict[str, str | None] = {
    "RedHatAI__DeepSeek-V4-Flash-speculator.dflash": "deepseek-ai__DeepSeek-V4-Flash",
    "XiaomiMiMo__MiMo-V2.5-Pro-FP4-DFlash/dflash": "XiaomiMiMo__MiMo-V2.5-Pro",
    "poolside__Laguna-XS-2.1-DFlash": None,
    "z-lab__Muse-Glimmer-30B-DFlash2": None,
    "z-lab__Qwen3-4B-DFlash-b16": "Qwen__Qwen3-4B",
    "z-lab__Qwen3.5-4B-DFlash": None,
    "z-lab__Qwen3.6-27B-DFlash": "Qwen__Qwen3.6-27B",
    "z-lab__Qwen3.8-27B-DFlash2": None,
    "z-lab__gemma-4-26B-A4B-it-DFlash": None,
}
CASES = [(name, None) for name in PAIRED] + [(name, t) for name, t in PAIRED.items() if t is not None]


def test_the_list_is_every_complete_published_drafter() -> None:
    complete = {p.parent.relative_to(UPSTREAM).as_posix() for p in UPSTREAM.rglob("config.json")}
    assert complete == set(PAIRED)


def outside(tmp_path: Path, src: Path) -> Path:
    """A copy of the drafter's directory (config.json only) where no project config is found."""
    drafter = tmp_path / "work" / src.name
    drafter.mkdir(parents=True)
    shutil.copyfile(src / "config.json", drafter / "config.json")
    return drafter


def gate(dflash: Run, monkeypatch: pytest.MonkeyPatch, drafter: Path, *extra: str | Path) -> Result:
    monkeypatch.chdir(drafter.parent)
    return dflash("check", "--gate", drafter.name, *extra)


@pytest.mark.parametrize(("name", "target"), CASES, ids=[f"{n}{'+target' if t else ''}" for n, t in CASES])
def test_a_published_drafter_passes_the_gate(
    dflash: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, target: str | None
) -> None:
    drafter = outside(tmp_path, UPSTREAM / name)
    result = gate(dflash, monkeypatch, drafter, *(("--target", TARGETS / target) if target else ()))
    assert result.code == 0, result.out + result.err
    assert "failed on" not in result.err
    # Identified as itself, unasked and offline: byte for byte a published revision of its own repo.
    doc = gate(dflash, monkeypatch, drafter, "--format", "json").json()
    identity = doc["files"][0]["identity"]
    repo = name.split("/")[0].replace("__", "/", 1)
    assert identity["repo"] == repo and identity["found_by"] == "catalog" and identity["match"] == "identical"
    assert [f["rule"] for f in doc["files"][0]["findings"] if f["rule"].startswith("DF60")] == ["DF605"]


def test_a_shape_no_published_drafter_has_gets_no_identification(
    dflash: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    drafter = outside(tmp_path, UPSTREAM / "z-lab__Qwen3.6-27B-DFlash")
    config = drafter / "config.json"
    config.write_text(config.read_text().replace('"hidden_size": 5120', '"hidden_size": 4608'))
    assert '"hidden_size": 4608' in config.read_text()
    doc = gate(dflash, monkeypatch, drafter, "--format", "json").json()
    assert doc["files"][0]["identity"] is None
    assert not [f for f in doc["files"][0]["findings"] if f["rule"] in ("DF604", "DF605", "DF606", "DF607")]


def test_the_incident_is_named_unasked_and_offline(
    dflash: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`check` with no flags names the drafter the stale file is a copy of, and its three guessed values; the same
    without use_sliding_window (the stale-file signature's switch)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for drop in (False, True):
        drafter = outside(tmp_path / str(drop), INCIDENT)
        if drop:
            config = drafter / "config.json"
            config.write_text(config.read_text().replace('  "use_sliding_window": true,\n', ""))
            assert "use_sliding_window" not in config.read_text()
        result = gate(dflash, monkeypatch, drafter)
        assert result.code == 1, result.err
        assert "published z-lab/Qwen3.6-27B-DFlash@28cadb796e2f" in result.out
        for pointer in ("/dflash_config/mask_token_id", "/dflash_config/target_layer_ids", "/layer_types"):
            assert f"DF604 published-values-differ {pointer}: " in result.out, (drop, pointer, result.out)
        plain = dflash("check", drafter.name)
        assert "DF604" in plain.out and plain.code == 0  # warnings: `check` fails on errors, the gates on these


def test_the_incident_fails_every_default_gate(dflash: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    drafter = outside(tmp_path, INCIDENT)
    target = TARGETS / "Qwen__Qwen3.6-27B"
    for extra in [(), ("--target", target), ("--engine", "vllm"), ("--engine", "sglang"), ("--engine", "mlx")]:
        result = gate(dflash, monkeypatch, drafter, *extra)
        assert result.code == 1 and "DF205 window-without-sliding" in result.out, (extra, result.err)
    for launch in (
        ["vllm", "serve", str(target), "--speculative-config", f'{{"method": "dflash", "model": "{drafter}"}}'],
        ["python", "-m", "sglang.launch_server", "--model-path", str(target), "--speculative-algorithm", "DFLASH",
         "--speculative-draft-model-path", str(drafter), "--speculative-num-draft-tokens", "16"],
    ):  # fmt: skip
        result = dflash("preflight", "--no-engine-check", "--", *launch)
        assert result.code == 1 and "DF205 window-without-sliding" in result.out, (launch[0], result.err)


def test_the_gates_advice_followed_makes_it_pass(dflash: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The per-file-ignores example names every rule that failed, for every file that failed: pasted into the
    project config, the same gate passes."""
    work = tmp_path / "work"
    first = outside(tmp_path, INCIDENT)
    second = work / "again"
    shutil.copytree(first, second)
    target = TARGETS / "Qwen__Qwen3.6-27B"
    monkeypatch.chdir(work)
    failed = dflash("check", "--gate", first.name, second.name, "--target", target)
    assert failed.code == 1
    (advice,) = [line for line in failed.err.splitlines() if "failed on warnings only" in line]
    start = advice.index("per-file-ignores = {")
    example = advice[start : advice.index(" })", start) + 2]  # what follows says what an ignore of DF205 hides
    assert example.count('"DF205"') == 2 and example.count('"DF404"') == 2, advice
    (work / "dflash-cfg.toml").write_text(example + "\n")
    passed = dflash("check", "--gate", first.name, second.name, "--target", target)
    assert passed.code == 0, passed.err

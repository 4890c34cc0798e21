"""`dflash-cfg engines` and preflight's engine step against the pinned engines: the installed engines' own code
says what they read, the command shows it and exits on it."""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT, Result, recorded, recording

from dflash_cfg.model import Engine, display
from dflash_cfg.pinned import is_checked
from engines import build
from engines.venvs import other_version

Run = Callable[..., Result]

INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
UPSTREAM = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash"
SPECULATORS = FIXTURES / "upstream" / "RedHatAI__DeepSeek-V4-Flash-speculator.dflash"
QWEN36 = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"
ENGINES_PAGE = ROOT / "docs" / "src" / "engines.md"
# The engines sample of docs/engines.md, `<!-- engine-sample: ARGS -->` ($ENGINE_PYTHON: the pinned engine venv's
# python), held in the page's source: ./dev docs renders the page from it.
ENGINE_SAMPLE = re.compile(r"<!-- engine-sample: (?P<args>.+?) -->\n```\n(?P<out>.*?)```\n", re.DOTALL)
# The releases the suite runs: the repository's lock, or a staged release's ($DFLASH_CFG_ENGINES_LOCK).
RUNNING = build.locked()


def named(dist: str) -> str:
    """`vLLM 0.33.0`: the release under test as the records name it."""
    return display(dist, RUNNING[dist])


def checked(dist: Engine) -> bool:
    """Whether the release under test is one the suite holds the tool to, PINNED's or ALSO_CHECKED's (the tool says
    a reading of it is checked; of any other, that it was not)."""
    return is_checked(dist, RUNNING[dist])


def engine_severity(dist: Engine) -> str:
    """An engine finding's severity: an error from a checked release, a warning from one not checked."""
    return "error" if checked(dist) else "warning"


def by_engine(result: Result) -> dict[str, dict]:
    return {e["engine"]: e for e in result.json()["engines"]}


def test_the_incident_with_its_target_sglang_refuses(dflash: Run, engine_python: Path) -> None:
    result = dflash("engines", INCIDENT, "--target", QWEN36, "--python", engine_python, "--format", "json")
    assert result.code == 1, result.err
    doc = result.json()
    assert doc["version"] == 1 and doc["drafter"] == str(INCIDENT / "config.json") and doc["target"] == str(QWEN36)
    engines = by_engine(result)
    assert set(engines) == {"vllm", "sglang"}  # speculators reads speculators-format files only
    sglang = engines["sglang"]
    assert sglang["version"] == RUNNING["sglang"] and sglang["python"] and sglang["reads"] is None
    assert sglang["refused"]["type"] == "IndexError"
    assert re.fullmatch(r"sglang/\S+\.py:\d+", sglang["refused"]["where"]), sglang["refused"]
    vllm = engines["vllm"]
    assert vllm["version"] == RUNNING["vllm"] and vllm["checked"] is checked("vllm")
    assert vllm["refused"] is None and vllm["reads"]["target_layer_ids"] == [1, 17, 33, 49, 63]
    for key in ("mask_token_id", "layer_types", "sliding_window", "causal", "rope_theta", "num_draft_tokens"):
        assert key in vllm["reads"], key


def test_the_repaired_file_with_the_same_target_reads_as_written(
    dflash: Run, engine_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    [sample] = ENGINE_SAMPLE.finditer(ENGINES_PAGE.read_text(encoding="utf-8"))
    args = [a.replace("$ENGINE_PYTHON", str(engine_python)) for a in sample["args"].split()]
    result = dflash(*args)
    assert result.code == 0, result.out + result.err
    text = result.out.replace(str(engine_python), "$ENGINE_PYTHON").replace(f"{ROOT}{os.sep}", "")
    rows = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    assert rows["field"].split()[1:] == ["file", *named("vllm").split(), *named("sglang").split()]
    assert rows["target_layer_ids"].count("[1, 16, 31, 46, 61]") == 3
    assert rows["mask_token_id"].split()[1:] == ["248070"] * 3
    assert rows["layer_types"].count("S S S S F") == 3
    assert "*" not in rows["target_layer_ids"] + rows["mask_token_id"] + rows["layer_types"]
    assert text.rstrip().endswith("every engine reads what the file says")
    if recording("DFLASH_CFG_README"):
        page = ENGINES_PAGE.read_text(encoding="utf-8")
        fresh = f"<!-- engine-sample: {sample['args']} -->\n```\n{text}```\n"
        ENGINES_PAGE.write_text(page.replace(sample.group(0), fresh), encoding="utf-8")
        recorded("the engines page's sample", "DFLASH_CFG_README")
    # Held apart from the engines' versions: a release changes them (and the columns' width), not the behaviour
    # the sample shows; release day re-records it. A staged release (DFLASH_CFG_ENGINES_LOCK) also says it was not
    # checked, which the page's sample of checked releases does not.
    if not (checked("vllm") and checked("sglang")):
        text = text.replace(" (not checked against this version)", "")
    assert _unversioned(sample["out"]) == _unversioned(text), (
        "docs/engines.md's engines sample is stale: DFLASH_CFG_README=record to regenerate"
    )


def _unversioned(text: str) -> str:
    text = re.sub(r"\b(vLLM|SGLang|speculators) [0-9][^\s:]*", r"\1 VERSION", text)
    return re.sub(r" +", " ", text)


def test_a_speculators_format_drafter_vllm_reads_it_sglang_refuses(dflash: Run, engine_python: Path) -> None:
    result = dflash("engines", SPECULATORS, "--python", engine_python, "--format", "json")
    engines = by_engine(result)
    assert set(engines) == {"vllm", "sglang", "speculators"}
    assert engines["vllm"]["refused"] is None and engines["vllm"]["reads"]["target_layer_ids"]
    assert engines["speculators"]["refused"] is None
    refusal = engines["sglang"]["refused"]
    assert refusal is not None and "model_type" in refusal["message"], engines["sglang"]
    assert result.code == 1


def test_preflight_runs_the_launchs_own_sglang(dflash: Run, engine_python: Path, tmp_path: Path) -> None:
    launch = [str(engine_python), "-m", "sglang.launch_server", "--model-path", str(QWEN36)]
    launch += ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", str(INCIDENT)]
    result = dflash("preflight", "--format", "json", "--", *launch)
    assert result.code == 1
    [refusal] = [f for f in result.json()["files"][0]["findings"] if f["rule"] == "DF901"]
    assert (
        refusal["severity"] == engine_severity("sglang")
        and f"{named('sglang')} refuses this drafter: IndexError" in refusal["message"]
    )
    assert re.search(r" at sglang/\S+\.py:\d+", refusal["message"]), refusal
    skipped = dflash("preflight", "--no-engine-check", "--format", "json", "--", *launch)
    assert not [f for f in skipped.json()["files"][0]["findings"] if f["rule"].startswith("DF9")]
    (tmp_path / "dflash-cfg.toml").write_text("engine-check = false\n", encoding="utf-8")
    off = dflash("preflight", "--config", tmp_path / "dflash-cfg.toml", "--format", "json", "--", *launch)
    assert not [f for f in off.json()["files"][0]["findings"] if f["rule"].startswith("DF9")]


def test_another_engine_version_runs_but_says_it_was_not_checked(
    dflash: Run, engine_python: Path, tmp_path: Path
) -> None:
    python = other_version(engine_python, tmp_path, {"sglang": "0.5.99"})
    launch = [str(python), "-m", "sglang.launch_server", "--model-path", str(QWEN36)]
    launch += ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", str(INCIDENT)]
    result = dflash("preflight", "--format", "json", "--", *launch)
    findings = {f["rule"]: f for f in result.json()["files"][0]["findings"] if f["rule"].startswith("DF9")}
    assert findings["DF901"]["severity"] == "warning"
    assert "SGLang 0.5.99 refuses" in findings["DF901"]["message"]
    assert "not checked against this version" in findings["DF901"]["message"]
    assert findings["DF903"]["severity"] == "info" and "static rules still apply" in findings["DF903"]["message"]
    assert result.code == 1  # the static errors of the incident still fail it


def test_an_interpreter_without_engines_exits_2(dflash: Run) -> None:
    result = dflash("engines", UPSTREAM, "--python", sys.executable)
    assert result.code == 2 and result.out == "", result.out
    [line] = result.err.splitlines()
    assert line.startswith("dflash-cfg: error: no engine") and "--python" in line and sys.executable in line


def test_an_adapter_that_fails_is_an_info_line_not_a_crash(dflash: Run, tmp_path: Path) -> None:
    # A real program in the launch's place: it answers the interpreter's survey as one with SGLang installed,
    # then dies as the adapter starts (an engine broken on this host).
    python = tmp_path / "bin" / "python3"
    python.parent.mkdir()
    python.write_text(
        '#!/bin/sh\ncase "$1" in *dflash_adapter_survey.py) echo \'{"engines": ["sglang"]}\'; exit 0;; esac\n'
        "echo 'ImportError: libcuda.so.1: cannot open shared object file' >&2; exit 1\n",
        encoding="utf-8",
    )
    python.chmod(0o755)
    launch = [str(python), "-m", "sglang.launch_server", "--model-path", str(QWEN36)]
    launch += ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", str(INCIDENT)]
    result = dflash("preflight", "--format", "json", "--", *launch)
    findings = result.json()["files"][0]["findings"]
    [info] = [f for f in findings if f["rule"] == "DF903"]
    assert info["severity"] == "info" and "libcuda.so.1" in info["message"], info
    assert "Traceback" not in result.err
    # The static errors stand: the incident still fails.
    assert result.code == 1 and any(f["severity"] == "error" and f["rule"] < "DF900" for f in findings)


def test_preflight_reports_a_window_the_launchs_vllm_reads_other_than_the_file(
    dflash: Run, engine_python: Path, tmp_path: Path
) -> None:
    # The repaired drafter with a second window in dflash_config: vLLM's DFlash layers take
    # dflash_config.swa_window_size before the top-level sliding_window the file's config class states.
    drafter = tmp_path / "drafter"
    shutil.copytree(UPSTREAM, drafter)
    data = json.loads((drafter / "config.json").read_text(encoding="utf-8"))
    data["dflash_config"]["swa_window_size"] = 1024
    (drafter / "config.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    spec = json.dumps({"method": "dflash", "model": str(drafter), "num_speculative_tokens": 15})
    launch = [str(engine_python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(QWEN36)]
    result = dflash("preflight", "--format", "json", "--", *launch, "--speculative-config", spec)
    findings = result.json()["files"][0]["findings"]
    [misread] = [f for f in findings if f["rule"] == "DF902"]
    assert misread["severity"] == engine_severity("vllm") and misread["pointer"] == "/sliding_window", misread
    said = f"{named('vllm')} reads sliding_window 1024, the file says 2048"
    unchecked = "" if checked("vllm") else " (the adapter was not checked against this version)"
    assert misread["message"] == said + unchecked, misread
    assert result.code == 1


def _vllm_launch(engine_python: Path, tmp_path: Path, edit: Callable[[dict], object]) -> list[str]:
    """A vLLM launch of the repaired drafter after `edit`, with its target."""
    drafter = tmp_path / "drafter"
    shutil.copytree(UPSTREAM, drafter)
    data = json.loads((drafter / "config.json").read_text(encoding="utf-8"))
    edit(data)
    (drafter / "config.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    spec = json.dumps({"method": "dflash", "model": str(drafter), "num_speculative_tokens": 15})
    server = [str(engine_python), "-m", "vllm.entrypoints.openai.api_server"]
    return [*server, "--model", str(QWEN36), "--speculative-config", spec]


def test_preflight_reports_vllms_refusal_of_the_dspark_layout(dflash: Run, engine_python: Path, tmp_path: Path) -> None:
    # vLLM's DFlash speculator (built only on a GPU worker; the adapter stands in for its check) refuses
    # dflash_config.sample_from_anchor true: the engine step says so beside DF123.
    launch = _vllm_launch(engine_python, tmp_path, lambda d: d["dflash_config"].__setitem__("sample_from_anchor", True))
    result = dflash("preflight", "--format", "json", "--", *launch)
    findings = result.json()["files"][0]["findings"]
    [refusal] = [f for f in findings if f["rule"] == "DF901"]
    assert refusal["severity"] == engine_severity("vllm"), refusal
    assert f"{named('vllm')} refuses this drafter: ValueError: sample_from_anchor=True" in refusal["message"], refusal
    assert " at vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:" in refusal["message"], refusal
    assert [f["severity"] for f in findings if f["rule"] == "DF123"] == ["error"]
    assert result.code == 1


def test_preflight_of_an_xpress_drafter_with_vllm_passes(dflash: Run, engine_python: Path, tmp_path: Path) -> None:
    # Only vLLM builds the XPress drafter: `check` warns (DF133), a vLLM launch builds it and says nothing.
    launch = _vllm_launch(engine_python, tmp_path, lambda d: d.__setitem__("architectures", ["DFlashQwen3XPressModel"]))
    result = dflash("preflight", "--format", "json", "--", *launch)
    findings = result.json()["files"][0]["findings"]
    assert not [f for f in findings if f["rule"] in ("DF133", "DF901")], findings
    assert result.code == 0, findings


def test_local_drafter_and_target_send_no_engine_to_the_hub(
    dflash: Run, engine_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Online Hub settings (no HF_HUB_OFFLINE), the Hub a recorder on loopback. Every model is a local directory,
    # so no engine may ask the Hub for a model's file: SGLang's Qwen3.5 class looks for a joint_head_config.json
    # in the served model, and with the adapter's stand-in context that was the repo "dummy" (25 s of retries
    # on a host without the Hub).
    asked: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_error(404)

        do_HEAD = do_GET

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    try:
        result = dflash("engines", UPSTREAM, "--target", QWEN36, "--python", engine_python, "--format", "json")
    finally:
        server.shutdown()
        server.server_close()
    assert result.code == 0, result.out + result.err
    assert not [path for path in asked if "/resolve/" in path or "/api/models/" in path], asked


def test_preflight_runs_vllms_pipeline_capture_set_up_on_the_target(dflash: Run, engine_python: Path) -> None:
    # With pipeline parallelism vLLM's model runner refuses a target whose decoder cannot relay the tapped hidden
    # states between stages (set_eagle3_aux_hidden_state_layers): Qwen3.5/3.6's cannot, Qwen3's can.
    def launch(target: Path, drafter: Path) -> list[str]:
        spec = json.dumps({"method": "dflash", "model": str(drafter), "num_speculative_tokens": 15})
        return [str(engine_python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(target), "-pp", "2",
                "--speculative-config", spec]  # fmt: skip

    result = dflash("preflight", "--format", "json", "--", *launch(QWEN36, UPSTREAM))
    findings = result.json()["files"][0]["findings"]
    [refusal] = [f for f in findings if f["rule"] == "DF901"]
    assert refusal["severity"] == engine_severity("vllm")
    assert "does not support dflash with pipeline parallelism" in refusal["message"], refusal
    assert "eagle3_utils.py" in refusal["message"], refusal
    assert result.code == 1
    qwen3 = FIXTURES / "targets" / "Qwen__Qwen3-4B"
    result = dflash(
        "preflight", "--format", "json", "--", *launch(qwen3, FIXTURES / "upstream" / "z-lab__Qwen3-4B-DFlash-b16")
    )
    assert not [f for f in result.json()["files"][0]["findings"] if f["rule"] == "DF901"], result.out


def test_preflight_reports_the_context_vllm_shortens_for_the_drafter(
    dflash: Run, engine_python: Path, tmp_path: Path
) -> None:
    # A drafter with YaRN RoPE keeps its own length, and vLLM's V2 runner lowers the server's max_model_len
    # to it (VllmConfig._limit_max_model_len_to_draft): no --max-model-len, so only the engine knows the
    # target's length (DF904); DF810 says nothing without the option.
    qwen3 = FIXTURES / "targets" / "Qwen__Qwen3-4B"  # 40960 positions
    base = json.loads((FIXTURES / "upstream" / "z-lab__Qwen3-4B-DFlash-b16" / "config.json").read_text())
    rows = {"yarn": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}, "default": None}
    found = {}
    for name, rope in rows.items():
        drafter = tmp_path / f"{name}-DFlash"
        drafter.mkdir()
        config = {**base, "max_position_embeddings": 4096, "rope_scaling": rope}
        (drafter / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
        spec = json.dumps({"method": "dflash", "model": str(drafter), "num_speculative_tokens": 15})
        launch = [str(engine_python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(qwen3)]
        result = dflash("preflight", "--format", "json", "--", *launch, "--speculative-config", spec)
        found[name] = {f["rule"]: f for f in result.json()["files"][0]["findings"]}
    shortened = found["yarn"]["DF904"]
    assert shortened["severity"] == "warning" and shortened["pointer"] == "/max_position_embeddings"
    assert shortened["message"].startswith(
        f"{named('vllm')} serves max_model_len 4096 with this drafter, 40960 without"
    )
    assert "DF810" not in found["yarn"] and "DF904" not in found["default"]
    # `engines` says it under vLLM's answer; not a misread of the file, so the exit stays 0.
    result = dflash("engines", tmp_path / "yarn-DFlash", "--target", qwen3, "--python", engine_python)
    assert result.code == 0, result.out + result.err
    assert "  serves max_model_len 4096 with this drafter, 40960 without it\n" in result.out, result.out

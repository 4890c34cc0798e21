"""The adapter runner and the interpreter survey held to bounds, whatever the interpreter does: memory in
proportion to what a real answer needs (not to what the process prints), no temporary file left behind on any
exit path, no process left running. The interpreters are stand-ins (shell scripts, or the real adapter script
over a fake engine package): fast, no engine venv. Each run happens in a process of its own, with a TMPDIR of
the test's, so that its peak memory and what it leaves behind are its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT, Measured, run_measured

from dflash_cfg.sources import adapters

DRAFTER = str(FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash")
FLOOD = 400_000_000  # bytes: what a runaway log (or a hostile interpreter) prints
XS = f"head -c {FLOOD} /dev/zero | tr '\\0' x"  # that many bytes of x, no newline
# Python with dflash_cfg.sources.adapters imported is 20-30 MiB here; a flood held whole is hundreds more.
PEAK_MIB = 120
GUARD = 2 << 30  # address space of the child: an unbounded read fails there instead of taking the machine

RUNNER = """
import json, sys
from dflash_cfg.sources import adapters
records = adapters.run(sys.argv[1], "vllm", [adapters.Request(drafter=sys.argv[2])] * 2, timeout=float(sys.argv[3]))
print(json.dumps([r.failed for r in records]))
"""
SURVEY = """
import json, sys
from dflash_cfg.sources import interpreters
print(json.dumps([interpreters.probe(sys.argv[1]), interpreters.survey(sys.argv[1]) is None]))
"""


def fake_python(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "python"
    script.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def in_child(code: str, *args: object, tmp: Path, timeout: float = 120) -> Measured:
    """`code` run by this interpreter in a process of its own, TMPDIR a fresh directory `tmp`."""
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    return run_measured([sys.executable, "-c", code, *map(str, args)], timeout=timeout, memory=GUARD, env=env)


def reasons(result: Measured) -> list[str]:
    assert result.code == 0, result
    found = json.loads(result.out)
    assert isinstance(found, list) and all(isinstance(r, str) for r in found), found
    return found


def test_a_stderr_flood_keeps_only_its_tail(tmp_path: Path) -> None:
    python = fake_python(tmp_path, f"{XS} >&2; printf '\\nthe last words' >&2; exit 1")
    result = in_child(RUNNER, python, DRAFTER, 60, tmp=tmp_path / "tmp")
    said = reasons(result)
    assert said == [said[0]] * 2 and "exited with code 1" in said[0] and said[0].endswith("the last words"), said
    assert result.peak_mib < PEAK_MIB, result.peak_mib


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(XS, id="no-newline"),
        pytest.param(f'printf \'{{"engine": "vllm", "x": "\'; {XS}', id="record"),
    ],
)
def test_an_answer_longer_than_any_record_is_a_failed_record(tmp_path: Path, body: str) -> None:
    result = in_child(RUNNER, fake_python(tmp_path, body), DRAFTER, 60, tmp=tmp_path / "tmp")
    said = reasons(result)
    assert said == [said[0]] * 2 and "longer than any record" in said[0] and "\n" not in said[0], said
    assert result.peak_mib < PEAK_MIB and result.seconds < 30, result


def test_an_endless_log_from_a_hung_adapter_costs_neither_memory_nor_disk(tmp_path: Path) -> None:
    result = in_child(RUNNER, fake_python(tmp_path, "yes 'a log line' >&2"), DRAFTER, 3, tmp=tmp_path / "tmp")
    assert reasons(result) == ["the adapter gave no record within 3 s; its last output: a log line"] * 2
    assert result.peak_mib < PEAK_MIB, result.peak_mib
    assert list((tmp_path / "tmp").iterdir()) == []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # an orphan killed but not yet reaped is gone too


@pytest.mark.parametrize(
    ("ending", "says"),
    [
        pytest.param("exit 0", "exited with code 0", id="exits"),
        pytest.param("echo 'not a record'", "not a record", id="garbage"),
        pytest.param("exec sleep 600", "no record within 2 s", id="hangs"),
        pytest.param("kill -9 $$", "exited with code -9", id="killed"),
    ],
)
def test_the_adapters_temporary_files_and_processes_never_outlive_the_run(
    tmp_path: Path, ending: str, says: str
) -> None:
    # What an adapter leaves in its TMPDIR, as the vLLM adapter's engine does (a rendezvous file, a config dir),
    # and a process of its own that would outlive it.
    pids = tmp_path / "pids"
    body = f'd=$(mktemp -d); touch "$d/config.json"; mktemp > /dev/null; sleep 600 & echo $! > {pids}; {ending}'
    result = in_child(RUNNER, fake_python(tmp_path, body), DRAFTER, 2, tmp=tmp_path / "tmp")
    said = reasons(result)  # the garbage answers the first request; the second is left unanswered
    assert says in said[0] and len(said) == 2, result
    assert list((tmp_path / "tmp").iterdir()) == []
    pid = int(pids.read_text())
    for _ in range(50):
        if not _alive(pid):
            break
        time.sleep(0.1)
    assert not _alive(pid), "the adapter's own process outlived the run"


def test_the_survey_of_a_flooding_interpreter_is_bounded(tmp_path: Path) -> None:
    python = fake_python(tmp_path, f"{XS}; echo; echo '[]'")
    result = in_child(SURVEY, python, tmp=tmp_path / "tmp")
    assert json.loads(result.out) == [None, True], result  # not an interpreter: nothing it says is believed
    assert result.peak_mib < PEAK_MIB, result.peak_mib


def test_a_runner_start_that_fails_leaves_nothing(tmp_path: Path) -> None:
    result = in_child(RUNNER, tmp_path / "no-such-python", DRAFTER, 2, tmp=tmp_path / "tmp")
    assert all(r.startswith("cannot start the adapter") for r in reasons(result)), result
    assert list((tmp_path / "tmp").iterdir()) == []


# The modules the vLLM adapter imports, as stand-ins: enough for its setup (a one-process group whose rendezvous
# file the stand-in creates, as torch's FileStore does) and for a case up to the engine's configuration, which
# refuses. The adapter's own code runs as it does over the real engine.
FAKE_VLLM = {
    "torch/__init__.py": (
        "class device:\n    def __init__(self, *a): pass\n"
        "    def __enter__(self): return self\n    def __exit__(self, *a): return False\n"
    ),
    "vllm/__init__.py": "",
    "vllm/config.py": (
        "import contextlib, dataclasses\nclass VllmConfig: pass\nreplace = dataclasses.replace\n"
        "@contextlib.contextmanager\ndef set_current_vllm_config(config): yield\n"
    ),
    "vllm/distributed.py": (
        "import os\n"
        "def init_distributed_environment(*, distributed_init_method, **kw):\n"
        "    open(distributed_init_method.removeprefix('file://'), 'a').close()\n"
        "    if os.environ.get('FAKE_VLLM_SETUP_FAILS'): raise RuntimeError('no gloo here')\n"
        "def ensure_model_parallel_initialized(*a): pass\n"
    ),
    "vllm/engine/__init__.py": "",
    "vllm/engine/arg_utils.py": (
        "class EngineArgs:\n    def __init__(self, **kw): self.kw = kw\n"
        "    def create_engine_config(self): raise ValueError('this stand-in engine builds nothing')\n"
    ),
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/model_loader/__init__.py": "",
    "vllm/model_executor/model_loader/utils.py": "_MODEL_ARCH_BY_HASH = {}\n",
    "vllm/model_executor/models/__init__.py": "",
    "vllm/model_executor/models/qwen3_dflash.py": "def dflash_has_any_non_causal(hf): return False\n",
    "vllm/v1/__init__.py": "",
    "vllm/v1/worker/__init__.py": "",
    "vllm/v1/worker/gpu/__init__.py": "",
    "vllm/v1/worker/gpu/spec_decode/__init__.py": "",
    "vllm/v1/worker/gpu/spec_decode/utils.py": "def get_parallel_drafting_token_id(hf): return None\n",
    "vllm/v1/worker/gpu/spec_decode/eagle/__init__.py": "",
    "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py": "def get_eagle3_aux_layers_from_config(c): return None\n",
}


@pytest.mark.parametrize("setup_fails", [False, True], ids=["answers", "setup-fails"])
def test_the_vllm_adapter_removes_what_it_made(tmp_path: Path, setup_fails: bool) -> None:
    site = tmp_path / "site"
    for name, text in FAKE_VLLM.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text, encoding="utf-8")
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "TMPDIR": str(tmp_path / "tmp")}
    if setup_fails:
        env["FAKE_VLLM_SETUP_FAILS"] = "1"
    # The adapter run directly, not by the runner (whose own TMPDIR would hide what the adapter leaves).
    request = json.dumps({"drafter": DRAFTER}) + "\n"  # no target: the adapter writes a stand-in target config
    done = subprocess.run(
        [sys.executable, str(adapters.adapter_path("vllm"))],
        input=request * 2,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(records) == 2, done.stderr
    if setup_fails:
        assert all(r["failed"] == "cannot import vllm: RuntimeError: no gloo here" for r in records), records
    else:  # it got as far as the engine's configuration, with its stand-in target written
        assert all(r["refused"]["message"] == "this stand-in engine builds nothing" for r in records), records
        assert all(any("stands in" in s for s in r["stand_ins"]) for r in records), records
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_survey_whose_interpreter_leaves_a_process_holding_its_output_ends_with_it(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    python = fake_python(tmp_path, f"sleep 600 & echo $! >> {pids}; echo '[\"vllm\"]'")
    result = in_child(SURVEY, python, tmp=tmp_path / "tmp")
    assert json.loads(result.out) == [["vllm"], True], result  # the probe's answer stands; the survey's is no survey
    assert result.seconds < 15, result  # not the probe's timeout (30 s) twice
    assert not any(_alive(int(pid)) for pid in pids.read_text().split())

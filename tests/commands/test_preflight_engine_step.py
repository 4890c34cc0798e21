"""preflight's engine step and its cache, end to end, with a stand-in interpreter: a `python` script that
answers the survey with an installed vLLM and the vLLM adapter with a record it was given, and leaves a mark
each time either starts. What the user sees (the JSON's engine_check, the text line, the findings and the exit
code) and how many times the engine was started. The pinned engines' own runs: tests/engines/."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, Result, vllm_reads, vllm_record

Run = Callable[..., Result]

DRAFTER = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"


class Engine:
    """The stand-in interpreter in `root`: `version` is the vLLM it says is installed (its metadata in
    root/site, replaced as pip replaces it), `answer` the record its adapter prints; `starts` and `surveys`
    count how many times the adapter and the survey were started."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "site").mkdir(parents=True, exist_ok=True)
        self.python = root / "python"
        self.python.write_text(
            "#!/bin/sh\n"
            'case "$1" in\n'
            f"  *dflash_adapter_survey.py) echo survey >> {root}/surveys; cat {root}/survey.json ;;\n"
            f"  *adapter_vllm.py) echo started >> {root}/marks; cat > /dev/null; . {root}/answer.sh ;;\n"
            "  *) exit 1 ;;\n"
            "esac\n",
            encoding="utf-8",
        )
        self.python.chmod(0o755)
        self.version = "1.7.0"
        self.answer()

    @property
    def version(self) -> str:
        return str(json.loads((self.root / "survey.json").read_text())["packages"]["vllm"]["version"])

    @version.setter
    def version(self, value: str) -> None:
        site = self.root / "site"
        for old in site.glob("vllm-*.dist-info"):
            shutil.rmtree(old)
        metadata = site / f"vllm-{value}.dist-info" / "METADATA"
        metadata.parent.mkdir()
        metadata.write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {value}\n", encoding="utf-8")
        witnesses = [[str(p), [p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_ino]] for p in (site, metadata)]
        survey = {"engines": ["vllm"], "packages": {"vllm": {"version": value}}, "witnesses": witnesses}
        (self.root / "survey.json").write_text(json.dumps(survey) + "\n", encoding="utf-8")

    def answer(self, **changes: Any) -> None:
        """The record the adapter prints: the reads above, with `changes`; `hang=True`: none, ever."""
        if changes.pop("hang", False):
            (self.root / "answer.sh").write_text("exec sleep 60\n", encoding="utf-8")
            return
        data = vllm_record(version=self.version, python=str(self.python), **changes)
        (self.root / "record.json").write_text(json.dumps(data) + "\n", encoding="utf-8")
        (self.root / "answer.sh").write_text(f"cat {self.root}/record.json\n", encoding="utf-8")

    @property
    def starts(self) -> int:
        marks = self.root / "marks"
        return len(marks.read_text().splitlines()) if marks.exists() else 0

    @property
    def surveys(self) -> int:
        marks = self.root / "surveys"
        return len(marks.read_text().splitlines()) if marks.exists() else 0

    def launch(self, drafter: Path = DRAFTER, target: Path = TARGET, *more: str, tokens: int = 15) -> list[str]:
        spec = json.dumps({"method": "dflash", "model": str(drafter), "num_speculative_tokens": tokens})
        module = "vllm.entrypoints.openai.api_server"
        return [str(self.python), "-m", module, "--model", str(target), "--speculative-config", spec, *more]


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return Engine(tmp_path / "engine")


def preflight(dflash: Run, launch: list[str], *options: str) -> tuple[Result, dict[str, Any]]:
    result = dflash("preflight", "--format", "json", *options, "--", *launch)
    assert "Traceback" not in result.err, result.err
    return result, result.json()


def findings(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f["rule"], f["severity"], f["message"]) for f in doc["files"][0]["findings"]]


def test_a_repeated_preflight_takes_the_engines_answer_from_the_cache(dflash: Run, engine: Engine) -> None:
    first, doc = preflight(dflash, engine.launch())
    check = doc["engine_check"]
    assert check["status"] == "ran" and check["cached"] is False and check["reason"] is None
    assert check["engine"] == "vllm" and check["version"] == "1.7.0" and check["python"] == str(engine.python)
    assert isinstance(check["seconds"], float) and engine.starts == 1
    second, again = preflight(dflash, engine.launch())
    # Neither the engine nor the interpreter was started: what the survey said still stands (its witnesses).
    assert again["engine_check"]["cached"] is True and engine.starts == 1 and engine.surveys == 1
    assert {k: v for k, v in again["engine_check"].items() if k not in ("cached", "seconds")} == {
        k: v for k, v in check.items() if k not in ("cached", "seconds")
    }
    assert second.code == first.code == 0
    assert findings(again) == findings(doc)
    text = dflash("preflight", "--", *engine.launch())
    assert f"  engine check: vLLM 1.7.0 ({engine.python}): reads the file as written, cached\n" in text.out
    assert engine.starts == 1 and text.code == 0


def test_a_refusal_is_kept_and_said_again(dflash: Run, engine: Engine) -> None:
    engine.answer(reads=None, refused={"type": "ValueError", "message": "no", "where": None})
    first, doc = preflight(dflash, engine.launch())
    second, again = preflight(dflash, engine.launch())
    assert engine.starts == 1 and first.code == second.code == 1
    assert doc["engine_check"]["status"] == again["engine_check"]["status"] == "refused"
    assert again["engine_check"]["cached"] is True and again["engine_check"]["reason"] == "ValueError: no"
    assert findings(again) == findings(doc) and [f for f in findings(again) if f[0] == "DF901"]
    text = dflash("preflight", "--", *engine.launch())
    assert f"  engine check: vLLM 1.7.0 ({engine.python}): refused the drafter (ValueError: no), cached\n" in text.out


def test_any_change_the_answer_may_depend_on_asks_the_engine_again(
    dflash: Run, engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drafter, target = tmp_path / "drafter", tmp_path / "target"
    shutil.copytree(DRAFTER, drafter)
    shutil.copytree(TARGET, target)
    preflight(dflash, engine.launch(drafter, target))
    assert engine.starts == 1
    config = drafter / "config.json"
    original = config.read_bytes()

    def asks(launch: list[str], why: str) -> None:
        starts = engine.starts
        _, doc = preflight(dflash, launch)
        assert doc["engine_check"]["cached"] is False and engine.starts == starts + 1, why
        _, doc = preflight(dflash, launch)
        assert doc["engine_check"]["cached"] is True and engine.starts == starts + 1, why

    config.write_bytes(original.replace(b'"block_size": 16', b'"block_size":  16'))  # the same JSON, other bytes
    asks(engine.launch(drafter, target), "the drafter's config.json")
    config.write_bytes(original)
    (target / "config.json").write_bytes((target / "config.json").read_bytes() + b"\n")
    asks(engine.launch(drafter, target), "the target's config.json")
    (target / "generation_config.json").write_text("{}\n", encoding="utf-8")
    asks(engine.launch(drafter, target), "a file the engine may read beside the target's config")
    asks(engine.launch(drafter, target, tokens=7), "num_speculative_tokens")
    asks(engine.launch(drafter, target, "--tensor-parallel-size", "2"), "the tensor-parallel size")
    asks(engine.launch(drafter, target, "--max-model-len", "4096"), "--max-model-len")
    monkeypatch.setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")
    asks(engine.launch(drafter, target), "an engine variable")
    engine.version = "1.7.1"
    engine.answer()
    asks(engine.launch(drafter, target), "the installed engine's version")
    _, doc = preflight(dflash, engine.launch(drafter, target))
    assert doc["engine_check"]["version"] == "1.7.1"


def test_no_cache_asks_the_engine_and_keeps_nothing(dflash: Run, engine: Engine) -> None:
    for _ in range(2):
        _, doc = preflight(dflash, engine.launch(), "--no-cache")
        assert doc["engine_check"]["cached"] is False
    assert engine.starts == 2
    assert not (Path(os.environ["XDG_CACHE_HOME"]) / "dflash-cfg" / "engine").exists()


def test_a_failure_is_asked_again(dflash: Run, engine: Engine) -> None:
    engine.answer(reads=None, failed="adapter error: RuntimeError: boom")
    for _ in range(2):
        result, doc = preflight(dflash, engine.launch())
        assert doc["engine_check"]["status"] == "failed" and doc["engine_check"]["cached"] is False
        assert doc["engine_check"]["reason"] == "adapter error: RuntimeError: boom" and result.code == 0
    text = dflash("preflight", "--", *engine.launch())
    assert f"  engine check: vLLM 1.7.0 ({engine.python}): failed: adapter error: RuntimeError: boom\n" in text.out
    assert engine.starts == 3


def test_a_timeout_is_asked_again(dflash: Run, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DFLASH_CFG_ENGINE_TIMEOUT", "1")
    engine.answer(hang=True)
    for _ in range(2):
        _, doc = preflight(dflash, engine.launch())
        assert doc["engine_check"]["status"] == "timeout" and "no record within 1 s" in doc["engine_check"]["reason"]
    text = dflash("preflight", "--", *engine.launch())
    assert f"  engine check: vLLM ({engine.python}): timeout: the adapter gave no record within 1 s\n" in text.out
    assert engine.starts == 3
    engine.answer()  # the engine answers again: that answer is the one kept
    preflight(dflash, engine.launch())
    _, doc = preflight(dflash, engine.launch())
    assert doc["engine_check"]["cached"] is True and engine.starts == 4


def test_a_corrupt_cache_is_asked_again_never_an_error(dflash: Run, engine: Engine) -> None:
    first, doc = preflight(dflash, engine.launch())
    folder = Path(os.environ["XDG_CACHE_HOME"]) / "dflash-cfg" / "engine"
    stored = sorted(folder.iterdir())
    assert len(stored) == 2  # the answer, and the interpreter's survey
    for path in stored:
        path.write_bytes(path.read_bytes()[:100])  # truncated, as by a full disk
    second, again = preflight(dflash, engine.launch())
    assert again["engine_check"]["cached"] is False and engine.starts == 2 and engine.surveys == 2
    assert second.code == first.code and findings(again) == findings(doc)
    _, third = preflight(dflash, engine.launch())  # rewritten by the second run
    assert third["engine_check"]["cached"] is True and engine.starts == 2 and engine.surveys == 2


def test_an_unwritable_cache_means_no_cache(dflash: Run, engine: Engine) -> None:
    root = Path(os.environ["XDG_CACHE_HOME"]) / "dflash-cfg"
    root.mkdir(parents=True)
    (root / "engine").write_text("a file where the cache's folder would be\n", encoding="utf-8")
    for _ in range(2):
        result, doc = preflight(dflash, engine.launch())
        assert result.code == 0 and doc["engine_check"]["status"] == "ran" and doc["engine_check"]["cached"] is False
    assert engine.starts == 2 and result.err == ""


def test_the_step_turned_off_or_not_run_says_why(dflash: Run, engine: Engine, tmp_path: Path) -> None:
    _, doc = preflight(dflash, engine.launch(), "--no-engine-check")
    assert doc["engine_check"] == {
        "status": "skipped",
        "engine": "vllm",
        "version": None,
        "python": None,
        "seconds": None,
        "cached": False,
        "reason": "turned off by --no-engine-check",
        "release": engine.version,  # not asked, but its release is read from its metadata: the rules are that one's
    }
    (tmp_path / "dflash-cfg.toml").write_text("engine-check = false\n", encoding="utf-8")
    _, doc = preflight(dflash, engine.launch(), "--config", str(tmp_path / "dflash-cfg.toml"))
    assert doc["engine_check"]["reason"] == f"turned off by engine-check = false in {tmp_path / 'dflash-cfg.toml'}"
    for info in (engine.root / "site").glob("vllm-*.dist-info"):  # uninstalled, as pip removes it
        shutil.rmtree(info)
    (engine.root / "survey.json").write_text('{"engines": [], "packages": {}}\n', encoding="utf-8")
    _, doc = preflight(dflash, engine.launch())
    assert doc["engine_check"]["status"] == "skipped" and doc["engine_check"]["python"] == str(engine.python)
    assert doc["engine_check"]["reason"] == f"{engine.python} cannot import vllm"
    text = dflash("preflight", "--", *engine.launch())
    # Said, not left to silence: the launch was checked without its engine.
    assert f"  engine check: skipped: {engine.python} cannot import vllm\n" in text.out
    assert engine.starts == 0


INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"


def test_the_engine_line_says_the_engine_reads_the_stale_file_as_written(dflash: Run, engine: Engine) -> None:
    """The engine reads the incident's stale drafter as the file says (its values are wrong, not misread): the
    line says that, not "agrees", which read as a verdict on the file."""
    taps = [1, 17, 33, 49, 63]
    stale = vllm_reads(
        layer_types=["full_attention"] * 5,
        sliding_window=[None] * 5,
        target_layer_ids=taps,
        engine_layer_ids=[t + 1 for t in taps],
        mask_token_id=248064,
    )
    engine.answer(reads=stale)
    text = dflash("preflight", "--", *engine.launch(INCIDENT))
    assert text.code == 1, text.err
    assert f"  engine check: vLLM 1.7.0 ({engine.python}): reads the file as written, " in text.out
    assert "agrees" not in text.out and "DF902" not in text.out
    assert "DF205" in text.out  # what is wrong with the file is said by its findings


@pytest.mark.slow  # the CLI in a child process, its stderr a terminal
def test_the_engine_steps_progress_line_keeps_its_elapsed_time_on_80_columns(engine: Engine, tmp_path: Path) -> None:
    """The line names the engine's interpreter, whose path can fill the terminal: the label is cut in its middle,
    and the elapsed time stays on the line (it was cut off at the 80th column)."""
    release = tmp_path / "release"
    (engine.root / "answer.sh").write_text(
        f"while [ ! -e {release} ]; do sleep 0.05; done\ncat {engine.root}/record.json\n", encoding="utf-8"
    )
    deep = tmp_path / ("a-long-directory-name-" * 3) / "for-the-engines-interpreter"
    deep.mkdir(parents=True)
    python = deep / "python"
    python.symlink_to(engine.python)
    launch = [str(python), *engine.launch()[1:]]
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CI")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "dflash-cfg"), "preflight", "--", *launch],
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    shown = b""
    try:
        while not re.search(rb"\d\d:\d\d", shown.split(b"drafter")[-1]):  # the engine runs: its line is up
            ready, _, _ = select.select([leader], [], [], 60)
            assert ready, shown
            shown += os.read(leader, 65536)
        release.touch()
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
    finally:
        release.touch()
        os.close(leader)
        proc.wait(timeout=120)
    frames = [f for f in re.split(rb"[\r\n]", shown) if b"building the drafter" in f]
    assert frames, shown
    for frame in frames:
        line = re.sub(rb"\x1b\[[0-9;]*[A-Za-z]", b"", frame).decode()
        assert len(line) <= 80, line
        assert re.search(r"\.\.\..*: building the drafter with its own config code  \d\d:\d\d$", line), line

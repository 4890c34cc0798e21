"""Constants and helpers shared by the test modules (tests import these, never conftest or each other)."""

from __future__ import annotations

import copy
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Protocol

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def _cache_dir() -> Path:
    """$DFLASH_CFG_TEST_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/dflash-cfg-tests."""
    if explicit := os.environ.get("DFLASH_CFG_TEST_CACHE"):
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dflash-cfg-tests"


# What the tests build once and reuse across runs (olah's venv, pre-commit's store, hypothesis' examples),
# kept outside the checkout. Read from the environment at import time: conftest's autouse fixture points
# XDG_CACHE_HOME at a fresh directory for each test, which is the tool's cache, not this one.
CACHE = _cache_dir()

# A real published drafter config (z-lab/Qwen3.5-4B-DFlash), the base the CLI tests mutate.
REAL = FIXTURES / "upstream" / "z-lab__Qwen3.5-4B-DFlash" / "config.json"
REAL_DATA: dict[str, Any] = json.loads(REAL.read_bytes())


@dataclass(frozen=True)
class Result:
    """What one CLI run showed: exit code, stdout, stderr."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def assert_one_line_error(
    result: Result | subprocess.CompletedProcess[str],
    *,
    code: int = 2,
    contains: tuple[str, ...] = (),
    one_of: tuple[str, ...] = (),
    out: str | None = None,
) -> str:
    """A failed CLI run as the user must see it: exit `code`, and on stderr exactly one line, `dflash-cfg: error:
    ...`, naming every fragment of `contains` and at least one of `one_of`; no traceback or internal error
    anywhere; with `out`, stdout is exactly that. Takes an in-process Result or a child process' answer; returns
    the line."""
    if isinstance(result, subprocess.CompletedProcess):
        result = Result(result.returncode, result.stdout, result.stderr)
    assert result.code == code, (result.code, result.out[-500:], result.err[-2000:])
    shown = result.out + result.err
    assert "Traceback" not in shown and "internal error" not in shown, result.err
    assert result.err.count("\n") == 1 and result.err.endswith("\n"), result.err
    line = result.err.rstrip("\n")
    assert line.startswith("dflash-cfg: error: "), line
    for fragment in contains:
        assert fragment in line, (fragment, line)
    assert not one_of or any(fragment in line for fragment in one_of), (one_of, line)
    if out is not None:
        assert result.out == out, result.out
    return line


def run_as_user(*args: str | Path, timeout: float = 300) -> Result:
    """The CLI in a process of its own, as a user starts it, with this test's environment: only there do library
    log records reach the terminal (an in-process run's are pytest's)."""
    done = subprocess.run(
        [sys.executable, "-m", "dflash_cfg", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=timeout,
    )
    return Result(done.returncode, done.stdout, done.stderr)


def write_config(folder: Path, data: Any = None, *, raw: bytes | None = None, project: str | None = None) -> Path:
    """A config.json in `folder`: the real bytes, `data` dumped like the Hub files are, or `raw`; `project`: the
    text of a dflash-cfg.toml beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    if project is not None:
        (folder / "dflash-cfg.toml").write_text(project, encoding="utf-8")
    path = folder / "config.json"
    if raw is not None:
        path.write_bytes(raw)
    elif data is None:
        path.write_bytes(REAL.read_bytes())
    else:
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def mutated(change: Callable[[dict[str, Any]], object], base: dict[str, Any] | None = None) -> dict[str, Any]:
    """A deep copy of `base` (the real config by default) after `change`."""
    data = copy.deepcopy(REAL_DATA if base is None else base)
    change(data)
    return data


def set_taps(taps: list[int]) -> Callable[[dict[str, Any]], None]:
    return lambda d: d["dflash_config"].__setitem__("target_layer_ids", taps)


def vllm_reads(**changes: Any) -> dict[str, Any]:
    """What the vLLM adapter (dflash_cfg/adapters/adapter_vllm.py) reads from the upstream drafter
    z-lab/Qwen3.6-27B-DFlash with its target, a fresh copy at each call; `changes` replace or add members."""
    reads: dict[str, Any] = {
        "max_model_len": {"served": 262144, "target": 262144},
        "layer_types": ["sliding_attention"] * 4 + ["full_attention"],
        "sliding_window": [2048, 2048, 2048, 2048, None],
        "causal": [False] * 5,
        "rope": [{"theta": 10000000.0, "scaling": None, "neox": True}] * 5,
        "rope_theta": 10000000.0,
        "attention_sink": False,
        "logit_scalars": {"logit_scale": 1.0, "logit_soft_cap": None},
        "fc_in_features": 25600,
        "lm_head_size": 248320,
        "architecture": "DFlashQwen3ForCausalLM",
        "target_layer_ids": [1, 16, 31, 46, 61],
        "engine_layer_ids": [2, 17, 32, 47, 62],
        "mask_token_id": 248070,
        "num_draft_tokens": 15,
        "block_size": None,
        "vocab_size": 248320,
    }
    return copy.deepcopy(reads | changes)


def vllm_record(
    *, engine: str = "vllm", version: str = "1.7.0", python: str = "/venv/bin/python", **changes: Any
) -> dict[str, Any]:
    """The record the vLLM adapter answers for that drafter (the shape of dflash_adapter_io.record): its reads
    (vllm_reads), the stand-in it names, no refusal; `engine`, `version` and `python` are what it says it ran,
    and `changes` replace members (`reads=vllm_reads(...)`, `refused=...`). A fresh copy at each call."""
    return {
        "engine": engine,
        "version": version,
        "python": python,
        "refused": None,
        "reads": vllm_reads(),
        "stand_ins": ["tokenizer: not loaded (skip_tokenizer_init)"],
        "failed": None,
        **copy.deepcopy(changes),
    }


class Store(Protocol):
    """An object store the tests start (s3server.S3Server, gcsserver.GcsServer), as a test written once for every
    store uses it (the `store` fixture)."""

    scheme: str  # in the tool's URLs: s3, gs
    endpoint_variable: str  # the environment variable that points the tool at the server
    port: int

    def new_bucket(self) -> str: ...
    def upload_dir(self, bucket: str, prefix: str, source: Path) -> None: ...
    def put(self, bucket: str, key: str, data: bytes) -> None: ...
    def get(self, bucket: str, key: str) -> bytes: ...
    def keys(self, bucket: str) -> list[str]: ...


def model_volume(root: Path, drafter: Path) -> Path:
    """A models dir as the launch examples lay it out (the incident's): `drafter` as Qwen3.6-27B-DFlash's
    config.json beside its target, Qwen3.6-27B."""
    (root / "Qwen3.6-27B-DFlash").mkdir(parents=True)
    shutil.copyfile(drafter, root / "Qwen3.6-27B-DFlash" / "config.json")
    shutil.copytree(FIXTURES / "targets" / "Qwen__Qwen3.6-27B", root / "Qwen3.6-27B")
    return root


def upload(store: Store, folder: Path, prefix: str = "team/drafter") -> tuple[str, str]:
    """`folder` uploaded under `prefix` of a new bucket: the bucket and the folder's URL."""
    bucket = store.new_bucket()
    store.upload_dir(bucket, prefix, folder)
    return bucket, f"{store.scheme}://{bucket}/{prefix}"


def tool_venv(name: str, requirement: str, script: str) -> Path:
    """A test server's console script, installed into its own venv under the tests' cache on first use
    (its pins never meet the tool's). Built under a lock and marked complete at the end, so concurrent test
    runs (two checkouts) neither build it twice nor use a half-built one; a build that died midway is redone."""
    venv = CACHE / f"venv-{name}-py{sys.version_info.major}.{sys.version_info.minor}"
    exe = venv / "bin" / script
    complete = venv / ".complete"
    if complete.exists():
        return exe
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"venv-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not complete.exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
            subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", requirement], check=True)
            complete.touch()
    return exe


def installed_release(root: Path, name: str, version: str) -> Path:
    """A real interpreter (a venv of this python, no pip) on which `name` `version` is installed as far as its
    package metadata and an importable package go: what preflight reads to learn which release a launch runs,
    without importing it. Not an engine: preflight's engine step must stay off for its launches."""
    venv = root / f"{name}-{version}"
    python = venv / "bin" / "python"
    if python.exists():
        return python
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    package = Path(purelib) / name
    package.mkdir()
    (package / "__init__.py").write_text("raise ImportError('metadata only: not an engine')\n", encoding="utf-8")
    info = Path(purelib) / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    return python


def offline_hub_cache(repo: str, data: bytes, monkeypatch: pytest.MonkeyPatch) -> str:
    """`data` as config.json of `repo` at main in the Hugging Face cache under this test's HF_HOME, laid
    out as huggingface_hub leaves it (a small file's blob is named by its git blob sha1), offline.
    Returns the commit."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    blob_id = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    cached = Path(os.environ["HF_HOME"]) / "hub" / ("models--" + repo.replace("/", "--"))
    (cached / "blobs").mkdir(parents=True)
    (cached / "blobs" / blob_id).write_bytes(data)
    (cached / "snapshots" / commit).mkdir(parents=True)
    (cached / "snapshots" / commit / "config.json").symlink_to(Path("..") / ".." / "blobs" / blob_id)
    (cached / "refs").mkdir()
    (cached / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return commit


def stop_process(process: subprocess.Popen[bytes] | None) -> None:
    """Stop a test server: terminate, then kill if it does not exit within 10 s."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# Property tests draw the same examples on every run, so CI judges a submission on them and a rare example
# cannot block an unrelated change; DFLASH_FUZZ_RANDOM=1 draws fresh ones (and keeps failures in
# hypothesis' example database) for a campaign.
RANDOM_EXAMPLES = os.environ.get("DFLASH_FUZZ_RANDOM") == "1"


def examples(count: int, *health: HealthCheck) -> settings:
    """Settings of a property test: `count` examples, no deadline, derandomized unless RANDOM_EXAMPLES."""
    chosen = settings(max_examples=count, deadline=None, suppress_health_check=[HealthCheck.too_slow, *health])
    return chosen if RANDOM_EXAMPLES else settings(chosen, derandomize=True, database=None)


@dataclass(frozen=True)
class Measured:
    """One child process run to its end: what it showed, and its own peak resident memory."""

    code: int  # its exit code; -N when signal N ended it (the timeout's kill is -9)
    out: str
    err: str
    peak_mib: float  # the child's own VmHWM: not the test process', nor the image it was forked from
    seconds: float


def run_measured(
    argv: list[str], *, timeout: float, memory: int | None = None, env: dict[str, str] | None = None
) -> Measured:
    """`argv` (a Python process) in a process of its own, held to `timeout` seconds (then killed) and, with
    `memory`, to that many bytes of address space (RLIMIT_AS: a defect under test must not take the machine).
    Its peak memory is its own VmHWM, written by the child at exit (a sitecustomize on its path) or read while it
    runs: wait4's ru_maxrss is no measure, Linux keeps in it the image the child was forked from, which late in
    a test run is the worker's (150 MiB with transformers imported), whatever the child does."""
    import resource
    import tempfile
    import time

    hook = Path(tempfile.mkdtemp(prefix="peak-hook-"))
    (hook / "sitecustomize.py").write_text(_PEAK_HOOK, encoding="utf-8")
    peak_file = hook / "peak-kib"
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(hook), env.get("PYTHONPATH", "")) if p)
    env["DFLASH_TEST_PEAK_FILE"] = str(peak_file)
    polled = 0

    def limit() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, preexec_fn=limit, start_new_session=True
        )
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            polled = max(polled, _hwm_kib(process.pid))
            if time.monotonic() - started > timeout:
                os.killpg(process.pid, 9)
                _, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.05)
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
        seconds = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        shown = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    try:
        at_exit = int(peak_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # killed, or it left by os._exit: what was read while it ran
        at_exit = 0
    shutil.rmtree(hook, ignore_errors=True)
    peak_kib = max(at_exit, polled) or usage.ru_maxrss
    return Measured(process.returncode, shown[0], shown[1], peak_kib / 1024, seconds)


# The measured child's sitecustomize: its own high-water mark of resident memory, written as it exits.
_PEAK_HOOK = """import atexit, os


def _peak(path=os.environ.pop("DFLASH_TEST_PEAK_FILE", "")):
    if path:
        with open("/proc/self/status") as status, open(path, "w") as out:
            out.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))


atexit.register(_peak)
"""


def _hwm_kib(pid: int) -> int:
    """A running process' VmHWM in KiB (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)


def recording(variable: str) -> bool:
    """Whether `variable`=record asks a test to rewrite its expectation from what the code does now. Refused where CI
    runs (CI set, as .ci/run and CI services set it): there an expectation is checked, never made."""
    if os.environ.get(variable) != "record":
        return False
    if os.environ.get("CI"):
        pytest.fail(f"{variable}=record rewrites expectations; CI checks them (unset {variable})")
    return True


def recorded(what: str, variable: str) -> NoReturn:
    """End a recording run as failed: an expectation just written from the code is compared with itself."""
    pytest.fail(f"recorded {what}: run again without {variable}=record to check it", pytrace=False)

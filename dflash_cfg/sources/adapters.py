"""Runs the engine adapters (dflash_cfg/adapters/) in an engine's interpreter and reads their records (the model's
`EngineRecord`): the only place that starts them. Never imported by `check` or the rules: the static path imports
no engine.

One process per engine answers a whole batch (an engine import costs 6-12 s), on CPU. Whatever goes wrong with
the process (it does not start, dies, hangs, or prints something that is not a record) becomes a record whose
`failed` says so, for each request it left unanswered: a caller never sees a traceback from here.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dflash_cfg import progress
from dflash_cfg.model import JSON, NAMES, Adapted, EngineRecord, Reads, Refusal
from dflash_cfg.pinned import is_checked
from dflash_cfg.sources.cache import default_root

if TYPE_CHECKING:
    import subprocess

# The engines an adapter answers for (model.Adapted), in the order the commands ask them.
ENGINES: tuple[Adapted, ...] = ("vllm", "sglang", "speculators")
ADAPTERS = Path(__file__).resolve().parent.parent / "adapters"
# Per record, the first including the engine's import (6-12 s here, minutes on a cold disk cache).
DEFAULT_TIMEOUT = 300.0


@dataclass(frozen=True, kw_only=True)
class Request:
    drafter: str
    target: str | None = None
    num_speculative_tokens: int | None = None
    tensor_parallel_size: int = 1
    speculative_config: Mapping[str, JSON] | None = None
    pipeline_parallel_size: int = 1
    max_model_len: int | None = None  # vLLM's --max-model-len (None: the target's own length)

    def to_json(self) -> str:
        return json.dumps(
            {
                "drafter": self.drafter,
                "target": self.target,
                "num_speculative_tokens": self.num_speculative_tokens,
                "tensor_parallel_size": self.tensor_parallel_size,
                "pipeline_parallel_size": self.pipeline_parallel_size,
                "max_model_len": self.max_model_len,
                "speculative_config": dict(self.speculative_config) if self.speculative_config is not None else None,
            }
        )


_READ_FIELDS = [f for f in Reads.__dataclass_fields__ if f != "extra"]


def adapter_path(engine: Adapted) -> Path:
    return ADAPTERS / f"adapter_{engine}.py"


def adapter_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The adapters' environment: CPU only, vLLM's V2 model runner (what a GPU host runs by default), and the
    caller's Hub settings (HF_HUB_OFFLINE and the rest) passed through as they are."""
    env = dict(os.environ if base is None else base)
    env.update({"CUDA_VISIBLE_DEVICES": "", "VLLM_TARGET_DEVICE": "cpu", "VLLM_USE_V2_MODEL_RUNNER": "1"})
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    root = default_root(env)
    if root is not None:  # see dflash_adapter_io.keep_bytecode
        env["DFLASH_CFG_BYTECODE"] = str(root / "bytecode")
    env.pop("PYTHONPATH", None)  # the engine's interpreter must not pick up the caller's modules
    # Nor the caller's bytecode dir: the engine's bytecode is in its own tree (or kept by keep_bytecode), and under
    # a prefix the engine would find none of it and compile itself from source at every start.
    env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def run(
    python: str | os.PathLike[str],
    engine: Adapted,
    requests: Sequence[Request],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
) -> list[EngineRecord]:
    """One record per request, in order, from one adapter process in `python`."""
    import shutil
    import subprocess  # here: a cached engine step starts no process, and need not load the module

    if not requests:
        return []
    python = str(python)
    lines: list[str] = []
    try:
        # A TMPDIR of this run's own, removed however the adapter ends (killed at the timeout too): what the
        # adapter or its engine leaves there (a rendezvous file, a stand-in config) never outlives the run.
        scratch = tempfile.mkdtemp(prefix="dflash-cfg-engine-")
    except OSError as error:
        return [_failed(engine, python, f"cannot make a temporary directory for the adapter: {error}")] * len(requests)
    try:
        try:
            process = subprocess.Popen(
                [python, str(adapter_path(engine))],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**adapter_env(env), "TMPDIR": scratch},
                # A process group of its own: whatever the adapter starts ends with it (see _collect).
                start_new_session=True,
            )
        except OSError as error:
            return [_failed(engine, python, f"cannot start the adapter: {error}")] * len(requests)
        label = f"{NAMES[engine]} ({python}): building the drafter with its own config code"
        with progress.activity(label):
            problem, tail = _collect(process, requests, lines, timeout)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    records = [_parse(engine, python, line) for line in lines]
    if len(records) < len(requests):
        reason = problem or f"the adapter exited with code {process.returncode} before answering"
        last = tail.decode("utf-8", "replace").strip()
        if last:
            reason += f"; its last output: {last.splitlines()[-1][:500]}"
        records += [_failed(engine, python, reason)] * (len(requests) - len(records))
    return records[: len(requests)]


# A record is a few KB (a few values per draft layer): an answer line longer than this is no record, and is read no
# further. Of stderr (an engine's log can run to gigabytes) only the end is kept, for the reason of a failed record.
MAX_RECORD_BYTES = 1 << 20
TAIL_BYTES = 2000
# How a record that never came begins (commands/engine_check.py calls such a step a timeout).
NO_RECORD = "the adapter gave no record within"
_GRACE = 1.0  # seconds to read what the adapter wrote last (its stderr), once it has ended or been ended


def _collect(
    process: subprocess.Popen[bytes], requests: Sequence[Request], lines: list[str], timeout: float
) -> tuple[str, bytes]:
    """Feed the requests (from a thread: a batch can outgrow the pipe while the adapter writes records) and read
    one line per record, each within `timeout`, keeping the last TAIL_BYTES of stderr. Ends the adapter's whole
    process group. Returns why it stopped early (or "") and that tail."""
    import signal
    import subprocess

    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    payload = "".join(r.to_json() + "\n" for r in requests).encode("utf-8")

    def feed() -> None:
        assert process.stdin is not None
        try:
            process.stdin.write(payload)
            process.stdin.close()
        except OSError:  # the adapter died (the reader reports it): close our end, its unsent bytes dropped
            with contextlib.suppress(OSError):
                process.stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    selector = selectors.DefaultSelector()
    out, err = process.stdout.fileno(), process.stderr.fileno()
    selector.register(out, selectors.EVENT_READ)
    selector.register(err, selectors.EVENT_READ)
    buffer, tail = b"", b""
    problem = ""
    deadline = time.monotonic() + timeout
    try:
        while len(lines) < len(requests) and not problem and out in selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                problem = f"{NO_RECORD} {timeout:.0f} s"
                break
            ready = selector.select(min(left, _GRACE))
            if not ready and process.poll() is not None:
                break  # it ended, and a process it started holds its output open: nothing more comes from it
            for key, _ in ready:
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fd)
                elif key.fd == err:
                    tail = (tail + chunk)[-TAIL_BYTES:]
                else:
                    *complete, buffer = (buffer + chunk).split(b"\n")
                    if complete:
                        lines.extend(line.decode("utf-8", "replace") for line in complete)
                        deadline = time.monotonic() + timeout
                    if len(buffer) > MAX_RECORD_BYTES:
                        problem = (
                            f"the adapter answered {len(buffer)} bytes with no end of record: longer than any record"
                        )
    finally:
        if out not in selector.get_map():  # its output ended: it is exiting, with a status of its own to say
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(_GRACE)
        with contextlib.suppress(OSError):  # gone already (ProcessLookupError), or not ours to end
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        if err in selector.get_map():
            tail = _drain(err, tail)
        selector.close()
        writer.join(5)
        process.stdout.close()
        process.stderr.close()
    return problem, tail


def _drain(err: int, tail: bytes) -> bytes:
    """The end of what the ended adapter left on stderr, read for at most _GRACE seconds (a process that left its
    group may still hold the pipe)."""
    until = time.monotonic() + _GRACE
    with selectors.DefaultSelector() as selector:
        selector.register(err, selectors.EVENT_READ)
        while (left := until - time.monotonic()) > 0 and selector.select(left):
            chunk = os.read(err, 1 << 16)
            if not chunk:
                break
            tail = (tail + chunk)[-TAIL_BYTES:]
    return tail


def _failed(engine: Adapted, python: str, reason: str) -> EngineRecord:
    return EngineRecord(
        engine=engine, version=None, python=python, checked=False, refused=None, reads=None, stand_ins=(), failed=reason
    )


def _parse(engine: Adapted, python: str, line: str) -> EngineRecord:
    try:
        return from_json(engine, python, json.loads(line))
    except (ValueError, KeyError, TypeError, RecursionError) as error:
        reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        return _failed(engine, python, f"the adapter answered something that is not a record ({reason}): {line[:300]}")


def from_json(engine: Adapted, python: str, data: Any) -> EngineRecord:
    """The record an adapter wrote as JSON (`python`: the interpreter, if the record does not name it).
    Raises ValueError, KeyError or TypeError for something that is not a record of `engine`."""
    if not isinstance(data, dict) or data.get("engine") != engine:
        raise ValueError("not a record of this engine")
    refused = data.get("refused")
    reads = data.get("reads")
    if isinstance(reads, dict):
        for name, value in reads.items():
            if name in READ_SHAPES and not READ_SHAPES[name](value):
                # The rules take a read as the engine gave it: one of another type is no answer to judge by.
                raise ValueError(f"reads.{name} is not of the adapters' shape")
    return EngineRecord(
        engine=engine,
        version=_opt(data.get("version"), str),
        python=str(data.get("python") or python),
        # Checked means: the engine suite compared this adapter's reading with this very release (the pinned one
        # or one it also runs, pinned.ALSO_CHECKED).
        checked=is_checked(engine, _opt(data.get("version"), str)),
        refused=Refusal(str(refused["type"]), str(refused["message"]), _opt(refused.get("where"), str))
        if isinstance(refused, dict)
        else None,
        reads=_reads(reads) if isinstance(reads, dict) else None,
        stand_ins=tuple(str(s) for s in data.get("stand_ins") or ()),
        failed=_opt(data.get("failed"), str),
    )


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _real(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _number(v: Any) -> bool:
    """A number a float holds (RoPE θ is compared as one), or the repr of a non-finite one (dflash_adapter_io)."""
    if isinstance(v, str):
        return True
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        float(v)
    except OverflowError:
        return False
    return True


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or check(v)


def _list_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


def _str(v: Any) -> bool:
    return isinstance(v, str)


# The reads as the adapters write them (Reads, and the engine-specific values the rules read): a record holding a
# value of another type (an adapter's bug, or an interpreter that is not what it says) is refused where it is read,
# the runner's answer or a cached one (engine_cache), instead of failing a rule or a report later.
READ_SHAPES: dict[str, Callable[[Any], bool]] = {
    # As the engine holds them: vLLM keeps a file's float taps (1.0) as floats, and builds with them.
    "target_layer_ids": _optional(_list_of(_real)),
    "engine_layer_ids": _optional(_list_of(_real)),
    "mask_token_id": _optional(_int),
    "num_draft_tokens": _optional(_int),
    "block_size": _optional(_int),
    "layer_types": _optional(_list_of(_str)),
    "sliding_window": _optional(_list_of(_optional(_int))),
    "causal": lambda v: v is None or isinstance(v, bool) or _list_of(lambda c: isinstance(c, bool))(v),
    "rope": _optional(_list_of(lambda r: isinstance(r, dict))),
    "rope_theta": _optional(_number),
    "attention_sink": _optional(lambda v: isinstance(v, bool)),
    "logit_scalars": lambda v: isinstance(v, dict),
    "fc_in_features": _optional(_int),
    "vocab_size": _optional(_int),
    "lm_head_size": _optional(_int),
    "architecture": _optional(_str),
    "max_model_len": _optional(lambda v: isinstance(v, dict)),
}


def to_json(record: EngineRecord) -> dict[str, Any]:
    """The record as its adapter wrote it: `from_json` reads it back as an equal record."""
    reads = None
    if record.reads is not None:
        reads = _lists({**dict(record.reads.extra), **record.reads.named()})
    return {
        "engine": record.engine,
        "version": record.version,
        "python": record.python,
        "refused": None
        if record.refused is None
        else {"type": record.refused.type, "message": record.refused.message, "where": record.refused.where},
        "reads": reads,
        "stand_ins": list(record.stand_ins),
        "failed": record.failed,
    }


def _lists(value: Any) -> Any:
    """`value` with its tuples as JSON lists, as the adapter wrote them."""
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _lists(v) for k, v in value.items()}
    return value


def _opt(value: Any, kind: type) -> Any:
    return value if isinstance(value, kind) else None


def _tuple(value: Any) -> tuple[Any, ...] | None:
    return tuple(value) if isinstance(value, list) else None


def _reads(data: dict[str, Any]) -> Reads:
    causal = data.get("causal")
    return Reads(
        target_layer_ids=_tuple(data.get("target_layer_ids")),
        engine_layer_ids=_tuple(data.get("engine_layer_ids")),
        mask_token_id=data.get("mask_token_id"),
        num_draft_tokens=data.get("num_draft_tokens"),
        block_size=data.get("block_size"),
        layer_types=_tuple(data.get("layer_types")),
        sliding_window=_tuple(data.get("sliding_window")),
        causal=_tuple(causal) if isinstance(causal, list) else causal,
        rope=_tuple(data.get("rope")),
        rope_theta=data.get("rope_theta"),
        attention_sink=data.get("attention_sink"),
        logit_scalars=data.get("logit_scalars") or {},
        fc_in_features=data.get("fc_in_features"),
        vocab_size=data.get("vocab_size"),
        lm_head_size=data.get("lm_head_size"),
        architecture=data.get("architecture"),
        extra={k: v for k, v in data.items() if k not in _READ_FIELDS},
    )

"""Engine interpreters: the runner (sources/adapters.run), `engines --python PY` and preflight's engine step, with
a stand-in interpreter that answers the probe, the survey and the adapter as a case says: records of the engine's
shape with hostile values, garbage lines (not JSON, other engines' records, nesting past the parser, integers past
the digit limit, invalid UTF-8), a flood of stdout or stderr (with or without a line end), an answer cut short, a
hang, a death by a signal, a process of its own left holding the output, temporary files in its TMPDIR.

Invariants: the runner returns one record per request, within the timeout per record (plus a grace); the commands
exit 0, 1 or 2 with no traceback or internal error, and JSON output parses; the run's memory grows by less than a
flood would make it (the process' peak RSS); nothing is left in TMPDIR and no process the interpreter started
outlives the run."""

from __future__ import annotations

import copy
import json
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers import FIXTURES, vllm_reads, vllm_record

from dflash_cfg.model import Adapted
from dflash_cfg.sources import adapters
from fuzz.common import Outcome, Tally, broken, environ, invoke

DRAFTER = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"
ENGINE = "@ENGINE@"  # the stand-in writes the engine its adapter was started for (adapter_<engine>.py)
GROWTH_MIB = 150  # a run that holds a flood (tens of MB or more) whole grows the peak past this

# What the vLLM adapter answers for the upstream drafter (dflash_adapter_io.record's shape), window_left too.
RECORD: dict[str, Any] = vllm_record(
    engine=ENGINE,
    version="0.34.0",
    python="/opt/engine/bin/python",
    reads=vllm_reads(window_left=[2047, 2047, 2047, 2047, -1]),
)
VALUES: list[Any] = [
    None, True, False, 0, -1, 1, 2**63, 10**400, 1.5, -0.0, 1e308, "", "x", "x" * 5000, "\u202e\x1b[2J", [], {},
    [None], [1, "a", None], [[1, 2]], {"a": 1}, {"served": "x"}, {"served": 10**400, "target": None},
    ["sliding_attention"] * 500, list(range(300)), {"type": "ValueError"}, {"type": 1, "message": [], "where": {}},
]  # fmt: skip
GARBAGE: list[str] = [
    "", "not a record", "null", "[]", "{}", "42", '"text"', "NaN", '{"engine": "other"}', "{" * 3000,
    "[" * 100_000, "1" * 5000, '{"engine": "@ENGINE@", "reads": ' + "[" * 50_000 + "]" * 50_000 + "}",
    '{"engine": "@ENGINE@"', "\x00\x01\x02", "\ud800".encode("utf-8", "surrogatepass").decode("latin-1"),
    "\xff\xfe{}",
]  # fmt: skip
# The stand-in interpreter: a script of this interpreter, run by its own shebang line (the plan beside it).
FAKE = """\
import json, os, signal, subprocess, sys, tempfile, time
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "plan.json")) as fh:
    plan = json.load(fh)
args = sys.argv[1:]
engine = os.path.basename(args[0])[len("adapter_"):-3] if args and "adapter_" in args[0] else "vllm"
part = plan["adapter"]
if args[:2] == ["-I", "-c"] or (args and "survey" in args[0]):
    part = plan["probe"] if args[0] == "-I" else plan["survey"]
if part["read_stdin"]:
    sys.stdin.buffer.read()
if part["litter"]:
    folder = tempfile.mkdtemp(prefix="litter-")
    open(os.path.join(folder, "config.json"), "w").close()
    tempfile.mkstemp(prefix="litter-")
try:
    for fd, text, repeat in part["writes"]:
        data = text.replace("@ENGINE@", engine).encode("latin-1")
        for _ in range(repeat):
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
except OSError:
    os._exit(3)
how = part["end"]
if how[0] == "fork":
    sleeper = subprocess.Popen(["sleep", "600"])
    with open(os.path.join(here, "pids"), "a") as fh:
        fh.write(f"{sleeper.pid}\\n")
    os._exit(how[1])
if how[0] == "hang":
    time.sleep(600)
if how[0] == "kill":
    os.kill(os.getpid(), how[1])
    time.sleep(5)
os._exit(how[1])
"""


@dataclass(frozen=True)
class Part:
    """What the stand-in does when started for one purpose: (fd, text as latin-1, times) to write, then an end."""

    read_stdin: bool
    writes: tuple[tuple[int, str, int], ...]
    end: tuple[str, int]  # ("exit", code) | ("hang", 0) | ("kill", signal) | ("fork", code)
    litter: bool

    def json(self) -> dict[str, Any]:
        return {"read_stdin": self.read_stdin, "writes": self.writes, "end": self.end, "litter": self.litter}


@dataclass(frozen=True)
class EngineCase:
    way: str  # "runner" | "engines" | "preflight"
    engines: tuple[Adapted, ...]
    probe: Part
    survey: Part
    adapter: Part
    requests: int
    timeout: str  # DFLASH_CFG_ENGINE_TIMEOUT
    fmt: str
    cache: bool


def _line(text: str) -> tuple[int, str, int]:
    return (1, text + "\n", 1)


def _hostile_record(rng: random.Random) -> str:
    record = copy.deepcopy(RECORD)
    for _ in range(rng.choice([0, 1, 1, 2, 3, 6])):
        where = record if rng.random() < 0.3 or not isinstance(record.get("reads"), dict) else record["reads"]
        key = rng.choice([*sorted(where), "extra", "window_left", "max_model_len"])
        if rng.random() < 0.15:
            where.pop(key, None)
        else:
            where[key] = copy.deepcopy(rng.choice(VALUES))
    if rng.random() < 0.1:
        record["reads"], record["refused"] = None, rng.choice([*VALUES[:3], {"type": "E", "message": "m"}])
    if rng.random() < 0.05:
        record["engine"] = rng.choice(["sglang", "vllm", "speculators", None])
    return json.dumps(record)


def _answers(rng: random.Random, requests: int) -> tuple[list[tuple[int, str, int]], tuple[str, int]]:
    """The adapter's writes and end: whole records with hostile values, garbage, floods, cut answers."""
    writes: list[tuple[int, str, int]] = []
    if rng.random() < 0.3:  # an engine's log first
        writes.append((2, rng.choice(["INFO engine starting\n", "x" * 999, "\xff\x00\n"]), rng.choice([1, 100, 5000])))
    kind = rng.choice(["records", "records", "records", "garbage", "flood-out", "flood-err", "cut", "silent"])
    if kind in ("records", "garbage"):
        for _ in range(rng.choice([requests, requests, requests - 1, requests + 1, 0])):
            writes.append(_line(_hostile_record(rng) if kind == "records" else rng.choice(GARBAGE)))
    elif kind == "flood-out":
        writes.append(
            (1, rng.choice(["x" * 65536, ("y" * 1000 + "\n") * 64, "{" * 65536]), rng.choice([16, 300, 1600]))
        )
    elif kind == "flood-err":
        writes.append((2, rng.choice(["x" * 65536, "log line\n" * 7000]), rng.choice([16, 300, 1600])))
        if rng.random() < 0.5:
            writes += [_line(json.dumps(RECORD))] * requests
    elif kind == "cut":
        whole = json.dumps(RECORD)
        writes.append((1, whole[: rng.randrange(1, len(whole))], 1))
    end = rng.choice(
        [("exit", 0), ("exit", 0), ("exit", 1), ("exit", 137), ("hang", 0), ("kill", 9), ("kill", 15), ("fork", 0)]
    )
    return writes, end


def _reply(rng: random.Random, good: str) -> Part:
    """The probe's or the survey's answer: mostly `good`; sometimes garbage, a flood, a hang or a death."""
    roll = rng.random()
    if roll < 0.8:
        return Part(False, (_line(good),), ("exit", 0), False)
    if roll < 0.88:
        return Part(False, (_line(rng.choice(GARBAGE)),), ("exit", rng.choice([0, 1])), False)
    if roll < 0.94:
        return Part(False, ((1, "z" * 65536, rng.choice([8, 200])), _line(good)), ("exit", 0), False)
    if roll < 0.995:
        return Part(False, (_line(good),), rng.choice([("kill", 9), ("fork", 0), ("exit", 3)]), False)
    return Part(False, (), ("hang", 0), False)  # rare: the probe's own timeout (30 s) ends it


def engine_case(rng: random.Random, serial: int) -> EngineCase:
    choices: list[tuple[Adapted, ...]] = [("vllm",), ("vllm",), ("sglang",), ("vllm", "sglang")]
    engines = rng.choice(choices)
    requests = rng.choice([1, 1, 2, 3])
    writes, end = _answers(rng, requests)
    # A survey whose version is the case's own: preflight's cache of engine answers never answers for another case.
    version = f"0.34.{serial}"
    survey = {"engines": list(engines), "packages": {e: {"version": version} for e in engines}, "witnesses": []}
    return EngineCase(
        way=rng.choice(["runner", "runner", "engines", "preflight"]),
        engines=engines,
        probe=_reply(rng, json.dumps(list(engines))),
        survey=_reply(rng, json.dumps(survey)),
        adapter=Part(rng.random() < 0.7, tuple(writes), end, rng.random() < 0.3),
        requests=requests,
        timeout=rng.choice(["1", "2"]),
        fmt=rng.choice(["text", "json"]),
        cache=rng.random() < 0.3,
    )


class Interpreter:
    """The stand-in interpreter in `root`, and the TMPDIR runs use while it is asked (`tmp`)."""

    def __init__(self, root: Path) -> None:
        self.root, self.tmp = root, root / "tmp"
        self.tmp.mkdir(parents=True, exist_ok=True)
        (root / "fake.py").write_text(FAKE, encoding="utf-8")
        self.python = root / "python"
        self.python.write_text(f'#!/bin/sh\nexec {sys.executable} -S {root / "fake.py"} "$@"\n', encoding="utf-8")
        self.python.chmod(0o755)

    def plan(self, case: EngineCase) -> None:
        plan = {"probe": case.probe.json(), "survey": case.survey.json(), "adapter": case.adapter.json()}
        (self.root / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
        (self.root / "pids").unlink(missing_ok=True)

    def left_running(self) -> list[int]:
        pids = self.root / "pids"
        found = [int(p) for p in pids.read_text().split()] if pids.exists() else []
        deadline = time.monotonic() + 3
        while (alive := [p for p in found if _alive(p)]) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in alive:  # the campaign's own cleanup: a defect is reported, the machine kept clean
            os.kill(pid, 9)
        return alive


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@contextmanager
def temp_root(folder: Path) -> Iterator[None]:
    """tempfile's directory (cached by the module at first use) pointed at `folder` for the block."""
    saved = tempfile.tempdir
    tempfile.tempdir = str(folder)
    try:
        yield
    finally:
        tempfile.tempdir = saved


def _run(case: EngineCase, fake: Interpreter) -> Outcome | list[adapters.EngineRecord]:
    if case.way == "runner":
        engine = case.engines[0]
        return adapters.run(
            fake.python, engine, [adapters.Request(drafter=str(DRAFTER))] * case.requests, timeout=float(case.timeout)
        )
    if case.way == "engines":
        return invoke("engines", DRAFTER, "--python", fake.python, "--format", case.fmt)
    spec = json.dumps({"method": "dflash", "model": str(DRAFTER), "num_speculative_tokens": 15})
    if case.engines[0] == "vllm":
        line = [
            fake.python,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            TARGET,
            "--speculative-config",
            spec,
        ]
    else:
        line = [fake.python, "-m", "sglang.launch_server", "--model-path", TARGET, "--speculative-algorithm", "DFLASH"]
        line += ["--speculative-draft-model-path", DRAFTER]
    return invoke("preflight", "--format", case.fmt, *([] if case.cache else ["--no-cache"]), "--", *map(str, line))


def engine_defect(case: EngineCase, fake: Interpreter, *, memory: bool = True) -> str | None:
    """What `case` breaks, or None. `memory`: judge the growth of this process' peak memory (the campaign's own
    process, warmed up; not a test process, whose peak says nothing about one run)."""
    fake.plan(case)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with temp_root(fake.tmp), environ(DFLASH_CFG_ENGINE_TIMEOUT=case.timeout, TMPDIR=str(fake.tmp)):
        try:
            result = _run(case, fake)
        except Exception as error:  # noqa: BLE001 - the runner's contract: never raises
            return f"{type(error).__name__}: {error} <- {case}"
    seconds = time.monotonic() - started
    found = None
    if isinstance(result, Outcome):
        found = broken(result)
        if found is None and case.fmt == "json" and result.code in (0, 1):
            try:
                json.loads(result.out)
            except ValueError:
                found = f"stdout is no document (exit {result.code}): {result.out[:200]!r}"
    elif len(result) != case.requests or not all(isinstance(r, adapters.EngineRecord) for r in result):
        found = f"{len(result)} records for {case.requests} requests"
    # The probe and the survey (30 s each at most: a hang is cut there), then a timeout per record and one more.
    hung = 30 * ((case.probe.end[0] == "hang") + (case.survey.end[0] == "hang"))
    bound = hung + float(case.timeout) * (case.requests + 2) * len(case.engines) + 20
    if found is None and seconds > bound:
        found = f"took {seconds:.0f} s (bound {bound:.0f} s)"
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    if found is None and memory and grew > GROWTH_MIB:
        found = f"the peak memory grew by {grew:.0f} MiB"
    left = sorted(p.name for p in fake.tmp.iterdir())
    if found is None and left:
        found = f"left in TMPDIR: {left[:5]}"
    for item in fake.tmp.iterdir():  # the campaign's own cleanup, so that one defect is reported once
        shutil.rmtree(item, ignore_errors=True) if item.is_dir() else item.unlink()
    running = fake.left_running()
    if found is None and running:
        found = f"processes of the interpreter left running: {running}"
    return None if found is None else f"{found} <- {_shown(case)}"


def _shown(case: EngineCase) -> str:
    def part(p: Part) -> str:
        writes = [(fd, text[:80], n) for fd, text, n in p.writes]
        return f"Part(stdin={p.read_stdin}, writes={writes!r}, end={p.end}, litter={p.litter})"

    return (
        f"EngineCase(way={case.way}, engines={case.engines}, requests={case.requests}, timeout={case.timeout}, "
        f"fmt={case.fmt}, cache={case.cache}, probe={part(case.probe)}, survey={part(case.survey)}, "
        f"adapter={part(case.adapter)})"
    )


def warm_up(fake: Interpreter) -> None:
    """One run of each way, answered well, before any is measured: the first import of the modules they load
    (transformers' config classes among them) is no growth of a run's memory."""
    good = Part(True, (_line(json.dumps(RECORD)),), ("exit", 0), False)
    survey = json.dumps({"engines": ["vllm"], "packages": {"vllm": {"version": "0.34.0"}}, "witnesses": []})
    for way in ("runner", "engines", "preflight"):
        reply = _line(json.dumps(["vllm"]) if way == "engines" else survey)
        probe = Part(False, (reply,), ("exit", 0), False)
        engine_defect(EngineCase(way, ("vllm",), probe, probe, good, 1, "30", "json", False), fake)


def campaign(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    fake = Interpreter(home / "engine")
    warm_up(fake)
    for i in range(n):
        if (found := engine_defect(engine_case(rng, i), fake)) is not None:
            tally.defect("engines", f"{i}: {found}")
        tally.ran("engines")

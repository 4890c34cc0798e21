"""Launch command lines and their `--config` YAML: vLLM and SGLang lines in every form preflight reads
(positional or --model, JSON, dotted and shorthand speculative configs, the old flat flags, a config file),
behind wrappers (NAME=value, env, nohup, numactl, uv run, torchrun, docker run with mounts), then damaged
token by token; the YAML written valid, hostile (alias bombs, recursive aliases, unsafe tags, numbers past
the digit limit, dates, non-string keys, several documents) or mangled, at paths that are no file (a
directory, a FIFO, an endless device, a symlink loop).

Invariants: `parse_launch` reads the line or raises LaunchError with a one-line message, nothing else;
`dflash-cfg preflight` exits 0, 1 or 2 with no traceback or internal error, no control character on
stderr, JSON that parses, and nothing written in the world it reads."""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch import parse_launch
from dflash_cfg.sources.launch_files import read_config
from fuzz.common import Outcome, broken, invoke

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DRAFTER = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"

OSC = "\x1b]0;pwned\x07"
HOSTILE_TOKENS = [
    "--",
    "-",
    "-O3",
    "--x=y",
    "--unknown",
    "serve",
    "=",
    "A=b",
    "",
    OSC,
    "a\udcffb",
    "\ud800",
    "-1",
    "x" * 300,
    "--config",
    "--config=x.yaml",
    "--model",
    "--model=",
    "-tp",
    "--speculative-config",
    "--speculative-config.model",
    "--speculative-algorithm",
    "--tp-size",
    "{",
    "null",
    "None",
    "9" * 5000,
    "\x00",
    "--help",
    "-h",
]
COUNTS = ["1", "2", "15", "16", "0", "-1", "9" * 5000, "1e3", "1.0", "", "٣", OSC, "0x10", " 7", "+8", "1_6"]
METHODS: list[Any] = ["dflash", "DFLASH", "eagle3", "", None, 5, OSC, "dflash2", ["dflash"]]
HOSTILE_JSON_VALUES: list[Any] = [None, True, 10**400, -1, 1.5, "", [], {}, "x" * 3000, "\ud800", float("nan")]


@dataclass(frozen=True)
class World:
    """Where the lines run: a drafter (`d/`), a target (`t/`), odd non-files, the YAML's path."""

    root: Path

    @property
    def yaml(self) -> Path:
        return self.root / "launch.yaml"


def make_world(root: Path) -> World:
    root.mkdir(parents=True, exist_ok=True)
    (root / "d").mkdir(exist_ok=True)
    (root / "d" / "config.json").write_bytes(DRAFTER.read_bytes())
    (root / "t").mkdir(exist_ok=True)
    for name in ("config.json", "tokenizer_config.json"):
        (root / "t" / name).write_bytes((TARGET / name).read_bytes())
    (root / "dir.yaml").mkdir(exist_ok=True)
    if not (root / "fifo.yaml").exists():
        os.mkfifo(root / "fifo.yaml")
    for name, to in (("zero.yaml", "/dev/zero"), ("loop.yaml", "loop.yaml"), ("dangling.yml", "nowhere.yaml")):
        if not (root / name).is_symlink():
            os.symlink(to, root / name)
    return World(root)


def snapshot(world: World) -> dict[str, bytes]:
    return {p: (world.root / p).read_bytes() for p in ("d/config.json", "t/config.json", "t/tokenizer_config.json")}


def _pick(rng: random.Random, options: list[Any]) -> Any:
    return options[rng.randrange(len(options))]


def _maybe(rng: random.Random, good: Any, bad: list[Any], p: float = 0.15) -> Any:
    return _pick(rng, bad) if rng.random() < p else good


# --- the YAML ---------------------------------------------------------------------------------------

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)
HOSTILE_YAML = [
    BOMB,
    "a: &a [*a]\n",
    "&a {b: *a}\n",
    "model: !!python/object/apply:os.system ['true']\n",
    "model: !!binary aGVsbG8=\n",
    "speculative-config: !!set {a, b}\n",
    "speculative-config: {model: 2001-01-01, method: dflash}\n",
    "port: 2001-13-45\n",
    "port: 0x" + "f" * 5000 + "\n",
    "port: 0" + "7" * 5000 + "\n",  # YAML 1.1 octal
    "port: 0b" + "1" * 20000 + "\n",
    "port: " + "9" * 5000 + "\n",
    "tensor-parallel-size: 190:20:30\n",
    "? [a, b]\n: c\n",
    "{[1]: 2}\n",
    "a: 1\na: 2\n",
    "<<: *nothing\n",
    "a: &b {x: 1}\nc:\n  <<: 1\n",
    "---\na: 1\n---\nb: 2\n",
    "",
    "# only a comment\n",
    "[1, 2]\n",
    "just a string\n",
    "\ta: 1\n",
    'model: "\\ud800"\n',
    'model: "\\x1b]0;pwned\\x07"\n',
    "model: " + "[" * 10000 + "]" * 10000 + "\n",
    "a:\n" + "".join("  " * i + "- \n" for i in range(1, 200)),
    "port: !!float abc\n",
    "port: !!float ''\n",
    "port: !!int\n",
    "port: !!bool maybe\n",
    "port: !!timestamp x\n",
    "? !!float ''\n: 1\n",
    "port: !!int 12x\n",
    "1: 2\ntrue: 3\n~: 4\n.nan: 5\n2001-01-01: 6\n",
    "config: other.yaml\n",
    "speculative-config: [1, 2]\n",
    "speculative-config:\n  model: ./d\n  num_speculative_tokens: " + "9" * 5000 + "\n",
    "speculative-config:\n  model: ./d\n  num_speculative_tokens: 0x" + "f" * 5000 + "\n",
    "model: " + "x" * 500_000 + "\n",
    "served-model-name: [a, [b, {c: d}]]\n",
    "model: ./t\nspeculative_config: {model: ./d, method: dflash, num_speculative_tokens: 15}\n",
    "speculative_draft_model_path: ./d\nspeculative-algorithm: DFLASH\n",
]


def yaml_mapping(rng: random.Random, vllm: bool, drafter: str, target: str) -> dict[Any, Any]:
    """A config file's options: mostly what the engines read, some hostile."""
    data: dict[Any, Any] = {}
    if vllm:
        if rng.random() < 0.5:
            data["model"] = _maybe(rng, target, HOSTILE_JSON_VALUES)
        if rng.random() < 0.6:
            spec = {"model": drafter, "method": _pick(rng, METHODS), "num_speculative_tokens": rng.randint(-1, 17)}
            if rng.random() < 0.2:
                spec[_pick(rng, ["revision", "draft_tensor_parallel_size", "x"])] = _pick(rng, HOSTILE_JSON_VALUES)
            data[_pick(rng, ["speculative-config", "speculative_config", "speculative-config.model"])] = spec
        if rng.random() < 0.3:
            data[_pick(rng, ["tensor-parallel-size", "tensor_parallel_size", "tp"])] = _pick(rng, [1, 2, 0, -1, "2"])
    else:
        if rng.random() < 0.5:
            data[_pick(rng, ["model-path", "model"])] = _maybe(rng, target, HOSTILE_JSON_VALUES)
        if rng.random() < 0.6:
            data[_pick(rng, ["speculative-draft-model-path", "speculative_draft_model_path"])] = drafter
        if rng.random() < 0.5:
            data["speculative-algorithm"] = _pick(rng, METHODS)
        if rng.random() < 0.4:
            data[_pick(rng, ["speculative-num-draft-tokens", "speculative-dflash-block-size"])] = rng.randint(-1, 17)
        if rng.random() < 0.3:
            data[_pick(rng, ["tp-size", "tp", "tensor-parallel-size"])] = _pick(rng, [1, 2, 0, "x"])
    for _ in range(rng.randint(0, 2)):
        data[_pick(rng, ["port", "trust-remote-code", "enforce-eager", "max-model-len", "revision", "x_y"])] = _pick(
            rng, [True, False, 8000, "4096", None, [], ["a", "b"], {"k": "v"}, 1.5]
        )
    return data


def yaml_bytes(rng: random.Random, vllm: bool, drafter: str, target: str) -> bytes:
    roll = rng.random()
    if roll < 0.25:
        text = _pick(rng, HOSTILE_YAML)
    else:
        data = yaml_mapping(rng, vllm, drafter, target)
        try:
            text = yaml.safe_dump(data, default_flow_style=rng.random() < 0.3, allow_unicode=rng.random() < 0.5)
        except (yaml.YAMLError, ValueError):
            text = json.dumps(data, default=str)
        if rng.random() < 0.2:  # a hostile line added to a good file
            text += _pick(rng, HOSTILE_YAML)
    raw = text.encode("utf-8", "surrogatepass")
    how = _pick(rng, ["none"] * 8 + ["truncate", "bom", "bad-utf8", "nul", "crlf", "utf16"])
    if how == "truncate":
        return raw[: rng.randint(0, max(0, len(raw) - 1))]
    if how == "bom":
        return b"\xef\xbb\xbf" + raw
    if how == "bad-utf8":
        at = rng.randint(0, len(raw))
        return raw[:at] + _pick(rng, [b"\xff", b"\xc0\x80", b"\xed\xa0\x80"]) + raw[at:]
    if how == "nul":
        return raw.replace(b":", b":\x00", 1)
    if how == "crlf":
        return raw.replace(b"\n", b"\r\n")
    if how == "utf16":
        return text.encode("utf-16", "surrogatepass")
    return raw


# --- the line ---------------------------------------------------------------------------------------


def vllm_options(rng: random.Random, drafter: str) -> list[list[str]]:
    spec: dict[str, Any] = {"model": drafter}
    if rng.random() < 0.8:
        spec["method"] = _pick(rng, METHODS)
    if rng.random() < 0.8:
        spec[_pick(rng, ["num_speculative_tokens", "num-speculative-tokens"])] = _maybe(
            rng, rng.randint(1, 16), HOSTILE_JSON_VALUES
        )
    form = rng.randrange(6)
    if form == 0:
        text = json.dumps(spec)
        if rng.random() < 0.2:
            text = text[: rng.randint(0, len(text))]
        return [[_pick(rng, ["--speculative-config", "-sc", "--speculative_config"]), text]]
    if form == 1:
        return [[f"{_pick(rng, ['--speculative-config', '-sc'])}={json.dumps(spec)}"]]
    if form == 2:
        base = _pick(rng, ["--speculative-config", "-sc"])
        out = []
        for key, value in spec.items():
            text = value if isinstance(value, str) else json.dumps(value)
            out.append([f"{base}.{key}={text}"] if rng.random() < 0.3 else [f"{base}.{key}", text])
        return out
    if form == 3:
        return [
            ["--spec-model", drafter],
            ["--spec-method", str(spec.get("method"))],
            ["--spec-tokens", _pick(rng, COUNTS)],
        ]
    if form == 4:
        return [["--speculative-model", drafter, "--num-speculative-tokens", _pick(rng, COUNTS)]]
    return []  # the speculative options only in the config file, or none


def vllm_line(rng: random.Random, drafter: str, target: str, config: str | None) -> list[str]:
    head = _pick(
        rng,
        [
            ["vllm", "serve"],
            ["/opt/venv/bin/vllm", "serve"],
            ["python", "-m", "vllm.entrypoints.cli.main", "serve"],
            ["python3", "-m", "vllm.entrypoints.openai.api_server"],
        ],
    )
    options = vllm_options(rng, drafter)
    if rng.random() < 0.6:
        options.append([_pick(rng, ["-tp", "--tensor-parallel-size", "--tensor_parallel_size"]), _pick(rng, COUNTS)])
    for extra in (["--max-model-len", "4096"], ["--enforce-eager"], ["--port", "8001"], ["--revision", "main"]):
        if rng.random() < 0.2:
            options.append(extra)
    if config is not None:
        options.insert(rng.randrange(len(options) + 1), ["--config", config])
    rng.shuffle(options)
    model = rng.randrange(4)
    if model == 1:
        options.insert(rng.randrange(len(options) + 1), ["--model", target])
    elif model == 2:
        options.insert(rng.randrange(len(options) + 1), [f"--model={target}"])
    first = [target] if model == 0 else []
    return [*head, *first, *(t for option in options for t in option)]


def sglang_line(rng: random.Random, drafter: str, target: str, config: str | None) -> list[str]:
    options: list[list[str]] = []
    if rng.random() < 0.9:
        options.append([_pick(rng, ["--model-path", "--model"]), target])
    if rng.random() < 0.9:
        options.append(["--speculative-algorithm", str(_pick(rng, METHODS))])
    if rng.random() < 0.9:
        options.append([_pick(rng, ["--speculative-draft-model-path", "--speculative-draft-model"]), drafter])
    if rng.random() < 0.7:
        options.append(
            [_pick(rng, ["--speculative-num-draft-tokens", "--speculative-dflash-block-size"]), _pick(rng, COUNTS)]
        )
    if rng.random() < 0.5:
        options.append([_pick(rng, ["--tp-size", "--tp", "--tensor-parallel-size"]), _pick(rng, COUNTS)])
    if config is not None:
        options.insert(rng.randrange(len(options) + 1), ["--config", config])
    rng.shuffle(options)
    options = [[f"{o[0]}={o[1]}"] if len(o) == 2 and rng.random() < 0.2 else o for o in options]
    head = _pick(
        rng,
        [["python", "-m", "sglang.launch_server"], ["sglang", "serve"], ["python3.11", "-m", "sglang.launch_server"]],
    )
    return [*head, *(t for option in options for t in option)]


def wrappers(rng: random.Random, world: World) -> list[str]:
    out: list[str] = []
    for _ in range(rng.randint(0, 2)):
        out += _pick(
            rng,
            [
                ["CUDA_VISIBLE_DEVICES=0,1"],
                [f"X={OSC}"],
                ["env"],
                ["env", "-i"],
                ["env", "-u", "HF_HOME"],
                ["env", "-C", str(world.root)],
                ["nohup"],
                ["numactl", "--interleave", "all"],
                ["numactl", "-N", "0", "-m", "0"],
                ["uv", "run", "--with", "vllm"],
                ["uv", "run", "--directory", str(world.root)],
                ["HF_HUB_OFFLINE=1"],
                [f"HF_HOME={world.root / 'hf'}"],
            ],
        )
    return out


def config_path(rng: random.Random, world: World) -> str:
    roll = rng.random()
    if roll < 0.75:
        return _pick(rng, [str(world.yaml), "./launch.yaml", "launch.yaml"])
    return _pick(
        rng,
        ["dir.yaml", "fifo.yaml", "zero.yaml", "loop.yaml", "dangling.yml", "missing.yaml", "launch.YAML", "x.json",
         "launch", "", "\ud800.yaml", f"{OSC}.yaml", "/proc/self/environ.yaml"],
    )  # fmt: skip


DOCKER_IMAGES = ["vllm/vllm-openai:latest", "vllm/vllm-openai:v0.33.0", "lmsysorg/sglang:latest", "img"]


def docker_line(rng: random.Random, world: World, config: bool) -> list[str]:
    """`docker run` with the world mounted at /models, the engine's paths inside the container."""
    mount = _pick(
        rng,
        [
            ["-v", f"{world.root}:/models"],
            ["-v", f"{world.root}:/models:ro"],
            ["--mount", f"type=bind,src={world.root},dst=/models"],
            ["--volume", f"{world.root}:/models"],
            [],
        ],
    )
    extra = _pick(
        rng, [[], ["--gpus", "all"], ["-e", "HF_HOME=/models/hf"], ["--ipc=host"], ["--rm", "-it"], ["-p", "8000:8000"]]
    )
    image = _pick(rng, DOCKER_IMAGES)
    drafter, target = _pick(rng, ["/models/d", "/models/d/", "d"]), _pick(rng, ["/models/t", "Qwen/Qwen3.6-27B"])
    yaml_at = "/models/launch.yaml" if config else None
    if image.startswith("vllm"):
        line = vllm_line(rng, drafter, target, yaml_at)
        body = line[2:] if line[:2] == ["vllm", "serve"] and rng.random() < 0.7 else line
    else:
        body = sglang_line(rng, drafter, target, yaml_at)
    return ["docker", "run", *mount, *extra, image, *body]


def mutate(rng: random.Random, argv: list[str]) -> list[str]:
    """One token-level damage: inserted, deleted, duplicated, replaced, joined, split or swapped tokens."""
    argv = list(argv)
    how = rng.randrange(8)
    at = rng.randrange(len(argv) + 1)
    if how == 0 or not argv:
        argv.insert(at, _pick(rng, HOSTILE_TOKENS))
        return argv
    at = min(at, len(argv) - 1)
    if how == 1:
        del argv[at]
    elif how == 2:
        argv.insert(at, argv[at])
    elif how == 3:
        argv[at] = _pick(rng, HOSTILE_TOKENS)
    elif how == 4 and at + 1 < len(argv):
        argv[at : at + 2] = [f"{argv[at]}={argv[at + 1]}"]
    elif how == 5 and "=" in argv[at]:
        argv[at : at + 1] = argv[at].split("=", 1)
    elif how == 6 and at + 1 < len(argv):
        argv[at], argv[at + 1] = argv[at + 1], argv[at]
    else:
        argv = argv[: rng.randint(1, len(argv))]
    return argv


@dataclass(frozen=True)
class Case:
    argv: list[str]
    yaml: bytes | None  # written to world.yaml before the line is read


def launch_case(rng: random.Random, world: World) -> Case:
    vllm = rng.random() < 0.55
    with_config = rng.random() < 0.5
    data = yaml_bytes(rng, vllm, _pick(rng, ["./d", str(world.root / "d")]), _pick(rng, ["./t", str(world.root / "t")]))
    if rng.random() < 0.15:
        argv = docker_line(rng, world, with_config)
    else:
        drafter = _pick(rng, ["./d", str(world.root / "d"), "d", "./d/config.json", "org/name", "", "../..", OSC])
        target = _pick(rng, ["./t", str(world.root / "t"), "t", "Qwen/Qwen3.6-27B", "/nonexistent", "a\udcffb"])
        config = config_path(rng, world) if with_config else None
        line = (vllm_line if vllm else sglang_line)(rng, drafter, target, config)
        argv = wrappers(rng, world) + line
    for _ in range(rng.choice([0, 0, 0, 1, 1, 2, 3])):
        argv = mutate(rng, argv)
    return Case(argv, data if with_config else None)


# --- the invariants ---------------------------------------------------------------------------------

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def write_case(world: World, case: Case) -> None:
    if case.yaml is not None:
        world.yaml.write_bytes(case.yaml)


def parse_defect(case: Case) -> str | None:
    """None when the line is read, or refused with a one-line LaunchError."""
    try:
        parse_launch(case.argv, read_config)
    except LaunchError as exc:
        if "\n" in str(exc) or "\r" in str(exc):
            return f"a refusal on several lines: {str(exc)[:300]!r} <- {shown(case)}"
    except Exception as exc:  # noqa: BLE001 - the finding
        return f"{type(exc).__name__}: {str(exc)[:200]} <- {shown(case)}"
    return None


def preflight_defect(case: Case, fmt: str, engine_check: bool) -> str | None:
    args = ["preflight", "--format", fmt, *([] if engine_check else ["--no-engine-check"]), "--", *case.argv]
    outcome: Outcome = invoke(*args)
    found = broken(outcome)
    if found is None and (bad := _UNSAFE.search(outcome.err)) is not None:
        found = f"a control character on stderr: {outcome.err[max(0, bad.start() - 80) : bad.end() + 80]!r}"
    if found is None and fmt in ("json", "sarif"):
        try:
            json.loads(outcome.out)
        except ValueError:
            found = f"stdout is no {fmt} document (exit {outcome.code}): {outcome.out[:200]!r}"
    return None if found is None else f"{found} <- {shown(case)}"


def shown(case: Case) -> str:
    return f"argv={case.argv!r:.400} yaml={case.yaml!r:.200}"

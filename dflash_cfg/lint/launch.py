"""Read a vLLM or SGLang launch command: the target, the drafter and the drafts per step it asks for.

`dflash-cfg preflight -- <launch command>` checks a launch against the drafter's config.json (spec 4.3:
vLLM `num_speculative_tokens` = block_size - 1, SGLang `--speculative-num-draft-tokens` = block_size).
This module only reads the argv. It never imports vLLM or SGLang (neither is a dependency) and touches
nothing: argv in, `Launch` out, and `LaunchError` for anything it cannot read with confidence. A wrong
guess here would make preflight check a launch the engine will not run, so refusing beats guessing.

Forms accepted, as read in the engines' own sources:

vLLM (`vllm/utils/argparse_utils.py` FlexibleArgumentParser, `vllm/engine/arg_utils.py`,
`vllm/entrypoints/openai/cli_args.py` make_arg_parser, `vllm/entrypoints/cli/{main,serve}.py`):
  - `vllm serve MODEL ...` (any path to a `vllm` executable) and `python -m vllm.entrypoints.cli.main serve`;
    the model is the positional, or `--model M` / `--model=M`, which the parser moves to the positional
    (the first `--model` is the one used).
  - `python -m vllm.entrypoints.openai.api_server --model M`: that `__main__` never copies the positional
    `model_tag` into `model`, so there the model must come from `--model`.
  - Option names may use `_` for `-` (`--tensor_parallel_size`); `--opt value` and `--opt=value` are alike.
  - `--speculative-config`/`-sc` takes JSON (keys `method`, `model`, `num_speculative_tokens`, `revision`
    of `SpeculativeConfig`, `vllm/config/speculative.py`). Dotted `--speculative-config.KEY VALUE` (or
    `-sc.KEY=VALUE`) options are gathered into one dict, each VALUE read as JSON and else kept as a string.
    The parser appends that dict after everything else, so it *replaces* a JSON `--speculative-config`
    rather than merging with it, and `-sc.` and `--speculative-config.` spellings make two dicts of which
    one is dropped: both mixes are refused here instead of reproducing a silent loss.
  - `--spec-method/--spec-model/--spec-tokens` (vllm #42476) fill the same three keys; setting a key both
    ways is refused by vLLM ("mutually exclusive"), and so here.
  - `--tensor-parallel-size`/`-tp`, `--revision` (the string "None" means unset, vLLM's nullable_str).
  - `method` may be absent: vLLM detects DFlash from the drafter name or config; it stays None here.
    A served model that is itself a `speculators` checkpoint is swapped for its verifier inside vLLM,
    which no argv shows; preflight has to read that config.
SGLang (`python/sglang/srt/server_args.py`, `python/sglang/launch_server.py`, `python/sglang/cli/serve.py`):
  - `python -m sglang.launch_server --model-path M ...` and `sglang serve [M] ...`; `sglang serve` takes
    a positional model only as its first argument (after dropping `--model-type X`) and turns it into a
    leading `--model-path`, so an explicit `--model-path` wins over it.
  - `--model-path`/`--model`, `--revision`, `--speculative-algorithm`, `--speculative-draft-model-path`/
    `--speculative-draft-model`, `--speculative-draft-model-revision`, `--speculative-num-draft-tokens`,
    `--tp-size`/`--tensor-parallel-size`, and `--tp`, which argparse accepts as the unique prefix of
    `--tp-size` (abbreviations in general are not resolved here).
Both: `--config FILE` (YAML) is read through the `read_config` callback, as each engine merges it: vLLM
  (`FlexibleArgumentParser._pull_args_from_config`) after the model and before the other options,
  SGLang (`ConfigArgumentMerger`) before every option; the command line wins. `--config=FILE` is refused
  (neither engine loads the file written that way), as is a second `--config`.
  vLLM before 0.8: `--speculative-model`, `--num-speculative-tokens`, `--speculative-draft-tensor-parallel-size`.
  vLLM refuses `vllm serve --opt ... --served-model-name ...` with no model first; so does this parser.
Wrappers (each refused on an option it does not know, since the wrapped command's start is then unknown):
  leading `NAME=value`, `env [-i] [-u NAME] NAME=value`, `nohup`, `numactl [options]`, `uv run [options]
  [-m MODULE]`, `torchrun`/`python -m torch.distributed.run [options] (-m MODULE | --no-python PROGRAM)`,
  and `docker run [options] IMAGE [ARGS]`: vllm/vllm-openai (latest, nightly: ENTRYPOINT vllm serve; other
  tags and platform images are read both as `vllm serve` and as the api_server module, and must agree),
  lmsysorg/sglang (ARGS are the command), or any image with `--entrypoint`. `-v`/`--mount` binds map
  container paths back to host paths (`host_path`); `-e` gives the container's HF cache.

Options this module does not know are skipped. The rule for the tokens after one (`--foo x`): an unknown
option may be a flag or take values, so the bare tokens right after it are read as its values whenever
they cannot be the model, which is always for SGLang and the api_server (their model is an option) and,
for `vllm serve`, once the model is fixed (a positional already seen, or `--model` anywhere). Before that,
`vllm serve --foo x` is ambiguous and raises LaunchError naming `--foo`: put the model right after
`serve`. A bare token that is not the model and follows no such option is an error, as in the engines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dflash_cfg.errors import LaunchError
from dflash_cfg.model import ASSIGNMENT, Container, Engine, Launch, Mount

# Canonical names for the options whose values are read; an empty name means "known, value ignored".
MODEL = "model"
REVISION = "revision"
TP = "tp"
CONFIG = "config"
SPEC_CONFIG = "spec_config"
SPEC_METHOD = "spec_method"
SPEC_MODEL = "spec_model"
SPEC_TOKENS = "spec_tokens"
ALGORITHM = "algorithm"
DRAFT = "draft"
DRAFT_REVISION = "draft_revision"
DRAFT_TOKENS = "draft_tokens"
OLD_MODEL = "old_model"
OLD_TOKENS = "old_tokens"
DRAFT_TP = "draft_tp"

# Arity: FLAG takes nothing, VALUE exactly one token, MANY every bare token that follows (nargs="+").
FLAG, VALUE, MANY = 0, 1, 2

# Only common options whose arity is not in doubt are listed: a flag listed as taking a value would
# swallow the model that follows it. Everything else goes through the unknown-option rule.
_VLLM: dict[str, tuple[str, int]] = {
    "--model": (MODEL, VALUE),
    "--revision": (REVISION, VALUE),
    "--tensor-parallel-size": (TP, VALUE),
    "-tp": (TP, VALUE),
    "--speculative-config": (SPEC_CONFIG, VALUE),
    "-sc": (SPEC_CONFIG, VALUE),
    "--spec-method": (SPEC_METHOD, VALUE),
    "--spec-model": (SPEC_MODEL, VALUE),
    "--spec-tokens": (SPEC_TOKENS, VALUE),
    "--config": (CONFIG, VALUE),
    # Before vLLM 0.8 (vllm/engine/arg_utils.py of 0.6-0.7): the drafter and its drafts as flat options.
    "--speculative-model": (OLD_MODEL, VALUE),
    "--num-speculative-tokens": (OLD_TOKENS, VALUE),
    "--speculative-draft-tensor-parallel-size": (DRAFT_TP, VALUE),
    "-spec-draft-tp": (DRAFT_TP, VALUE),
    **{
        name: ("", VALUE)
        for name in (
            "--speculative-model-quantization",
            "--speculative-max-model-len",
            "--speculative-disable-by-batch-size",
            "--ngram-prompt-lookup-max",
            "--ngram-prompt-lookup-min",
            "--spec-decoding-acceptance-method",
            "--tokenizer",
            "--tokenizer-revision",
            "--code-revision",
            "--tokenizer-mode",
            "--host",
            "--port",
            "--max-model-len",
            "--gpu-memory-utilization",
            "--dtype",
            "--kv-cache-dtype",
            "--max-num-seqs",
            "--max-num-batched-tokens",
            "--pipeline-parallel-size",
            "-pp",
            "--data-parallel-size",
            "-dp",
            "--quantization",
            "--attention-backend",
            "--download-dir",
            "--load-format",
            "--seed",
            "--block-size",
            "--chat-template",
            "--tool-call-parser",
            "--reasoning-parser",
            "--compilation-config",
            "-cc",
            "--hf-overrides",
            "--limit-mm-per-prompt",
            "--uvicorn-log-level",
            "--distributed-executor-backend",
            "--api-server-count",
            "-asc",
            "--generation-config",
        )
    },
    "--served-model-name": ("", MANY),
    "--cudagraph-capture-sizes": ("", MANY),
    **{
        name: ("", FLAG)
        for name in (
            "--trust-remote-code",
            "--enforce-eager",
            "--enable-prefix-caching",
            "--no-enable-prefix-caching",
            "--enable-chunked-prefill",
            "--no-enable-chunked-prefill",
            "--disable-log-stats",
            "--disable-log-requests",
            "--enable-log-requests",
            "--enable-auto-tool-choice",
            "--headless",
            "--enable-expert-parallel",
            "--async-scheduling",
            "--no-async-scheduling",
            "--grpc",
            "--speculative-disable-mqa-scorer",
        )
    },
}

_SGLANG: dict[str, tuple[str, int]] = {
    "--model-path": (MODEL, VALUE),
    "--model": (MODEL, VALUE),
    "--revision": (REVISION, VALUE),
    "--tp-size": (TP, VALUE),
    "--tensor-parallel-size": (TP, VALUE),
    "--tp": (TP, VALUE),
    "--speculative-algorithm": (ALGORITHM, VALUE),
    "--speculative-draft-model-path": (DRAFT, VALUE),
    "--speculative-draft-model": (DRAFT, VALUE),
    "--speculative-draft-model-revision": (DRAFT_REVISION, VALUE),
    "--speculative-num-draft-tokens": (DRAFT_TOKENS, VALUE),
    "--config": (CONFIG, VALUE),
    **{
        name: ("", VALUE)
        for name in (
            "--model-type",
            "--tokenizer-path",
            "--host",
            "--port",
            "--mem-fraction-static",
            "--context-length",
            "--dtype",
            "--kv-cache-dtype",
            "--quantization",
            "--dp-size",
            "--dp",
            "--pp-size",
            "--attention-backend",
            "--speculative-num-steps",
            "--speculative-eagle-topk",
            "--speculative-dflash-draft-window-size",
            "--chunked-prefill-size",
            "--max-running-requests",
            "--cuda-graph-max-bs",
            "--served-model-name",
            "--log-level",
            "--load-format",
            "--tool-call-parser",
            "--reasoning-parser",
            "--chat-template",
            "--api-key",
            "--nnodes",
            "--node-rank",
            "--dist-init-addr",
            "--page-size",
            "--json-model-override-args",
        )
    },
    **{
        name: ("", FLAG)
        for name in (
            "--trust-remote-code",
            "--enable-torch-compile",
            "--disable-radix-cache",
            "--disable-cuda-graph",
            "--enable-dp-attention",
            "--skip-server-warmup",
            "--enable-metrics",
        )
    },
}

# Wrappers before the engine: option -> FLAG or VALUE, from each tool's own --help. An option not listed
# is refused: without its arity the start of the wrapped command is unknown.
_NUMACTL: dict[str, int] = {
    **dict.fromkeys(
        ("--interleave", "-i", "--preferred", "-p", "--preferred-many", "-P", "--membind", "-m", "--cpunodebind",
         "-N", "--physcpubind", "-C", "--weighted-interleave", "-w"),
        VALUE,
    ),
    **dict.fromkeys(("--localalloc", "-l", "--all", "-a", "--balancing", "-b"), FLAG),
}  # fmt: skip
_UV_RUN: dict[str, int] = {
    **dict.fromkeys(
        ("--with", "-w", "--with-editable", "--with-requirements", "--python", "-p", "--extra", "--group",
         "--only-group", "--no-group", "--package", "--env-file", "--project", "--directory", "--index",
         "--default-index", "--index-url", "-i", "--extra-index-url", "--find-links", "-f", "--index-strategy",
         "--resolution", "--prerelease", "--exclude-newer", "--link-mode", "--config-setting", "-C", "--cache-dir",
         "--config-file", "--color", "--refresh-package", "--reinstall-package", "--upgrade-package", "-P",
         "--no-binary-package", "--no-build-package", "--keyring-provider", "--allow-insecure-host",
         "--python-platform", "--no-extra"),
        VALUE,
    ),
    **dict.fromkeys(
        ("--module", "-m", "--all-extras", "--no-dev", "--dev", "--only-dev", "--all-groups", "--frozen", "--locked",
         "--no-sync", "--isolated", "--active", "--no-project", "--no-config", "--offline", "--no-cache", "-n",
         "--quiet", "-q", "--verbose", "-v", "--no-env-file", "--no-editable", "--exact", "--refresh",
         "--reinstall", "--upgrade", "-U", "--compile-bytecode", "--no-build-isolation", "--managed-python",
         "--no-managed-python", "--no-python-downloads", "--native-tls", "--no-progress", "--preview",
         "--no-build", "--no-binary"),
        FLAG,
    ),
}  # fmt: skip
# torch.distributed.run (torchrun); `_` spellings are read as `-`, as torchrun registers both.
_TORCHRUN: dict[str, int] = {
    **dict.fromkeys(
        ("--nnodes", "--nproc-per-node", "--rdzv-backend", "--rdzv-endpoint", "--rdzv-id", "--rdzv-conf",
         "--max-restarts", "--monitor-interval", "--start-method", "--role", "--node-rank", "--master-addr",
         "--master-port", "--local-addr", "--log-dir", "--redirects", "-r", "--tee", "-t", "--local-ranks-filter",
         "--logs-specs"),
        VALUE,
    ),
    **dict.fromkeys(("--standalone", "--module", "-m", "--no-python", "--run-path"), FLAG),
}  # fmt: skip
_DOCKER: dict[str, int] = {
    **dict.fromkeys(
        ("-a", "--attach", "-c", "--cpu-shares", "-e", "--env", "-h", "--hostname", "-l", "--label", "-m", "--memory",
         "-p", "--publish", "-u", "--user", "-v", "--volume", "-w", "--workdir", "--add-host", "--annotation",
         "--blkio-weight", "--blkio-weight-device", "--cap-add", "--cap-drop", "--cgroup-parent", "--cgroupns",
         "--cidfile", "--cpu-period", "--cpu-quota", "--cpu-rt-period", "--cpu-rt-runtime", "--cpus",
         "--cpuset-cpus", "--cpuset-mems", "--detach-keys", "--device", "--device-cgroup-rule", "--device-read-bps",
         "--device-read-iops", "--device-write-bps", "--device-write-iops", "--dns", "--dns-option",
         "--dns-search", "--domainname", "--entrypoint", "--env-file", "--expose", "--gpus", "--group-add",
         "--health-cmd", "--health-interval", "--health-retries", "--health-start-interval",
         "--health-start-period", "--health-timeout", "--ip", "--ip6", "--ipc", "--isolation", "--kernel-memory",
         "--label-file", "--link", "--link-local-ip", "--log-driver", "--log-opt", "--mac-address",
         "--memory-reservation", "--memory-swap", "--memory-swappiness", "--mount", "--name", "--network", "--net",
         "--network-alias", "--oom-score-adj", "--pid", "--pids-limit", "--platform", "--pull", "--restart",
         "--runtime", "--security-opt", "--shm-size", "--stop-signal", "--stop-timeout", "--storage-opt",
         "--sysctl", "--tmpfs", "--ulimit", "--userns", "--uts", "--volume-driver", "--volumes-from"),
        VALUE,
    ),
    **dict.fromkeys(
        ("-d", "--detach", "-i", "--interactive", "-t", "--tty", "-P", "--publish-all", "-q", "--quiet", "--rm",
         "--init", "--privileged", "--read-only", "--no-healthcheck", "--oom-kill-disable", "--sig-proxy",
         "--disable-content-trust", "--use-api-socket"),
        FLAG,
    ),
}  # fmt: skip

API_SERVER = "vllm.entrypoints.openai.api_server"
VLLM_CLI = "vllm.entrypoints.cli.main"
SGLANG_SERVER = "sglang.launch_server"
TORCHRUN = "torch.distributed.run"

_PYTHON = re.compile(r"python[0-9.]*")
# argparse reads "-1" or "-0.5" as a value, not an option, when no option looks like a number.
_NEGATIVE = re.compile(r"-[0-9]+(\.[0-9]*)?|-\.[0-9]+")
_DIGITS = re.compile(r"[0-9]{1,18}")
# CPython interpreter switches that take no argument (python --help); X and W take one.
_PY_FLAGS = frozenset("bBdEhiIOPqRsSuvVx")


def host_path(container: Container, path: str) -> str:
    """The host path of a container path (through the most specific bind mount covering it, as in the
    container); LaunchError when none does."""
    if not path.startswith("/"):
        where = f"the working directory {container.workdir}" if container.workdir else "the image's working directory"
        raise LaunchError(f"container path {_quote(path)} is relative (to {where}); use an absolute path")
    normal = "/" + "/".join(p for p in path.split("/") if p not in ("", "."))
    if any(p == ".." for p in normal.split("/")):
        raise LaunchError(f"container path {_quote(path)}: '..' is not followed here")
    best: Mount | None = None
    for mount in container.mounts:
        inside = mount.container == "/" or normal == mount.container or normal.startswith(mount.container + "/")
        if inside and (best is None or len(mount.container) >= len(best.container)):
            best = mount
    if best is None:
        shown = ", ".join(f"{m.host or m.volume or '(anonymous)'}:{m.container}" for m in container.mounts) or "none"
        raise LaunchError(
            f"container path {_quote(path)} is not under any bind mount of the docker run (mounts: {shown});"
            f" add -v HOST_DIR:{_parent(normal)} so the host copy can be checked"
        )
    if best.host is None:
        raise LaunchError(
            f"container path {_quote(path)} is in the volume {_quote(best.volume or '(anonymous)')} at"
            f" {best.container}, not in a host directory that can be checked; bind-mount a host dir"
        )
    rest = normal[len(best.container) :].lstrip("/") if best.container != "/" else normal.lstrip("/")
    return best.host.rstrip("/") + "/" + rest if rest else best.host


def hub_cache(container: Container) -> str:
    """The container's Hugging Face hub cache (where it resolves a Hub id), as a container path."""
    env = dict(container.environment)
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        if name in env and env[name] is None:
            raise LaunchError(f"-e {name}: its value comes from the host environment; give it as {name}=...")
    if env.get("HF_HUB_CACHE"):
        return str(env["HF_HUB_CACHE"])
    if env.get("HUGGINGFACE_HUB_CACHE"):
        return str(env["HUGGINGFACE_HUB_CACHE"])
    if container.env_file:
        raise LaunchError("docker run --env-file: the Hugging Face cache location may be set there; use -e")
    if env.get("HF_HOME"):
        return str(env["HF_HOME"]).rstrip("/") + "/hub"
    if container.user:
        raise LaunchError(
            "docker run --user: the container's home (its default Hugging Face cache) is not known;"
            " set -e HF_HOME=... or pass a mounted model path"
        )
    base = str(env["XDG_CACHE_HOME"]).rstrip("/") if env.get("XDG_CACHE_HOME") else "/root/.cache"
    return base + "/huggingface/hub"


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


@dataclass(frozen=True)
class _Args:
    """What one scan of the engine arguments found."""

    options: dict[str, list[tuple[str, str]]]  # canonical name -> [(option as written, value)] in order
    dotted: list[tuple[str, str, str]]  # (option base as written, dotted key path, value), vLLM only
    positional: str | None  # the model positional (`vllm serve`)


def parse_launch(argv: Sequence[str], read_config: ConfigReader | None = None) -> Launch:
    """Find the engine, target, drafter and drafts per step in a launch command (argv, already unquoted).

    `read_config(path)` returns the parsed YAML of a `--config FILE` (the path as this host sees it, after
    the container's mounts); without it a `--config` is refused, so that this function alone stays pure.
    """
    args = tuple(argv)
    if not args:
        raise LaunchError("empty launch command")
    command, container = _unwrap(args)
    if not command:
        raise LaunchError("no command after the environment assignments")
    if container is not None and container.entrypoint_known is False:
        # The vllm/vllm-openai images start `vllm serve` (recent) or the api_server module (older): read
        # the arguments both ways and accept only what both read alike.
        serve = _engine(args, ("vllm", "serve", *command), container, read_config)
        assert serve is not None
        api = _engine(args, ("python3", "-m", API_SERVER, *command), container, read_config, quiet=True)
        if api is None or _fields(api) != _fields(serve):
            raise LaunchError(
                f"{container.image}: the entrypoint of this image tag is 'vllm serve' or the api_server module"
                " (which ignores a positional model) depending on its version, and the two read these"
                " arguments differently; pass the model with --model, or the program with --entrypoint"
            )
        return serve
    launch = _engine(args, command, container, read_config)
    assert launch is not None
    return launch


ConfigReader = Callable[[str], Any]


def _engine(
    argv: tuple[str, ...],
    command: Sequence[str],
    container: Container | None,
    read_config: ConfigReader | None,
    quiet: bool = False,
) -> Launch | None:
    """The engine command (the program and its arguments, wrappers removed) read; quiet: None on error."""
    try:
        context = _Context(argv, container, read_config)
        cmd = tuple(command)
        program = _basename(cmd[0])
        if program == "vllm":
            return _vllm(context, cmd[_subcommand(cmd, 1, "vllm") :], serve=True)
        if program == "sglang":
            return _sglang(context, cmd[_subcommand(cmd, 1, "sglang") :], serve=True)
        if _PYTHON.fullmatch(program):
            module, rest = _python_module(cmd, 1)
            if module == API_SERVER:
                return _vllm(context, cmd[rest:], serve=False)
            if module == VLLM_CLI:
                return _vllm(context, cmd[_subcommand(cmd, rest, f"python -m {VLLM_CLI}") :], serve=True)
            if module == SGLANG_SERVER:
                return _sglang(context, cmd[rest:], serve=False)
        raise LaunchError(f"not a vLLM or SGLang launch command: {_show(cmd)}")
    except LaunchError:
        if quiet:
            return None
        raise


def _fields(launch: Launch) -> tuple[Any, ...]:
    return (
        launch.target,
        launch.target_revision,
        launch.drafter,
        launch.drafter_revision,
        launch.method,
        launch.num_speculative_tokens,
        launch.tensor_parallel_size,
        launch.config_file,
    )


@dataclass(frozen=True)
class _Context:
    argv: tuple[str, ...]  # the whole command as given
    container: Container | None
    read_config: ConfigReader | None


# --- command head ---------------------------------------------------------------------------------


def _basename(token: str) -> str:
    return token.replace("\\", "/").rsplit("/", 1)[-1]


def _unwrap(args: tuple[str, ...]) -> tuple[tuple[str, ...], Container | None]:
    """The engine command inside the wrappers, and the container it runs in (docker run)."""
    command: tuple[str, ...] = args
    container: Container | None = None
    while command:
        head = command[0]
        program = _basename(head)
        if ASSIGNMENT.fullmatch(head):
            command = command[1:]
        elif program == "env":
            command = command[_env(command, 1) :]
        elif program == "nohup":
            command = command[1 + (command[1:2] == ("--",)) :]
        elif program == "numactl":
            command = command[_options(command, 1, _NUMACTL, "numactl") :]
        elif program == "uv" and command[1:2] == ("run",):
            i, module = _uv_run(command)
            command = ("python", "-m", *command[i:]) if module else command[i:]
        elif program == "torchrun" or (_PYTHON.fullmatch(program) and _python_module(command, 1)[0] == TORCHRUN):
            command = _torchrun(command, 1 if program == "torchrun" else _python_module(command, 1)[1])
        elif program in ("docker", "podman") and command[1:2] in (("run",), ("container",)):
            if container is not None:
                raise LaunchError(f"{head}: a container command inside a container command")
            command, container = _docker(command)
            if container.entrypoint_known is False:
                return command, container
        else:
            break
    return command, container


def _env(args: tuple[str, ...], i: int) -> int:
    """Index of the program after `env [options] NAME=value ...`."""
    while i < len(args):
        token = args[i]
        if ASSIGNMENT.fullmatch(token) or token in ("-i", "--ignore-environment", "-", "-0", "--null"):
            i += 1
        elif token in ("-u", "--unset", "-C", "--chdir"):
            i += 2
        elif token.startswith(("--unset=", "--chdir=")) or (token[:2] in ("-u", "-C") and len(token) > 2):
            i += 1
        else:
            return i + (token == "--")
    return i


def _options(args: tuple[str, ...], i: int, table: dict[str, int], program: str) -> int:
    """Index after the options of a wrapper (`table`: option -> FLAG or VALUE); unknown options refused."""
    while i < len(args):
        token = args[i]
        if token == "--":
            return i + 1
        if not token.startswith("-") or token == "-":
            return i
        name, eq, _ = token.partition("=")
        if name.startswith("--"):
            arity = table.get(name)
            if arity is None:
                raise LaunchError(f"{program} {name}: option not understood; cannot tell where the command starts")
            i += 1 if (eq or arity == FLAG) else 2
            continue
        # short options, clustered (`-itd`) or with the value attached (`-N0`, `-v/a:/b`)
        for k, letter in enumerate(token[1:], start=1):
            arity = table.get("-" + letter)
            if arity is None:
                raise LaunchError(f"{program} -{letter}: option not understood; cannot tell where the command starts")
            if arity == VALUE:
                i += 1 if k + 1 < len(token) else 2
                break
        else:
            i += 1
    if i > len(args):
        raise LaunchError(f"{program} {args[-1]}: expects a value")
    return i


def _uv_run(args: tuple[str, ...]) -> tuple[int, bool]:
    """Index of the command after `uv run [options]`, and whether `-m/--module` made it a module."""
    module = any(a in ("-m", "--module") for a in args[2 : _options(args, 2, _UV_RUN, "uv run")])
    return _options(args, 2, _UV_RUN, "uv run"), module


def _torchrun(args: tuple[str, ...], i: int) -> tuple[str, ...]:
    """The program a torchrun launcher starts: `-m MODULE`, `--no-python PROGRAM`, or a script (refused)."""
    normal = tuple(a.replace("_", "-") if a.startswith("--") and "=" not in a else a for a in args)
    end = _options(normal, i, _TORCHRUN, "torchrun")
    flags = set(normal[i:end])
    rest = args[end:]
    if not rest:
        raise LaunchError("torchrun: no program to run")
    if flags & {"-m", "--module"}:
        return ("python", "-m", *rest)
    if "--no-python" in flags:
        return rest
    raise LaunchError(f"torchrun {_quote(rest[0])}: a script, not a vLLM or SGLang launch; use -m MODULE")


def _docker(args: tuple[str, ...]) -> tuple[tuple[str, ...], Container]:
    """`docker run [options] IMAGE [ARGS]`: the command the container runs, and its mounts and environment."""
    i = 2 if args[1] == "run" else 3
    if args[1] == "container" and args[2:3] != ("run",):
        raise LaunchError(f"{_show(args[:3])}: not 'docker run'")
    mounts: list[Mount] = []
    environment: dict[str, str | None] = {}
    entrypoint: str | None = None
    workdir: str | None = None
    user = env_file = False
    while i < len(args):
        token = args[i]
        if token == "--":
            i += 1
            break
        if not token.startswith("-") or token == "-":
            break
        name, eq, inline = token.partition("=")
        if name.startswith("--"):
            arity = _DOCKER.get(name)
            if arity is None:
                raise LaunchError(f"docker run {name}: option not understood; cannot tell where the image is")
            if arity == FLAG:
                i += 1
                continue
            if eq:
                value, i = inline, i + 1
            elif i + 1 < len(args):
                value, i = args[i + 1], i + 2
            else:
                raise LaunchError(f"docker run {name}: expects a value")
        else:
            value = None
            for k, letter in enumerate(token[1:], start=1):
                arity = _DOCKER.get("-" + letter)
                if arity is None:
                    raise LaunchError(f"docker run -{letter}: option not understood; cannot tell where the image is")
                if arity == VALUE:
                    name = "-" + letter
                    if k + 1 < len(token):
                        value, i = token[k + 1 :].removeprefix("="), i + 1
                    elif i + 1 < len(args):
                        value, i = args[i + 1], i + 2
                    else:
                        raise LaunchError(f"docker run {name}: expects a value")
                    break
            else:
                i += 1
                continue
        assert value is not None
        if name in ("-v", "--volume"):
            mounts.append(_volume(value))
        elif name == "--mount":
            mounts.append(_mount(value))
        elif name in ("-e", "--env"):
            key, eq_, val = value.partition("=")
            environment[key] = val if eq_ else None
        elif name == "--env-file":
            env_file = True
        elif name == "--entrypoint":
            entrypoint = value
        elif name in ("-w", "--workdir"):
            workdir = value
        elif name in ("-u", "--user"):
            user = True
        elif name == "--volumes-from":
            raise LaunchError("docker run --volumes-from: the mounts it brings are not on the command line")
    if i >= len(args):
        raise LaunchError("docker run: no image given")
    image, rest = args[i], args[i + 1 :]
    repository = _image_repository(image)
    known: bool | None = True
    if entrypoint is not None:
        if not entrypoint:
            raise LaunchError("docker run --entrypoint '': the image's command is not on the command line")
        command: tuple[str, ...] = (entrypoint, *rest)
    elif repository == "vllm/vllm-openai" and _image_tag(image) in (None, "latest", "nightly"):
        command = ("vllm", "serve", *rest)  # docker/Dockerfile of vLLM main: ENTRYPOINT ["vllm", "serve"]
    elif repository.startswith("vllm/vllm-openai"):
        command, known = rest, False  # a versioned or platform image: the entrypoint depends on it
    elif repository.startswith("lmsysorg/sglang"):
        command = rest
        if not command:
            raise LaunchError(f"{image}: no command after the image (the SGLang images take the whole command)")
    else:
        raise LaunchError(
            f"docker image {_quote(image)}: its entrypoint is not known here (the vllm/vllm-openai and"
            " lmsysorg/sglang images are); pass --entrypoint with the program"
        )
    container = Container(image, tuple(mounts), tuple(environment.items()), workdir, user, env_file, known)
    return command, container


def _volume(value: str) -> Mount:
    """`-v HOST:CONTAINER[:OPTIONS]`, `-v NAME:CONTAINER` (a named volume), `-v CONTAINER` (anonymous)."""
    parts = value.split(":")
    if len(parts) == 1:
        return Mount(None, _container_dir("-v", parts[0]))
    if len(parts) > 3:
        raise LaunchError(f"-v {_quote(value)}: not HOST:CONTAINER[:OPTIONS]")
    source, target = parts[0], parts[1]
    is_path = source.startswith(("/", ".", "~"))
    return Mount(source if is_path else None, _container_dir("-v", target), None if is_path else source)


def _mount(value: str) -> Mount:
    """`--mount type=bind,source=HOST,target=CONTAINER[,readonly]` (volume and tmpfs mounts have no host dir)."""
    if '"' in value:
        raise LaunchError(f"--mount {_quote(value)}: quoted fields are not read here")
    fields: dict[str, str] = {}
    for part in value.split(","):
        key, _, val = part.partition("=")
        fields[key.strip()] = val
    kind = fields.get("type", "volume")
    source = fields.get("source", fields.get("src"))
    target = fields.get("target", fields.get("destination", fields.get("dst")))
    if target is None:
        raise LaunchError(f"--mount {_quote(value)}: no target")
    if kind == "bind":
        if not source:
            raise LaunchError(f"--mount {_quote(value)}: a bind mount without source")
        return Mount(source, _container_dir("--mount", target))
    return Mount(None, _container_dir("--mount", target), source or kind)


def _container_dir(option: str, path: str) -> str:
    if not path.startswith("/"):
        raise LaunchError(f"{option}: container path {_quote(path)} is not absolute")
    return "/" + path.strip("/") if path.strip("/") else "/"


def _image_tag(image: str) -> str | None:
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def _image_repository(image: str) -> str:
    """`registry/org/name:tag@digest` -> `org/name` for Docker Hub images, else the reference sans tag."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)
    if ":" in last[-1]:
        name = name[: len(name) - len(last[-1])] + last[-1].split(":", 1)[0]
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        name = name.removeprefix(prefix)
    return name.removeprefix("library/")


def _subcommand(args: tuple[str, ...], i: int, program: str) -> int:
    """Index after `serve`, the only subcommand that launches a server."""
    if i >= len(args):
        raise LaunchError(f"{program}: no subcommand; expected '{program} serve ...'")
    if args[i] != "serve":
        raise LaunchError(f"{program} {_show(args[i : i + 1])}: not a server launch; expected '{program} serve ...'")
    return i + 1


def _python_module(args: tuple[str, ...], i: int) -> tuple[str | None, int]:
    """The module of `python [switches] -m MODULE ...` and the index after it; None for a script or -c."""
    while i < len(args):
        token = args[i]
        if not token.startswith("-") or token.startswith("--") or token == "-":
            return None, i
        cluster = token[1:]
        for k, switch in enumerate(cluster):
            if switch in _PY_FLAGS:
                continue
            if switch in "XW":  # -X opt / -Xopt
                i += 1 if k + 1 < len(cluster) else 2
                break
            if switch == "m":  # -m module / -mmodule, possibly after flags: -um module
                module = cluster[k + 1 :]
                if module:
                    return module, i + 1
                if i + 1 >= len(args):
                    raise LaunchError("python -m: no module given")
                return args[i + 1], i + 2
            return None, i  # -c and anything else: not a module launch
        else:
            i += 1
    return None, i


# --- argument scan --------------------------------------------------------------------------------


def _is_option(token: str) -> bool:
    return token.startswith("-") and len(token) > 1 and not _NEGATIVE.fullmatch(token)


def _scan(args: Sequence[str], table: dict[str, tuple[str, int]], *, engine: Engine, positional: bool) -> _Args:
    """Walk the engine arguments once. `positional`: a bare token may be the model (`vllm serve`)."""
    options: dict[str, list[tuple[str, str]]] = {}
    dotted: list[tuple[str, str, str]] = []
    model: str | None = None
    # `vllm serve` moves the first `--model` to the positional before parsing, wherever it stands.
    model_fixed = positional and any(a == "--model" or a.startswith("--model=") for a in args)
    pending: str | None = None  # option whose values the following bare tokens are
    pending_known = False  # ... and whether it is a known nargs="+" option rather than an unknown one
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":  # argparse: everything after is positional
            for rest in args[i:]:
                model = _positional(rest, model, model_fixed, positional, engine)
                model_fixed = True
            break
        if not _is_option(token):
            if pending is not None:
                if not (pending_known or model_fixed or not positional):
                    raise LaunchError(
                        f"{pending}: cannot tell whether {_quote(token)} is its value or the model to serve"
                        " (dflash-cfg does not know this option); put the model right after 'serve' or"
                        " pass --model"
                    )
                continue
            model = _positional(token, model, model_fixed, positional, engine)
            model_fixed = True
            continue
        pending = None
        name, eq, inline = token.partition("=")
        value: str | None = inline if eq else None
        if engine == "vllm" and name.startswith("--"):
            # FlexibleArgumentParser: `_` and `-` are alike in a name, up to the first dot.
            head, dot, tail = name.partition(".")
            name = head.replace("_", "-") + dot + tail
        if engine == "vllm" and "." in name:
            # A dotted JSON option always takes the next token, whatever it looks like.
            if value is None:
                if i >= len(args):
                    raise LaunchError(f"{name}: expects a value")
                value = args[i]
                i += 1
            base, _, key = name.partition(".")
            if table.get(base, ("", 0))[0] == SPEC_CONFIG:
                dotted.append((base, key, value))
            continue
        if engine == "vllm" and name.startswith("-O") and name not in table:
            # -O3, -O=3, -Odecode stand alone; `-O 3` or older `-O '{"level": 3}'` take the next token.
            if token == "-O" and i < len(args) and not _is_option(args[i]):
                i += 1
            continue
        canonical, arity = table.get(name, ("", -1))
        if arity == FLAG:
            continue
        if arity == -1 or (arity == MANY and value is None):  # unknown, or nargs="+" without `=`
            if value is None:
                pending, pending_known = token, arity == MANY
            continue
        if value is None:
            if i >= len(args) or _is_option(args[i]):
                raise LaunchError(f"{name}: expects a value")
            value = args[i]
            i += 1
        if canonical:
            options.setdefault(canonical, []).append((name, value))
    return _Args(options=options, dotted=dotted, positional=model)


def _positional(token: str, model: str | None, model_fixed: bool, positional: bool, engine: Engine) -> str:
    if not positional:
        if engine == "vllm":
            raise LaunchError(
                f"unexpected argument {_quote(token)}: {API_SERVER} ignores a positional model; pass --model"
            )
        raise LaunchError(f"unexpected argument {_quote(token)}: SGLang takes the model as --model-path")
    if model is not None:
        raise LaunchError(f"unexpected argument {_quote(token)}: vllm serve takes one model, already {_quote(model)}")
    if model_fixed:
        raise LaunchError(f"unexpected argument {_quote(token)}: the model is already given with --model")
    return token


def _last(found: _Args, canonical: str) -> tuple[str, str] | None:
    values = found.options.get(canonical)
    return values[-1] if values else None


def _positive_int(option: str, text: str) -> int:
    if not _DIGITS.fullmatch(text) or int(text) < 1:
        raise LaunchError(f"{option}: expected a positive integer, got {_quote(text)}")
    return int(text)


def _tensor_parallel(found: _Args) -> int:
    tp = _last(found, TP)
    return 1 if tp is None else _positive_int(*tp)


# --- vLLM -----------------------------------------------------------------------------------------


def _vllm(context: _Context, args: Sequence[str], *, serve: bool) -> Launch:
    """`args`: what follows `serve` (or the api_server module)."""
    engine_args = list(args)
    if serve:
        _served_model_name_first(engine_args)
    engine_args, config_file = _vllm_config(context, engine_args, serve=serve)
    found = _scan(engine_args, _VLLM, engine="vllm", positional=serve)
    if serve:
        models = found.options.get(MODEL)
        if found.positional is not None:
            target = _named("vllm serve: the model", found.positional)
        elif models:
            target = _named(*models[0])
        else:
            raise LaunchError("vllm serve: no model given; expected 'vllm serve MODEL ...' or --model MODEL")
    else:
        model = _last(found, MODEL)
        if model is None:
            raise LaunchError(f"--model: required with python -m {API_SERVER} (it ignores a positional model)")
        target = _named(*model)
    revision = _last(found, REVISION)
    spec, spec_option = _speculative_config(found)
    tp = _tensor_parallel(found)
    _same_draft_tp(found, spec, spec_option, tp)
    return Launch(
        engine="vllm",
        target=target,
        target_revision=None if revision is None else _nullable(revision[1]),
        drafter=_spec_str(spec, "model", spec_option),
        drafter_revision=_spec_str(spec, "revision", spec_option),
        method=_spec_str(spec, "method", spec_option),
        num_speculative_tokens=_spec_tokens(spec, spec_option),
        num_draft_tokens=None,
        tensor_parallel_size=tp,
        argv=context.argv,
        config_file=config_file,
        container=context.container,
    )


_MODEL_OPTION = re.compile(r"--model(=.+)?", re.DOTALL)
_SERVED_NAME = re.compile(r"--served[-_]model[-_]name(=.+)?", re.DOTALL)
_CONFIG_OPTION = re.compile(r"--config(=.+)?", re.DOTALL)


def _served_model_name_first(args: list[str]) -> None:
    """FlexibleArgumentParser.parse_args refuses `vllm serve --opt ... --served-model-name ...` without a
    model first (after moving `--model` to the front): `--served-model-name` takes one or more values and
    would swallow a model that follows it."""
    if any(_MODEL_OPTION.fullmatch(a) for a in args) or any(_CONFIG_OPTION.fullmatch(a) for a in args):
        return
    if args and args[0].startswith("-") and any(_SERVED_NAME.fullmatch(a) for a in args):
        raise LaunchError(
            "vllm serve: with --served-model-name the model must come first, 'vllm serve MODEL"
            " --served-model-name NAME ...' (vLLM refuses this order: the names take every word that follows)"
        )


def _config_path(context: _Context, option: str, path: str) -> str:
    """The `--config FILE` as this host reads it (through the container's mounts)."""
    if context.read_config is None:
        raise LaunchError(f"{option}: options in {_quote(path)} cannot be checked without reading the file")
    return path if context.container is None else host_path(context.container, path)


def _config_index(args: list[str], engine: str) -> int | None:
    """Where `--config FILE` stands; the engines read the file only from the two words `--config FILE`."""
    if args.count("--config") > 1:
        raise LaunchError(f"--config: given more than once; {engine} accepts one config file")
    for token in args:
        if token.startswith("--config="):
            raise LaunchError(
                f"{_quote(token, 60)}: {engine} loads a config file only from '--config FILE' (two words);"
                " written with '=' the file is not read, so write '--config FILE'"
            )
    if "--config" not in args:
        return None
    index = args.index("--config")
    if index == len(args) - 1:
        raise LaunchError("--config: no config file given")
    return index


def _vllm_config(context: _Context, args: list[str], *, serve: bool) -> tuple[list[str], str | None]:
    """FlexibleArgumentParser._pull_args_from_config: the YAML's options inserted where vLLM puts them
    (after the model, before the other command-line options, so that the command line wins)."""
    index = _config_index(args, "vLLM")
    if index is None:
        return args, None
    file = args[index + 1]
    if file.split(".")[-1] not in ("yaml", "yml"):
        raise LaunchError(f"--config {_quote(file)}: vLLM reads only .yaml or .yml config files")
    data = context.read_config(_config_path(context, "--config", file))  # type: ignore[misc]
    config = _vllm_config_args(file, data)
    rest = args[:index] + args[index + 2 :]
    if serve:
        # parse_args first moves the first --model to the front (as the positional), then pulls the file.
        model_at = next((k for k, a in enumerate(rest) if _MODEL_OPTION.fullmatch(a)), None)
        if model_at is not None:
            if rest[model_at] == "--model":
                if model_at + 1 >= len(rest) or rest[model_at + 1].startswith("-"):
                    raise LaunchError("--model: expects a value")
                rest = [rest[model_at + 1], *rest[:model_at], *rest[model_at + 2 :]]
            else:
                rest = [rest[model_at].removeprefix("--model="), *rest[:model_at], *rest[model_at + 1 :]]
        if rest and not rest[0].startswith("-"):
            # The positional model wins over the file's `model` (serve.py: model_tag replaces model).
            return [rest[0], *_without_model(config), *rest[1:]], file
        if "--model" not in config:
            raise LaunchError(f"vllm serve: no model given, neither as the positional nor in {_quote(file)}")
        return [*config, *rest], file
    if rest and not rest[0].startswith("-"):
        return [rest[0], *config, *rest[1:]], file
    return [*config, *rest], file


def _vllm_config_args(file: str, data: Any) -> list[str]:
    """FlexibleArgumentParser.load_config_file: each key becomes `--key` (booleans as flags, lists as
    several values, mappings as JSON)."""
    if not isinstance(data, dict):
        raise LaunchError(f"--config {_quote(file)}: expected a mapping of option names, got {_json_kind(data)}")
    args: list[str] = []
    for key, value in data.items():
        option = "--" + str(key)
        if isinstance(value, bool):
            if value:  # False adds `--no-KEY` when vLLM has it: a flag either way, no value read here
                args.append(option)
        elif isinstance(value, list):
            if value:
                args += [option, *(str(item) for item in value)]
        elif isinstance(value, dict):
            try:
                args += [option, json.dumps(value)]
            except (TypeError, ValueError) as error:
                raise LaunchError(f"--config {_quote(file)}: {key}: not JSON ({error})") from None
        else:
            args += [option, str(value)]
    return args


def _without_model(config: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for k, token in enumerate(config):
        if skip:
            skip = False
            continue
        if token == "--model" and k + 1 < len(config):
            skip = True
            continue
        out.append(token)
    return out


def _same_draft_tp(found: _Args, spec: dict[str, Any] | None, option: str, tp: int) -> None:
    """A drafter sharded differently from the target would make DF802 check the wrong split: refused."""
    draft = _last(found, DRAFT_TP)
    value = _positive_int(*draft) if draft is not None else None
    name = draft[0] if draft is not None else f"{option}['draft_tensor_parallel_size']"
    if value is None and spec is not None and spec.get("draft_tensor_parallel_size") is not None:
        raw = spec["draft_tensor_parallel_size"]
        if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
            raise LaunchError(f"{name}: expected a positive integer, got {_describe(raw)}")
        value = raw
    if value is not None and value != tp:
        raise LaunchError(
            f"{name} {value} differs from the tensor-parallel size {tp}: the drafter's head split (DF802)"
            " is checked for the target's size only"
        )


def _named(option: str, text: str) -> str:
    # An empty model or drafter would make preflight look for "" on the Hub or in the working directory.
    if not text:
        raise LaunchError(f"{option}: empty model name or path")
    return text


def _nullable(text: str) -> str | None:
    # vLLM's nullable_str / optional_type: "" and "None" mean unset.
    return None if text in ("", "None") else text


def _speculative_config(found: _Args) -> tuple[dict[str, Any] | None, str]:
    """The speculative_config dict vLLM builds, and the option to name in messages about it."""
    full = _last(found, SPEC_CONFIG)
    bases = sorted({base for base, _, _ in found.dotted})
    if len(bases) > 1:
        raise LaunchError(
            f"{bases[0]}.KEY and {bases[1]}.KEY both given: vLLM keeps one of the two dicts and drops the"
            " other; use one spelling"
        )
    if full is not None and bases:
        raise LaunchError(
            f"{full[0]}: given both as JSON and as dotted {bases[0]}.KEY options; vLLM keeps only the dotted"
            " keys and drops the JSON, so pass one form"
        )
    spec: dict[str, Any] | None = None
    option = full[0] if full is not None else (bases[0] if bases else "--speculative-config")
    if full is not None and _nullable(full[1]) is not None:
        parsed = _json(full[0], full[1])
        if parsed is not None and not isinstance(parsed, dict):
            raise LaunchError(f"{full[0]}: expected a JSON object, got {_json_kind(parsed)}")
        spec = parsed
    if bases:
        spec = {}
        for _, key, text in found.dotted:
            _merge(spec, _nested(key, text))
    if spec is not None:
        # create_speculative_config normalises `-` to `_` in keys (`num-speculative-tokens`).
        spec = {str(key).replace("-", "_"): value for key, value in spec.items()}
    old = [(o, k) for o, k in ((OLD_MODEL, "model"), (OLD_TOKENS, "num_speculative_tokens")) if _last(found, o)]
    if old:
        # vLLM before 0.8 built the speculative config from these; later versions refuse them.
        if spec is not None or any(_last(found, c) for c in (SPEC_METHOD, SPEC_MODEL, SPEC_TOKENS)):
            raise LaunchError(
                f"{_last(found, old[0][0])[0]}: the options of vLLM before 0.8 mixed with {option} or --spec-*;"  # type: ignore[index]
                " no vLLM reads both"
            )
        spec = {}
        for canonical, key in old:
            name, text = _last(found, canonical)  # type: ignore[misc]
            if canonical == OLD_TOKENS:
                spec[key] = _positive_int(name, text)
            elif _nullable(text) is not None:
                spec[key] = _named(name, text)
        option = "--speculative-model"
    for canonical, key in ((SPEC_METHOD, "method"), (SPEC_MODEL, "model"), (SPEC_TOKENS, "num_speculative_tokens")):
        alias = _last(found, canonical)
        if alias is None:
            continue
        if spec is None:
            spec = {}
        if key in spec:
            raise LaunchError(f"{alias[0]} and {option}['{key}'] are both given; vLLM refuses them together")
        spec[key] = _positive_int(*alias) if canonical == SPEC_TOKENS else alias[1]
    return spec, option


def _json(option: str, text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise LaunchError(f"{option}: JSON nested too deeply") from None
    except json.JSONDecodeError as error:
        raise LaunchError(
            f"{option}: not valid JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    except ValueError as error:  # e.g. an integer longer than Python's int-string limit
        raise LaunchError(f"{option}: not valid JSON ({error})") from None


def _json_kind(value: Any) -> str:
    kinds = {list: "a list", dict: "an object", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return kinds.get(type(value), type(value).__name__)


def _describe(value: Any) -> str:
    # Scalars are shown as JSON would spell them; a list or object is only named (it may be large).
    if isinstance(value, str):
        return f"the string {_quote(value)}"
    if isinstance(value, (int, float, bool)):
        return _quote(json.dumps(value))[1:-1]
    return _json_kind(value)


def _nested(key: str, text: str) -> dict[str, Any]:
    """One dotted option as a dict, the way FlexibleArgumentParser builds it."""
    keys = key.split(".")
    value: Any
    if keys[-1].endswith("+"):  # `--json-arg.key+ a,b` appends list elements
        keys[-1] = keys[-1][:-1]
        value = text.split(",")
    else:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            value = text
    for part in reversed(keys):
        value = {part: value}
    result: dict[str, Any] = value
    return result


def _merge(original: dict[str, Any], update: dict[str, Any]) -> None:
    # As FlexibleArgumentParser's recursive_dict_update: dicts merge, lists extend, the rest is replaced.
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(original.get(key), dict):
            _merge(original[key], value)
        elif isinstance(value, list) and isinstance(original.get(key), list):
            original[key] = original[key] + value
        else:
            original[key] = value


def _spec_str(spec: dict[str, Any] | None, key: str, option: str) -> str | None:
    value = None if spec is None else spec.get(key)
    if value == "" and key == "model":
        raise LaunchError(f"{option}: model is empty")
    if value is None or isinstance(value, str):
        return value
    raise LaunchError(f"{option}: {key} must be a string, got {_describe(value)}")


def _spec_tokens(spec: dict[str, Any] | None, option: str) -> int | None:
    value = None if spec is None else spec.get("num_speculative_tokens")
    if value is None:
        return None
    # SpeculativeConfig: `num_speculative_tokens: int = Field(gt=0)`; a JSON true is not a count.
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise LaunchError(f"{option}: num_speculative_tokens must be a positive integer, got {_describe(value)}")
    return value


# --- SGLang ---------------------------------------------------------------------------------------


def _sglang(context: _Context, args: Sequence[str], *, serve: bool) -> Launch:
    rest = list(args)
    if serve:
        # cli/serve.py drops `--model-type X` first, then reads a leading bare token as a leading
        # `--model-path` (so that an explicit --model-path later wins).
        first = _first_after_model_type(rest)
        if first < len(rest) and not rest[first].startswith("-"):
            rest = ["--model-path", rest.pop(first), *rest]
    rest, config_file = _sglang_config(context, rest)
    found = _scan(rest, _SGLANG, engine="sglang", positional=False)
    model = _last(found, MODEL)
    if model is None:
        raise LaunchError("--model-path: required; no model given to SGLang")
    target = _named(*model)
    revision = _last(found, REVISION)
    algorithm = _last(found, ALGORITHM)
    draft = _last(found, DRAFT)
    draft_revision = _last(found, DRAFT_REVISION)
    draft_tokens = _last(found, DRAFT_TOKENS)
    return Launch(
        engine="sglang",
        target=target,
        target_revision=None if revision is None else revision[1],
        drafter=None if draft is None else _named(*draft),
        drafter_revision=None if draft_revision is None else draft_revision[1],
        method=None if algorithm is None else algorithm[1],
        num_speculative_tokens=None,
        num_draft_tokens=None if draft_tokens is None else _positive_int(*draft_tokens),
        tensor_parallel_size=_tensor_parallel(found),
        argv=context.argv,
        config_file=config_file,
        container=context.container,
    )


def _sglang_config(context: _Context, args: list[str]) -> tuple[list[str], str | None]:
    """server_args_config_parser.ConfigArgumentMerger: the YAML's options go before every command-line
    option (the command line wins); keys are used as written, `--KEY`."""
    index = _config_index(args, "SGLang")
    if index is None:
        return args, None
    file = args[index + 1]
    if not file.lower().endswith((".yaml", ".yml")):
        raise LaunchError(f"--config {_quote(file)}: SGLang reads only .yaml or .yml config files")
    data = context.read_config(_config_path(context, "--config", file))  # type: ignore[misc]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise LaunchError(f"--config {_quote(file)}: expected a mapping of option names, got {_json_kind(data)}")
    config: list[str] = []
    for key, value in data.items():
        option = "--" + str(key)
        if "_" in option and option.replace("_", "-") in _SGLANG:
            raise LaunchError(
                f"--config {_quote(file)}: key {_quote(str(key))}: SGLang versions differ on '_' in config keys;"
                f" write {option.replace('_', '-')[2:]}"
            )
        if isinstance(value, bool):
            if value:
                config.append(option)
        elif isinstance(value, list):
            if value:
                config += [option, *(str(item) for item in value)]
        elif isinstance(value, dict):
            config += [option, json.dumps(value)]
        else:
            config += [option, str(value)]
    return [*config, *args[:index], *args[index + 2 :]], file


def _first_after_model_type(args: list[str]) -> int:
    """Index of the first argument that is not `--model-type X` / `--model-type=X`."""
    i = 0
    while i < len(args):
        if args[i] == "--model-type":
            i += 2
        elif args[i].startswith("--model-type="):
            i += 1
        else:
            break
    return i


# --- messages -------------------------------------------------------------------------------------


def _quote(text: str, limit: int = 80) -> str:
    # repr keeps a message on one line whatever the token holds (JSON often spans lines).
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def _show(tokens: Sequence[str]) -> str:
    head = " ".join(_quote(t, 40) if not re.fullmatch(r"[\w@%+=:,./-]+", t) else t for t in tokens[:3])
    return head + (" ..." if len(tokens) > 3 else "")

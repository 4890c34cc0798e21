"""The head of a launch command: the wrappers before the engine, and the engine's program, module and
subcommand.

Wrappers (each refused on an option it does not know, since the wrapped command's start is then unknown):
leading `NAME=value`, `env [-i] [-u NAME] NAME=value`, `nohup`, `numactl [options]`, `uv run [options]
[-m MODULE]`, `torchrun`/`python -m torch.distributed.run [options] (-m MODULE | --no-python PROGRAM)`, and
`docker run` (docker.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch.argv import quote, show
from dflash_cfg.launch.docker import docker_run
from dflash_cfg.launch.flags import FLAG, VALUE
from dflash_cfg.model import ASSIGNMENT, Container

TORCHRUN = "torch.distributed.run"
PYTHON = re.compile(r"python[0-9.]*")
# CPython interpreter switches that take no argument (python --help); X and W take one.
_PY_FLAGS = frozenset("bBdEhiIOPqRsSuvVx")


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


def basename(token: str) -> str:
    return token.replace("\\", "/").rsplit("/", 1)[-1]


@dataclass(frozen=True, kw_only=True)
class Head:
    """What the wrappers before the engine say: the engine command, the container it runs in, and what they
    do to its process (variables set or unset, a cleared environment, a working directory)."""

    command: tuple[str, ...]
    container: Container | None
    env: tuple[tuple[str, str | None], ...] = ()
    env_cleared: bool = False
    cwd: str | None = None


def unwrap(args: tuple[str, ...]) -> Head:
    """The engine command inside the wrappers, the container it runs in (docker run), and the environment
    and working directory the wrappers give it."""
    command: tuple[str, ...] = args
    container: Container | None = None
    env: list[tuple[str, str | None]] = []
    cleared = False
    cwd: str | None = None
    while command:
        head = command[0]
        program = basename(head)
        if ASSIGNMENT.fullmatch(head):
            name, _, value = head.partition("=")
            env.append((name, value))
            command = command[1:]
        elif program == "env":
            i, changes, clears, chdir = _env(command, 1)
            if clears:
                cleared, env = True, []
            env += changes
            cwd = _join(cwd, chdir)
            command = command[i:]
        elif program == "nohup":
            command = command[1 + (command[1:2] == ("--",)) :]
        elif program == "numactl":
            command = command[_options(command, 1, _NUMACTL, "numactl") :]
        elif program == "uv" and command[1:2] == ("run",):
            i, module, directory = _uv_run(command)
            cwd = _join(cwd, directory)
            command = ("python", "-m", *command[i:]) if module else command[i:]
        elif program == "torchrun" or (PYTHON.fullmatch(program) and python_module(command, 1)[0] == TORCHRUN):
            command = _torchrun(command, 1 if program == "torchrun" else python_module(command, 1)[1])
        elif program in ("docker", "podman") and command[1:2] in (("run",), ("container",)):
            if container is not None:
                raise LaunchError(f"{head}: a container command inside a container command")
            command, container = docker_run(command)
            if container.entrypoint_known is False:
                break
        else:
            break
    return Head(command=command, container=container, env=tuple(env), env_cleared=cleared, cwd=cwd)


def _join(cwd: str | None, directory: str | None) -> str | None:
    """A working directory change applied after `cwd` (both relative to ours, or absolute)."""
    if directory is None:
        return cwd
    if not directory:
        raise LaunchError("an empty working directory for the command")
    return directory if cwd is None or directory.startswith("/") else cwd.rstrip("/") + "/" + directory


# env options (GNU coreutils env --help); a signal option alone means "all signals", so takes no word.
_ENV_FLAGS = frozenset(("-i", "--ignore-environment", "-", "-0", "--null", "-v", "--debug", "--default-signal",
                        "--ignore-signal", "--block-signal", "--list-signal-handling"))  # fmt: skip


def _env(args: tuple[str, ...], i: int) -> tuple[int, list[tuple[str, str | None]], bool, str | None]:
    """`env [options] NAME=value ... PROGRAM`: the index of the program, the variables set (None: unset),
    whether the environment is cleared first, and the directory given with -C/--chdir."""
    changes: list[tuple[str, str | None]] = []
    clears = False
    chdir: str | None = None
    while i < len(args):
        token = args[i]
        name, eq, value = token.partition("=")
        if ASSIGNMENT.fullmatch(token):
            changes.append((name, value))
            i += 1
        elif token in _ENV_FLAGS or (eq and name in ("--default-signal", "--ignore-signal", "--block-signal")):
            clears = clears or token in ("-i", "--ignore-environment", "-")
            i += 1
        elif token in ("-u", "--unset", "-C", "--chdir"):
            if i + 1 >= len(args):
                raise LaunchError(f"env {token}: expects a value")
            if token in ("-u", "--unset"):
                changes.append((args[i + 1], None))
            else:
                chdir = _join(chdir, args[i + 1])
            i += 2
        elif token.startswith(("--unset=", "--chdir=")) or (token[:2] in ("-u", "-C") and len(token) > 2):
            word = value if token.startswith("--") else token[2:]
            if token.startswith(("--unset", "-u")):
                changes.append((word, None))
            else:
                chdir = _join(chdir, word)
            i += 1
        elif token == "--":
            return i + 1, changes, clears, chdir
        elif token.startswith("-"):
            # -S/--split-string re-splits a word into the command: its words are not on the command line.
            raise LaunchError(f"env {name}: option not understood; cannot tell where the command starts")
        else:
            return i, changes, clears, chdir
    return i, changes, clears, chdir


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


def _uv_run(args: tuple[str, ...]) -> tuple[int, bool, str | None]:
    """Index of the command after `uv run [options]`, whether `-m/--module` made it a module, and the
    `--directory` it runs in."""
    end = _options(args, 2, _UV_RUN, "uv run")
    options = args[2:end]
    directory: str | None = None
    module = False
    k = 0
    while k < len(options):  # option by option: a value (`--directory --directory`) is no option
        token = options[k]
        name, eq, value = token.partition("=")
        if name == "--directory":
            directory = value if eq else options[k + 1]
        elif name == "--env-file":
            # dotenv files (quotes, `export`, interpolation): not read here, so their variables are unknown.
            raise LaunchError(
                "uv run --env-file: the variables it sets are not on the command line; set them with NAME=value or env"
            )
        module = module or token in ("-m", "--module")
        k += 2 if not eq and _UV_RUN.get(token) == VALUE else 1
    return end, module, directory


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
    raise LaunchError(f"torchrun {quote(rest[0])}: a script, not a vLLM or SGLang launch; use -m MODULE")


def subcommand(args: tuple[str, ...], i: int, program: str) -> int:
    """Index after `serve`, the only subcommand that launches a server."""
    if i >= len(args):
        raise LaunchError(f"{program}: no subcommand; expected '{program} serve ...'")
    if args[i] != "serve":
        raise LaunchError(f"{program} {show(args[i : i + 1])}: not a server launch; expected '{program} serve ...'")
    return i + 1


def python_module(args: tuple[str, ...], i: int) -> tuple[str | None, int]:
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

"""A launch command as read (by dflash_cfg.launch; checked by preflight): the engine it starts, the target and
the drafter, the speculative settings, and what wrappers and `docker run` do to the engine's process."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dflash_cfg.model.engines import Launched

# A shell `NAME=value` assignment before a command: the shell applies it to the program's environment.
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)


def _assignments(args: tuple[str, ...]) -> int:
    """How many leading tokens are shell `NAME=value` assignments."""
    i = 0
    while i < len(args) and ASSIGNMENT.fullmatch(args[i]):
        i += 1
    return i


@dataclass(frozen=True, kw_only=True)
class Launch:
    """An engine launch command as read: the target, the drafter and the drafts per step it asks for."""

    engine: Launched  # as its program is named
    target: str  # model path or Hub id of the target
    target_revision: str | None
    drafter: str | None  # drafter path or Hub id (None if the command has no speculative drafter)
    drafter_revision: str | None
    method: str | None  # vLLM speculative method ("dflash"...) / SGLang algorithm ("DFLASH"...), as given
    num_speculative_tokens: int | None  # vLLM: speculative_config.num_speculative_tokens
    num_draft_tokens: int | None  # SGLang: --speculative-num-draft-tokens
    tensor_parallel_size: int  # default 1
    argv: tuple[str, ...]  # the command as given
    config_file: str | None = None  # the `--config FILE` whose options were read, as given
    container: Container | None = None  # `docker run`: the container the engine runs in
    # What the wrappers do to the engine's process (or, with docker, to the docker client's): variables set
    # (None: unset, `env -u`) in order, after the whole environment was dropped when `cleared` (`env -i`);
    # and the working directory, relative to ours (`env -C`, `uv run --directory`).
    env: tuple[tuple[str, str | None], ...] = ()
    env_cleared: bool = False
    cwd: str | None = None
    # The engine variables that change what it accepts, as the engine will see them (set by preflight
    # from the launch's environment): launch.environment.ENGINE_VARIABLES.
    engine_env: tuple[tuple[str, str], ...] = ()
    draft_window_size: int | None = None  # SGLang: --speculative-draft-window-size
    max_model_len: int | None = None  # vLLM: --max-model-len (None: the target's own length)
    distributed_executor_backend: str | None = None  # vLLM: --distributed-executor-backend
    pipeline_parallel_size: int = 1  # vLLM: --pipeline-parallel-size; SGLang: --pp-size
    # SGLang's attention data parallelism as it resolves it: --attn-dp-size, else the deprecated
    # `--dp-size N --enable-dp-attention`; with --enable-dp-lm-head and --attn-cp-size beside it.
    attention_dp_size: int = 1
    dp_lm_head: bool = False
    attention_cp_size: int = 1
    # The release of the engine the launch runs, from its interpreter's package metadata (set by preflight;
    # None: not known here, and the rules say what each release they know would do).
    engine_version: str | None = None
    # vLLM: the speculative_config dict as vLLM builds it from the command line, each key with its value as JSON
    # (frozen, and what a SpeculativeConfig of one release or another accepts is decided from it by the rules).
    speculative_config: tuple[tuple[str, str], ...] = ()
    # SGLang: --json-model-override-args, each key with its value as JSON (SGLang sets them on the drafter's config
    # as well as on the target's).
    model_overrides: tuple[tuple[str, str], ...] = ()
    # SGLang: (option, backend) of the draft attention backend the command line names (the draft's own, else the
    # server's prefill one), before SGLang's fallbacks; None when it names none.
    draft_attention_backend: tuple[str, str] | None = None
    context_length: int | None = None  # SGLang: --context-length (None: the target's own)

    @property
    def environment(self) -> tuple[tuple[str, str], ...]:
        """The leading `NAME=value` assignments (shell syntax, applied by the shell to the program)."""
        return tuple((t.split("=", 1)[0], t.split("=", 1)[1]) for t in self.argv[: _assignments(self.argv)])

    @property
    def command(self) -> tuple[str, ...]:
        """What --exec runs: the whole command as given (wrappers and `docker run` included), after the
        leading assignments."""
        return self.argv[_assignments(self.argv) :]


@dataclass(frozen=True)
class Mount:
    host: str | None  # the host directory of a bind mount; None for a named or anonymous volume
    container: str  # absolute, normalised
    volume: str | None = None  # the volume's name (or kind), when it is not a bind mount


@dataclass(frozen=True, kw_only=True)
class Container:
    """What `docker run` says about the engine's file system. The check runs on the host, so container
    paths are mapped back through the bind mounts (the launch parser's `host_path` and `hub_cache`)."""

    image: str
    mounts: tuple[Mount, ...]
    environment: tuple[tuple[str, str | None], ...]  # -e NAME=value (None: `-e NAME`, the host's value)
    workdir: str | None
    user: bool  # -u/--user given: the home directory (and so the default HF cache) is not known
    env_file: bool  # --env-file given: variables not on the command line
    entrypoint_known: bool | None = True  # False: a vllm/vllm-openai image without --entrypoint
    env_files: tuple[str, ...] = ()  # the --env-file paths, in order (read before -e, which wins)

"""engines: ask the engines installed on this host what they read from a drafter, by running each one's adapter
(dflash_cfg/adapters/) in the interpreter it is installed in. CPU, no weights; the Hub only as the caller's Hub
settings allow (they pass through to the adapter's environment).

SGLang and vLLM run every drafter; speculators (a checkpoint format's loader, not a server) runs a
speculators-format file only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dflash_cfg.commands.common import one_config
from dflash_cfg.errors import UsageError
from dflash_cfg.lint.engine_reads import differences, file_says
from dflash_cfg.lint.speculators import is_speculators
from dflash_cfg.model import Adapted, Answer, EnginesResult
from dflash_cfg.sources import adapters, files
from dflash_cfg.sources.interpreters import discover, engine_timeout

MAX_BYTES = 1024 * 1024


class NoEngineError(UsageError):
    """No interpreter with an engine was found: the command cannot answer (exit 2)."""


def engines(drafter: str, target: str | None = None, pythons: Sequence[str] = ()) -> EnginesResult:
    config = one_config(drafter)
    if not isinstance(config, Path):
        raise UsageError(f"{drafter}: engines runs on a local model dir (the engines read it from disk)")
    raw = files.read(config, MAX_BYTES)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{config}: not JSON ({exc}); `dflash-cfg check` says where") from None
    if not isinstance(data, dict):
        raise UsageError(f"{config}: not a JSON object; `dflash-cfg check` says why")
    target_dir = _target_dir(target)
    found, notes = discover(pythons)
    if not found:
        asked = ", ".join(pythons) if pythons else "this interpreter, and `vllm`/`sglang` on PATH"
        raise NoEngineError(
            f"no engine (vllm, sglang, speculators) found in {asked}: name the engine's interpreter with --python PY"
            + (f" ({'; '.join(notes)})" if notes else "")
        )
    request = adapters.Request(drafter=str(config.parent), target=target_dir)
    speculators_format = is_speculators(data)
    jobs: list[tuple[str, Adapted]] = [
        (i.python, e) for i in found for e in i.engines if e != "speculators" or speculators_format
    ]
    if not jobs:
        raise NoEngineError(
            "only speculators was found, and it reads speculators-format files only: name a vLLM or SGLang "
            "interpreter with --python PY"
        )
    timeout = engine_timeout(adapters.DEFAULT_TIMEOUT)
    with ThreadPoolExecutor(len(jobs)) as pool:
        records = list(pool.map(lambda job: adapters.run(job[0], job[1], [request], timeout=timeout)[0], jobs))
    says = file_says(data)
    answers = tuple(Answer(r, differences(says, r.reads) if r.reads is not None else ()) for r in records)
    return EnginesResult(drafter=str(config), target=target_dir, says=says, answers=answers, notes=tuple(notes))


def _target_dir(target: str | None) -> str | None:
    if target is None:
        return None
    path = Path(target)
    if files.probe(path) == "file":
        path = path.parent
    if files.probe(path / files.CONFIG) != "file":
        raise UsageError(f"--target {target}: no config.json there (a local target model dir)")
    return str(path.resolve())

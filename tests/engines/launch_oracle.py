"""Run inside the pinned engine venv: read launch argument lists (JSON on stdin: {"engine": "vllm"|"sglang",
"lines": [[arg, ...], ...]}) and print, for each, what the engine's own argument parsing makes of it (one JSON
document on stdout): vLLM's `vllm serve` parser (`make_arg_parser` on a `FlexibleArgumentParser` subcommand,
as vllm/entrypoints/cli/main.py builds it) and `EngineArgs.from_cli_args`; SGLang's `ServerArgs.add_cli_args`
with its `--config` merger and the parse alone (its DFLASH post-init refuses a CPU device).

With "speculators": true, vLLM's lines are then read on as `create_engine_config` goes on:
`maybe_override_with_speculators` on the served model (`vllm serve SPEC_DIR`). With "engine": "vllm-config" the
request holds "cases" ({"target", "speculative_config", "tp", "pp", "executor", "max_model_len"}) instead of
lines, each built into vLLM's whole configuration (`EngineArgs.create_engine_config`, no model built), which is
where vLLM refuses a launch that does not fit its drafter; the environment (VLLM_USE_V2_MODEL_RUNNER) is the
process's. With "engine": "sglang-dflash" SGLang's lines are then run through its DFLASH set-up
(`_handle_dflash`, which reads the drafter's config, after `handle_deprecated_dp_attention` as a server runs
them), the device said to be "cuda": the one check of it that a CPU host fails."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import types
from typing import Any


def _vllm(speculators: bool = False) -> Any:
    from vllm.config import SpeculativeConfig
    from vllm.engine.arg_utils import EngineArgs
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    def read(argv: list[str]) -> dict[str, Any]:
        parser = FlexibleArgumentParser(prog="vllm")
        subparsers = parser.add_subparsers(required=False, dest="subparser")
        ServeSubcommand().subparser_init(subparsers)
        ns = parser.parse_args(["serve", *argv])
        if getattr(ns, "model_tag", None) is not None:  # serve.py's cmd()
            ns.model = ns.model_tag
        engine = EngineArgs.from_cli_args(ns)
        spec = engine.speculative_config
        # EngineArgs.create_speculative_config's first steps (it needs the target's ModelConfig, which this
        # CPU host cannot build for every target): --spec-* fill the dict, refused when a key is given twice,
        # and `-` in keys becomes `_`.
        for flag, key, value in (
            ("--spec-method", "method", engine.spec_method),
            ("--spec-model", "model", engine.spec_model),
            ("--spec-tokens", "num_speculative_tokens", engine.spec_tokens),
        ):
            if value is None:
                continue
            spec = {} if spec is None else spec
            if key in spec:
                raise ValueError(f"{flag} and --speculative-config['{key}'] are mutually exclusive")
            spec[key] = value
        spec = {k.replace("-", "_"): v for k, v in (spec or {}).items()}
        if spec.get("draft_tensor_parallel_size") is not None:  # SpeculativeConfig's own check
            parallel = types.SimpleNamespace(tensor_parallel_size=engine.tensor_parallel_size)
            SpeculativeConfig._verify_and_get_draft_tp(parallel, spec["draft_tensor_parallel_size"])
        if speculators:
            from vllm.transformers_utils.config import maybe_override_with_speculators

            engine.model, _, served = maybe_override_with_speculators(
                model=engine.model,
                tokenizer=None,
                trust_remote_code=False,
                revision=engine.revision,
                vllm_speculative_config=spec or None,
            )
            spec = dict(served or {})
        return {
            "target": engine.model,
            "target_revision": engine.revision,
            "drafter": spec.get("model"),
            "drafter_revision": spec.get("revision"),
            "method": spec.get("method"),
            "tokens": spec.get("num_speculative_tokens"),
            "tp": engine.tensor_parallel_size,
            "pp": engine.pipeline_parallel_size,
            "max_len": engine.max_model_len,
            "executor": engine.distributed_executor_backend,
        }

    return read


def _sglang() -> Any:
    from sglang.srt.arg_groups.parallel_hook import handle_deprecated_dp_attention
    from sglang.srt.server_args import ServerArgs
    from sglang.srt.utils.server_args_config_parser import ConfigArgumentMerger

    def read(argv: list[str]) -> dict[str, Any]:
        parser = argparse.ArgumentParser(prog="sglang serve")
        ServerArgs.add_cli_args(parser)
        if "--config" in argv:
            argv = ConfigArgumentMerger(parser).merge_config_with_args(argv)
        ns = parser.parse_args(argv)
        tokens = ns.speculative_num_draft_tokens
        block = ns.speculative_dflash_block_size
        if block is not None and (ns.speculative_algorithm or "").upper() == "DFLASH":
            # speculative_hook._handle_dflash (post-init, which refuses a CPU device): its block-size step
            if int(block) <= 0 or (tokens is not None and int(tokens) != int(block)):
                raise ValueError("--speculative-dflash-block-size refused by _handle_dflash")
            tokens = int(block)
        # parallel_hook.handle_deprecated_dp_attention: `--dp-size N --enable-dp-attention` is `--attn-dp-size N`.
        handle_deprecated_dp_attention(ns)
        declared: dict[str, Any] = {}
        for _source, fields in getattr(ns, "_resolved_overrides", None) or ():
            declared.update(fields)
        return {
            "target": ns.model_path,
            "target_revision": ns.revision,
            "drafter": ns.speculative_draft_model_path,
            "drafter_revision": ns.speculative_draft_model_revision,
            "method": ns.speculative_algorithm,
            "tokens": tokens,
            "tp": ns.tp_size,
            "window": ns.speculative_draft_window_size,
            "pp": ns.pp_size,
            "attn_dp": declared.get("attn_dp_size", ns.attn_dp_size),
            "lm_head": bool(ns.enable_dp_lm_head),
            "attn_cp": ns.attn_cp_size,
        }

    return read


def _vllm_config() -> Any:
    from vllm.engine.arg_utils import EngineArgs

    def build(case: dict[str, Any]) -> dict[str, Any]:
        args = EngineArgs(
            model=case["target"],
            speculative_config=dict(case["speculative_config"]),
            tensor_parallel_size=int(case.get("tp") or 1),
            skip_tokenizer_init=True,
            load_format="dummy",
            max_model_len=case.get("max_model_len"),
            pipeline_parallel_size=int(case.get("pp") or 1),
            distributed_executor_backend=case.get("executor"),
        )
        config = args.create_engine_config()
        spec = config.speculative_config
        return {
            "method": spec.method,
            "tokens": spec.num_speculative_tokens,
            "block": _block(spec),
            "draft_tp": spec.draft_tensor_parallel_size,
            "v2_runner": _v2_runner(config),
            "max_model_len": config.model_config.max_model_len,
        }

    return build


def _block(spec: Any) -> int | None:
    """The queries a request drafts per step, as the release's configuration says it: vLLM 0.34's speculator
    config holds it (vllm/v1/worker/gpu/spec_decode/dflash/config.py:DFlashSpeculatorConfig.num_lookahead_tokens:
    the anchor and one per draft token); 0.33 has no such object (its DFlashSpeculator, built on a GPU worker,
    takes 1 + num_speculative_tokens): None."""
    if not hasattr(type(spec), "speculator_config"):
        return None
    return int(spec.speculator_config.num_lookahead_tokens)


def _v2_runner(config: Any) -> bool:
    """Whether this configuration runs vLLM's V2 model runner, as the installed release offers the choice: a
    release with both runners says it (`VllmConfig.use_v2_model_runner`, from VLLM_USE_V2_MODEL_RUNNER and the
    layout); a release that has no V1 runner left has nothing to choose, and runs V2."""
    if not hasattr(type(config), "use_v2_model_runner"):
        return True
    return bool(config.use_v2_model_runner)


def _sglang_dflash() -> Any:
    from sglang.srt.arg_groups.parallel_hook import handle_deprecated_dp_attention
    from sglang.srt.arg_groups.speculative_hook import _handle_dflash
    from sglang.srt.server_args import ServerArgs

    def run(argv: list[str]) -> dict[str, Any]:
        parser = argparse.ArgumentParser(prog="sglang serve")
        ServerArgs.add_cli_args(parser)
        ns = parser.parse_args(argv)
        ns.device = "cuda"
        handle_deprecated_dp_attention(ns)  # runs before any handler reads the DP layout
        _handle_dflash(ns)
        declared: dict[str, Any] = {}
        for _source, fields in getattr(ns, "_resolved_overrides", None) or ():
            declared.update(fields)
        return {
            "tokens": declared.get("speculative_num_draft_tokens", ns.speculative_num_draft_tokens),
            # _resolve_dflash_draft_attention_backend (run by _handle_dflash): what the draft worker builds with.
            "draft_backend": declared.get("speculative_draft_attention_backend"),
        }

    return run


def _sglang_context() -> Any:
    """The context lengths SGLang gives the target and the DFLASH draft worker (built with the target's, as
    sglang/srt/speculative/draft_worker_common.py does): ModelConfig, config only, on CPU."""
    import os

    from sglang.srt.configs.model_config import ModelConfig

    def run(case: dict[str, Any]) -> dict[str, Any]:
        overrides = json.dumps(case.get("overrides") or {})
        # The target as a server that starts builds it: its own length, or --context-length within it.
        target = ModelConfig(model_path=case["target"], context_length=case.get("context_length"),
                             model_override_args=overrides)  # fmt: skip
        name = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"
        if case.get("allow"):
            os.environ[name] = "1"
        try:
            draft = ModelConfig(model_path=case["drafter"], context_length=target.context_len, is_draft_model=True,
                                model_override_args=overrides)  # fmt: skip
        finally:
            os.environ.pop(name, None)
        return {"target": target.context_len, "draft": draft.context_len}

    return run


def main() -> None:
    request = json.load(sys.stdin)
    if request["engine"] == "vllm-config":
        read, items = _vllm_config(), request["cases"]
    elif request["engine"] == "sglang-context":
        read, items = _sglang_context(), request["cases"]
    elif request["engine"] == "sglang-dflash":
        read, items = _sglang_dflash(), request["lines"]
    else:
        read = _vllm(bool(request.get("speculators"))) if request["engine"] == "vllm" else _sglang()
        items = request["lines"]
    out = []
    for argv in items:
        try:
            with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
                out.append({"read": read(argv)})
        except SystemExit:
            out.append({"refused": "argparse error"})
        except Exception as exc:  # noqa: BLE001 (the engine refuses the line: only that it does is compared)
            out.append({"refused": f"{type(exc).__name__}: {exc}"[:400]})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()

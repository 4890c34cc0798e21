"""The engines' command lines as this package knows them: their entry modules, and for each of vLLM and
SGLang a table of options (as the engine spells them) with the canonical name of the value read and the
option's arity. Options not listed go through the unknown-option rule of `argv.scan`; the wrappers' own
option tables sit with the wrappers (wrappers.py, docker.py).

Sources: vLLM `vllm/engine/arg_utils.py` and `vllm/entrypoints/openai/cli_args.py`; SGLang
`python/sglang/srt/server_args.py`.
"""

from __future__ import annotations

# The modules that start a server, as `python -m MODULE` names them.
API_SERVER = "vllm.entrypoints.openai.api_server"
VLLM_CLI = "vllm.entrypoints.cli.main"
SGLANG_SERVER = "sglang.launch_server"

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
DFLASH_BLOCK = "dflash_block"
DRAFT_WINDOW = "draft_window"
MODEL_OVERRIDES = "model_overrides"
DRAFT_ATTENTION = "draft_attention"
ATTENTION = "attention"
PREFILL_ATTENTION = "prefill_attention"
CONTEXT_LENGTH = "context_length"
OLD_MODEL = "old_model"
OLD_TOKENS = "old_tokens"
DRAFT_TP = "draft_tp"
PP = "pp"
DP = "dp"
ATTN_DP = "attn_dp"
DP_ATTENTION = "dp_attention"
DP_LM_HEAD = "dp_lm_head"
ATTN_CP = "attn_cp"
MAX_LEN = "max_len"
EXECUTOR = "executor"


# Arity: FLAG takes nothing, VALUE exactly one token, MANY every bare token that follows (nargs="+").
FLAG, VALUE, MANY = 0, 1, 2


# Only common options whose arity is not in doubt are listed: a flag listed as taking a value would
# swallow the model that follows it. Everything else goes through the unknown-option rule.
VLLM: dict[str, tuple[str, int]] = {
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
    "--max-model-len": (MAX_LEN, VALUE),
    "--distributed-executor-backend": (EXECUTOR, VALUE),
    "--pipeline-parallel-size": (PP, VALUE),
    "-pp": (PP, VALUE),
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
            "--gpu-memory-utilization",
            "--dtype",
            "--kv-cache-dtype",
            "--max-num-seqs",
            "--max-num-batched-tokens",
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


SGLANG: dict[str, tuple[str, int]] = {
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
    # arg_groups/fields/spec.py: "DFLASH only. Alias of --speculative-num-draft-tokens for DFLASH."
    "--speculative-dflash-block-size": (DFLASH_BLOCK, VALUE),
    "--speculative-draft-window-size": (DRAFT_WINDOW, VALUE),
    "--json-model-override-args": (MODEL_OVERRIDES, VALUE),
    # _resolve_dflash_draft_attention_backend: the draft's own, else the prefill one, else the server's.
    "--speculative-draft-attention-backend": (DRAFT_ATTENTION, VALUE),
    "--prefill-attention-backend": (PREFILL_ATTENTION, VALUE),
    "--attention-backend": (ATTENTION, VALUE),
    "--context-length": (CONTEXT_LENGTH, VALUE),
    # Its name in the SGLang releases that brought DFLASH (later a deprecated alias; the pinned SGLang refuses it):
    # model cards and launch scripts still use it, with the same meaning and the same check against the block.
    "--speculative-dflash-draft-window-size": (DRAFT_WINDOW, VALUE),
    "--config": (CONFIG, VALUE),
    # arg_groups/fields/parallel.py: the layouts _handle_dflash refuses (pipeline parallel; attention DP
    # without --enable-dp-lm-head or with attention context parallel).
    "--pp-size": (PP, VALUE),
    "--pipeline-parallel-size": (PP, VALUE),
    "--dp-size": (DP, VALUE),
    "--data-parallel-size": (DP, VALUE),
    "--dp": (DP, VALUE),
    "--attn-dp-size": (ATTN_DP, VALUE),
    "--attention-data-parallel-size": (ATTN_DP, VALUE),
    "--attn-cp-size": (ATTN_CP, VALUE),
    "--attention-context-parallel-size": (ATTN_CP, VALUE),
    # server_args.py: deprecated, `--dp-size N --enable-dp-attention` means `--attn-dp-size N`.
    "--enable-dp-attention": (DP_ATTENTION, FLAG),
    "--enable-dp-lm-head": (DP_LM_HEAD, FLAG),
    **{
        name: ("", VALUE)
        for name in (
            "--model-type",
            "--tokenizer-path",
            "--host",
            "--port",
            "--mem-fraction-static",
            "--dtype",
            "--kv-cache-dtype",
            "--quantization",
            "--speculative-num-steps",
            "--speculative-eagle-topk",
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
        )
    },
    **{
        name: ("", FLAG)
        for name in (
            "--trust-remote-code",
            "--enable-torch-compile",
            "--disable-radix-cache",
            "--disable-cuda-graph",
            "--skip-server-warmup",
            "--enable-metrics",
        )
    },
}

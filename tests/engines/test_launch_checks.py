"""The launch rules held against the checks vLLM makes between a launch and its drafter, by running vLLM's own
configuration code (tests/engines/launch_oracle.py in the pinned engine venv: `EngineArgs.create_engine_config`,
CPU, no model built) on the same launch and drafter: where a rule errors the engine refuses the launch, for
the reason the rule gives, and where the engine accepts it the rule is silent. docs/launch-checks.md lists
the checks and which rule covers each."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import Result

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch import parse_launch
from dflash_cfg.launch.speculators import served_speculators
from dflash_cfg.lint.releases import VLLM_0_34
from engines import build
from engines.launches import (
    FILE_BLOCKS,
    MAX_LENGTHS,
    METHOD_CHOICES,
    PARALLEL_ENVS,
    QWEN3_4B,
    QWEN36,
    SGLANG_BLOCK_OPTIONS,
    SINK_BACKEND_OPTIONS,
    SPEC_KEYS,
    VLLM_BLOCK_TOKENS,
    ask_oracle,
    block_drafters,
    context_drafters,
    dflash_case,
    draft_tp_rows,
    draft_window_argvs,
    drafter,
    launch_line_runner_cases,
    max_len_cases,
    parallel_layout_argvs,
    served_speculators_lines,
    sglang_block_argvs,
    sink_drafters,
    v1_runner_pairs,
    vllm_block_cases,
)

Run = Callable[..., Result]
V2_RUNNER = {"VLLM_USE_V2_MODEL_RUNNER": "1"}  # the oracle on vLLM's V2 model runner


def served_by(engine_python: Path, target: str, *args: str) -> list[str]:
    """A vLLM launch run by the engine venv's interpreter: preflight reads the release it runs from there."""
    return [str(engine_python), "-m", "vllm.entrypoints.openai.api_server", "--model", target, *args]


def findings(dflash: Run, argv: list[str]) -> dict[str, str]:
    """preflight's launch findings (rule -> severity) for a launch, the engine step off."""
    result = dflash("preflight", "--no-engine-check", "--format", "json", "--", *argv)
    assert result.code in (0, 1), result.err
    return {f["rule"]: f["severity"] for f in result.json()["files"][0]["findings"] if f["rule"].startswith("DF8")}


# What refuses a launch that asks for the V1 model runner, by the release the engine venv runs: vLLM 0.33's V1
# runner refuses some drafters (DF806, DF807); vLLM 0.34 has none left and refuses the launch (DF811).
V1_GONE = VLLM_0_34.includes(build.locked()["vllm"])
RUNNER_REASONS = (
    {"DF811": ("Model Runner V1 has been removed", "pipeline parallelism with external_launcher")}
    if V1_GONE
    else {"DF806": ("mixed sliding/full dflash drafts",),
          "DF807": ("DFlash candidate-head drafts", "xpress speculative decoding")}
)  # fmt: skip


def test_v1_runner_refusals_are_df806_df807_or_df811(engine_python: Path, dflash: Run, tmp_path: Path) -> None:
    # VLLM_USE_V2_MODEL_RUNNER=0: vLLM 0.33's VllmConfig._validate_v1_model_runner refuses a DFlash drafter that
    # mixes sliding and full layers (DF806) or has a candidate head or an XPress refiner (DF807); vLLM 0.34's
    # Platform.validate_environ refuses the launch (DF811). =1 builds them all.
    pairs = v1_runner_pairs(tmp_path)
    cases = [dflash_case(t, d) for t, d in pairs.values()]
    fired: set[str] = set()
    for value in ("0", "1"):
        answers = ask_oracle(engine_python, {"engine": "vllm-config", "cases": cases}, tmp_path,
                             {"VLLM_USE_V2_MODEL_RUNNER": value})  # fmt: skip
        for (name, (target, path)), answer in zip(pairs.items(), answers, strict=True):
            spec = json.dumps(cases[0]["speculative_config"] | {"model": str(path)})
            argv = [f"VLLM_USE_V2_MODEL_RUNNER={value}", *served_by(engine_python, target, "-sc", spec)]
            found = findings(dflash, argv)
            ours = {rule for rule in found if rule in ("DF806", "DF807", "DF811")}
            assert all(found[rule] == "error" for rule in ours)
            refused = answer.get("refused", "")
            assert bool(ours) == bool(refused), f"V2={value} {name}: preflight {ours}, vLLM {answer}"
            assert all(any(r in refused for r in RUNNER_REASONS.get(rule, ())) for rule in ours), (name, refused)
            fired |= ours
    assert fired == set(RUNNER_REASONS)  # each rule met a launch vLLM refuses


def test_draft_tensor_parallel_and_draft_heads(engine_python: Path, dflash: Run, tmp_path: Path) -> None:
    # SpeculativeConfig._verify_and_get_draft_tp: draft_tensor_parallel_size is 1 or the TP size, and the draft
    # ModelConfig's heads must divide by the draft's TP size (DF802). preflight refuses the first (exit 2, a
    # launch vLLM refuses whatever the drafter) and reports the second.
    target = QWEN3_4B  # 32 heads, 8 KV heads
    cases = draft_tp_rows(tmp_path)
    answers = ask_oracle(engine_python, {"engine": "vllm-config", "cases": cases}, tmp_path, V2_RUNNER)
    seen = {"refused-launch": 0, "df802": 0, "accepted": 0}
    for case, answer in zip(cases, answers, strict=True):
        argv = ["vllm", "serve", target, "-tp", str(case["tp"]), "-sc", json.dumps(case["speculative_config"])]
        refused = answer.get("refused", "")
        try:
            parse_launch(argv)
        except LaunchError:
            assert "draft_tensor_parallel_size" in refused, (case, answer)
            seen["refused-launch"] += 1
            continue
        ours = findings(dflash, argv).get("DF802")
        assert (ours == "error") == bool(refused), (case, answer, ours)
        assert not refused or "must be divisible by tensor parallel size" in refused, refused
        seen["df802" if ours else "accepted"] += 1
    assert all(seen.values()), seen


def test_served_speculators_model_is_read_as_vllm_reads_it(engine_python: Path, tmp_path: Path) -> None:
    # vllm serve SPEC_DIR: maybe_override_with_speculators swaps in the verifier as the target, SPEC_DIR as the
    # drafter, the file's method; a --speculative-config adds keys but its model and method are overwritten.
    lines = served_speculators_lines(tmp_path)
    answers = ask_oracle(engine_python, {"engine": "vllm", "lines": lines, "speculators": True}, tmp_path)
    for line, answer in zip(lines, answers, strict=True):
        launch = parse_launch(["vllm", "serve", *line])
        config = json.loads((tmp_path / line[0] / "config.json").read_text())
        try:
            launch = served_speculators(launch, config, lambda name: (tmp_path / name).exists())
        except LaunchError:
            assert "refused" in answer, (line, answer)
            continue
        theirs = answer["read"]
        ours = {
            "target": launch.target,
            "target_revision": launch.target_revision,
            "drafter": launch.drafter,
            "drafter_revision": launch.drafter_revision,
            "method": launch.method,
            "tp": launch.tensor_parallel_size,
        }
        assert ours == {k: theirs[k] for k in ours}, (line, theirs)
        # The drafts per step: the launch's, else the file's (vLLM fills them in; DF805 checks the file's).
        tokens = launch.num_speculative_tokens
        if tokens is None and "speculators_config" in config:
            tokens = config["speculators_config"]["proposal_methods"][0]["speculative_tokens"]
        assert tokens == theirs["tokens"], (line, theirs)


def test_sglang_draft_window_is_df808(engine_python: Path, dflash: Run, tmp_path: Path) -> None:
    # _handle_dflash: the draft window must hold --speculative-num-draft-tokens, which it takes from the
    # drafter's block size when the launch does not give them.
    argvs = draft_window_argvs(tmp_path)
    answers = ask_oracle(engine_python, {"engine": "sglang-dflash", "lines": argvs}, tmp_path)
    outcomes = set()
    for argv, answer in zip(argvs, answers, strict=True):
        ours = findings(dflash, ["python", "-m", "sglang.launch_server", *argv]).get("DF808")
        refused = answer.get("refused", "")
        assert (ours == "error") == bool(refused), (argv, answer, ours)
        assert not refused or "--speculative-draft-window-size must be >=" in refused, refused
        outcomes.add(bool(refused))
    assert outcomes == {True, False}


def block_findings(dflash: Run, argv: list[str]) -> dict[str, str]:
    """preflight's DF801 and DF121 findings for a launch (rule -> message), the engine step off."""
    result = dflash("preflight", "--no-engine-check", "--format", "json", "--", *argv)
    assert result.code in (0, 1), result.err
    return {f["rule"]: f["message"] for f in result.json()["files"][0]["findings"] if f["rule"] in ("DF801", "DF121")}


# vLLM 0.34's configuration holds the block a request drafts (its speculator config); 0.33's builds it on a GPU worker.
BLOCK_IN_CONFIG = VLLM_0_34.includes(build.locked()["vllm"])


def test_vllm_drafts_the_launchs_block_whatever_the_drafter_says(
    engine_python: Path, dflash: Run, tmp_path: Path
) -> None:
    # vLLM never reads block_size: the launch's num_speculative_tokens builds the block
    # (vllm/v1/worker/gpu/spec_decode/dflash/config.py:DFlashSpeculatorConfig.num_lookahead_tokens, tokens + 1; 0.33:
    # vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:DFlashSpeculator.__init__@0.33.0 on the GPU worker), and a
    # launch without them is refused whatever the drafter says
    # (vllm/v1/worker/gpu/spec_decode/speculator_config.py:DraftModelSpeculatorConfig.configure; 0.33:
    # vllm/config/speculative.py:SpeculativeConfig.__post_init__@0.33.0). DF801 holds the launch against a
    # block_size the file has, and only then; DF121 names the launch's block when the file has none.
    cases = vllm_block_cases(tmp_path)
    answers = ask_oracle(engine_python, {"engine": "vllm-config", "cases": cases}, tmp_path, V2_RUNNER)
    blocks = [b for b in FILE_BLOCKS.values() for _ in VLLM_BLOCK_TOKENS]
    outcomes = set()
    for case, answer, trained in zip(cases, answers, blocks, strict=True):
        spec = case["speculative_config"]
        tokens = spec.get("num_speculative_tokens")
        found = block_findings(dflash, ["vllm", "serve", QWEN3_4B, "-sc", json.dumps(spec)])
        if tokens is None:
            assert "`num_speculative_tokens` was not provided" in answer.get("refused", ""), (case, answer)
            assert "gives no num_speculative_tokens" in found.get("DF801", ""), (case, found)
            outcomes.add("refused")
            continue
        read = answer["read"]
        assert read["tokens"] == tokens and read["block"] == (tokens + 1 if BLOCK_IN_CONFIG else None), (case, answer)
        assert ("DF801" in found) == (trained is not None and trained != tokens + 1), (case, found)
        if trained is None:
            assert f"the launch's {tokens + 1} (num_speculative_tokens {tokens} + 1)" in found["DF121"], found
        outcomes.add("DF801" if "DF801" in found else "served")
    assert outcomes == {"refused", "DF801", "served"}, outcomes


def test_vllm_drafts_a_dspark_block_with_the_anchor_in_it(engine_python: Path, dflash: Run, tmp_path: Path) -> None:
    # vllm/v1/worker/gpu/spec_decode/dspark/config.py:DSparkSpeculatorConfig: num_lookahead_tokens is
    # num_speculative_tokens when the drafter samples from the anchor (its default), 1 + N otherwise, and a launch
    # without tokens takes the drafter's block_size (resolve_num_speculative_tokens). DF801 holds that block
    # against the file's; DF803 wants the method dspark.
    markov: dict[str, Any] = {"architectures": ["Qwen3DSparkModel"], "markov_rank": 64, "markov_head_type": "vanilla"}
    drafters = {
        "anchor": drafter(tmp_path, "dspark-anchor", **markov),
        "no-anchor": drafter(tmp_path, "dspark-no-anchor", sample_from_anchor=False, **markov),
    }
    cases, expected = [], []
    for name, path in drafters.items():
        for tokens in (None, 15, 16):
            spec: dict[str, Any] = {"method": "dspark", "model": str(path)}
            if tokens is not None:
                spec["num_speculative_tokens"] = tokens
            cases.append({"target": QWEN3_4B, "speculative_config": spec})
            expected.append((name, tokens))
    answers = ask_oracle(engine_python, {"engine": "vllm-config", "cases": cases}, tmp_path, V2_RUNNER)
    outcomes = set()
    for case, answer, (name, tokens) in zip(cases, answers, expected, strict=True):
        read = answer["read"]
        served = read["tokens"] if name == "anchor" else read["tokens"] + 1
        assert read["method"] == "dspark" and read["tokens"] == (tokens or 16), (case, answer)
        if BLOCK_IN_CONFIG:
            assert read["block"] == served, (case, answer)
        found = block_findings(dflash, ["vllm", "serve", QWEN3_4B, "-sc", json.dumps(case["speculative_config"])])
        assert ("DF801" in found) == (served != 16), (case, answer, found)
        assert "DF803" not in findings(
            dflash, ["vllm", "serve", QWEN3_4B, "-sc", json.dumps(case["speculative_config"])]
        )
        outcomes.add("DF801" if "DF801" in found else "served")
    assert outcomes == {"DF801", "served"}, outcomes


def test_sglang_drafts_the_launchs_block_else_the_drafters_else_16(
    engine_python: Path, dflash: Run, tmp_path: Path
) -> None:
    # sglang/srt/arg_groups/speculative_hook.py:_handle_dflash: --speculative-num-draft-tokens (or
    # --speculative-dflash-block-size), else the drafter's block size (dflash_config first), else 16. The worker then
    # drafts that value and only logs a drafter block_size that differs
    # (sglang/srt/speculative/dflash_worker_v2.py:DFlashWorkerV2.__init__, on a GPU worker: cited). DF801 holds a
    # launch value against a block_size the file has; DF121 names the launch's block when the file has none, SGLang's
    # 16 when neither does.
    argvs = sglang_block_argvs(tmp_path)
    answers = ask_oracle(engine_python, {"engine": "sglang-dflash", "lines": argvs}, tmp_path)
    blocks = [b for b in FILE_BLOCKS.values() for _ in SGLANG_BLOCK_OPTIONS]
    outcomes = set()
    for argv, answer, trained, options in zip(argvs, answers, blocks, SGLANG_BLOCK_OPTIONS * len(FILE_BLOCKS),
                                              strict=True):  # fmt: skip
        given = int(options[1]) if options else None
        served = answer["read"]["tokens"]
        assert served == (given if given is not None else trained if trained is not None else 16), (argv, answer)
        found = block_findings(dflash, ["python", "-m", "sglang.launch_server", *argv])
        assert ("DF801" in found) == (given is not None and trained is not None and given != trained), (argv, found)
        if trained is None:
            said = "loaders assume 16" if given is None else f"the launch's {given} (--speculative-num-draft-tokens"
            assert said in found["DF121"], (argv, found)
        outcomes.add("DF801" if "DF801" in found else "launch" if given is not None else "file or 16")
    assert outcomes == {"DF801", "launch", "file or 16"}, outcomes


def test_sglang_applies_its_model_overrides_to_the_drafter_which_is_df814(
    engine_python: Path, dflash: Run, tmp_path: Path
) -> None:
    # sglang/srt/arg_groups/speculative_hook.py:_handle_dflash reads the drafter's config through get_config with the
    # launch's json_model_override_args (as ModelConfig.from_server_args builds the draft model's): an override of
    # the block reaches the drafter, and DF814 says so; one that leaves the file's value is silent.
    drafters = block_drafters(tmp_path)
    head = ["--model-path", QWEN3_4B, "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path"]
    overrides = {'{"block_size": 8}': 8, '{"block_size": 16}': 16, '{"dflash_config": {"block_size": 4}}': 4}
    argvs = [[*head, str(drafters["b16"]), "--json-model-override-args", given] for given in overrides]
    answers = ask_oracle(engine_python, {"engine": "sglang-dflash", "lines": argvs}, tmp_path)
    for argv, answer, served in zip(argvs, answers, overrides.values(), strict=True):
        assert answer["read"]["tokens"] == served, (argv, answer)
        found = findings(dflash, ["python", "-m", "sglang.launch_server", *argv])
        assert ("DF814" in found) == (served != FILE_BLOCKS["b16"]), (argv, found)


def test_sglang_nemotron_sinks_need_the_draft_backend_sglang_resolves_to_trtllm_mha(
    engine_python: Path, dflash: Run, tmp_path: Path
) -> None:
    # sglang/srt/arg_groups/speculative_hook.py:_resolve_dflash_draft_attention_backend (run by _handle_dflash): the
    # draft's option, else the server's prefill backend, else flashinfer; trtllm_mha kept only for an all-sliding or
    # causal draft. DFlashAttention.__init__ then builds the sinks only on trtllm_mha (a GPU worker: cited, not run).
    # DF216 says a drafter no launch keeps on trtllm_mha; DF815 a launch whose backend is another (an error) or that
    # names none (a warning: on a GPU host the server may pick its own).
    drafters = sink_drafters(tmp_path)
    head = ["--model-path", QWEN3_4B, "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path"]
    cases = [(name, options) for name in drafters for options in SINK_BACKEND_OPTIONS]
    argvs = [[*head, str(drafters[name]), *options] for name, options in cases]
    answers = ask_oracle(engine_python, {"engine": "sglang-dflash", "lines": argvs}, tmp_path)
    outcomes = set()
    for (name, options), argv, answer in zip(cases, argvs, answers, strict=True):
        backend = answer["read"]["draft_backend"]
        found = findings(dflash, ["python", "-m", "sglang.launch_server", *argv])
        check = dflash("check", str(drafters[name]), "--format", "json")
        file_rules = {f["rule"] for f in check.json()["files"][0]["findings"]}
        kept = backend == "trtllm_mha"
        assert ("DF216" in file_rules) == (name == "full"), (argv, file_rules)
        if name == "full":
            assert not kept, (argv, answer)  # whatever the launch asks
            outcomes.add("DF216")
        elif not options:
            assert not kept and found.get("DF815") == "warning", (argv, answer, found)
            outcomes.add("warning")
        else:
            assert ("DF815" in found) == (not kept), (argv, answer, found)
            outcomes.add("DF815" if "DF815" in found else "trtllm_mha")
    assert outcomes == {"DF216", "warning", "DF815", "trtllm_mha"}, outcomes


def test_sglang_builds_the_draft_worker_with_the_targets_context_length_which_is_df816(
    engine_python: Path, dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # sglang/srt/configs/model_config.py:ModelConfig._derive_context_length: the draft worker gets the target's
    # context length and refuses a longer one than the drafter's own (get_context_length: the length times the RoPE
    # factor unless the scaling names its original length, which the config class adds to YaRN), unless
    # SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN raises the drafter's. DF816 errs where it refuses, warns where the
    # variable lets it start past the drafter's length.
    drafters = context_drafters(tmp_path)
    launches: list[tuple[str, tuple[str, ...], dict[str, Any]]] = [
        ("own", (), {}),
        ("short", (), {}),
        ("short", ("--context-length", "32768"), {"context_length": 32768}),
        ("short", (), {"allow": True}),
        ("yarn", (), {}),
        ("linear", (), {}),
        ("short", ("--json-model-override-args", '{"max_position_embeddings": 262144}'),
         {"overrides": {"max_position_embeddings": 262144}}),
    ]  # fmt: skip
    cases = [{"target": QWEN36, "drafter": str(drafters[name]), **more} for name, _, more in launches]
    answers = ask_oracle(engine_python, {"engine": "sglang-context", "cases": cases}, tmp_path)
    outcomes = set()
    for (name, options, more), answer in zip(launches, answers, strict=True):
        head = ["python", "-m", "sglang.launch_server", "--model-path", QWEN36, "--speculative-algorithm", "DFLASH"]
        draft = ["--speculative-draft-model-path", str(drafters[name]), "--speculative-num-draft-tokens", "16"]
        if more.get("allow"):  # preflight reads the launch's environment from its own
            monkeypatch.setenv("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "1")
        else:
            monkeypatch.delenv("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", raising=False)
        result = dflash("preflight", "--no-engine-check", "--format", "json", "--", *head, *draft, *options)
        found = {f["rule"]: f["severity"] for f in result.json()["files"][0]["findings"]}
        refused = "Target model's context_length" in answer.get("refused", "")
        assert (found.get("DF816") == "error") == refused, (name, options, answer, found)
        if more.get("allow"):
            assert answer["read"]["draft"] == answer["read"]["target"] and found.get("DF816") == "warning", answer
        outcomes.add("refused" if refused else found.get("DF816", "served"))
    assert outcomes == {"refused", "warning", "served"}, outcomes


def test_sglang_parallel_layouts_are_df809(engine_python: Path, dflash: Run, tmp_path: Path) -> None:
    # _handle_dflash: DFLASH refuses pipeline parallelism, and attention DP without --enable-dp-lm-head, with
    # context parallelism, or with SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION on.
    reasons = ("pp_size == 1", "requires --enable-dp-lm-head", "does not support context parallel",
               "SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION=0")  # fmt: skip
    outcomes = set()
    for env in PARALLEL_ENVS:
        argvs = parallel_layout_argvs()
        answers = ask_oracle(engine_python, {"engine": "sglang-dflash", "lines": argvs}, tmp_path, env)
        for argv, answer in zip(argvs, answers, strict=True):
            prefix = [f"{k}={v}" for k, v in env.items()]
            ours = findings(dflash, [*prefix, "python", "-m", "sglang.launch_server", *argv]).get("DF809")
            refused = answer.get("refused", "")
            assert (ours == "error") == bool(refused), (env, argv, answer, ours)
            assert not refused or any(reason in refused for reason in reasons), refused
            outcomes.add(next((reason for reason in reasons if reason in refused), "accepted"))
    assert outcomes == {"accepted", *reasons}, outcomes  # each refusal met, and accepted layouts


def test_a_drafter_shorter_than_max_model_len_is_df810(engine_python: Path, dflash: Run, tmp_path: Path) -> None:
    # VllmConfig._limit_max_model_len_to_draft: with RoPE that does more than size a cache, the V2 runner serves
    # the drafter's length (max_position_embeddings, times the factor of types not pre-scaled).
    target = QWEN3_4B  # max_position_embeddings 40960
    cases = max_len_cases(tmp_path)
    answers = ask_oracle(engine_python, {"engine": "vllm-config", "cases": cases}, tmp_path, V2_RUNNER)
    lowered = set()
    for case, answer, length in zip(cases, answers, MAX_LENGTHS * (len(cases) // len(MAX_LENGTHS)), strict=True):
        argv = ["vllm", "serve", target, "--max-model-len", length, "-sc", json.dumps(case["speculative_config"])]
        ours = findings(dflash, argv).get("DF810")
        served = answer["read"]["max_model_len"]
        assert (ours == "warning") == (served < case["max_model_len"]), (case, answer, ours)
        if ours:
            result = dflash("preflight", "--no-engine-check", "--format", "json", "--", *argv)
            [finding] = [f for f in result.json()["files"][0]["findings"] if f["rule"] == "DF810"]
            assert f"serves max_model_len {served}," in finding["message"], (finding, answer)
            lowered.add(served)
    assert lowered == {4096, 8192}, lowered


def test_v1_runner_chosen_by_the_launch_line_is_df806_df807_or_df811(
    engine_python: Path, dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The variable unset, pipeline parallelism under external_launcher: vLLM 0.33's VllmConfig.use_v2_model_runner
    # runs V1 for it (V2 lacks it), which refuses what DF806/DF807 say; vLLM 0.34 refuses the layout (DF811).
    monkeypatch.delenv("VLLM_USE_V2_MODEL_RUNNER", raising=False)
    cases = launch_line_runner_cases(tmp_path)
    answers = ask_oracle(engine_python, {"engine": "vllm-config", "cases": cases}, tmp_path)
    fired = set()
    for case, answer in zip(cases, answers, strict=True):
        argv = served_by(engine_python, QWEN3_4B, "-pp", str(case["pp"]), "-sc", json.dumps(case["speculative_config"]))
        if "executor" in case:
            argv += ["--distributed-executor-backend", str(case["executor"])]
        ours = {rule for rule in findings(dflash, argv) if rule in ("DF806", "DF807", "DF811")}
        refused = answer.get("refused", "")
        by_runner = any(r in refused for reasons in RUNNER_REASONS.values() for r in reasons)
        assert bool(ours) == by_runner, (case, answer, ours)
        assert all(any(r in refused for r in RUNNER_REASONS[rule]) for rule in ours), (case, refused)
        fired |= ours
    assert fired == set(RUNNER_REASONS)


def test_speculative_config_keys_and_methods_are_df812_and_df803(
    engine_python: Path, dflash: Run, tmp_path: Path
) -> None:
    # SpeculativeConfig takes every key of the launch's dict as a keyword: one its release lacks is refused
    # ("Unexpected keyword argument", DF812). The method: vLLM 0.33 builds a plain draft model when none is given
    # (or draft_model) and the path does not say dflash; 0.34 takes the drafter's declared 'dflash' and refuses
    # any other explicit one (DF803). Each launch runs the engine venv's interpreter, so preflight applies the
    # rules of the installed release.
    named = drafter(tmp_path, "full")
    plain = tmp_path / "plain-draft"
    shutil.copytree(named, plain)
    specs: list[tuple[Path, dict[str, Any]]] = [
        (named, {"method": "dflash"}),
        *[(named, {"method": "dflash", key: value}) for key, value in SPEC_KEYS],
        *[(named if says else plain, {} if m is None else {"method": m}) for says, m in METHOD_CHOICES],
    ]
    cases = [
        {"target": QWEN3_4B, "speculative_config": {"model": str(path), "num_speculative_tokens": 15, **spec}}
        for path, spec in specs
    ]
    answers = ask_oracle(engine_python, {"engine": "vllm-config", "cases": cases}, tmp_path, V2_RUNNER)
    outcomes = set()
    for case, answer in zip(cases, answers, strict=True):
        argv = served_by(engine_python, QWEN3_4B, "-sc", json.dumps(case["speculative_config"]))
        ours = {rule: level for rule, level in findings(dflash, argv).items() if rule in ("DF803", "DF812")}
        refused = answer.get("refused", "")
        built = answer.get("read", {}).get("method")
        wrong = bool(refused) or built != "dflash"
        assert ("error" in ours.values()) == wrong, (case, answer, ours)
        assert (ours.get("DF812") == "error") == ("Unexpected keyword argument" in refused), (case, answer, ours)
        outcomes.add("refused" if refused else "plain draft model" if wrong else "dflash")
    assert {"refused", "dflash"} <= outcomes, outcomes

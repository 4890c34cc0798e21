"""parse_launch on the real vLLM and SGLang launch forms, and on hostile or ambiguous command lines.

Wrappers, containers, config files and older flags: test_launch_shapes.py."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import examples
from hypothesis import given
from hypothesis import strategies as st
from launch_fields import ISSUE, SGLANG_8B, SPEC_8B, _fields, _sglang, _vllm

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch import parse_launch

GOOD = [
    # --- vLLM -------------------------------------------------------------------------------------
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3.6-27B", "--speculative-config", ISSUE, "--tensor-parallel-size", "2"],
        _vllm("Qwen/Qwen3.6-27B", "z-lab/Qwen3.6-27B-DFlash", tensor_parallel_size=2),
        id="vllm-issue-example",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config.method", "dflash",
         "--speculative-config.model", "z-lab/Qwen3-8B-DFlash-b16",
         "--speculative-config.num_speculative_tokens", "15"],
        _vllm(),
        id="vllm-dotted",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "-sc.model=z-lab/Qwen3-8B-DFlash-b16", "-sc.num_speculative_tokens=15",
         "-sc.method=dflash"],
        _vllm(),
        id="vllm-dotted-short-equals",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative_config.model", "z-lab/Qwen3-8B-DFlash-b16",
         "--speculative-config.num-speculative-tokens", "15", "--speculative-config.method", "dflash"],
        _vllm(),
        id="vllm-dotted-underscore-and-dash-keys",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "-sc",
         '{"model": "z-lab/Qwen3-8B-DFlash-b16", "num_speculative_tokens": 15, "method": "dflash",'
         ' "draft_tensor_parallel_size": 1}', "-tp", "4"],
        _vllm(tensor_parallel_size=4),
        id="vllm-draft-tp-1",  # vLLM accepts 1 or the TP size; DF802 checks the TP size either way
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", f"--speculative-config={SPEC_8B}", "-tp", "4"],
        _vllm(tensor_parallel_size=4),
        id="vllm-config-equals-tp-short",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "-sc", SPEC_8B, "-tp=8"],
        _vllm(tensor_parallel_size=8),
        id="vllm-sc-tp-equals",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative_config", SPEC_8B, "--tensor_parallel_size", "2"],
        _vllm(tensor_parallel_size=2),
        id="vllm-underscore-names",
    ),
    pytest.param(
        ["vllm", "serve", "--speculative-config", SPEC_8B, "--model", "Qwen/Qwen3-8B"],
        _vllm(),
        id="vllm-model-option",
    ),
    pytest.param(
        ["vllm", "serve", "-tp", "2", "--model=Qwen/Qwen3-8B", "--speculative-config", SPEC_8B],
        _vllm(tensor_parallel_size=2),
        id="vllm-model-equals",
    ),
    pytest.param(
        ["/usr/bin/vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", SPEC_8B],
        _vllm(),
        id="vllm-absolute-path",
    ),
    pytest.param(
        [".venv/bin/vllm", "serve", "/models/Qwen3-8B", "--speculative-config",
         '{"method": "dflash", "model": "/models/drafter", "num_speculative_tokens": 7}'],
        _vllm("/models/Qwen3-8B", "/models/drafter", num_speculative_tokens=7),
        id="vllm-venv-local-paths",
    ),
    pytest.param(
        ["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "Qwen/Qwen3-8B",
         "--speculative-config", SPEC_8B, "--tensor-parallel-size", "2", "--port", "8000"],
        _vllm(tensor_parallel_size=2),
        id="vllm-api-server",
    ),
    pytest.param(
        ["/opt/conda/bin/python3.12", "-u", "-X", "dev", "-m", "vllm.entrypoints.openai.api_server",
         "--served-model-name", "a", "b", "--model=Qwen/Qwen3-8B", "--some-new-option", "x"],
        _vllm(drafter=None),
        id="vllm-api-server-python-switches",
    ),
    pytest.param(
        ["python3", "-m", "vllm.entrypoints.cli.main", "serve", "Qwen/Qwen3-8B", "--speculative-config", SPEC_8B],
        _vllm(),
        id="vllm-cli-module",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config",
         '{"model": "z-lab/Qwen3-8B-DFlash-b16", "num_speculative_tokens": 15}'],
        _vllm(method=None),
        id="vllm-method-autodetected",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--revision", "abc123", "--speculative-config",
         '{"method": "dflash", "model": "z-lab/Qwen3-8B-DFlash-b16", "num_speculative_tokens": 15, "revision": "v2"}'],
        _vllm(target_revision="abc123", drafter_revision="v2"),
        id="vllm-revisions",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--revision", "None"],
        _vllm(drafter=None),
        id="vllm-revision-none-is-unset",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--spec-method", "dflash", "--spec-model", "z-lab/Qwen3-8B-DFlash-b16",
         "--spec-tokens", "15"],
        _vllm(),
        id="vllm-spec-aliases",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", '{"model": "z-lab/Qwen3-8B-DFlash-b16"}',
         "--spec-tokens", "15", "--spec-method", "dflash"],
        _vllm(),
        id="vllm-spec-aliases-fill-json",
    ),
    pytest.param(["vllm", "serve", "Qwen/Qwen3-8B"], _vllm(drafter=None), id="vllm-no-speculation"),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", "None"], _vllm(drafter=None), id="vllm-config-none"
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", '{"method": "ngram", "num_speculative_tokens": 4}'],
        _vllm(drafter=None, method="ngram", num_speculative_tokens=4),
        id="vllm-ngram-no-drafter",
    ),
    pytest.param(
        ["vllm", "serve", "--trust-remote-code", "--port", "8000", "Qwen/Qwen3-8B", "--speculative-config", SPEC_8B],
        _vllm(),
        id="vllm-model-after-known-options",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--brand-new-flag", "--brand-new-option", "value", "--speculative-config",
         SPEC_8B, "--max-num-seqs", "8", "--chunked-prefill-size", "-1"],
        _vllm(),
        id="vllm-unknown-options-after-model",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "-O3", "-O", '{"level": 3}', "-O.level", "3", "-cc.mode", "3",
         "--speculative-config", SPEC_8B],
        _vllm(),
        id="vllm-O-and-other-json-args",
    ),
    pytest.param(
        ["vllm", "serve", "--model", "Qwen/Qwen3-8B", "--new-option", "Qwen/Qwen3-8B-other"],
        _vllm(drafter=None),
        id="vllm-unknown-option-value-when-model-given",
    ),
    pytest.param(
        ["env", "CUDA_VISIBLE_DEVICES=0,1", "VLLM_USE_V2_MODEL_RUNNER=1", "vllm", "serve", "Qwen/Qwen3-8B",
         "--speculative-config", SPEC_8B, "-tp", "2"],
        _vllm(tensor_parallel_size=2),
        id="env-prefix",
    ),
    pytest.param(
        ["CUDA_VISIBLE_DEVICES=0", "HF_HUB_OFFLINE=1", "vllm", "serve", "Qwen/Qwen3-8B",
         "--speculative-config", SPEC_8B],
        _vllm(),
        id="assignment-prefix",
    ),
    pytest.param(
        ["/usr/bin/env", "-u", "HF_TOKEN", "-i", "PATH=/bin", "vllm", "serve", "Qwen/Qwen3-8B"],
        _vllm(drafter=None),
        id="env-options",
    ),
    # --- SGLang -----------------------------------------------------------------------------------
    pytest.param(
        ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", *SGLANG_8B, "--tp", "2"],
        _sglang(tensor_parallel_size=2),
        id="sglang-launch-server",
    ),
    pytest.param(
        ["python3", "-m", "sglang.launch_server", "--model-path=Qwen/Qwen3-8B", "--speculative-algorithm=DFLASH",
         "--speculative-draft-model-path=z-lab/Qwen3-8B-DFlash-b16", "--speculative-num-draft-tokens=16",
         "--tp-size=4"],
        _sglang(tensor_parallel_size=4),
        id="sglang-equals-forms",
    ),
    pytest.param(
        ["python", "-m", "sglang.launch_server", "--model", "Qwen/Qwen3-8B", "--speculative-algorithm", "DFLASH",
         "--speculative-draft-model", "z-lab/Qwen3-8B-DFlash-b16", "--speculative-num-draft-tokens", "16",
         "--tensor-parallel-size", "8"],
        _sglang(tensor_parallel_size=8),
        id="sglang-aliases",
    ),
    pytest.param(
        ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--revision", "main", *SGLANG_8B,
         "--speculative-draft-model-revision", "abc123"],
        _sglang(target_revision="main", drafter_revision="abc123"),
        id="sglang-revisions",
    ),
    pytest.param(
        ["sglang", "serve", "Qwen/Qwen3-8B", *SGLANG_8B, "--tp", "2"],
        _sglang(tensor_parallel_size=2),
        id="sglang-serve-positional",
    ),
    pytest.param(
        ["sglang", "serve", "--model-type", "llm", "Qwen/Qwen3-8B", *SGLANG_8B],
        _sglang(),
        id="sglang-serve-model-type-then-positional",
    ),
    pytest.param(
        ["sglang", "serve", "Qwen/Qwen3-4B", "--model-path", "Qwen/Qwen3-8B", *SGLANG_8B],
        _sglang(),
        id="sglang-serve-model-path-wins",
    ),
    pytest.param(
        ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"],
        _sglang(drafter=None),
        id="sglang-no-speculation",
    ),
    pytest.param(
        ["CUDA_VISIBLE_DEVICES=0,1", "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B",
         "--brand-new-option", "x", "y", "--mem-fraction-static", "0.8", "--chunked-prefill-size", "-1",
         "--trust-remote-code", *SGLANG_8B],
        _sglang(),
        id="sglang-unknown-options-and-env",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "expected"), GOOD)
def test_launch_forms(argv: list[str], expected: dict[str, Any]) -> None:
    launch = parse_launch(argv)
    assert _fields(launch) == expected
    assert launch.argv == tuple(argv)


BAD = [
    pytest.param(
        ["python", "-m", "sglang.launch_server", "--model-path", "Q/q", "--speculative-draft-window-size", "0"],
        "--speculative-draft-window-size: expected a positive integer", id="sglang-draft-window-zero",
    ),
    pytest.param([], "empty launch command", id="empty"),
    pytest.param(["CUDA_VISIBLE_DEVICES=0"], "no command", id="only-assignments"),
    pytest.param(["vllm"], "vllm: no subcommand", id="vllm-alone"),
    pytest.param(["vllm", "chat"], "not a server launch", id="vllm-chat"),
    pytest.param(["sglang"], "sglang: no subcommand", id="sglang-alone"),
    pytest.param(["vllm", "serve"], "no model", id="vllm-serve-no-model"),
    pytest.param(["vllm", "serve", ""], "empty", id="vllm-serve-empty-model"),
    pytest.param(["vllm", "serve", "--model="], "--model: empty", id="vllm-model-option-empty"),
    pytest.param(["vllm", "serve", "Qwen/Qwen3-8B", "-sc", '{"model": ""}'], "-sc: model is empty", id="drafter-empty"),
    pytest.param(
        ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--speculative-draft-model-path="],
        "--speculative-draft-model-path: empty", id="sglang-drafter-empty",
    ),
    pytest.param(["vllm", "serve", "--port", "8000", "-tp", "2"], "no model", id="vllm-serve-only-options"),
    pytest.param(["llama-server", "-m", "model.gguf"], "not a vLLM or SGLang launch command", id="unknown-engine"),
    pytest.param(["python", "serve.py", "--model", "x"], "not a vLLM or SGLang", id="python-script"),
    pytest.param(["python", "-c", "import vllm"], "not a vLLM or SGLang", id="python-c"),
    pytest.param(["python", "-m", "vllm"], "not a vLLM or SGLang", id="python-m-unknown-module"),
    pytest.param(["python", "-m"], "python -m", id="python-m-no-module"),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", '{"method": "dflash", "model": }'],
        "--speculative-config: not valid JSON",
        id="malformed-json",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", "{'method': 'dflash'}"],
        "--speculative-config: not valid JSON",
        id="python-dict-not-json",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "-sc", '["dflash", 15]'], "-sc: expected a JSON object, got a list",
        id="json-list",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", "[" * 100_000],
        "--speculative-config: JSON nested too deeply",
        id="json-nested-deeply",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", '{"num_speculative_tokens": ' + "9" * 5000 + "}"],
        "--speculative-config: not valid JSON",
        id="json-huge-int",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--tensor-parallel-size", "two"],
        "--tensor-parallel-size: expected a positive integer, got 'two'",
        id="tp-not-int",
    ),
    pytest.param(["vllm", "serve", "Qwen/Qwen3-8B", "-tp", "0"], "-tp: expected a positive integer", id="tp-zero"),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "-tp", "9" * 40], "-tp: expected a positive integer", id="tp-huge"
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--tensor-parallel-size"], "--tensor-parallel-size: expects a value",
        id="tp-missing-value",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", "--tensor-parallel-size", "2"],
        "--speculative-config: expects a value",
        id="config-missing-value",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config.model"], "--speculative-config.model: expects a value",
        id="dotted-missing-value",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", '{"num_speculative_tokens": "15"}'],
        "--speculative-config: num_speculative_tokens must be a positive integer, got the string '15'",
        id="tokens-string",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", '{"num_speculative_tokens": true}'],
        "num_speculative_tokens must be a positive integer, got true",
        id="tokens-bool",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config.num_speculative_tokens", "fifteen"],
        "--speculative-config: num_speculative_tokens must be a positive integer, got the string 'fifteen'",
        id="dotted-tokens-not-int",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", '{"model": 5}'],
        "--speculative-config: model must be a string",
        id="model-not-string",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", SPEC_8B,
         "--speculative-config.num_speculative_tokens", "7"],
        "given both as JSON and as dotted",
        id="json-and-dotted",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "-sc.model", "z-lab/x", "--speculative-config.num_speculative_tokens", "7"],
        "use one spelling",
        id="dotted-two-spellings",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", SPEC_8B, "--spec-model", "z-lab/other"],
        "--spec-model and --speculative-config['model'] are both given",
        id="spec-alias-conflict",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--spec-tokens", "x"], "--spec-tokens: expected a positive integer",
        id="spec-tokens-not-int",
    ),
    pytest.param(
        ["vllm", "serve", "--brand-new-option", "Qwen/Qwen3-8B"],
        "--brand-new-option: cannot tell whether 'Qwen/Qwen3-8B' is its value or the model",
        id="vllm-ambiguous-unknown-option",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "Qwen/Qwen3-4B"], "unexpected argument 'Qwen/Qwen3-4B'",
        id="vllm-two-positionals",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-4B", "--model", "Qwen/Qwen3-8B"],
        "unexpected argument 'Qwen/Qwen3-4B': the model is already given with --model",
        id="vllm-positional-and-model",
    ),
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--config", "serve.yaml"], "--config: options in 'serve.yaml'",
        id="vllm-yaml-config",
    ),
    pytest.param(
        ["python", "-m", "vllm.entrypoints.openai.api_server", "--port", "8000"], "--model: required",
        id="api-server-no-model",
    ),
    pytest.param(
        ["python", "-m", "vllm.entrypoints.openai.api_server", "Qwen/Qwen3-8B"], "ignores a positional model",
        id="api-server-positional",
    ),
    pytest.param(
        ["python", "-m", "sglang.launch_server", "--tp", "2"], "--model-path: required", id="sglang-no-model"
    ),
    pytest.param(
        ["python", "-m", "sglang.launch_server", "Qwen/Qwen3-8B"], "unexpected argument 'Qwen/Qwen3-8B'",
        id="sglang-launch-server-positional",
    ),
    pytest.param(
        ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--speculative-num-draft-tokens",
         "sixteen"],
        "--speculative-num-draft-tokens: expected a positive integer, got 'sixteen'",
        id="sglang-draft-tokens-not-int",
    ),
    pytest.param(
        ["sglang", "serve", "Qwen/Qwen3-8B", "--tp", "two"], "--tp: expected a positive integer", id="sglang-tp-not-int"
    ),
    pytest.param(
        ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--trust-remote-code", "stray"],
        "unexpected argument 'stray'",
        id="sglang-stray-after-flag",
    ),
    pytest.param(
        ["sglang", "serve", "--config", "c.yaml", "--model-path", "Qwen/Qwen3-8B"], "--config",
        id="sglang-yaml-config",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "message"), BAD)
def test_launch_errors(argv: list[str], message: str) -> None:
    with pytest.raises(LaunchError) as info:
        parse_launch(argv)
    text = str(info.value)
    assert message in text
    assert "\n" not in text and len(text) < 400


def _with_length(text: str) -> list[str]:
    return ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", SPEC_8B, "--max-model-len", text]


# vllm/utils/argparse_utils.py:human_readable_int (decimal suffixes through float, binary ones and plain numbers
# through int): what vLLM reads, and the lengths it cannot read, which it refuses (an OverflowError or
# argparse's error, whichever it meets first).
@pytest.mark.parametrize(
    ("text", "length"),
    [
        ("32768", 32768), ("32k", 32000), ("32K", 32768), ("25.6k", 25600), ("1m", 1_000_000), ("2G", 2 << 30),
        (" 4096 ", 4096), ("-1", None), ("auto", None), ("AUTO", None),
        ("1." + "1" * 5000 + "k", 1111),  # float() reads any number of decimals
        ("1" * 400, int("1" * 400)),  # read (vLLM then refuses it: longer than the model's derived length)
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 12 else None,
)  # fmt: skip
def test_max_model_len_is_read_as_vllm_reads_it(text: str, length: int | None) -> None:
    assert parse_launch(_with_length(text)).max_model_len == length


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("1" * 400 + "k", id="k-past-float"),
        pytest.param("9" * 309 + "k", id="k-past-float-by-one-digit"),
        pytest.param("1" * 300 + "t", id="t-past-float-after-scaling"),
        pytest.param("1" * 5000, id="digits-past-int-limit"),
        pytest.param("1" * 5000 + "K", id="K-digits-past-int-limit"),
        pytest.param("1" * 4299 + "T", id="T-scaled-past-int-limit"),
    ],
)
def test_a_length_too_large_for_vllm_is_a_one_line_launch_error(text: str) -> None:
    with pytest.raises(LaunchError) as info:
        parse_launch(_with_length(text))
    message = str(info.value)
    assert message.startswith("--max-model-len: ") and "too large" in message, message
    assert "\n" not in message and len(message) < 300


def test_multiline_json_is_read_and_errors_stay_on_one_line() -> None:
    pretty = '{\n  "method": "dflash",\n  "model": "z-lab/Qwen3-8B-DFlash-b16",\n  "num_speculative_tokens": 15\n}'
    assert parse_launch(["vllm", "serve", "Qwen/Qwen3-8B", "-sc", pretty]).drafter == "z-lab/Qwen3-8B-DFlash-b16"
    with pytest.raises(LaunchError) as info:
        parse_launch(["vllm\nserve", "x"])
    assert "\n" not in str(info.value)


def test_launch_is_frozen() -> None:
    launch = parse_launch(["vllm", "serve", "Qwen/Qwen3-8B"])
    with pytest.raises(AttributeError):
        launch.target = "other"  # type: ignore[misc]


_TOKENS = st.one_of(
    st.sampled_from(["vllm", "serve", "sglang", "python", "-m", "sglang.launch_server",
                     "vllm.entrypoints.openai.api_server", "--model", "--model-path", "-tp", "--tp", "-sc",
                     "--speculative-config", "--speculative-config.model", "-sc.num_speculative_tokens", "--",
                     "-O", "-O3", "env", "A=1", "--spec-tokens", "--served-model-name", "{", "[]", "15", "-1",
                     "--speculative-num-draft-tokens", "--config", "--unknown", "Qwen/Qwen3-8B", ISSUE]),
    st.text(max_size=12),
)  # fmt: skip


@examples(400)
@given(argv=st.lists(_TOKENS, max_size=12))
def test_any_argv_gives_a_launch_or_a_one_line_error(argv: list[str]) -> None:
    try:
        launch = parse_launch(argv)
    except LaunchError as error:
        assert "\n" not in str(error)
    else:
        assert launch.target and launch.tensor_parallel_size >= 1
        assert launch.argv == tuple(argv)


def test_sglang_model_overrides_are_read_as_sglang_reads_them() -> None:
    base = ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", *SGLANG_8B]
    given = '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0}, "block_size": 8}'
    launch = parse_launch([*base, "--json-model-override-args", given])
    assert launch.model_overrides == (("rope_scaling", '{"factor": 4.0, "rope_type": "yarn"}'), ("block_size", "8"))
    assert parse_launch(base).model_overrides == ()


@pytest.mark.parametrize(("given", "said"), [("{rope", "not JSON"), ("[1, 2]", "not a JSON object")])
def test_sglang_model_overrides_sglang_cannot_read_are_a_one_line_launch_error(given: str, said: str) -> None:
    base = ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", *SGLANG_8B]
    with pytest.raises(LaunchError) as info:
        parse_launch([*base, "--json-model-override-args", given])
    message = str(info.value)
    assert message.startswith("--json-model-override-args: ") and said in message and "\n" not in message

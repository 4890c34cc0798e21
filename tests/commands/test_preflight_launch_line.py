"""preflight --launch-file / --launch-env: the launch written once as a shell command line (a Kubernetes ConfigMap
value), read as `sh` splits it: the engine's container runs the same text through the shell."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import FIXTURES, Result, assert_one_line_error, model_volume

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch.shell import words

INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json"
UPSTREAM = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"

Run = Callable[..., Result]


def spec(root: Path) -> str:
    return json.dumps({"method": "dflash", "model": f"{root}/Qwen3.6-27B-DFlash", "num_speculative_tokens": 15})


def launch_line(root: Path) -> str:
    return (
        f"vllm serve {root}/Qwen3.6-27B --served-model-name Qwen/Qwen3.6-27B \\\n"
        f"  --speculative-config '{spec(root)}' \\\n"
        '  --tensor-parallel-size "1"  # one GPU\n'
    )


@pytest.mark.parametrize(
    ("drafter", "code"), [pytest.param(INCIDENT, 1, id="incident"), pytest.param(UPSTREAM, 0, id="repaired")]
)
def test_the_launch_from_a_file_or_a_variable_is_checked_as_after_the_dashes(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, drafter: Path, code: int
) -> None:
    root = model_volume(tmp_path / "models", drafter)
    line = launch_line(root)
    (tmp_path / "launch").write_text(line, encoding="utf-8")
    monkeypatch.setenv("DFLASH_CFG_LAUNCH", line)
    argv = ["vllm", "serve", f"{root}/Qwen3.6-27B", "--served-model-name", "Qwen/Qwen3.6-27B"]
    dashes = dflash("preflight", "--", *argv, "--speculative-config", spec(root), "--tensor-parallel-size", "1")
    from_file = dflash("preflight", "--launch-file", tmp_path / "launch")
    from_env = dflash("preflight", "--launch-env", "DFLASH_CFG_LAUNCH")
    assert dashes.code == from_file.code == from_env.code == code, from_env.err
    assert dashes.out == from_file.out == from_env.out
    assert from_env.out.startswith("preflight vllm: method dflash, num_speculative_tokens 15, tensor-parallel 1")
    summary = "1 file, 0 errors, 0 warnings, 2 infos" if code == 0 else "1 file, 0 errors, 5 warnings, 2 infos"
    assert summary in from_env.out


@pytest.mark.slow  # runs sh
def test_the_words_are_those_sh_passes_to_the_engine(tmp_path: Path) -> None:
    """The engine's container runs `sh -c 'eval "exec $DFLASH_CFG_LAUNCH"'`: the program it starts gets exactly the
    words preflight read, quotes, continued lines and comments included."""
    line = (
        'vllm serve /models/t --speculative-config \'{"method": "dflash", "model": "/m/d"}\' \\\n'
        '  --served-model-name "Qwen/Qwen3.6-27B" --x a\\ b --empty "" \'\' # a comment\n'
        "# and a comment line\n"
    )
    record = tmp_path / "argv.json"
    script = f'import json, sys; json.dump(sys.argv[1:], open("{record}", "w"))'
    engine = ["sh", "-c", 'eval "exec $DFLASH_CFG_LAUNCH"']
    env = {"PATH": "/usr/bin:/bin", "DFLASH_CFG_LAUNCH": f"python3 -c '{script}' " + line}
    subprocess.run(engine, env=env, check=True, timeout=60)
    read = words(line, "test")
    assert json.loads(record.read_text()) == list(read)
    assert read == (
        "vllm",
        "serve",
        "/models/t",
        "--speculative-config",
        '{"method": "dflash", "model": "/m/d"}',
        "--served-model-name",
        "Qwen/Qwen3.6-27B",
        "--x",
        "a b",
        "--empty",
        "",
        "",
    )


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("vllm serve $MODEL", "a `$` expansion", id="variable"),
        pytest.param('vllm serve "${MODEL}"', "a `$` expansion", id="quoted-variable"),
        pytest.param("vllm serve `cat m`", "a backquote command", id="backquote"),
        pytest.param("vllm serve m; rm -rf /", "the shell operator `;`", id="operator"),
        pytest.param("vllm serve m > log", "the shell operator `>`", id="redirection"),
        pytest.param("vllm serve /models/*", "a `*` pattern", id="glob"),
        pytest.param("vllm serve ~/m", "a `~` home directory", id="tilde"),
        pytest.param("vllm serve m\nvllm serve n", "a second command", id="two-commands"),
        pytest.param("vllm serve 'm", "a single quote is not closed", id="open-quote"),
        pytest.param("# only a comment\n", "no launch command in it", id="empty"),
    ],
)
def test_what_the_shell_would_compute_is_refused_in_one_line(
    dflash: Run, monkeypatch: pytest.MonkeyPatch, text: str, fragment: str
) -> None:
    with pytest.raises(LaunchError, match=fragment.replace("$", r"\$").replace("*", r"\*")):
        words(text, "--launch-env L")
    monkeypatch.setenv("L", text)
    assert_one_line_error(dflash("preflight", "--launch-env", "L"), contains=("--launch-env L", fragment))


def test_one_launch_source_and_a_set_variable(dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UNSET_LAUNCH", raising=False)
    assert_one_line_error(dflash("preflight", "--launch-env", "UNSET_LAUNCH"), contains=("is not set",))
    assert_one_line_error(
        dflash("preflight", "--launch-env", "X", "--", "vllm", "serve", "m"), contains=("one launch to check",)
    )
    assert_one_line_error(dflash("preflight"), contains=("no launch to check",))
    assert_one_line_error(
        dflash("preflight", "--launch-file", tmp_path / "missing"), contains=("--launch-file", "missing")
    )
    (tmp_path / "binary").write_bytes(b"\xff\xfe vllm")
    assert_one_line_error(dflash("preflight", "--launch-file", tmp_path / "binary"), contains=("not UTF-8",))

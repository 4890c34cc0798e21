"""A reader that leaves the pipe early (`| head`, `| true`) drops the rest of the output, never the verdict: a
`set -o pipefail` CI step must not fail on a clean file, nor pass on a failing one."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import FIXTURES

CLEAN = FIXTURES / "upstream" / "z-lab__Qwen3.5-4B-DFlash" / "config.json"
INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"


def _exit_with_the_reader_gone(*args: str) -> tuple[int, str]:
    """The command's exit code when its stdout's reader closed the pipe before it wrote anything."""
    child = subprocess.Popen(
        [sys.executable, "-m", "dflash_cfg", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    child.stdout.close()
    _, err = child.communicate(timeout=300)
    return child.returncode, err


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "verdict"),
    [
        (("check", str(CLEAN)), 0),
        (("check", str(CLEAN), "--format", "json"), 0),
        (("check", str(FIXTURES / "upstream"), "--format", "sarif"), 0),
        (("check", str(INCIDENT), "--gate"), 1),
        (
            (
                "preflight",
                "--no-engine-check",
                "vllm",
                "serve",
                str(TARGET),
                "--speculative-config",
                '{"method": "dflash", "model": "' + str(INCIDENT) + '", "num_speculative_tokens": 15}',
            ),
            1,
        ),
    ],
)
def test_a_closed_pipe_keeps_the_verdict(args: tuple[str, ...], verdict: int) -> None:
    code, err = _exit_with_the_reader_gone(*args)
    assert code == verdict, err
    assert "Traceback" not in err and "BrokenPipe" not in err

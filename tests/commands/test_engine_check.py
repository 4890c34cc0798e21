"""Which interpreter preflight's engine step runs a launch's engine in: the launch's own, found on disk as the
launch would find it (real files: scripts with shebangs, venv layouts). No engine is run here."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dflash_cfg.commands.engine_check import interpreter
from dflash_cfg.launch import parse_launch
from dflash_cfg.sources.interpreters import NotRun, shebang_python

SPEC = json.dumps({"method": "dflash", "model": "/m/drafter", "num_speculative_tokens": 15})


def script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def vllm_serve(*head: str) -> list[str]:
    return [*head, "vllm", "serve", "/m/target", "--speculative-config", SPEC]


def sglang(python: str, *head: str) -> list[str]:
    return [*head, python, "-m", "sglang.launch_server", "--model-path", "/m/target", "--speculative-algorithm",
            "DFLASH", "--speculative-draft-model-path", "/m/drafter"]  # fmt: skip


def test_python_m_sglang_runs_in_that_python(tmp_path: Path) -> None:
    python = script(tmp_path / "venv" / "bin" / "python3.11", "#!/bin/sh\n")
    assert interpreter(parse_launch(sglang(str(python)))) == str(python)


def test_vllm_serve_runs_in_its_shebangs_python_on_the_launchs_path(tmp_path: Path) -> None:
    bin_dir = tmp_path / "venv" / "bin"
    script(bin_dir / "vllm", f"#!{bin_dir}/python\nfrom vllm.entrypoints.cli.main import main\n")
    assert interpreter(parse_launch(vllm_serve(f"PATH={bin_dir}"))) == f"{bin_dir}/python"
    assert interpreter(parse_launch(vllm_serve("env", f"PATH={bin_dir}", "nohup"))) == f"{bin_dir}/python"


def test_pips_long_path_shebang_form(tmp_path: Path) -> None:
    long = tmp_path / ("deep " * 3).strip() / "bin" / "python"
    vllm = script(tmp_path / "vllm", f"#!/bin/sh\n'''exec' \"{long}\" \"$0\" \"$@\"\n' '''\nimport sys\n")
    assert shebang_python(str(vllm)) == str(long)
    env = script(tmp_path / "sglang", "#!/usr/bin/env sh\n")
    assert shebang_python(str(env)) is not None and os.path.basename(str(shebang_python(str(env)))) == "sh"


def test_uv_run_runs_in_the_projects_environment(tmp_path: Path) -> None:
    project = tmp_path / "serving"
    (project / "pyproject.toml").parent.mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'serving'\n", encoding="utf-8")
    python = script(project / ".venv" / "bin" / "python", "#!/bin/sh\n")
    launch = parse_launch(vllm_serve("uv", "run", "--project", str(project)))
    assert interpreter(launch) == str(python)
    module = parse_launch(["uv", "run", "--directory", str(project), "-m", *sglang("x")[2:]])
    assert interpreter(module) == str(python)
    missing = interpreter(parse_launch(vllm_serve("uv", "run", "--project", str(tmp_path / "nowhere"))))
    assert isinstance(missing, NotRun) and "pyproject.toml" in missing.reason


def test_docker_run_says_the_engine_is_in_the_image() -> None:
    launch = parse_launch(["docker", "run", "-v", "/m:/m", "lmsysorg/sglang:v0.5.23", *sglang("python3")])
    found = interpreter(launch)
    assert isinstance(found, NotRun) and "inside the image lmsysorg/sglang:v0.5.23" in found.reason


def test_a_program_not_on_path_is_not_run(tmp_path: Path) -> None:
    found = interpreter(parse_launch(vllm_serve(f"PATH={tmp_path}")))
    assert isinstance(found, NotRun) and "'vllm' is not found" in found.reason

"""action.yml, the composite GitHub Action, run from the file: each `run:` step in bash as the runner runs it
(`bash --noprofile --norc -eo pipefail`), its `env:` with the inputs filled in and its `if:` judged; the one `uses:`
step (GitHub's SARIF upload) is not run here, the file it would upload is checked instead.

The runner's Python is a venv of its own that sees the test venv's packages (dflash-cfg's dependencies, as
tests/installed.py arranges it), so the action's install step builds and installs dflash-cfg from its own source
(GITHUB_ACTION_PATH: a copy of the tree, as the runner checks the action out) with nothing else to fetch."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import FIXTURES, ROOT
from installed import NOT_SOURCE

ACTION = ROOT / "action.yml"
INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json"
REPAIRED = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def action() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    return data


def evaluate(expression: str, inputs: dict[str, str]) -> str:
    """The expressions the action uses: `inputs.NAME`; any other is refused, so the test cannot pass one unrun."""
    found = re.fullmatch(r"inputs\.([a-z-]+)", expression)
    assert found is not None and found[1] in inputs, f"an expression this test does not know: {expression}"
    return inputs[found[1]]


def condition(expression: str, inputs: dict[str, str]) -> bool:
    found = re.fullmatch(r"inputs\.([a-z-]+) != ''", expression)
    assert found is not None, f"a condition this test does not know: {expression}"
    return inputs[found[1]] != ""


@dataclass
class Runner:
    """The job's environment: the runner's Python (on PATH), its workspace and the action's checkout."""

    workspace: Path
    env: dict[str, str]

    def step(self, step: dict[str, Any], inputs: dict[str, str]) -> subprocess.CompletedProcess[str] | None:
        """Run one step as the runner would; None when its `if:` says it does not run."""
        if "if" in step and not condition(step["if"], inputs):
            return None
        assert step["shell"] == "bash"
        env = dict(self.env)
        for name, value in step.get("env", {}).items():
            env[name] = EXPRESSION.sub(lambda m: evaluate(m[1], inputs), str(value))
        script = self.workspace.parent / "step.sh"
        script.write_text(step["run"], encoding="utf-8")
        return subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            capture_output=True,
            text=True,
            env=env,
            cwd=self.workspace,
            timeout=600,
            stdin=subprocess.DEVNULL,
        )


def the_inputs(**given: str) -> dict[str, str]:
    """The action's inputs: its defaults, then `given` (fail_on for fail-on)."""
    inputs = {name: str(spec.get("default", "")) for name, spec in action()["inputs"].items()}
    inputs.update({k.replace("_", "-"): v for k, v in given.items()})
    return inputs


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runner]:
    """A runner after the action's install step, run once from the file."""
    root = tmp_path_factory.mktemp("runner")
    checkout = root / "action"
    shutil.copytree(ROOT, checkout, ignore=NOT_SOURCE, symlinks=True)
    python = root / "python"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(python)], check=True)
    purelib = subprocess.run(
        [python / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # After the venv's own site-packages (where the action installs dflash-cfg), the test venv's: pip and
    # dflash-cfg's dependencies, never its editable dflash-cfg (pip does not touch what is outside its venv).
    Path(purelib, "zz-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    workspace = root / "workspace"
    for name, source in (("incident", INCIDENT), ("repaired", REPAIRED)):
        (workspace / "models" / name).mkdir(parents=True)
        shutil.copyfile(source, workspace / "models" / name / "config.json")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONPYCACHEPREFIX")}
    env.update(
        PATH=os.pathsep.join((str(python / "bin"), "/usr/bin", "/bin")),
        GITHUB_ACTION_PATH=str(checkout),
        GITHUB_WORKSPACE=str(workspace),
        RUNNER_TEMP=str(root / "temp"),
        GITHUB_ACTIONS="true",
        NO_COLOR="1",
    )
    ran = Runner(workspace, env)
    (install,) = [s for s in action()["runs"]["steps"] if s.get("name") == "Install dflash-cfg"]
    done = ran.step(install, the_inputs())
    assert done is not None and done.returncode == 0, done.stdout + done.stderr if done else ""
    assert done.stdout.strip() == "dflash-cfg, version 0.1.0"
    assert Path(shutil.which("dflash-cfg", path=env["PATH"]) or "").parent == python / "bin"
    yield ran


def test_the_action_is_composite_and_pastes_no_input_into_a_script() -> None:
    data = action()
    assert data["runs"]["using"] == "composite"
    assert set(data["inputs"]) == {"paths", "target", "engines", "fail-on", "sarif", "version"}
    for step in data["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["name"]  # inputs arrive through env: only
    (upload,) = [s for s in data["runs"]["steps"] if "uses" in s]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@") and upload["if"] == "inputs.sarif != ''"


def run_action(runner: Runner, inputs: dict[str, str]) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every step after the install, in order, stopping at the first that fails (as a job does)."""
    done: dict[str, subprocess.CompletedProcess[str]] = {}
    for step in action()["runs"]["steps"]:
        if step["name"] == "Install dflash-cfg" or "uses" in step:
            continue
        result = runner.step(step, inputs)
        if result is None:
            continue
        done[step["name"]] = result
        if result.returncode != 0:
            break
    return done


def annotated(text: str) -> list[str]:
    return re.findall(r"^::(?:error|warning) file=[^\n]*", text, re.MULTILINE)


@pytest.mark.slow  # builds and installs the wheel, runs bash
def test_the_action_annotates_the_incident_and_fails_it(runner: Runner) -> None:
    done = run_action(runner, the_inputs(paths="models/incident"))
    check = done["Check"]
    assert check.returncode == 1, check.stdout + check.stderr
    found = annotated(check.stdout)
    assert any(
        "file=models/incident/config.json,line=29" in a and "title=DF205 window-without-sliding" in a for a in found
    )
    assert any("title=DF604 published-values-differ" in a for a in found)
    assert "failed on warnings only" in check.stderr
    # fail-on error: the same annotations, and nothing fails (the incident's findings are warnings, SGLang's too)
    relaxed = run_action(runner, the_inputs(paths="models/incident", fail_on="error"))["Check"]
    assert relaxed.returncode == 0 and annotated(relaxed.stdout) == found, relaxed.stderr


@pytest.mark.slow  # builds and installs the wheel, runs bash
def test_the_action_passes_the_repaired_file(runner: Runner) -> None:
    done = run_action(runner, the_inputs(paths="models/repaired\n", engines="vllm,sglang"))
    check = done["Check"]
    assert check.returncode == 0, check.stdout + check.stderr
    assert annotated(check.stdout) == [] and "title=DF605 published-identical" in check.stdout


@pytest.mark.slow  # builds and installs the wheel, runs bash
def test_the_action_writes_the_sarif_it_uploads(runner: Runner) -> None:
    """Both drafters: the SARIF step writes the report (whatever the findings), then the check fails the job."""
    done = run_action(runner, the_inputs(paths="models/incident models/repaired", sarif="dflash-cfg.sarif"))
    assert done["SARIF report"].returncode == 0, done["SARIF report"].stderr
    assert done["Check"].returncode == 1
    report = json.loads((runner.workspace / "dflash-cfg.sarif").read_text(encoding="utf-8"))
    assert report["version"] == "2.1.0"
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in report["runs"][0]["results"]}
    assert "models/incident/config.json" in uris
    assert "DF205" in {r["ruleId"] for r in report["runs"][0]["results"]}

"""tools/new_rule.py (`./dev new-rule`): what it refuses, what it writes, and a rule added with it in a copy of
the repository, its body and cases filled in as a contributor would, passing the rule cases, the registry's
checks and the docs test there."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

from dflash_cfg.lint.rules import REGISTRY
from tools import new_rule


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["DF101", "x", "--family", "taps"], "DF101 exists already"),
        (["DF8", "x", "--family", "taps"], "'DF8' is not a rule id"),
        (["DF899", "Bad_Name", "--family", "taps"], "is not a kebab-case rule name"),
        (["DF899", "taps-invalid", "--family", "taps"], "the name taps-invalid is DF103's"),
        (["DF899", "x", "--family", "base"], "no family 'base'"),
        (["DF899", "x", "--family", "taps", "--engine", "vllm>=main"], "--engine: not a release"),
        (["DF899", "x", "--family", "taps", "--engine", "vllm"], "say the change's release"),
        (["DF899", "x", "--family", "taps", "--reads", "vllm.NOPE"], "'vllm.NOPE' is no row"),
    ],
)
def test_what_the_scaffold_refuses_is_one_line_and_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {p: p.read_bytes() for p in (ROOT / "dflash_cfg" / "lint").rglob("*.py")}
    assert new_rule.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("new-rule: ") and says in err, err
    assert {p: p.read_bytes() for p in (ROOT / "dflash_cfg" / "lint").rglob("*.py")} == before


def test_a_release_rule_gets_its_change_its_launch_row_and_scoped_cases() -> None:
    s = new_rule.spec("DF899", "launch-probe", "launch_vllm", "vllm>=0.35.0", "vllm.METHOD")
    assert (s.bound, s.change) == ("VLLM_0_35", "LAUNCH_PROBE")
    module = new_rule.with_rule((ROOT / "dflash_cfg/lint/rules/launch_vllm.py").read_text(), s)
    ast.parse(module)
    assert "since=LAUNCH_PROBE," in module and 'preflight="DF899"' in module and ", launch_probe)" in module
    releases = (ROOT / "dflash_cfg/lint/releases.py").read_text()
    changed = new_rule.with_change(releases, s)
    assert changed.count('VLLM_0_35 = Since("vllm", "0.35.0")') == 1 and "LAUNCH_PROBE = Change(" in changed
    existing = new_rule.spec("DF899", "launch-probe", "launch_vllm", "vllm<0.34.0", "")
    assert "VLLM_0_34 = Since" not in new_rule.with_change(releases, existing).split("CANDIDATE_VOCABULARY")[-1]
    assert 'release: "0.35.0"' in new_rule.cases(s) and "engines: [vllm>=0.35.0]" in new_rule.cases(s)
    assert any("reads=" in step for step in new_rule.left(existing))


def _copy(dest: Path) -> None:
    """The repository's files as a fresh clone plus this work tree's changes would have them (no .venv, no .git)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / os.fsdecode(name)
        if source.is_file():
            (dest / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / os.fsdecode(name))


@pytest.mark.slow
def test_a_rule_added_with_the_scaffold_passes_once_its_body_and_cases_are_written(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _copy(repo)
    rule_id = next(f"DF{n}" for n in range(119, 109, -1) if f"DF{n}" not in REGISTRY)
    env = {**os.environ, "PYTHONPATH": str(repo)}
    env.pop("CI", None)

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=900)

    made = run(
        sys.executable, "tools/new_rule.py", rule_id, "mask-probe", "--family", "mask", "--reads", "vllm.MASK_TOKEN_ID"
    )
    assert made.returncode == 0, made.stderr
    assert "left by hand:" in made.stdout and f"cases/{rule_id}.yaml" in made.stdout
    # Before the contributor's part, the registry's test names what is left.
    left = run(
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        "tests/lint/rules/test_registry.py",
        "-k",
        "scaffold",
    )
    assert left.returncode == 1 and f"{rule_id} still has the scaffold's TODOs" in left.stdout, left.stdout[-2000:]

    module = repo / "dflash_cfg/lint/rules/mask.py"
    text = module.read_text()
    text = text.replace('"""TODO: what the rule reports, in one line.', '"""The mask token id is the probe value.')
    text = text.replace(
        "    TODO: why it matters, and what the engines do (the read rows are added from the declaration).",
        "    A rule added by the scaffold's test.",
    )
    text = text.replace(
        "    Fail: ``TODO``\n    Pass: ``TODO``", '    Fail: ``"mask_token_id": 424242``\n    Pass: any other'
    )
    text = text.replace(
        "    return\n    yield\n",
        '    if ctx.data.get("mask_token_id") == 424242:\n'
        '        yield Problem(pointer="/mask_token_id", message="mask_token_id is the probe value")\n',
    )
    module.write_text(text)
    case = repo / f"tests/lint/rules/cases/{rule_id}.yaml"
    case.write_text(
        case.read_text()
        .replace("  set: {}\n", "  set: {/mask_token_id: 424242}\n")
        .replace(f"{rule_id} error /TODO", f"{rule_id} error /mask_token_id")
    )
    assert run(sys.executable, "docs/generate.py").returncode == 0
    quiet = ("-q", "-p", "no:randomly", "-p", "no:cacheprovider")
    cases_run = run(sys.executable, "-m", "pytest", *quiet, "tests/lint/rules/test_rule_cases.py", "-k", rule_id)
    assert cases_run.returncode == 0 and "3 passed" in cases_run.stdout, cases_run.stdout[-3000:]
    held = run(sys.executable, "-m", "pytest", *quiet, "tests/lint/rules/test_registry.py", "tests/test_docs.py")
    assert held.returncode == 0, held.stdout[-3000:]
    assert f"{rule_id}" in (repo / "docs/rules.md").read_text()

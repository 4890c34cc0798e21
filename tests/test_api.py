"""The public Python API: the same values the CLI renders, without a subprocess, and a cheap import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dflash_cfg

ROOT = Path(__file__).resolve().parent.parent
INCIDENT = ROOT / "fixtures" / "incident" / "Qwen3.6-27B-DFlash"
TARGET = ROOT / "fixtures" / "targets" / "Qwen__Qwen3.6-27B"
UPSTREAM = ROOT / "fixtures" / "upstream" / "z-lab__Qwen3.5-4B-DFlash"


@pytest.mark.slow  # the CLI in a child process, to compare with
def test_check_returns_the_report_the_json_output_serialises(tmp_path: Path) -> None:
    report = dflash_cfg.check([INCIDENT], target=TARGET, use_cache=False)
    [file] = report.files
    assert file.kind == "dflash"
    found = {(f.rule, f.severity) for f in file.findings}
    assert ("DF205", dflash_cfg.Severity.WARNING) in found and ("DF406", dflash_cfg.Severity.ERROR) in found
    assert report.worst() is dflash_cfg.Severity.ERROR
    out = subprocess.run(
        [sys.executable, "-m", "dflash_cfg", "check", str(INCIDENT), "--target", str(TARGET), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    shown = json.loads(out.stdout)["files"][0]["findings"]
    assert [f["rule"] for f in shown] == [f.rule for f in file.findings]
    assert [f["pointer"] for f in shown] == [f.pointer for f in file.findings]


def test_select_and_usage_errors_are_typed() -> None:
    report = dflash_cfg.check([INCIDENT], select="DF2")
    assert {f.rule[:3] for f in report.files[0].findings} == {"DF2"}
    with pytest.raises(dflash_cfg.DflashCfgError) as caught:
        dflash_cfg.check([INCIDENT], select="XX9")
    assert caught.value.exit_code == 2 and "unknown rule id XX9" in str(caught.value)


def test_min_severity_as_the_cli_has_it() -> None:
    report = dflash_cfg.check([INCIDENT], min_severity="warning")
    assert {f.severity.label for f in report.files[0].findings} == {"warning"} and report.hidden == 2
    with pytest.raises(dflash_cfg.DflashCfgError) as caught:
        dflash_cfg.check([INCIDENT], min_severity="notice")
    assert caught.value.exit_code == 2 and "min_severity" in str(caught.value)


def test_fix_then_verify(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    text = (UPSTREAM / "config.json").read_text(encoding="utf-8")
    (model / "config.json").write_bytes(b"\xef\xbb\xbf" + text.encode())
    [result] = list(dflash_cfg.fix([model], min_severity="error"))  # the BOM only, no portability mirrors
    assert result.outcome is not None and result.plan.applied == ("strip the UTF-8 byte-order mark",)
    assert (model / "config.json").read_text(encoding="utf-8") == text
    verified = dflash_cfg.verify(model)
    assert verified.ok and verified.sha256 == result.outcome.written.sha256
    assert (model / ".dflash-cfg.lock").is_file()


def test_dry_run_through_confirm_writes_nothing(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    before = b"\xef\xbb\xbf" + (UPSTREAM / "config.json").read_bytes()
    (model / "config.json").write_bytes(before)
    [result] = list(dflash_cfg.fix([model], confirm=lambda plan: False))
    assert result.plan.changed and result.outcome is None
    assert (model / "config.json").read_bytes() == before


@pytest.mark.slow  # a child process: what a cold import loads
def test_a_cold_check_loads_neither_the_writer_nor_deepdiff() -> None:
    code = (
        "import sys, dflash_cfg.cli as c\n"
        f"rc = c.run(c.cli, ['check', {str(INCIDENT)!r}, '--no-cache'])\n"
        "heavy = ('dflash_cfg.write.verified', 'dflash_cfg.write.lock', 'deepdiff', 'dflash_cfg.jsondoc.textpatch',"
        " 'dflash_cfg.commands.pool')\n"
        "bad = [m for m in heavy if m in sys.modules]\n"
        "print(rc, bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("[]"), out


def _importers_of(module: str, importtime: str) -> set[str]:
    """The modules that imported MODULE, from `python -X importtime` output: a module is printed after the
    modules it imports, one indent level shallower than them."""
    rows = [line.split("|")[2] for line in importtime.splitlines() if line.startswith("import time:")][1:]
    depth = [(len(r) - len(r.lstrip()), r.strip()) for r in rows]
    return {
        next((n for d, n in depth[i + 1 :] if d < indent), "<main>")
        for i, (indent, name) in enumerate(depth)
        if name == module
    }


@pytest.mark.slow  # a child process: what a cold import loads
def test_only_transformers_brings_fcntl_into_a_single_file_check(tmp_path: Path) -> None:
    """fcntl belongs to the writers and the tree pool. A single-file check loads it only through transformers
    (its logging imports asyncio, which imports subprocess) on a cold cache, and not at all on a warm one."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    argv = [sys.executable, "-X", "importtime", "-m", "dflash_cfg", "check", str(INCIDENT)]
    cold = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    assert cold.returncode == 0, cold.stderr[-2000:]
    assert not any(p.startswith("dflash_cfg") for p in _importers_of("fcntl", cold.stderr)), cold.stderr[-4000:]
    assert "transformers" in cold.stderr  # the probe sees the cold path's imports
    warm = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    assert warm.returncode == 0
    imported = {line.split("|")[2].strip() for line in warm.stderr.splitlines() if line.startswith("import time:")}
    assert "fcntl" not in imported and "dflash_cfg.commands.pool" not in imported


@pytest.mark.slow  # a child process: what a cold import loads
def test_the_fix_hook_on_an_unchanged_clean_file_answers_from_the_cache(tmp_path: Path) -> None:
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_bytes((UPSTREAM / "config.json").read_bytes())
    hook = "['fix', '--yes', '--no-backup', '--no-lock', '--exit-non-zero-on-fix', '--min-severity', 'warning']"
    code = (
        "import sys, dflash_cfg.cli as c\n"
        f"rc = c.run(c.cli, {hook} + [sys.argv[1]])\n"
        "heavy = ('transformers', 'dflash_cfg.write.verified', 'dflash_cfg.write.lock', 'deepdiff',"
        " 'dflash_cfg.jsondoc.textpatch')\n"
        "print(rc, [m for m in heavy if m in sys.modules])\n"
    )
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    check = [sys.executable, "-m", "dflash_cfg", "check", str(model)]
    subprocess.run(check, capture_output=True, env=env, check=False)  # the check hook fills the cache
    run = [sys.executable, "-c", code, str(model / "config.json")]
    out = subprocess.run(run, capture_output=True, text=True, env=env, check=True).stdout
    assert out.strip().splitlines()[-1] == "0 []", out


def test_diff_takes_hub_options_whole_and_the_old_keywords_say_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(ROOT / "fixtures" / "hf-cache" / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub = dflash_cfg.HubOptions("z-lab/Qwen3.6-27B-DFlash", offline=True)
    whole = dflash_cfg.diff(INCIDENT, hub=hub)
    assert whole.critical
    assert dflash_cfg.diff(INCIDENT, "z-lab/Qwen3.6-27B-DFlash", offline=True) == whole
    with pytest.raises(dflash_cfg.DflashCfgError, match="not both"):
        dflash_cfg.diff(INCIDENT, "other/repo", hub=hub)
    with pytest.raises(dflash_cfg.DflashCfgError, match="revision needs from_hub"):
        dflash_cfg.check([INCIDENT], revision="v1")

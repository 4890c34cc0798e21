"""The summary adds up: what the run gates on, counted by severity; the findings about engines or releases it
does not gate on, counted apart with why (text, JSON, SARIF, GitHub); how many a safe fix repairs; and what
--min-severity left out. All through the CLI, on the incident's stale drafter and its target."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import FIXTURES, Result

Run = Callable[..., Result]

INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"


@pytest.fixture
def drafter(tmp_path: Path) -> Path:
    """The stale drafter, with its target: one error (DF406) and one warning (DF105) for SGLang only."""
    copy = tmp_path / "Qwen3.6-27B-DFlash"
    shutil.copytree(INCIDENT, copy)
    return copy


def test_an_error_for_another_engine_is_counted_apart_with_why(dflash: Run, drafter: Path) -> None:
    result = dflash("check", drafter, "--target", TARGET)
    assert result.code == 0  # the SGLang-only error fails nothing: it is not among the errors
    summary = result.out.splitlines()[-2:]
    assert summary[0].startswith("1 file, 0 errors, 5 warnings, 2 infos, 1 fixable  (transformers "), summary
    assert summary[1] == (
        "not gating: 1 error and 1 warning for SGLang only; nothing says which engines serve the drafters "
        "(--engine, or engines in the project config)"
    )
    served = dflash("check", drafter, "--target", TARGET, "--engine", "vllm")
    assert served.code == 0
    assert served.out.splitlines()[-1] == (
        "not gating: 1 error and 1 warning for SGLang only; the run gates on vLLM (--engine)"
    )
    gated = dflash("check", drafter, "--target", TARGET, "--engine", "sglang")
    assert gated.code == 1 and "not gating" not in gated.out
    assert gated.out.splitlines()[-1].startswith("1 file, 1 error, 6 warnings, 2 infos, 1 fixable  (")


def test_the_project_configs_engines_are_named_as_why(dflash: Run, drafter: Path, tmp_path: Path) -> None:
    (tmp_path / "dflash-cfg.toml").write_text('engines = ["vllm"]\n', encoding="utf-8")
    result = dflash("check", drafter, "--target", TARGET, "--format", "json")
    summary = result.json()["summary"]
    assert summary["not_gating"]["why"].startswith("for SGLang only; the run gates on vLLM (engines in ")
    assert summary["not_gating"]["why"].endswith("dflash-cfg.toml)")


def test_json_and_sarif_count_apart_too(dflash: Run, drafter: Path) -> None:
    doc = dflash("check", drafter, "--target", TARGET, "--format", "json").json()
    assert doc["summary"] == {
        "files": 1,
        "errors": 0,
        "warnings": 5,
        "infos": 2,
        "fixable": 1,
        "hidden": 0,
        "not_gating": {
            "errors": 1,
            "warnings": 1,
            "infos": 0,
            "why": "for SGLang only; nothing says which engines serve the drafters (--engine, or engines in the "
            "project config)",
        },
    }
    found = [x for f in doc["files"] for x in f["findings"]]
    by_severity = {s: sum(x["severity"] == s for x in found) for s in ("error", "warning", "info")}
    apart = doc["summary"]["not_gating"]
    assert by_severity == {
        "error": doc["summary"]["errors"] + apart["errors"],
        "warning": doc["summary"]["warnings"] + apart["warnings"],
        "info": doc["summary"]["infos"] + apart["infos"],
    }  # they add up
    sarif = json.loads(dflash("check", drafter, "--target", TARGET, "--format", "sarif").out)
    (run,) = sarif["runs"]
    assert run["properties"]["summary"] == doc["summary"]
    marked = {r["ruleId"]: r["properties"].get("not_gating") for r in run["results"]}
    assert marked["DF406"] == marked["DF105"] == apart["why"] and marked["DF205"] is None


def test_an_annotation_the_run_does_not_fail_on_says_so_in_its_title(dflash: Run, drafter: Path) -> None:
    out = dflash("check", drafter, "--target", TARGET, "--format", "github").out
    (error,) = [line for line in out.splitlines() if line.startswith("::error ")]
    assert "title=DF406 tap-on-last-target-layer (SGLang only; not gating here)::" in error
    (stale,) = [line for line in out.splitlines() if "DF205" in line]
    assert "title=DF205 window-without-sliding::" in stale  # the gate fails on it: nothing added
    gated = dflash("check", drafter, "--target", TARGET, "--format", "github", "--engine", "sglang").out
    assert "title=DF406 tap-on-last-target-layer::" in gated and "not gating" not in gated


def test_min_severity_leaves_out_the_infos_and_says_how_many(dflash: Run, drafter: Path) -> None:
    result = dflash("check", drafter, "--target", TARGET, "--min-severity", "warning")
    assert result.code == 0
    assert not re.search(r": info DF\d+", result.out)
    assert "1 file, 0 errors, 5 warnings, 0 infos, 2 below --min-severity warning not shown  (" in result.out
    doc = dflash("check", drafter, "--target", TARGET, "--min-severity", "warning", "--format", "json").json()
    assert {x["severity"] for f in doc["files"] for x in f["findings"]} == {"error", "warning"}
    assert doc["summary"]["hidden"] == 2 and doc["summary"]["infos"] == 0 and doc["summary"]["fixable"] == 0
    errors_only = dflash("check", drafter, "--target", TARGET, "--min-severity", "error", "--format", "json").json()
    assert {x["rule"] for f in errors_only["files"] for x in f["findings"]} == {"DF406"}


def test_min_severity_never_hides_what_fails_the_run(dflash: Run, drafter: Path) -> None:
    refused = dflash("check", "--gate", drafter, "--min-severity", "error")
    assert refused.code == 2 and refused.out == ""
    assert refused.err == (
        "dflash-cfg: error: --min-severity error would hide warnings, which fail this run (--fail-on error, or "
        'fail-on = "error" in the project config, accepts them)\n'
    )
    assert dflash("check", "--gate", drafter, "--min-severity", "error", "--fail-on", "error").code == 0
    bad = dflash("check", drafter, "--min-severity", "notice")
    assert bad.code == 2 and "notice" in bad.err


def test_df304_says_nothing_when_the_fallback_is_the_files_theta(dflash: Run, tmp_path: Path) -> None:
    """θ only in rope_parameters is mirrored for loaders that read a flat rope_theta and fall back to 10000;
    a θ of 10000 is that fallback already: no finding, no fix (RedHatAI's published speculators drafter)."""
    data = json.loads((FIXTURES / "upstream" / "z-lab__Qwen3.5-4B-DFlash" / "config.json").read_text())
    (tmp_path / "trained").mkdir()
    (tmp_path / "trained" / "config.json").write_text(json.dumps(data, indent=2) + "\n")
    trained = dflash("check", tmp_path / "trained", "--format", "json").json()
    assert "DF304" in {x["rule"] for f in trained["files"] for x in f["findings"]}
    data["rope_parameters"]["rope_theta"] = 10000
    (tmp_path / "fallback").mkdir()
    (tmp_path / "fallback" / "config.json").write_text(json.dumps(data, indent=2) + "\n")
    fallback = dflash("check", tmp_path / "fallback", "--format", "json").json()
    assert "DF304" not in {x["rule"] for f in fallback["files"] for x in f["findings"]}
    published = dflash("check", FIXTURES / "upstream" / "RedHatAI__DeepSeek-V4-Flash-speculator.dflash")
    assert published.code == 0 and "DF304" not in published.out

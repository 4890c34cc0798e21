"""What a user of `dflash-cfg` sees: exit codes, the JSON/SARIF/text reports, discovery, rule selection.

Everything runs the real CLI (in-process through the `dflash` fixture, or as a real subprocess) on real
files written to tmp_path, starting from a real published drafter config (z-lab/Qwen3.5-4B-DFlash).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.parse
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
from checkpoints import save, small_config, small_shapes
from helpers import FIXTURES, REAL, Result, assert_one_line_error, mutated, set_taps, write_config

import dflash_cfg
from dflash_cfg.lint.rules import ALL, REGISTRY
from dflash_cfg.report.catalogue import markdown, plain

Run = Callable[..., Result]
BIN = Path(sys.executable).parent


TARGET_CONFIG = FIXTURES / "targets" / "Qwen__Qwen3-4B" / "config.json"


# Planted defects on the real config, each with the rule that must report it.
TAP_OUT_OF_RANGE = set_taps([1, 5, 9, 13, 17, 21, 25, 40])  # DF104 error (num_target_layers 32)
TAP_ON_LAST = set_taps([1, 5, 9, 13, 17, 21, 25, 31])  # DF105 warning for SGLang only, no error


def all_full(d: dict[str, Any]) -> None:  # DF205 warning (the stale-file signature), for every engine
    d["layer_types"] = ["full_attention"] * d["num_hidden_layers"]


def drop_use_sliding_window(d: dict[str, Any]) -> None:  # DF204 error, safe fix
    del d["use_sliding_window"]


def two_errors(d: dict[str, Any]) -> None:  # DF104 and DF204
    TAP_OUT_OF_RANGE(d)
    drop_use_sliding_window(d)


def findings(result: Result) -> list[dict[str, Any]]:
    return [x for f in result.json()["files"] for x in f["findings"]]


def rule_ids(result: Result) -> set[str]:
    return {x["rule"] for x in findings(result)}


def assert_no_traceback(result: Result) -> None:
    assert "Traceback" not in result.out + result.err
    assert "internal error" not in result.err


# --- exit codes -----------------------------------------------------------------------------------


def test_clean_real_config_exits_0_with_only_infos(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "Qwen3.5-4B-DFlash")
    result = dflash("check", path, "--format", "json")
    assert result.code == 0, result
    assert_no_traceback(result)
    severities = {x["severity"] for x in findings(result)}
    assert severities <= {"info"}
    assert result.json()["summary"]["errors"] == result.json()["summary"]["warnings"] == 0
    # --strict does not fail infos.
    assert dflash("check", path, "--strict").code == 0


def test_error_finding_is_reported(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m", mutated(TAP_OUT_OF_RANGE))
    result = dflash("check", path, "--format", "json")
    assert_no_traceback(result)
    df104 = [x for x in findings(result) if x["rule"] == "DF104"]
    assert len(df104) == 1 and df104[0]["severity"] == "error"
    assert df104[0]["pointer"] == "/dflash_config/target_layer_ids/7"
    assert result.json()["summary"]["errors"] >= 1


def test_error_finding_exits_1(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m", mutated(TAP_OUT_OF_RANGE))
    assert dflash("check", path).code == 1


def test_warning_only_exits_0(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m", mutated(TAP_ON_LAST))
    result = dflash("check", path, "--format", "json")
    assert {x["severity"] for x in findings(result)} == {"warning", "info"}
    assert "DF105" in rule_ids(result)
    assert result.code == 0


def test_warning_with_strict_exits_1(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m", mutated(all_full))
    assert dflash("check", path, "--strict").code == 1


def test_a_warning_about_one_engine_gates_only_where_it_serves(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m", mutated(TAP_ON_LAST))
    # A drafter of the project's own: the taps it moved are not compared with the published drafter's (DF604).
    (tmp_path / "dflash-cfg.toml").write_text('[[models]]\npath = "m"\nupstream = "none"\n')
    unknown = dflash("check", path, "--strict", "--format", "json")
    (finding,) = [f for f in unknown.json()["files"][0]["findings"] if f["rule"] == "DF105"]
    assert finding["severity"] == "warning" and finding["engines"] == ["sglang"]
    assert unknown.code == 0
    assert unknown.err.startswith("dflash-cfg: 1 warning for SGLang only: not gating")
    assert "[SGLang]" in dflash("check", path).out  # the text says whom it concerns
    sglang = dflash("check", path, "--strict", "--engine", "vllm,sglang")
    assert sglang.code == 1 and "failed on warnings only" in sglang.err and "not gating" not in sglang.err
    vllm = dflash("check", path, "--strict", "--engine", "vllm")
    assert (vllm.code, vllm.err) == (0, "")
    bad = dflash("check", path, "--engine", "trt")
    assert bad.code == 2 and "'trt' is not an engine dflash-cfg knows" in bad.err


def test_the_projects_engines_decide_what_gates(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m", mutated(TAP_ON_LAST))
    own = '[[models]]\npath = "m"\nupstream = "none"\n'  # not compared with the published drafter (DF604)
    (tmp_path / "dflash-cfg.toml").write_text('engines = ["sglang"]\n' + own)
    assert dflash("check", path, "--strict").code == 1
    assert dflash("check", path, "--strict", "--engine", "vllm").code == 0  # the command line wins
    (tmp_path / "dflash-cfg.toml").write_text('engines = ["vllm"]\n' + own)
    assert dflash("check", path, "--strict").code == 0
    (tmp_path / "dflash-cfg.toml").write_text('engines = "vllm"\n')
    wrong = dflash("check", path)
    assert wrong.code == 2 and "engines" in wrong.err and "must be a list" in wrong.err


@pytest.mark.slow
def test_error_finding_exits_1_as_a_real_process(tmp_path: Path) -> None:
    path = write_config(tmp_path / "m", mutated(TAP_OUT_OF_RANGE))
    proc = subprocess.run(
        [str(BIN / "dflash-cfg"), "check", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1, proc.stdout + proc.stderr


@pytest.mark.slow
def test_target_error_exits_1_as_a_real_process(tmp_path: Path) -> None:
    # Regression: cli.run once dropped main(standalone_mode=False)'s return value, so `check` exited 0 with
    # errors (click >= 8.2 returns ctx.exit()'s code instead of raising Exit). A DF401 against a wider target.
    drafter = write_config(
        tmp_path / "drafter", raw=(FIXTURES / "upstream" / "z-lab__Qwen3-4B-DFlash-b16" / "config.json").read_bytes()
    )
    target = FIXTURES / "targets" / "Qwen__Qwen3-8B"
    proc = subprocess.run(
        [sys.executable, "-m", "dflash_cfg", "check", str(drafter), "--target", str(target), "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert json.loads(proc.stdout)["summary"]["errors"] >= 1
    assert proc.returncode == 1


def test_missing_path_exits_2_with_one_line(dflash: Run, tmp_path: Path) -> None:
    line = assert_one_line_error(dflash("check", tmp_path / "nope"))
    assert str(tmp_path / "nope") in line


def test_missing_path_among_good_ones_exits_2(dflash: Run, tmp_path: Path) -> None:
    good = write_config(tmp_path / "m")
    assert_one_line_error(dflash("check", good, tmp_path / "nope", "--format", "json"))


def test_unknown_select_id_exits_2(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m")
    assert "DF999" in assert_one_line_error(dflash("check", path, "--select", "DF999"))
    assert "XX1" in assert_one_line_error(dflash("check", path, "--ignore", "DF1,XX1"))


def test_bad_format_choice_exits_2(dflash: Run, tmp_path: Path) -> None:
    result = dflash("check", write_config(tmp_path / "m"), "--format", "yaml")
    assert result.code == 2
    assert_no_traceback(result)
    assert "yaml" in result.err and result.out == ""


def test_target_pointing_at_nothing_exits_2(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m")
    line = assert_one_line_error(dflash("check", path, "--target", tmp_path / "no-target"))
    assert "--target" in line


def test_explicit_dangling_symlink_exits_2(dflash: Run, tmp_path: Path) -> None:
    link = tmp_path / "config.json"
    link.symlink_to(tmp_path / "gone.json")
    assert "symlink" in assert_one_line_error(dflash("check", link))


def test_unreadable_file_reports_the_cause(dflash: Run) -> None:
    # Root can read any chmod-000 file; /proc/self/mem opens but fails every read at offset 0 (EIO).
    if not Path("/proc/self/mem").exists():
        pytest.skip("needs Linux /proc")
    result = dflash("check", "/proc/self/mem", "--format", "json")
    assert_no_traceback(result)
    assert result.err.startswith("dflash-cfg: error: cannot read /proc/self/mem")
    assert result.json()["errors"] and result.json()["files"] == []


def test_unreadable_file_exits_2(dflash: Run) -> None:
    if not Path("/proc/self/mem").exists():
        pytest.skip("needs Linux /proc")
    assert dflash("check", "/proc/self/mem").code == 2


def test_no_paths_is_a_usage_error(dflash: Run) -> None:
    result = dflash("check")
    assert result.code == 2
    assert_no_traceback(result)


# --- --format json --------------------------------------------------------------------------------

FILE_KEYS = {"path", "sha256", "git_blob_sha1", "kind", "upstream", "identity", "findings"}
FINDING_KEYS = {"rule", "name", "severity", "pointer", "line", "column", "message", "fix"}


def git_hash_object(path: Path) -> str:
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    return subprocess.run(
        ["git", "hash-object", "--no-filters", str(path)], capture_output=True, text=True, check=True, cwd=path.parent
    ).stdout.strip()


def is_pointer(ptr: str) -> bool:
    return ptr == "" or (ptr.startswith("/") and not re.search(r"~[^01]|~$", ptr))


def apply_patch(doc: Any, ops: list[dict[str, Any]]) -> Any:
    """RFC 6902 by an independent implementation (the jsonpatch library): the oracle for our patches."""
    return jsonpatch.apply_patch(doc, ops)


@pytest.fixture
def json_tree(tmp_path: Path) -> Path:
    """A clean drafter, a drafter with an error and a safe-fixable error, and a target config."""
    write_config(tmp_path / "clean")
    write_config(tmp_path / "broken", mutated(two_errors))
    write_config(tmp_path / "target", raw=TARGET_CONFIG.read_bytes())
    return tmp_path


def test_json_matches_the_design_contract(dflash: Run, json_tree: Path) -> None:
    result = dflash("check", json_tree, "--format", "json")
    assert_no_traceback(result)
    doc = result.json()
    assert set(doc) == {"version", "tool", "transformers_version", "files", "summary"}
    assert doc["version"] == 1
    assert doc["tool"]["name"] == "dflash-cfg"
    assert doc["tool"]["version"] == dflash_cfg.__version__
    assert doc["transformers_version"] == metadata.version("transformers")

    kinds = {Path(f["path"]).parent.name: f["kind"] for f in doc["files"]}
    assert kinds == {"clean": "dflash", "broken": "dflash", "target": "skipped"}
    for f in doc["files"]:
        # A skipped file may say why ("note"); nothing else beyond the contract.
        assert set(f) - {"note"} == FILE_KEYS, f.keys()
        assert f["upstream"] is None
        raw = Path(f["path"]).read_bytes()
        assert f["sha256"] == hashlib.sha256(raw).hexdigest()
        assert f["git_blob_sha1"] == git_hash_object(Path(f["path"]))
        data = json.loads(raw)
        if f["kind"] == "skipped":
            assert f["findings"] == []
        for x in f["findings"]:
            assert set(x) == FINDING_KEYS
            assert re.fullmatch(r"DF\d{3}", x["rule"]) and x["rule"] in REGISTRY
            assert x["name"] == REGISTRY[x["rule"]].name
            assert x["severity"] in ("error", "warning", "info")
            assert isinstance(x["message"], str) and x["message"]
            assert is_pointer(x["pointer"]), x["pointer"]
            assert isinstance(x["line"], int) and x["line"] >= 1
            assert isinstance(x["column"], int) and x["column"] >= 1
            if x["fix"] is not None:
                assert set(x["fix"]) == {"summary", "safe", "patch"}
                assert isinstance(x["fix"]["summary"], str) and isinstance(x["fix"]["safe"], bool)
                for op in x["fix"]["patch"]:
                    assert op["op"] in ("add", "remove", "replace", "move", "copy", "test")
                    assert is_pointer(op["path"])
                    assert ("value" in op) == (op["op"] in ("add", "replace", "test"))
                apply_patch(data, x["fix"]["patch"])  # every patch applies to the file it is about

    counts = {"errors": 0, "warnings": 0, "infos": 0}
    apart = {**counts}
    fixable = 0
    for x in (x for f in doc["files"] for x in f["findings"]):
        (apart if x.get("engines") else counts)[x["severity"] + "s"] += 1  # no engine is said to serve them
        fixable += x["fix"] is not None and x["fix"]["safe"]
    assert {k: v for k, v in doc["summary"].items() if k != "not_gating"} == {
        "files": 3,
        **counts,
        "fixable": fixable,
        "hidden": 0,
    }
    assert {k: v for k, v in doc["summary"]["not_gating"].items() if k != "why"} == apart
    assert counts["errors"] >= 2  # DF104 and DF204 in "broken"


def test_json_positions_point_at_the_value(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m", mutated(TAP_OUT_OF_RANGE))
    x = next(x for x in findings(dflash("check", path, "--format", "json")) if x["rule"] == "DF104")
    line = path.read_text(encoding="utf-8").splitlines()[x["line"] - 1]
    assert line[x["column"] - 1 :].startswith("40"), (line, x)


def test_json_safe_fix_repairs_the_finding(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m", mutated(drop_use_sliding_window))
    result = dflash("check", path, "--format", "json")
    df204 = next(x for x in findings(result) if x["rule"] == "DF204")
    assert df204["pointer"] == "/use_sliding_window" and df204["severity"] == "error"
    assert df204["fix"]["safe"] is True
    repaired = apply_patch(json.loads(path.read_bytes()), df204["fix"]["patch"])
    assert repaired["use_sliding_window"] is True
    write_config(path.parent, repaired)
    assert "DF204" not in rule_ids(dflash("check", path, "--format", "json"))


# --- --format sarif -------------------------------------------------------------------------------


def test_sarif_is_well_formed(dflash: Run, json_tree: Path) -> None:
    result = dflash("check", json_tree, "--format", "sarif")
    assert_no_traceback(result)
    log = json.loads(result.out)
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "dflash-cfg"
    rule_ids_declared = [r["id"] for r in driver["rules"]]
    assert len(set(rule_ids_declared)) == len(rule_ids_declared)
    json_findings = findings(dflash("check", json_tree, "--format", "json"))
    assert len(run["results"]) == len(json_findings)
    for res in run["results"]:
        assert res["ruleId"] in rule_ids_declared
        if "ruleIndex" in res:
            assert rule_ids_declared[res["ruleIndex"]] == res["ruleId"]
        assert res["level"] in ("error", "warning", "note")
        assert res["message"]["text"]
        (loc,) = res["locations"]
        physical = loc["physicalLocation"]
        assert physical["artifactLocation"]["uri"]
        assert Path(physical["artifactLocation"]["uri"]).name == "config.json"
        assert physical["region"]["startLine"] >= 1
        assert physical["region"].get("startColumn", 1) >= 1
    levels = {(r["ruleId"], r["level"]) for r in run["results"]}
    assert ("DF104", "error") in levels and ("DF204", "error") in levels


def test_sarif_uri_is_a_uri_for_any_path(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "My Models #1 100%" / "d", mutated(TAP_OUT_OF_RANGE))
    log = json.loads(dflash("check", path, "--format", "sarif").out)
    for res in log["runs"][0]["results"]:
        uri = res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert not re.search(r"[\s#?]|%(?![0-9A-Fa-f]{2})", uri), uri
        parts = urllib.parse.urlsplit(uri)
        assert parts.fragment == "" and parts.query == ""
        assert urllib.parse.unquote(parts.path) == str(path)


def test_sarif_with_no_findings(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m")
    log = json.loads(dflash("check", path, "--format", "sarif", "--select", "DF0").out)
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


# --- text -----------------------------------------------------------------------------------------

LOCATION = re.compile(
    r"^  (?P<path>\S+):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|info) "
    r"(?P<rule>DF\d{3}) (?P<name>[a-z0-9-]+)\b"
)


def test_text_groups_per_file_with_pictures(dflash: Run, json_tree: Path) -> None:
    result = dflash("check", json_tree)
    assert_no_traceback(result)
    assert "\x1b[" not in result.out + result.err  # NO_COLOR=1 (set by the fixture)
    lines = result.out.splitlines()
    clean = str(json_tree / "clean" / "config.json")
    broken = str(json_tree / "broken" / "config.json")
    heads = [i for i, line in enumerate(lines) if line.startswith((clean, broken)) and "[dflash" in line]
    assert len(heads) == 2
    block = lines[heads[0] : heads[1]] if lines[heads[0]].startswith(broken) else lines[heads[1] :]
    assert block[0].startswith(broken)
    assert any(re.fullmatch(r"  layers  S S S S S F\b.*", line) for line in block), block
    assert any(line.startswith("  taps    1 5 9 13 17 21 25 40") for line in block), block
    located = [LOCATION.match(line) for line in block]
    matches = [m for m in located if m]
    assert {m["rule"] for m in matches} >= {"DF104", "DF204"}
    for m in matches:
        assert m["path"] == broken
        assert REGISTRY[m["rule"]].name == m["name"]
    assert any(f"{broken}:" in line and " error DF104 tap-out-of-range " in line for line in block)
    skipped = [line for line in lines if line.startswith(str(json_tree / "target" / "config.json"))]
    assert len(skipped) == 1 and "skipped" in skipped[0]
    assert re.search(r"^3 files \(1 skipped\), \d+ errors?, ", lines[-1]), lines[-1]


def test_text_clean_real_config_pictures(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m")
    out = dflash("check", path).out
    assert re.search(r"^  layers  S S S S S F  \(5 sliding, 1 full; window 4096\)", out, re.M), out
    assert re.search(r"^  taps    1 5 9 13 17 21 25 29  of 32\b", out, re.M), out
    assert "\x1b[" not in out


# --- discovery ------------------------------------------------------------------------------------


def hf_cache_model(root: Path, commit: str = "0123456789abcdef0123456789abcdef01234567") -> Path:
    """A Hugging Face cache layout: blobs/<sha256> and snapshots/<commit>/config.json -> ../../blobs/<sha>."""
    repo = root / "models--z-lab--Qwen3.5-4B-DFlash"
    data = REAL.read_bytes()
    blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
    blob.parent.mkdir(parents=True)
    blob.write_bytes(data)
    # A blob named config.json too, so skipping blobs/ is what keeps it out (not only its name).
    (repo / "blobs" / "config.json").write_bytes(data)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").symlink_to(Path("..") / ".." / "blobs" / blob.name)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    return snapshot / "config.json"


def test_discovery_in_a_tree(dflash: Run, tmp_path: Path) -> None:
    drafter = write_config(tmp_path / "drafters" / "Qwen3.5-4B-DFlash")
    target = write_config(tmp_path / "targets" / "Qwen3-4B", raw=TARGET_CONFIG.read_bytes())
    write_config(tmp_path / ".git" / "objects", mutated(TAP_OUT_OF_RANGE))
    write_config(tmp_path / "drafters" / ".hidden", mutated(TAP_OUT_OF_RANGE))
    snapshot = hf_cache_model(tmp_path / "hub")

    result = dflash("check", tmp_path, "--format", "json")
    assert_no_traceback(result)
    listed = sorted(f["path"] for f in result.json()["files"])
    assert listed == sorted(map(str, (drafter, target, snapshot)))
    assert {f["kind"] for f in result.json()["files"]} == {"dflash", "skipped"}
    snap = next(f for f in result.json()["files"] if f["path"] == str(snapshot))
    assert snap["sha256"] == hashlib.sha256(REAL.read_bytes()).hexdigest()
    assert "DF104" not in rule_ids(result)  # the planted errors live only in skipped dirs
    text = dflash("check", tmp_path)
    skipped = [line for line in text.out.splitlines() if line.startswith(str(target))]
    assert len(skipped) == 1 and "skipped" in skipped[0], text.out
    assert result.code == 0


def test_snapshot_config_is_linted(dflash: Run, tmp_path: Path) -> None:
    snapshot = hf_cache_model(tmp_path)
    dflash_dir = snapshot.parent
    result = dflash("check", dflash_dir, "--format", "json")
    (f,) = result.json()["files"]
    assert f["kind"] == "dflash" and f["path"] == str(snapshot)
    assert f["sha256"] == hashlib.sha256(REAL.read_bytes()).hexdigest()
    # Linted like any drafter (the real config's infos); a snapshot is the cache's own link, not DF703.
    # Its blob is named by sha256, not the git blob id, so it is no proof: the catalog knows the published bytes.
    assert {x["rule"] for x in f["findings"]} == {"DF121", "DF304", "DF605"}


def test_model_dir_linking_into_a_cache_blob(dflash: Run, tmp_path: Path) -> None:
    snapshot = hf_cache_model(tmp_path / "hub")
    drafter = tmp_path / "models" / "drafter"
    drafter.mkdir(parents=True)
    (drafter / "config.json").symlink_to(snapshot.resolve())  # straight at blobs/<sha>
    result = dflash("check", drafter, "--format", "json")
    (f,) = result.json()["files"]
    df703 = [x for x in f["findings"] if x["rule"] == "DF703"]
    assert len(df703) == 1 and df703[0]["severity"] == "warning"
    assert result.code == 0 and dflash("check", drafter, "--strict").code == 1


def test_skipped_config_never_opens_its_shards(dflash: Run, tmp_path: Path) -> None:
    """A target-model config in the tree is skipped, and its (here corrupt) shards are not read."""
    target = write_config(tmp_path / "tree" / "target", raw=TARGET_CONFIG.read_bytes()).parent
    (target / "model.safetensors").write_bytes(b"\x01\x02\x03")
    drafter = write_config(tmp_path / "tree" / "drafter", small_config()).parent
    save(drafter / "model.safetensors", small_shapes(taps=8))
    result = dflash("check", tmp_path / "tree", "--format", "json")
    by_kind = {f["kind"]: f for f in result.json()["files"]}
    assert by_kind["skipped"]["findings"] == []
    assert [x["rule"] for x in by_kind["dflash"]["findings"]] == ["DF501"]


def test_each_drafter_in_a_tree_gets_its_own_checkpoint(dflash: Run, tmp_path: Path) -> None:
    for name, tensors in (("a-good", small_shapes()), ("b-bad", small_shapes(layers=6))):
        folder = write_config(tmp_path / "tree" / name, small_config()).parent
        save(folder / "model.safetensors", tensors)
    doc = dflash("check", tmp_path / "tree", "--format", "json").json()
    found = {Path(f["path"]).parent.name: [x["rule"] for x in f["findings"]] for f in doc["files"]}
    assert found == {"a-good": [], "b-bad": ["DF502"]}


def test_a_lone_non_dflash_config_exits_0(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "Qwen3-4B", raw=TARGET_CONFIG.read_bytes())
    result = dflash("check", path, "--format", "json")
    assert result.code == 0
    (f,) = result.json()["files"]
    assert f["kind"] == "skipped" and f["findings"] == []
    summary = result.json()["summary"]
    assert {k: summary[k] for k in ("files", "errors", "warnings", "infos")} == {
        "files": 1,
        "errors": 0,
        "warnings": 0,
        "infos": 0,
    }
    text = dflash("check", path.parent)
    assert text.code == 0 and "skipped" in text.out


# --- --select / --ignore --------------------------------------------------------------------------


@pytest.fixture
def two_error_config(tmp_path: Path) -> Path:
    return write_config(tmp_path / "m", mutated(two_errors))


def test_all_rules_fire_by_default(dflash: Run, two_error_config: Path) -> None:
    assert {"DF104", "DF204", "DF121", "DF304"} <= rule_ids(dflash("check", two_error_config, "--format", "json"))


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        pytest.param(("--select", "DF2"), {"DF204"}, id="select-prefix"),
        pytest.param(("--select", "df104"), {"DF104"}, id="select-id-lowercase"),
        pytest.param(("--select", "DF104, DF204"), {"DF104", "DF204"}, id="select-two-ids"),
        pytest.param(("--select", "DF1", "--ignore", "DF106,DF121"), {"DF104"}, id="select-and-ignore"),
    ],
)
def test_select(dflash: Run, two_error_config: Path, options: tuple[str, ...], expected: set[str]) -> None:
    result = dflash("check", two_error_config, "--format", "json", *options)
    assert_no_traceback(result)
    assert rule_ids(result) == expected


def test_ignore(dflash: Run, two_error_config: Path) -> None:
    assert "DF204" not in rule_ids(dflash("check", two_error_config, "--format", "json", "--ignore", "DF204"))
    remaining = rule_ids(dflash("check", two_error_config, "--format", "json", "--ignore", "DF1,DF3,DF6"))
    assert remaining == {"DF204"}
    everything = ",".join(sorted({r.id[:3] for r in ALL}))
    # A check that runs no rule would pass anything: that is a usage error, not "ok".
    for options in (("--ignore", everything), ("--ignore", "DF"), ("--select", ","), ("--select", "")):
        result = dflash("check", two_error_config, *options)
        assert result.code == 2 and result.out == "", options
        assert result.err.startswith("dflash-cfg: error: --select") and "no rule" in result.err, result.err


# --- rules ----------------------------------------------------------------------------------------


def test_rules_lists_every_rule(dflash: Run) -> None:
    result = dflash("rules")
    assert result.code == 0
    assert "\x1b[" not in result.out
    listed = re.findall(r"^(DF\d{3})\s+(\S+)\s+(error|warning|info)\s", result.out, re.M)
    assert [(i, n, s) for i, n, s in listed] == [(r.id, r.name, r.severity.label) for r in ALL]


def test_rules_shows_one_rules_full_doc(dflash: Run) -> None:
    result = dflash("rules", "DF204")
    assert result.code == 0
    assert result.out.startswith("DF204")
    assert "DF201" not in result.out
    doc_lines = [line.strip() for line in plain(REGISTRY["DF204"].doc).split("\n\n", 1)[1].splitlines()]
    out_lines = [line.strip() for line in result.out.splitlines()]
    for line in doc_lines:
        assert line in out_lines, line
    assert "``" not in result.out and "`use_sliding_window`" in result.out
    assert len([line for line in out_lines if "is false or absent" in line]) == 1  # the summary once
    assert any(line.startswith("Fail:") for line in out_lines)
    assert any(line.startswith("Pass:") for line in out_lines)


def test_rules_json(dflash: Run) -> None:
    result = dflash("rules", "--format", "json")
    assert result.code == 0
    catalogue = json.loads(result.out)
    assert [r["id"] for r in catalogue] == [r.id for r in ALL]
    for entry, rule in zip(catalogue, ALL, strict=True):
        assert entry["name"] == rule.name and entry["severity"] == rule.severity.label
        assert entry["markdown"] == markdown(rule.doc) and entry["summary"]


def test_rules_unknown_id_exits_2(dflash: Run) -> None:
    assert_one_line_error(dflash("rules", "DF999"))


# --- real processes -------------------------------------------------------------------------------


def test_python_m_version(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dflash_cfg", "--version"], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"dflash-cfg, version {dflash_cfg.__version__}"


@pytest.mark.slow
def test_console_script_checks_a_real_config(tmp_path: Path) -> None:
    script = BIN / "dflash-cfg"
    if not script.exists():
        pytest.skip(f"console script not installed next to {sys.executable}")
    path = write_config(tmp_path / "Qwen3.5-4B-DFlash")
    proc = subprocess.run(
        [str(script), "check", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    (f,) = json.loads(proc.stdout)["files"]
    assert f["kind"] == "dflash" and f["path"] == str(path)


@pytest.mark.parametrize(
    ("label", "algorithm", "kind"),
    [("eagle3", "eagle3", "skipped"), ("eagle3", "dflash", "speculators"), ("dflash", "dflash", "speculators")],
)
def test_speculators_files_are_told_apart_by_label_and_algorithm(
    dflash: Run, tmp_path: Path, label: str, algorithm: str, kind: str
) -> None:
    """An EAGLE-3 speculators file is not ours; a DFlash one labelled eagle3 is linted, and the label is an error."""
    data = json.loads((FIXTURES / "upstream/RedHatAI__DeepSeek-V4-Flash-speculator.dflash/config.json").read_bytes())
    data["speculators_model_type"] = label
    data["speculators_config"]["algorithm"] = algorithm
    (tmp_path / "config.json").write_text(json.dumps(data, indent=2))
    result = dflash("check", tmp_path, "--format", "json")
    assert_no_traceback(result)
    (f,) = result.json()["files"]
    assert f["kind"] == kind
    labelled = [x for x in f.get("findings", ()) if x["pointer"] == "/speculators_model_type" and x["rule"] == "DF161"]
    assert len(labelled) == (label != algorithm and kind == "speculators")


# --- every published drafter in fixtures/ ---------------------------------------------------------

PUBLISHED = sorted((FIXTURES / "upstream").rglob("config*.json"))


@pytest.mark.parametrize("path", PUBLISHED, ids=[p.relative_to(FIXTURES).as_posix() for p in PUBLISHED])
def test_published_drafters_in_every_format(dflash: Run, path: Path) -> None:
    data = json.loads(path.read_bytes())
    result = dflash("check", path, "--format", "json")
    assert_no_traceback(result)
    (f,) = result.json()["files"]
    if data.get("speculators_model_type") == "dflash":
        assert f["kind"] == "speculators"
    else:
        assert f["kind"] == ("dflash2" if "DFlash2DraftModel" in data.get("architectures", []) else "dflash")
    assert result.code == (1 if any(x["severity"] == "error" and not x.get("engines") for x in f["findings"]) else 0)
    # A finding about some engines only fails nothing while nothing says what serves the drafter.
    gating = [x for x in f["findings"] if x["severity"] in ("error", "warning") and not x.get("engines")]
    assert dflash("check", path, "--strict").code == (1 if gating else 0)
    sarif = json.loads(dflash("check", path, "--format", "sarif").out)
    assert len(sarif["runs"][0]["results"]) == len(f["findings"])
    text = dflash("check", path).out
    assert text.splitlines()[0].startswith(str(path))
    assert re.search(r"^  (layers|taps) ", text, re.M), text


def test_repeated_select_and_ignore_add_up_and_take_rule_names(dflash: Run, two_error_config: Path) -> None:
    """--select DF104 --select DF204 selects both (each used to replace the last, silently); a rule's kebab name
    (as `rules NAME` takes it) selects it as its id does."""
    both = rule_ids(dflash("check", two_error_config, "--format", "json", "--select", "DF104", "--select", "DF204"))
    assert both == {"DF104", "DF204"}
    assert rule_ids(dflash("check", two_error_config, "--format", "json", "--select", "window-dropped")) == {"DF204"}
    ignored = rule_ids(dflash("check", two_error_config, "--format", "json", "--ignore", "DF1", "--ignore", "DF3,DF6"))
    assert ignored == {"DF204"}
    bad = dflash("check", two_error_config, "--select", "window-droped")
    assert bad.code == 2 and "unknown rule id WINDOW-DROPED" in bad.err, bad.err

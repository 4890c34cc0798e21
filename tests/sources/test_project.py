"""The project config and the gates: what a team writes once so every check, hook and preflight knows
what to accept, what fails, and where each drafter's trained values and target are."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import FIXTURES, Result, write_config

Run = Callable[..., Result]
INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"
MIMO = FIXTURES / "upstream" / "XiaomiMiMo__MiMo-V2.5-Pro-FP4-DFlash" / "dflash"


def rules(result: Result) -> set[str]:
    return {f["rule"] for file in result.json()["files"] for f in file["findings"]}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository of model dirs: the incident's stale drafter, its target, and a real MiMo drafter."""
    shutil.copytree(INCIDENT, tmp_path / "models" / "stale")
    shutil.copytree(TARGET, tmp_path / "models" / "target")
    shutil.copytree(MIMO, tmp_path / "models" / "mimo")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_found_walking_up_from_the_checked_path(dflash: Run, project: Path) -> None:
    (project / "dflash-cfg.toml").write_text('select = ["DF2"]\n')
    assert rules(dflash("check", "models/stale", "--format", "json")) == {"DF205"}
    assert "DF105" in rules(dflash("check", "models/stale", "--format", "json", "--isolated"))
    # The command line wins over the project.
    assert rules(dflash("check", "models/stale", "--format", "json", "--select", "DF105")) == {"DF105"}


def test_pyproject_table_and_the_nearest_file_wins(dflash: Run, project: Path) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.dflash-cfg]\nignore = ["DF1"]\n')
    assert not {r for r in rules(dflash("check", "models/stale", "--format", "json")) if r.startswith("DF1")}
    (project / "models" / "dflash-cfg.toml").write_text('select = ["DF205"]\n')
    assert rules(dflash("check", "models/stale", "--format", "json")) == {"DF205"}
    # A pyproject.toml without the table is no project config: the search goes on upward.
    (project / "models" / "dflash-cfg.toml").unlink()
    (project / "models" / "pyproject.toml").write_text('[project]\nname = "y"\n')
    assert "DF205" in rules(dflash("check", "models/stale", "--format", "json"))


def test_fail_on_and_per_file_ignores_decide_the_gate(dflash: Run, project: Path) -> None:
    gate = dflash("check", "--gate", "models/stale", "models/mimo")
    assert gate.code == 1 and "failed on warnings only" in gate.err
    assert dflash("check", "models/stale", "models/mimo").code == 0  # plain check: ruff-like, errors only
    (project / "dflash-cfg.toml").write_text(
        '[per-file-ignores]\n"models/stale/config.json" = ["DF105", "DF205", "DF604"]\n'
        '"models/mimo/" = ["DF105", "DF209"]\n'
    )
    checked = dflash("check", "--gate", "models/stale", "models/mimo", "--format", "json")
    assert checked.code == 0, checked.err
    assert not rules(checked) & {"DF105", "DF205", "DF209", "DF604"}
    (project / "dflash-cfg.toml").write_text('fail-on = "error"\n')
    assert dflash("check", "--gate", "models/stale", "models/mimo").code == 0
    assert dflash("check", "--gate", "--fail-on", "warning", "models/stale").code == 1  # the option wins


@pytest.mark.parametrize(
    ("glob", "ignored"),
    [
        ("*/config.json", False),  # `*` stays within one dir, as in .gitignore: models/stale/ is two down
        ("*/*/config.json", True),
        ("**/config.json", True),
        ("models/**", True),
        ("stale/", True),  # no `/` but the trailing one: a dir of that name at any depth
        ("models/stale", True),  # a dir, without the trailing `/`: everything under it
        ("models/st*", True),
        ("models/[!s]*/", False),
        ("models/stal", False),
    ],
)
def test_per_file_globs_have_gitignore_semantics(dflash: Run, project: Path, glob: str, ignored: bool) -> None:
    (project / "dflash-cfg.toml").write_text(f'[per-file-ignores]\n"{glob}" = ["DF105", "DF205", "DF604"]\n')
    gate = dflash("check", "--gate", "models/stale")
    assert gate.code == (0 if ignored else 1), gate.err


def test_each_model_gets_its_target(dflash: Run, project: Path) -> None:
    (project / "dflash-cfg.toml").write_text('[[models]]\npath = "models/stale"\ntarget = "models/target"\n')
    result = dflash("check", "models", "--format", "json")
    by_file = {f["path"]: {x["rule"] for x in f["findings"]} for f in result.json()["files"]}
    assert "DF404" in by_file["models/stale/config.json"]  # the target's tokenizer was read for it
    assert "DF404" not in by_file["models/mimo/config.json"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('fail-on = "warnings"\n', 'fail-on: must be "error" or "warning"'),
        ("selct = []\n", "selct: unknown key"),
        ('select = "DF2"\n', "select: must be a list"),
        ('[[models]]\nupstream = "a/b"\n', "models[0].path: is required"),
        ('[[models]]\npath = "x"\nrevision = "v1"\n', "models[0].revision: needs upstream"),
        ('[[models]]\npath = "x"\ncolour = 1\n', "models[0].colour: unknown key"),
        ("[per-file-ignores]\n'a' = []\n", "per-file-ignores.a: must be a non-empty list"),
        ("select = [\n", "not valid TOML"),
        ("a = " + "[" * 5000 + "]" * 5000 + "\n", "not valid TOML"),  # nested too deeply for the parser
    ],
)
def test_a_bad_project_config_is_a_one_line_usage_error(dflash: Run, project: Path, text: str, says: str) -> None:
    (project / "dflash-cfg.toml").write_text(text)
    result = dflash("check", "models/stale")
    assert result.code == 2 and says in result.err and result.err.count("\n") == 1, result.err


def test_config_option_names_the_file(dflash: Run, project: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere.toml"
    other.write_text('select = ["DF205"]\n')
    assert rules(dflash("check", "models/stale", "--config", other, "--format", "json")) == {"DF205"}
    missing = dflash("check", "models/stale", "--config", tmp_path / "nope.toml")
    assert missing.code == 2 and "nope.toml" in missing.err


# --- refusing instead of answering wrongly ----------------------------------------------------------


def test_a_drafter_is_not_a_target(dflash: Run, project: Path) -> None:
    for command in (("check", "models/mimo"), ("fix", "models/mimo", "--dry-run")):
        result = dflash(*command, "--target", "models/stale")
        assert result.code == 2 and "is a DFlash drafter's config, not a target model's" in result.err, result.err
    assert json.loads((project / "models" / "mimo" / "config.json").read_text())  # untouched


def test_one_repo_for_a_tree_of_drafters_is_refused(dflash: Run, project: Path) -> None:
    result = dflash("check", "models", "--from-hub", "z-lab/Qwen3.6-27B-DFlash")
    assert result.code == 2 and "two drafters" in result.err and "[[tool.dflash-cfg.models]]" in result.err


def test_json_is_one_document_even_on_exit_2(dflash: Run, project: Path) -> None:
    result = dflash("check", "models/stale", "--select", "XX1", "--format", "json")
    assert result.code == 2
    doc = result.json()
    assert doc["files"] == [] and doc["errors"] == ["unknown rule id XX1 (see `dflash-cfg rules`)"]


def test_the_api_reports_the_gate_it_ran(project: Path) -> None:
    import dflash_cfg

    report = dflash_cfg.check(["models/stale"], gate=True)
    assert report.gate and report.fail_on is dflash_cfg.Severity.WARNING
    assert dflash_cfg.check(["models/stale"]).fail_on is dflash_cfg.Severity.ERROR


def test_a_clean_drafter_passes_every_gate(dflash: Run, tmp_path: Path) -> None:
    drafter = write_config(tmp_path / "clean")
    assert dflash("check", "--gate", drafter).code == 0


# --- hostile project configs ------------------------------------------------------------------------


def test_a_glob_bomb_is_refused_at_once(dflash: Run, project: Path) -> None:
    # fnmatch translates 40,000 unclosed `[` in minutes; a glob is compiled once, and bounded.
    (project / "dflash-cfg.toml").write_text(f'[per-file-ignores]\n"{"[" * 40000}" = ["DF105"]\n')
    result = dflash("check", "models/stale")
    assert result.code == 2 and "per-file-ignores." in result.err and "longer than 1024" in result.err
    assert result.err.count("\n") == 1
    # Under the bound, many brackets are still fast and a literal `[` matches itself.
    (project / "dflash-cfg.toml").write_text(f'[per-file-ignores]\n"{"[" * 1000}" = ["DF105"]\n')
    assert dflash("check", "models/stale").code == 0


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ('upstream = "not a repo"', "models[0].upstream: 'not a repo' is not a Hub repo id"),
        ('upstream = "a/b/c"', "models[0].upstream: 'a/b/c' is not a Hub repo id"),
        ('upstream = "a/b"\nrevision = "../../x"', "models[0].revision: revision '../../x' is not a branch"),
        ('target = "s3://"', "models[0].target: 's3://': expected s3://BUCKET/PREFIX"),
    ],
)
def test_an_invalid_model_entry_names_the_file_and_key(dflash: Run, project: Path, entry: str, says: str) -> None:
    (project / "dflash-cfg.toml").write_text(f'[[models]]\npath = "models/stale"\n{entry}\n')
    result = dflash("check", "models/stale")
    assert result.code == 2 and result.err.count("\n") == 1, result.err
    assert f"dflash-cfg.toml: {says}" in result.err, result.err


def test_a_remote_model_path_is_not_a_local_one(project: Path) -> None:
    from dflash_cfg.model import Url
    from dflash_cfg.sources.project import load

    (project / "dflash-cfg.toml").write_text(
        '[[models]]\npath = "s3://models/team/drafter"\ntarget = "hf://Qwen/Qwen3-8B"\n'
        '[[models]]\npath = "hf://z-lab/Qwen3.6-27B-DFlash"\nupstream = "z-lab/Qwen3.6-27B-DFlash"\n'
    )
    config = load(project / "dflash-cfg.toml")
    s3, hf = config.models
    assert s3.path == Url("s3", "models/team/drafter") and s3.target == "hf://Qwen/Qwen3-8B"
    assert config.model_for(Url("s3", "models/team/drafter/config.json")) is s3
    assert config.model_for(Url("hf", "z-lab/Qwen3.6-27B-DFlash/config.json")) is hf
    # Never a local dir named "s3:" beside the config, and a local path never matches a remote entry.
    assert config.model_for(project / "s3:" / "models" / "team" / "drafter") is None


def _warnings(result: Result) -> list[str]:
    return [line for line in result.err.splitlines() if line.startswith("dflash-cfg: warning: ")]


def test_an_entry_that_matches_nothing_in_the_run_is_said(dflash: Run, project: Path) -> None:
    """A typo in a per-file-ignores glob or a [[models]] path silently dropped an accepted finding, an upstream or
    a target: one line on stderr names the config file and the entry; the verdict is the run's own."""
    (project / "dflash-cfg.toml").write_text(
        '[per-file-ignores]\n"models/stale/config.json" = ["DF205"]\n"model/*/config.json" = ["DF604"]\n\n'
        '[[models]]\npath = "models/stale"\nupstream = "none"\n\n'
        '[[models]]\npath = "models/stael"\nupstream = "z-lab/Qwen3.6-27B-DFlash"\n'
    )
    whole = dflash("check", "models/", "--format", "json")
    assert whole.code == 0 and whole.json()["files"]  # the document is unchanged; stderr says it
    assert _warnings(whole) == [
        "dflash-cfg: warning: dflash-cfg.toml: models[1].path = 'models/stael' matches no config.json of this run "
        "(no such path): the entry applies to nothing",
    ]
    root = dflash("check", ".")
    assert _warnings(root) == [
        "dflash-cfg: warning: dflash-cfg.toml: models[1].path = 'models/stael' matches no config.json of this run "
        "(no such path): the entry applies to nothing",
        "dflash-cfg: warning: dflash-cfg.toml: per-file-ignores 'model/*/config.json' = ['DF604'] matches no "
        "config.json of this run (globs are relative to the config file's directory, as in .gitignore)",
    ]
    # A run of one drafter does not cover the others: no word about the entries it could not have matched.
    (project / "dflash-cfg.toml").write_text(
        '[per-file-ignores]\n"models/stale/config.json" = ["DF205"]\n\n'
        '[[models]]\npath = "models/mimo"\nupstream = "none"\n'
    )
    assert _warnings(dflash("check", "models/stale")) == []
    assert _warnings(dflash("check", ".")) == []
    # An entry whose dir holds no config.json, inside the tree checked.
    (project / "models" / "empty").mkdir()
    (project / "dflash-cfg.toml").write_text('[[models]]\npath = "models/empty"\nupstream = "none"\n')
    assert _warnings(dflash("check", "models")) == [
        "dflash-cfg: warning: dflash-cfg.toml: models[0].path = 'models/empty' matches no config.json of this run "
        "(none under it): the entry applies to nothing"
    ]

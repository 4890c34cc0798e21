"""The CI outputs, as a CI step sees them: GitHub workflow commands, statistics, quiet text, colour,
exit codes, SARIF 2.1.0 (validated against the OASIS schema), and one JSON document per run of every
command, also when the run exits 2."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers import FIXTURES, REAL, ROOT, Result, mutated, offline_hub_cache, set_taps, write_config

from dflash_cfg.model import FileReport, Finding, Report, RuleDoc, Severity
from dflash_cfg.report.catalogue import markdown
from dflash_cfg.report.formats import render
from dflash_cfg.report.github import command, escape_data, escape_property
from dflash_cfg.report.sarif import _line_hashes

Run = Callable[..., Result]

SCHEMA = json.loads((ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"
FINDING_LINE = re.compile(r"^\S.*:\d+:\d+: (error|warning|info) DF\d{3} [a-z0-9-]+( /\S*)?: .+$")


def two_errors(d: dict[str, Any]) -> None:  # DF104 (no fix) and DF204 (safe fix), plus three infos
    set_taps([1, 5, 9, 13, 17, 21, 25, 40])(d)
    del d["use_sliding_window"]


def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git work tree (as far as dflash-cfg looks: a `.git` entry) with the working directory in a
    subdirectory of it, so paths relative to the repository root differ from paths relative to the cwd."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "ci").mkdir()
    monkeypatch.chdir(root / "ci")
    return root


def validate_sarif(text: str) -> dict[str, Any]:
    """The log against the OASIS SARIF 2.1.0 schema (errata01): with the validator its $schema names
    (draft-04), and with Draft 7, whose keywords this schema uses the same way."""
    log: dict[str, Any] = json.loads(text)
    for validator in (jsonschema.validators.validator_for(SCHEMA), jsonschema.Draft7Validator):
        validator.check_schema(SCHEMA)
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator(SCHEMA).iter_errors(log)]
        assert errors == [], (validator.__name__, errors[:5])
    return log


# --- GitHub workflow commands ---------------------------------------------------------------------


def test_github_escaping_follows_actions_core() -> None:
    # @actions/core command.ts: escapeData %, CR, LF; escapeProperty also : and ,
    assert escape_data("50% done\r\nnext: a,b") == "50%25 done%0D%0Anext: a,b"
    assert escape_property("C:\\a,b%\n") == "C%3A\\a%2Cb%25%0A"
    # other control characters cannot reach the runner's log raw
    assert escape_data("a\x1b]0;x\x07b") == "a\\x1b]0;x\\x07b"
    assert command("warning", "m", file="f", line=3, col=None, title="t") == "::warning file=f,line=3,title=t::m"


def test_github_one_command_per_finding(dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo(tmp_path, monkeypatch)
    folder = root / "models" / "a,b:c%d"
    data = mutated(lambda d: d["layer_types"].__setitem__(5, "50%,x:y"))
    path = write_config(folder, data)
    line = path.read_text(encoding="utf-8").splitlines().index('    "50%,x:y"') + 1
    result = dflash("check", path, "--format", "github", "--select", "DF202")
    assert result.code == 1 and result.err == ""
    assert result.out == (
        f"::error file=models/a%2Cb%3Ac%25d/config.json,line={line},col=5,endLine={line},endColumn=14,"
        'title=DF202 unknown-layer-type::/layer_types/5: layer_types[5] = "50%25,x:y": DFlash engines know '
        'only "full_attention" and "sliding_attention"; vLLM and SGLang refuse the file\n'
    )


def test_github_severities_and_multiline_members(dflash: Run) -> None:
    # The findings of the file itself (without the catalog's comparison, DF604, which adds three more warnings).
    result = dflash(
        "check", INCIDENT, "--target", TARGET, "--engine", "sglang", "--format", "github", "--ignore", "DF604"
    )
    assert result.code == 1  # DF406: SGLang's Qwen3.5 target cannot capture the guessed last tap
    lines = result.out.splitlines()
    kinds = [x.split(" ", 1)[0] for x in lines]
    assert kinds == ["::notice", "::warning", "::notice", "::warning", "::error", "::warning"]
    path = "fixtures/incident/Qwen3.6-27B-DFlash/config.json"
    assert lines[1] == (
        f"::warning file={path},line=13,col=5,endLine=13,endColumn=28,title=DF404 mask-token::"
        '/dflash_config/mask_token_id: mask_token_id 248064 ("<|repo_name|>") is an added token that is not '
        "special: the model emits it as text"  # a colon in the message stays: it is data, not a property
    )
    # a member over several lines: line and endLine, no columns (GitHub takes them on one line only)
    assert lines[2].startswith(f"::notice file={path},line=14,endLine=20,title=DF106 taps-not-standard::")


def test_github_exit_2_is_an_error_command(dflash: Run, tmp_path: Path) -> None:
    result = dflash("check", tmp_path / "nothing", "--format", "github")
    assert result.code == 2
    assert result.out.startswith("::error title=dflash-cfg::path not found") and result.out.count("\n") == 1


# --- --statistics, -q, --exit-zero ----------------------------------------------------------------


def test_statistics_text_and_json(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m", mutated(two_errors), project='[[models]]\npath = "."\nupstream = "none"\n')
    text = dflash("check", path, "--statistics")
    assert text.code == 1
    assert text.out.endswith(
        "\n\n"
        "1  DF104  tap-out-of-range   error\n"
        "1  DF106  taps-not-standard  info\n"
        "1  DF121  block-size         info     1 fixable\n"
        "1  DF204  window-dropped     error    1 fixable\n"
        "1  DF304  rope-theta         info     1 fixable\n"
    )
    doc = dflash("check", path, "--statistics", "--format", "json").json()
    stats = doc["statistics"]
    assert list(doc) == ["version", "tool", "transformers_version", "files", "summary", "statistics"]
    assert {s["rule"]: s["count"] for s in stats} == Counter(x["rule"] for x in doc["files"][0]["findings"])
    assert {s["rule"]: s["fixable"] for s in stats} == {"DF104": 0, "DF106": 0, "DF121": 1, "DF204": 1, "DF304": 1}
    assert "statistics" not in dflash("check", path, "--format", "json").json()  # only when asked


def test_statistics_count_a_tree(dflash: Run, tmp_path: Path) -> None:
    for i in range(3):
        write_config(tmp_path / f"m{i}", mutated(two_errors))
    doc = dflash("check", tmp_path, "--statistics", "--format", "json", "--select", "DF104,DF204").json()
    assert doc["statistics"] == [
        {"rule": "DF104", "name": "tap-out-of-range", "severity": "error", "count": 3, "fixable": 0},
        {"rule": "DF204", "name": "window-dropped", "severity": "error", "count": 3, "fixable": 3},
    ]


def test_quiet_prints_the_findings_only(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m", mutated(two_errors), project='[[models]]\npath = "."\nupstream = "none"\n')
    full, quiet = dflash("check", path), dflash("check", path, "-q")
    assert quiet.code == full.code == 1
    lines = quiet.out.splitlines()
    assert len(lines) == 5 and all(FINDING_LINE.match(x) for x in lines), quiet.out
    assert lines == [x.strip() for x in full.out.splitlines() if FINDING_LINE.match(x.strip())]
    clean = write_config(tmp_path / "clean")
    assert dflash("check", clean, "--quiet", "--select", "DF10").out == ""  # no "ok", no summary


def test_quiet_preflight_has_no_header(dflash: Run, tmp_path: Path) -> None:
    drafter = write_config(tmp_path / "d", mutated(two_errors)).parent
    launch = [
        "vllm",
        "serve",
        str(TARGET),
        "--speculative-config",
        json.dumps({"method": "dflash", "model": str(drafter)}),
    ]
    result = dflash("preflight", "-q", "--", *launch)
    assert result.code == 1
    assert result.out and all(FINDING_LINE.match(x) for x in result.out.splitlines()), result.out


def test_exit_zero(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m", mutated(two_errors))
    assert dflash("check", path).code == 1
    result = dflash("check", path, "--exit-zero", "--format", "json")
    assert result.code == 0 and result.json()["summary"]["errors"] == 2
    assert dflash("check", tmp_path / "nothing", "--exit-zero").code == 2  # the run itself failed
    all_full = mutated(lambda d: d.__setitem__("layer_types", ["full_attention"] * d["num_hidden_layers"]))
    strict = dflash("check", write_config(tmp_path / "w", all_full), "--strict")
    assert strict.code == 1 and "failed on warnings only" in strict.err
    quiet_gate = dflash("check", tmp_path / "w", "--strict", "--exit-zero")
    assert quiet_gate.code == 0 and quiet_gate.err == ""
    refused = dflash("preflight", "--exec", "--exit-zero", "--", "vllm", "serve", "x")
    assert refused.code == 2 and "--exit-zero" in refused.err


# --- colour ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "option", "coloured"),
    [
        ({}, None, False),  # not a terminal
        ({"FORCE_COLOR": "1"}, None, True),
        ({"FORCE_COLOR": ""}, None, False),  # empty: not set
        ({"NO_COLOR": "1"}, None, False),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, None, False),  # NO_COLOR first, as CPython orders them
        ({"NO_COLOR": "1"}, "always", True),  # --color wins over both
        ({"FORCE_COLOR": "1"}, "never", False),
        ({}, "always", True),
        ({}, "auto", False),
    ],
)
def test_colour(
    dflash: Run,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    option: str | None,
    coloured: bool,
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    extra = ["--color", option] if option else []
    path = write_config(tmp_path / "m", mutated(two_errors))
    for args in (["check", path], ["rules"], ["check", path, "-q"]):
        result = dflash(*args, *extra)
        assert ("\x1b[" in result.out) is coloured, args
    # machine formats are never coloured
    assert "\x1b[" not in dflash("check", path, "--format", "json", *extra).out
    assert "\x1b[" not in dflash("check", path, "--format", "github", *extra).out


def test_every_command_takes_color(dflash: Run) -> None:
    for name in ("check", "diff", "fix", "verify", "preflight", "where", "rules"):
        assert "--color [auto|always|never]" in dflash(name, "--help").out, name


# --- rules ----------------------------------------------------------------------------------------


def test_rules_text_has_no_rest_markup(dflash: Run) -> None:
    out = dflash("rules", "-v").out
    assert "``" not in out
    assert "`use_sliding_window`" in out


def test_markdown_help_keeps_code_and_escapes_the_rest() -> None:
    doc = "Layers are ``sliding_attention`` *not* <b>.\n\nFail: ``a``\nPass: ``b `c` d``\n- x_y"
    assert markdown(doc) == (
        "Layers are `sliding_attention` \\*not\\* \\<b\\>.\n\nFail: `a`  \nPass: `` b `c` d ``  \n- x\\_y"
    )


# --- SARIF ----------------------------------------------------------------------------------------


def test_line_hashes_match_github() -> None:
    # github/codeql-action src/fingerprints.test.ts: the hashes code scanning computes for these texts
    cases = {
        "": ["c129715d7a2bc9a3:1"],
        " a\nb\n  \t\tc\n d": ["271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"],
        " hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n": [
            "e9496ae3ebfced30:1",
            "fb7c023a8b9ccb3f:1",
            "ce8ba1a563dcdaca:1",
            "e20e36e16fcb0cc8:1",
            "b3edc88f2938467e:1",
            "c8e28b0b4002a3a0:1",
            "c129715d7a2bc9a3:1",
        ],
        "Lorem ipsum dolor sit amet.\n" * 10: [
            *(f"a7f2ff13bc495cf2:{i}" for i in range(1, 7)),
            "a7f2ff1481e87703:1",
            "a9cf91f7bbf1862b:1",
            "55ec222b86bcae53:1",
            "cc97dc7b1d7d8f7b:1",
            "c129715d7a2bc9a3:1",
        ],
    }
    for text, want in cases.items():
        got = _line_hashes(text, set(range(1, len(want) + 1)))
        assert [got[i] for i in range(1, len(want) + 1)] == want, repr(text)


def test_sarif_validates_and_locates(dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo(tmp_path, monkeypatch)
    path = write_config(root / "models" / "d", mutated(two_errors))
    result = dflash("check", path, "--format", "sarif")
    assert result.code == 1
    log = validate_sarif(result.out)
    (run,) = log["runs"]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": root.as_uri() + "/"}}
    assert run["columnKind"] == "unicodeCodePoints"
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for res in run["results"]:
        physical = res["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"] == {"uri": "models/d/config.json", "uriBaseId": "%SRCROOT%"}
        region = physical["region"]
        assert set(region) == {"startLine", "startColumn", "endLine", "endColumn"}
        expected = _line_hashes(text, {region["startLine"]})[region["startLine"]]
        assert res["partialFingerprints"]["primaryLocationLineHash"] == expected
    by_rule = {r["ruleId"]: r for r in run["results"]}
    tap = by_rule["DF104"]["locations"][0]["physicalLocation"]["region"]
    assert lines[tap["startLine"] - 1][tap["startColumn"] - 1 : tap["endColumn"] - 1] == "40"
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["help"]["markdown"] and "``" not in rule["help"]["markdown"]
        assert "``" not in rule["help"]["text"] + rule["fullDescription"]["text"]


def _apply(text: str, replacement: dict[str, Any]) -> str:
    region = replacement["deletedRegion"]
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def offset(line: int, column: int) -> int:
        return (starts[line - 1] if line <= len(starts) else len(text)) + column - 1

    a = offset(region["startLine"], region["startColumn"])
    b = offset(region["endLine"], region["endColumn"])
    return text[:a] + replacement.get("insertedContent", {}).get("text", "") + text[b:]


def test_sarif_fix_is_the_change_fix_makes(dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo(tmp_path, monkeypatch)
    path = write_config(root / "d", mutated(lambda d: d.__delitem__("use_sliding_window")))
    before = path.read_text(encoding="utf-8")
    log = validate_sarif(dflash("check", path, "--format", "sarif", "--select", "DF204").out)
    (res,) = log["runs"][0]["results"]
    (fix,) = res["fixes"]
    assert fix["description"]["text"] == "set use_sliding_window to true"
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "d/config.json", "uriBaseId": "%SRCROOT%"}
    (replacement,) = change["replacements"]
    assert replacement["insertedContent"]["text"].endswith("\n")  # whole lines
    result = dflash("fix", path, "--yes", "--no-backup", "--no-lock", "--min-severity", "error")
    assert result.code == 0, result.err
    assert _apply(before, replacement) == path.read_text(encoding="utf-8")


def test_sarif_byte_fix_and_no_text(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "bom", raw=b"\xef\xbb\xbf" + REAL.read_bytes())
    log = validate_sarif(dflash("check", path, "--format", "sarif").out)
    results = log["runs"][0]["results"]
    bom = [r for r in results if r.get("fixes") and "byteOffset" in json.dumps(r["fixes"])]
    assert bom, results
    (replacement,) = bom[0]["fixes"][0]["artifactChanges"][0]["replacements"]
    assert replacement == {"deletedRegion": {"byteOffset": 0, "byteLength": 3}}
    uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert "uriBaseId" not in uri and uri["uri"].startswith("file:///")  # outside the repository root


def test_sarif_of_the_incident_and_of_a_failed_run(dflash: Run, tmp_path: Path) -> None:
    log = validate_sarif(dflash("check", INCIDENT, "--target", TARGET, "--format", "sarif").out)
    assert len(log["runs"][0]["results"]) == 9  # 3 of them DF604: the values no published revision has
    failed = dflash("check", tmp_path / "nothing", "--format", "sarif")
    assert failed.code == 2
    log = validate_sarif(failed.out)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    assert "path not found" in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_sarif_statistics_in_the_run_properties(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "m", mutated(two_errors), project='[[models]]\npath = "."\nupstream = "none"\n')
    log = validate_sarif(dflash("check", path, "--format", "sarif", "--statistics").out)
    assert [s["rule"] for s in log["runs"][0]["properties"]["statistics"]] == [
        "DF104",
        "DF106",
        "DF121",
        "DF204",
        "DF304",
    ]


def test_sarif_describes_the_rules_from_the_docs_it_is_given() -> None:
    """report/ takes a rule's doc as a value (RuleDoc), never lint's Rule: any doc renders, and a SARIF run
    without the docs of the rules its findings name is refused, not rendered without them."""
    doc = RuleDoc(
        id="DF000",
        name="made-up",
        severity=Severity.WARNING,
        severities=(Severity.WARNING,),
        fix=False,
        own_check=True,
        summary="A ``key`` is odd.",
        description="A ``key`` is odd.",
        examples=(("Fail", "``{}``"),),
        reads=(),
        doc="A ``key`` is odd.\n\nFail: ``{}``",
    )
    finding = Finding(
        rule="DF000", name="made-up", severity=Severity.WARNING, pointer="/key", line=1, column=None, message="odd"
    )
    report = Report(
        files=(FileReport(path="config.json", kind="dflash", sha256=None, git_blob_sha1=None, findings=(finding,)),),
        transformers_version=None,
        tool_version="0.1.0",
    )
    log = validate_sarif(render(report, "sarif", rule_docs={"DF000": doc}))
    (described,) = log["runs"][0]["tool"]["driver"]["rules"]
    assert described["shortDescription"] == {"text": "A `key` is odd."}
    assert described["defaultConfiguration"] == {"level": "warning"}
    with pytest.raises(ValueError, match="sarif needs the docs"):
        render(report, "sarif")


# --- one JSON document per run, for every command -------------------------------------------------

ENVELOPE = {"version": 1, "tool": {"name": "dflash-cfg", "version": "0.1.0"}}


def _envelope(doc: dict[str, Any]) -> None:
    assert {k: doc[k] for k in ENVELOPE} == ENVELOPE


def test_diff_json(dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commit = offline_hub_cache("z-lab/Qwen3.5-4B-DFlash", REAL.read_bytes(), monkeypatch)
    path = write_config(tmp_path / "d", mutated(set_taps([1, 5, 9, 13, 17, 21, 25, 30])))
    result = dflash("diff", path, "--from-hub", "z-lab/Qwen3.5-4B-DFlash", "--format", "json")
    assert result.code == 1, result.err
    doc = result.json()
    _envelope(doc)
    assert doc["upstream"]["commit"] == commit and doc["critical_differences"] is True
    assert list(doc)[:2] == ["version", "tool"]


def test_where_json(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "d")
    doc = dflash("where", path.parent, "--format", "json").json()
    _envelope(doc)
    assert doc["config"] == str(path) and doc["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_fix_json_dry_run_and_write(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "d", mutated(lambda d: d.__delitem__("use_sliding_window")))
    old = path.read_bytes()
    dry = dflash("fix", path, "--dry-run", "--format", "json")
    assert dry.code == 1 and path.read_bytes() == old
    doc = dry.json()
    _envelope(doc)
    (f,) = doc["files"]
    assert doc["dry_run"] is True and f["changed"] is True and f["written"] is None
    assert '+  "use_sliding_window": true' in f["diff"].replace(",", "")
    assert f["before"]["sha256"] == hashlib.sha256(old).hexdigest()
    wrote = dflash("fix", path, "--yes", "--format", "json")
    assert wrote.code == 0, wrote.err
    (f,) = wrote.json()["files"]
    assert f["written"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest() == f["after"]["sha256"]
    assert f["written"]["lock_file"] and f["written"]["backup"]
    again = dflash("fix", path, "--yes", "--format", "json").json()
    assert again["files"][0]["changed"] is False


def test_verify_json(dflash: Run, tmp_path: Path) -> None:
    path = write_config(tmp_path / "d", mutated(lambda d: d.__delitem__("use_sliding_window")))
    assert dflash("fix", path, "--yes").code == 0
    ok = dflash("verify", path, "--format", "json")
    assert ok.code == 0
    doc = ok.json()
    _envelope(doc)
    assert doc["ok"] is True and doc["lock"]["sha256"] == doc["sha256"] == doc["expected"]
    path.write_bytes(path.read_bytes() + b" ")
    bad = dflash("verify", path, "--format", "json")
    assert bad.code == 1 and bad.json()["ok"] is False and "MISMATCH" in bad.err


@pytest.mark.parametrize(
    "args",
    [
        ("check", "{missing}", "--format", "json"),
        ("check", "{missing}", "--format=json"),
        ("check", "{missing}", "--format", "json", "--bogus-option"),  # click refuses the command line
        ("preflight", "--format", "json", "--", "vllm", "serve"),
        ("diff", "{missing}", "--from-hub", "a/b", "--format", "json"),
        ("fix", "{missing}", "--yes", "--format", "json"),
        ("fix", "{config}", "--format", "json"),  # cannot ask: needs --yes or --dry-run
        ("verify", "{config}", "--format", "json"),  # no lock entry
        ("where", "{missing}", "--format", "json"),
    ],
)
def test_exit_2_still_writes_one_json_document(dflash: Run, tmp_path: Path, args: tuple[str, ...]) -> None:
    config = write_config(tmp_path / "d")
    argv = [a.format(missing=tmp_path / "nothing", config=config) for a in args]
    result = dflash(*argv)
    assert result.code == 2, result
    doc = result.json()
    _envelope(doc)
    (error,) = doc["errors"]
    assert error in result.err.replace("\n", " ") or "Error: " in result.err, result
    if args[0] in ("check", "preflight"):
        assert doc["files"] == [] and doc["summary"]["files"] == 0
    if args[0] == "fix":
        assert doc["files"] == []


# --- the README's samples are this code's output -----------------------------------------------------

SAMPLE = re.compile(r"<!-- output: (?P<args>[^>]*?) -->\n```\n(?P<body>.*?)```\n", re.S)


def test_readme_output_samples_are_produced_by_the_code(dflash: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    section = (ROOT / "docs" / "output-formats.md").read_text(encoding="utf-8")
    samples = list(SAMPLE.finditer(section))
    assert len(samples) == 2
    monkeypatch.chdir(ROOT)
    for sample in samples:
        result = dflash(*sample["args"].split())
        shown = sample["body"].splitlines()
        if "--format github" in sample["args"]:  # one line of several
            assert set(shown) <= set(result.out.splitlines()), sample["args"]
        else:
            assert shown == result.out.splitlines(), sample["args"]


def test_diff_and_where_say_paths_as_the_user_gave_them(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative path in, a relative path out (as check prints them and the docs show them); an absolute
    one stays absolute."""
    offline_hub_cache("z-lab/Qwen3.5-4B-DFlash", REAL.read_bytes(), monkeypatch)
    write_config(tmp_path / "models" / "d", mutated(set_taps([1, 5, 9, 13, 17, 21, 25, 30])))
    monkeypatch.chdir(tmp_path)
    relative = dflash("diff", "models/d", "--from-hub", "z-lab/Qwen3.5-4B-DFlash")
    assert relative.code == 1, relative.err
    assert relative.out.startswith("models/d/config.json  vs  z-lab/Qwen3.5-4B-DFlash@"), relative.out
    assert dflash("diff", "models/d", "--from-hub", "z-lab/Qwen3.5-4B-DFlash", "--format", "json").json()[
        "path"
    ] == str(Path("models/d/config.json"))
    absolute = dflash("diff", tmp_path / "models" / "d", "--from-hub", "z-lab/Qwen3.5-4B-DFlash")
    assert absolute.out.startswith(f"{tmp_path / 'models' / 'd' / 'config.json'}  vs  "), absolute.out
    # A model in a Hugging Face cache named relative to here: the symlink's target too.
    shutil.copytree(FIXTURES / "hf-cache", tmp_path / "hf-cache", symlinks=True)
    monkeypatch.setenv("HF_HUB_CACHE", "hf-cache/hub")
    found = dflash("where", "z-lab/Qwen3.6-27B-DFlash")
    assert found.code == 0, found.err
    rows = dict(line.split(None, 1) for line in found.out.splitlines() if not line.startswith("git blob"))
    assert rows["config"].startswith("hf-cache/hub/models--z-lab--Qwen3.6-27B-DFlash/snapshots/")
    assert rows["reads"].startswith("hf-cache/hub/models--z-lab--Qwen3.6-27B-DFlash/blobs/"), found.out
    assert str(tmp_path) not in found.out

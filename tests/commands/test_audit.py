"""`audit` against a Hub on loopback (tests/publisherhub.py: authors with drafters of every format, plain models,
gated repos, deliberately broken drafters, their base models, faults on demand) through the real huggingface_hub and
the CLI: which repos become rows, how each is judged and against which target, the JSON report and its schema, faults,
the deadline, Ctrl-C and the journal a re-run goes on from."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import Result
from jsonschema import Draft202012Validator
from publisherhub import FIXTURE_BASE_MODELS, Population, PublisherHub, publish_fixtures, use

from commands.conftest import interrupted, settle
from dflash_cfg.commands.audit import AuditOptions, config_paths, history, parse_argument
from dflash_cfg.errors import HubError, UsageError
from dflash_cfg.jsondoc.document import parse
from dflash_cfg.lint.schema import schema_dir
from dflash_cfg.model import Requirement, Severity
from dflash_cfg.model.audit import AuditRow, AuditTarget, Noted, Step

Run = Callable[..., Result]
SCHEMA: dict[str, Any] = json.loads(schema_dir().joinpath("audit.schema.json").read_text(encoding="utf-8"))


def report(result: Result) -> dict[str, Any]:
    """The JSON report, validated against the shipped schema."""
    doc = result.json()
    Draft202012Validator(SCHEMA).validate(doc)
    assert isinstance(doc, dict)
    return doc


def rows(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["repo"] if r["revision"] == "main" else f"{r['repo']}@{r['revision']}": r for r in doc["repos"]}


def journal_lines(cache: Path) -> list[str]:
    found = sorted((cache / "dflash-cfg" / "audit").glob("*.jsonl"))
    assert len(found) <= 1
    return found[0].read_text(encoding="utf-8").splitlines() if found else []


def about(paths: list[str], repo: str) -> list[str]:
    """The requests about `repo`: its model_info, its commits and its files (never its base model's)."""
    return [
        p
        for p in paths
        if p.split("?")[0] == f"/api/models/{repo}"
        or p.startswith((f"/api/models/{repo}/", f"/{repo}/resolve/", f"/api/resolve-cache/models/{repo}/"))
    ]


def errors_of(row: dict[str, Any]) -> list[str]:
    return [f["rule"] for f in row["findings"] if f["severity"] == "error"]


# Where each deliberately broken drafter of the population is wrong, and the rule that says so. All are errors but
# depth-mismatch: a num_target_layers that is not the base's is DF403, a warning by the severity policy (vLLM does
# not read it and SGLang captures with the running target's depth: no engine drafts differently).
BROKEN_RULES = {
    "tap-past-depth": "DF104",
    "mask-out-of-vocab": "DF112",
    "layer-types-length": "DF201",
    "invalid-json": "DF001",
    "aux-past-depth": "DF405",
    "depth-mismatch": "DF403",
}


# --- what is audited, and how ----------------------------------------------------------------------------------


def test_an_audit_of_every_author_judges_every_drafter_against_its_base(
    big: tuple[PublisherHub, Population], cache: Path, dflash: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = big
    use(hub, monkeypatch)
    result = dflash("audit", *pop.authors, "--format", "json")
    assert result.code == 1, result.err  # the broken drafters fail it
    doc = report(result)
    found = rows(doc)
    assert set(found) == {r.repo for r in pop.drafters}  # every drafter is a row, no plain model is
    for published in pop.drafters:
        row = found[published.repo]
        assert row["commit"] == published.commits[-1]
        if published.gated:  # without a token its config.json cannot be read: a row that says why
            assert row["status"] == "unreadable" and "gated" in row["reason"] and "HF_TOKEN" in row["reason"]
            continue
        assert row["status"] == "judged", row
        assert row["kind"] == published.kind
        target = row["target"]
        if published.base_model is None:
            assert target == {"repo": None, "status": "none", "commit": None, "why": None}
        elif not published.base_published or pop.repo(published.base_model).gated:
            assert target["status"] == "unknown" and target["repo"] == published.base_model and target["why"]
        else:
            assert target["status"] == "read"
            assert target["commit"] == pop.repo(published.base_model).commits[-1]
        if published.broken is None:
            assert not row["fails"], (published.repo, row["findings"])
        else:
            assert BROKEN_RULES[published.broken] in [f["rule"] for f in row["findings"]], row["findings"]
            assert row["fails"] == (published.broken != "depth-mismatch")
    assert {a["author"]: a["drafters"] for a in doc["authors"]} == {
        a: sum(1 for r in pop.drafters if r.author == a) for a in pop.authors
    }
    summary = doc["summary"]
    assert summary["unreadable"] == sum(1 for r in pop.drafters if r.gated) > 0
    assert summary["judged"] + summary["unreadable"] == summary["repos"] == len(pop.drafters)
    assert doc["complete"] is False  # the gated ones were not read
    assert "audit incomplete" in result.err


def test_with_a_token_the_gated_drafters_and_bases_are_read_too(
    big: tuple[PublisherHub, Population], cache: Path, dflash: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = big
    use(hub, monkeypatch, token=True)
    result = dflash("audit", *pop.authors, "--format", "json")
    assert result.code == 1
    doc = report(result)
    assert doc["complete"] is True and result.err == ""
    found = rows(doc)
    assert {r for r, row in found.items() if row["status"] == "judged"} == {r.repo for r in pop.drafters}
    for published in pop.drafters:
        target = found[published.repo]["target"]
        assert target["status"] == (
            "read" if published.base_published else "none" if not published.base_model else "unknown"
        )
    assert {r for r, row in found.items() if row["fails"]} == {
        repo for repo, how in pop.broken.items() if how != "depth-mismatch"
    }
    # The retrained drafters: the history shows the window (and the taps) changing in their last commit.
    assert pop.retrained
    for retrained in pop.retrained:
        steps = found[retrained]["history"]
        assert steps[0]["commit"] == pop.repo(retrained).commits[-1]
        assert "sliding_window" in steps[0]["changed"]
        assert steps[0]["values"]["sliding_window"] != steps[1]["values"]["sliding_window"]


def test_the_text_report_is_one_row_per_repo_and_says_what_was_checked_alone(
    small: tuple[PublisherHub, Population], cache: Path, dflash: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    use(hub, monkeypatch, token=True)
    result = dflash("audit", "someone-else")
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0].split()[:4] == ["REPO", "COMMIT", "DATE", "BASE"]
    table = lines[1 : lines.index("")]
    drafters = [r for r in pop.drafters if r.author == "someone-else"]
    assert sorted(line.split()[0] for line in table) == sorted(r.repo for r in drafters)
    for line in table:
        published = pop.repo(line.split()[0])
        assert published.commits[-1][:7] in line
        counts = re.search(r"\s(\d+)\s+(\d+)\s+(\d+)(?:\s+(DF\d{3}) |$)", line)
        assert counts is not None, line
        if published.broken and published.broken != "depth-mismatch":
            assert int(counts[1]) > 0 and counts[4] is not None  # the first error, in the last column
        if published.base_model is None:
            assert "(none named: checked alone)" in line
        elif not published.base_published:
            assert f"{published.base_model} (not read: checked alone)" in line
    assert "base models not read (their drafters were checked alone):" in lines
    assert any(line.startswith("audit: ") and "judged" in line for line in lines)


def test_a_repo_at_a_revision_a_non_drafter_and_an_unknown_author(
    small: tuple[PublisherHub, Population], cache: Path, dflash: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    use(hub, monkeypatch, token=True)
    retrained = pop.retrained[0]
    first = pop.repo(retrained).commits[0]
    plain = next(r.repo for r in pop.repos if r.kind == "model" and r.config_path is not None)
    result = dflash("audit", f"{retrained}@{first}", retrained, plain, "nobody-here", "--format", "json")
    assert result.code == 0, result.err
    doc = report(result)
    found = rows(doc)
    assert set(found) == {f"{retrained}@{first}", retrained, plain}
    old, new = found[f"{retrained}@{first}"], found[retrained]
    assert old["commit"] == first and new["commit"] == pop.repo(retrained).commits[-1]
    assert old["values"]["sliding_window"] != new["values"]["sliding_window"]
    assert old["history"] == []  # the first commit has no history before it
    assert found[plain]["status"] == "not-a-drafter" and "not a DFlash drafter" in found[plain]["reason"]
    (author,) = doc["authors"]
    assert author["author"] == "nobody-here" and author["listed"] is None and "not found" in author["error"]
    assert doc["complete"] is False


def test_nothing_judged_and_something_not_read_exits_2(
    small: tuple[PublisherHub, Population], cache: Path, dflash: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    use(hub, monkeypatch)
    gated = next(r.repo for r in pop.drafters if r.gated)
    result = dflash("audit", "nobody-here", "nobody-here/nothing", gated, "--format", "json")
    assert result.code == 2
    doc = report(result)
    assert doc["summary"]["judged"] == 0 and doc["complete"] is False
    found = rows(doc)
    assert (
        found["nobody-here/nothing"]["status"] == "unreadable" and "not found" in found["nobody-here/nothing"]["reason"]
    )
    assert found[gated]["status"] == "unreadable" and "gated" in found[gated]["reason"]
    assert "not found" in doc["authors"][0]["error"]
    assert "audit incomplete: 3 not judged" in result.err


def test_the_real_published_drafters_audit_with_no_error(
    cache: Path, dflash: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    with PublisherHub() as hub:
        published = publish_fixtures(hub)
        use(hub, monkeypatch)
        authors = sorted({repo.split("/")[0] for repo in published.drafters})
        result = dflash("audit", *authors, "--format", "json")
    assert result.code == 0, result.out
    doc = report(result)
    found = rows(doc)
    assert set(found) == set(published.drafters)
    for repo, row in found.items():
        assert row["status"] == "judged" and errors_of(row) == [], (repo, row["findings"])
        assert row["path"] == published.files[repo]  # XiaomiMiMo's drafter is dflash/config.json
        base = FIXTURE_BASE_MODELS.get(repo)
        assert row["target"]["repo"] == base
        assert row["target"]["status"] == (
            "read" if base in published.targets else "none" if base is None else "unknown"
        )
    assert doc["complete"] is True


# --- faults, the deadline, Ctrl-C and the journal --------------------------------------------------------------


def _comparable(doc: dict[str, Any]) -> dict[str, Any]:
    return {r["repo"]: (r["status"], r["commit"], r["target"], r["findings"], r["history"]) for r in doc["repos"]}


@pytest.mark.slow
def test_rate_limits_server_errors_and_latency_are_survived(
    small: tuple[PublisherHub, Population], cache: Path, dflash: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    hub, pop = small
    use(hub, monkeypatch, token=True)
    clean = report(dflash("audit", *pop.authors, "--format", "json"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "fresh"))  # no journal: every repo read again
    hub.faults.latency = 0.02
    infos = hub.add_faults(match="/api/models/", method="GET", rate_limit=4, retry_after=0)  # model_info, commits
    listing = hub.add_faults(match="/api/models?", rate_limit=1, retry_after=0)  # a listing page
    files = hub.add_faults(match="/config.json", method="GET", server_errors=4)  # downloads of config files
    try:
        result = dflash("audit", *pop.authors, "--format", "json")
    finally:
        hub.clear_faults()
    assert result.code == 1, result.err
    faulty = report(result)
    assert infos.fired == 4 and listing.fired == 1 and files.fired == 4
    assert faulty["summary"]["retries"] >= 9
    assert faulty["complete"] is True
    assert _comparable(faulty) == _comparable(clean)


def test_a_deadline_too_short_leaves_rows_not_done_and_keeps_what_was_judged(
    small: tuple[PublisherHub, Population], cache: Path, dflash: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    use(hub, monkeypatch, token=True)
    # A slow API (model_info and the commit lists; its retries stop at the deadline), fast downloads: what the run
    # leaves in flight at its deadline ends at once, rather than in huggingface_hub's back-off.
    slow = hub.add_faults(match="/api/models/", latency=0.15)
    try:
        result = dflash("audit", *pop.authors, "--format", "json", "--deadline", "1.5", "--jobs", "2")
    finally:
        slow.latency = 0.0
    doc = report(result)
    assert doc["deadline"] == 1.5 and doc["complete"] is False
    statuses = {r["status"] for r in doc["repos"]} | {"listed" if a["error"] is None else "not" for a in doc["authors"]}
    assert "not-done" in statuses or "not" in statuses
    summary = doc["summary"]
    assert result.code == (1 if summary["failing"] else 0 if summary["judged"] else 2)  # judged: judged alone
    assert "deadline passed" in result.err
    kept = {json.loads(line)["key"]["repo"] for line in journal_lines(cache)}
    assert kept <= {r["repo"] for r in doc["repos"] if r["status"] == "judged"} | {r.repo for r in pop.repos}
    settle()  # what the first run left in flight ends before the second starts
    again = report(dflash("audit", *pop.authors, "--format", "json"))
    assert again["complete"] is True and again["summary"]["reused"] == len(kept)
    first = rows(doc)
    for row in again["repos"]:
        if row["reused"]:
            assert row["repo"] in kept and row["findings"] == first[row["repo"]]["findings"]


@pytest.mark.slow
def test_ctrl_c_loses_only_the_repos_in_flight_and_a_rerun_reuses_the_rest(
    big: tuple[PublisherHub, Population], cache: Path, dflash: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = big
    use(hub, monkeypatch, token=True)
    interrupted(["audit", *pop.authors, "--jobs", "2", "--format", "json"], lambda: bool(journal_lines(cache)), hub)
    kept = [json.loads(line) for line in journal_lines(cache)]
    assert 0 < len(kept) < len(pop.drafters)
    assert all(set(entry["key"]) == {"repo", "revision", "commit", "tool", "transformers"} for entry in kept)

    before = len(hub.requests)
    rerun = dflash("audit", *pop.authors, "--format", "json")
    requests = [path for _, path in hub.requests[before:]]
    assert rerun.code == 1, rerun.err
    doc = report(rerun)
    assert doc["complete"] is True and doc["summary"]["reused"] == len(kept)
    found = rows(doc)
    assert set(found) == {r.repo for r in pop.drafters}
    for entry in kept:
        repo = entry["key"]["repo"]
        assert found[repo]["reused"] is True
        assert found[repo]["findings"] == entry["row"]["findings"]
        assert about(requests, repo) == []  # the listing's commit is the journal's: no request
    # The complete run rewrote the journal to its own rows, each once.
    assert len(journal_lines(cache)) == len({json.loads(line)["key"]["repo"] for line in journal_lines(cache)})
    text = dflash("audit", *pop.authors)
    assert f"reused {len(journal_lines(cache))} finished repos from the journal" in text.out


def test_a_new_commit_is_read_again_and_the_rest_reused(
    small: tuple[PublisherHub, Population], cache: Path, dflash: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    use(hub, monkeypatch, token=True)
    first = report(dflash("audit", "z-lab", "--format", "json"))
    repo = next(r.repo for r in pop.drafters if r.author == "z-lab" and r.broken is None and not r.gated)
    data = json.loads(hub.files(repo)["config.json"])
    data["dflash_config"]["mask_token_id"] = data["vocab_size"] + 5
    commit = hub.publish(repo, {"config.json": (json.dumps(data, indent=2) + "\n").encode()})
    second = report(dflash("audit", "z-lab", "--format", "json"))
    changed = rows(second)[repo]
    assert changed["commit"] == commit and changed["reused"] is False and "DF112" in errors_of(changed)
    assert "mask_token_id" in changed["history"][0]["changed"]
    lasting = {r["repo"] for r in first["repos"] if r["target"]["status"] != "unknown"}
    assert {r["repo"] for r in second["repos"] if r["reused"]} == lasting - {repo}


# --- the parts -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "asked"),
    [
        ("z-lab", ("z-lab", None, "main")),
        ("z-lab/Qwen3-4B-DFlash-b16", (None, "z-lab/Qwen3-4B-DFlash-b16", "main")),
        ("z-lab/Qwen3-4B-DFlash-b16@v1.0", (None, "z-lab/Qwen3-4B-DFlash-b16", "v1.0")),
    ],
)
def test_arguments(argument: str, asked: tuple[str | None, str | None, str]) -> None:
    found = parse_argument(argument)
    assert (found.author, found.repo, found.revision) == asked


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"targets": ()}, "name an AUTHOR"),
        ({"targets": ("a/b/c",)}, "give an AUTHOR, ORG/NAME or ORG/NAME@REV"),
        ({"targets": ("-x",)}, "not a Hub user or organisation"),
        ({"targets": ("org/name@",)}, "give a revision after @"),
        ({"targets": ("z-lab",), "jobs": 0}, "--jobs 0"),
        ({"targets": ("z-lab",), "deadline": 0}, "--deadline 0"),
    ],
)
def test_options_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises((UsageError, HubError), match=message):
        AuditOptions(**options)


def test_config_paths() -> None:
    assert config_paths(None) is None
    assert config_paths(("README.md",)) == ()
    assert config_paths(("config.json", "dflash/config.json", "a/b/config.json")) == (
        "config.json",
        "dflash/config.json",
    )


def test_history_joins_commits_with_the_same_file_and_says_what_changed() -> None:
    a = parse(b'{"dflash_config": {"target_layer_ids": [1, 2], "mask_token_id": 7}, "sliding_window": 2048}')
    b = parse(b'{"dflash_config": {"target_layer_ids": [1, 3], "mask_token_id": 7}, "sliding_window": 2048}')
    steps = history(
        [
            ("c4" * 20, "2026-03-04", "bb" * 20, b),
            ("c3" * 20, "2026-03-03", "bb" * 20, b),  # a README change: the same config.json
            ("c2" * 20, "2026-03-02", "aa" * 20, a),
            ("c1" * 20, "2026-03-01", None, None),  # before the drafter was uploaded
        ]
    )
    assert [s.commit for s in steps] == ["c3" * 20, "c2" * 20, "c1" * 20]
    assert steps[0].changed == ("target_layer_ids",) and steps[1].changed == () and steps[2].values is None
    assert steps[2].note == "no config file at this commit"


def test_a_row_reads_back_from_its_journal_form() -> None:
    row = AuditRow(
        repo="z-lab/X",
        revision="main",
        status="judged",
        commit="ab" * 20,
        date="2026-03-01T00:00:00Z",
        path="config.json",
        kind="dflash",
        target=AuditTarget(repo="Qwen/Y", status="read", commit="cd" * 20),
        findings=(
            Noted(
                rule="DF104",
                name="tap-range",
                severity=Severity.ERROR,
                pointer="/x",
                message="m",
                engines=(Requirement("vllm"),),
            ),
        ),
        fails=True,
        values=(("target_layer_ids", [1, 2]), ("rope_theta", 1e6)),
        history=(Step(commit="ab" * 20, date=None, git_blob_sha1=None, values=None, note="n"),),
    )
    assert AuditRow.from_json(json.loads(json.dumps(row.to_json()))) == row
    with pytest.raises((KeyError, TypeError, ValueError)):
        AuditRow.from_json({**row.to_json(), "status": "maybe"})

"""`catalog update` and `catalog show` against a Hub on loopback (tests/publisherhub.py: many authors' repos,
drafters of every format, plain models, gated repos, faults on demand) through the real huggingface_hub and the CLI:
what is found, what is skipped, what is kept across runs, how failures, the deadline, Ctrl-C and offline mode end a
run, and what `show` prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import Result
from publisherhub import Population, PublisherHub, git_blob_id, publish_fixtures, use

from commands.conftest import interrupted
from dflash_cfg.commands.catalog import UpdateOptions, listing_says_no
from dflash_cfg.errors import UsageError
from dflash_cfg.lint.published import target_shape
from dflash_cfg.model.catalog_update import age
from dflash_cfg.sources.catalog import from_json, shipped
from dflash_cfg.sources.publishers import Listed

Run = Callable[..., Result]


def catalog_file(cache: Path) -> dict[str, Any]:
    data = json.loads((cache / "dflash-cfg" / "catalog.json").read_bytes())
    from_json(data, "the test's catalog")  # a whole, valid catalog
    assert isinstance(data, dict)
    return data


def entries(cache: Path) -> dict[str, dict[str, Any]]:
    return {e["repo"]: e for e in catalog_file(cache)["drafters"]}


def readable(pop: Population, *, token: bool) -> set[str]:
    """The drafters a run reads: every one but the config that is not JSON, and without a token the gated."""
    return {r.repo for r in pop.drafters if r.broken != "invalid-json" and (token or not r.gated)}


def plain_drafter(pop: Population) -> str:
    """A drafter that is neither broken nor gated."""
    return next(r.repo for r in pop.drafters if r.broken is None and not r.gated)


def names(doc: dict[str, Any], key: str) -> set[str]:
    out: set[str] = set()
    for author in doc["authors"]:
        out |= {item if isinstance(item, str) else item["repo"] for item in author[key]}
    return out


# huggingface_hub's own lookup of AI-agent harnesses (utils/_detect_agent.py), once a process and day unless
# HF_HUB_DISABLE_TELEMETRY was set when it was imported: not a request of the run's.
NOT_THE_RUNS = "/api/agent-harnesses"


def requests_during(hub: PublisherHub, run: Callable[[], Result]) -> tuple[Result, list[str]]:
    """What `run` printed, and the paths it requested."""
    before = len(hub.requests)
    result = run()
    return result, [path for _, path in hub.requests[before:] if not path.startswith(NOT_THE_RUNS)]


def about(paths: list[str], repo: str) -> list[str]:
    """The requests about `repo`: its model_info and its files."""
    return [p for p in paths if p.split("?")[0] in (f"/api/models/{repo}",) or p.startswith(f"/{repo}/resolve/")]


# --- what a run finds ---------------------------------------------------------------------------------------


def test_update_of_every_author_finds_exactly_the_drafters_and_their_bases(
    big: tuple[PublisherHub, Population], dflash: Run, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = big
    use(hub, monkeypatch, token=True)
    result = dflash("catalog", "update", *pop.authors, "--format", "json")
    assert result.code == 0, result.err
    doc = result.json()
    assert doc["complete"] is True
    assert {a["author"]: a["listed"] for a in doc["authors"]} == {a: len(pop.of(a)) for a in pop.authors}
    assert names(doc, "drafters") == readable(pop, token=True)
    not_json = {r.repo for r in pop.drafters if r.broken == "invalid-json"}
    assert names(doc, "skipped") == {r.repo for r in pop.repos if not r.is_drafter} | not_json
    assert names(doc, "failed") == set()
    assert names(doc, "new") == readable(pop, token=True)
    # Never by name alone: drafters named without "dflash" are found, models named with it are not.
    assert any("dflash" not in r.lower() for r in names(doc, "drafters"))
    assert any("dflash" in r.lower() for r in names(doc, "skipped"))

    recorded = entries(cache)
    assert set(recorded) == readable(pop, token=True)
    for repo, entry in recorded.items():
        published = pop.repo(repo)
        (revision,) = entry["revisions"]
        assert revision["commit"] == published.commits[-1]
        assert revision["git_blob_sha1"] == git_blob_id(hub.files(repo)["config.json"])
        assert revision["trust"] == "hub" and revision["complete"] is True
        assert revision["source"] == f"{hub.endpoint}/{repo}/resolve/{published.commits[-1]}/config.json"
        assert entry["shape"]["method"] == published.kind
        assert entry["base_model"] == published.base_model
        if published.base_published:  # the token reads the gated targets too
            base = target_shape(json.loads(hub.files(published.base_model or "")["config.json"]))
            assert base is not None
            assert entry["base_shape"] == {
                "num_hidden_layers": base.num_hidden_layers,
                "hidden_size": base.hidden_size,
                "vocab_size": base.vocab_size,
            }
        else:
            assert entry["base_shape"] is None
    unknown = {b["repo"] for b in doc["base_models"] if not b["known"]}
    assert unknown == set(pop.missing_bases)  # recorded as unknown, not an error: the run exits 0


def test_gated_repos_without_a_token_are_reported_and_read_with_it(
    small: tuple[PublisherHub, Population], dflash: Run, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    gated = {r.repo for r in pop.drafters if r.gated}
    assert gated, "the population has gated drafters"
    use(hub, monkeypatch, token=False)
    result = dflash("catalog", "update", *pop.authors)
    assert result.code == 2
    for repo in gated:
        (line,) = [line for line in result.out.splitlines() if line.strip().startswith(f"failed    {repo}:")]
        assert "gated" in line and "HF_TOKEN" in line
    assert set(entries(cache)) == readable(pop, token=False)
    assert "catalog update incomplete" in result.err

    use(hub, monkeypatch, token=True)
    again = dflash("catalog", "update", *pop.authors, "--format", "json")
    assert again.code == 0, again.err
    doc = again.json()
    assert names(doc, "new") == gated
    assert names(doc, "unchanged") == readable(pop, token=False)
    assert set(entries(cache)) == readable(pop, token=True)


def test_a_retrain_adds_a_revision_and_keeps_the_old_one(
    small: tuple[PublisherHub, Population], dflash: Run, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    use(hub, monkeypatch, token=True)
    assert dflash("catalog", "update", *pop.authors).code == 0
    repo = pop.retrained[0]
    old = hub.commits(repo)[-1]
    config = json.loads(hub.files(repo)["config.json"])
    taps = config["dflash_config"]["target_layer_ids"]
    config["dflash_config"]["target_layer_ids"] = [t + 1 for t in taps]
    new = hub.publish(repo, {"config.json": (json.dumps(config, indent=2) + "\n").encode()}, message="Retrain")

    result, requests = requests_during(hub, lambda: dflash("catalog", "update", *pop.authors, "--format", "json"))
    assert result.code == 0, result.err
    doc = result.json()
    assert [(n["repo"], n["commit"], n["first"]) for a in doc["authors"] for n in a["new"]] == [(repo, new, False)]
    assert names(doc, "unchanged") == readable(pop, token=True) - {repo}
    # model_info and config.json of the one repo that changed; no request at all about a drafter that did not.
    assert about(requests, repo) == [f"/api/models/{repo}?blobs=true", f"/{repo}/resolve/{new}/config.json"]
    assert [r for r in readable(pop, token=True) - {repo} if about(requests, r)] == []
    assert {b["repo"] for b in doc["base_models"]} == set(pop.missing_bases)  # only the unknown one is asked again
    revisions = entries(cache)[repo]["revisions"]
    assert [r["commit"] for r in revisions] == [old, new]
    assert [r["values"]["target_layer_ids"] for r in revisions] == [taps, [t + 1 for t in taps]]

    shown = dflash("catalog", "show", repo)
    assert shown.code == 0
    assert "revision 2 of 2 (newest): " + new in shown.out and "revision 1 of 2: " + old in shown.out
    assert json.dumps(taps) in shown.out.replace(",  ", ", ")


def test_repos_named_with_repo_and_an_unknown_author(
    small: tuple[PublisherHub, Population], dflash: Run, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    use(hub, monkeypatch, token=True)
    drafter = plain_drafter(pop)
    model = next(r for r in pop.repos if not r.is_drafter and r.config_path is not None)
    result = dflash("catalog", "update", "no-such-author", "--repo", drafter, "--repo", model.repo, "--format", "json")
    assert result.code == 2
    doc = result.json()
    (missing,) = [a for a in doc["authors"] if a["author"] == "no-such-author"]
    assert missing["listed"] is None and "not found" in missing["error"]
    assert names(doc, "new") == {drafter}
    assert names(doc, "skipped") == {model.repo}
    assert set(entries(cache)) == {drafter}


def test_the_real_drafters_verified_in_the_shipped_catalog_are_not_read_again(
    dflash: Run, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fixtures/' published drafters, at their recorded commits: a commit the shipped catalog holds byte-verified
    (trust A) costs no request; one it holds reconstructed (trust D: z-lab/Qwen3.6-27B-DFlash) is read from the Hub
    and recorded with trust hub. MiMo's drafter lives in dflash/config.json beside nothing else."""
    with PublisherHub() as hub:
        published = publish_fixtures(hub)
        use(hub, monkeypatch, token=True)
        authors = sorted({repo.split("/")[0] for repo in published.drafters})
        result, requests = requests_during(hub, lambda: dflash("catalog", "update", *authors, "--format", "json"))
    assert result.code == 0, result.err
    doc = result.json()
    verified = {
        e.repo
        for e in shipped().drafters
        if any(r.trust == "A" and r.commit == published.drafters.get(e.repo) for r in e.revisions)
    }
    assert verified >= {"XiaomiMiMo/MiMo-V2.5-Pro-FP4-DFlash", "z-lab/Muse-Glimmer-30B-DFlash2"}
    assert names(doc, "unchanged") == verified
    assert [r for r in verified if about(requests, r)] == []
    assert names(doc, "new") == set(published.drafters) - verified
    assert names(doc, "skipped") == {t for t in published.targets if t.split("/")[0] in authors}  # MiMo's target
    assert names(doc, "failed") == set()
    (revision,) = entries(cache)["z-lab/Qwen3.6-27B-DFlash"]["revisions"]
    assert (revision["commit"], revision["trust"]) == (published.drafters["z-lab/Qwen3.6-27B-DFlash"], "hub")
    assert revision["git_blob_sha1"] == "02ded67db29d5da53cfd57af80155164bb2b0af0"  # the shipped copy's, proven


# --- what the Hub does wrong ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_rate_limits_and_server_errors_are_survived(
    small: tuple[PublisherHub, Population], dflash: Run, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    use(hub, monkeypatch, token=True)
    listing = hub.add_faults(match="/api/models?", rate_limit=1, retry_after=1)
    info = hub.add_faults(match="/api/models/", skip=3, rate_limit=2, retry_after=1, server_errors=1)
    files = hub.add_faults(match="/config.json", method="GET", skip=2, server_errors=2, rate_limit=1, retry_after=0)
    result = dflash("catalog", "update", *pop.authors, "--format", "json")
    assert result.code == 0, result.err
    assert (listing.fired, info.fired, files.fired) == (1, 3, 3)
    doc = result.json()
    assert doc["retries"] == 7
    assert set(entries(cache)) == readable(pop, token=True)
    assert "HTTP Error" not in result.err and "Retrying" not in result.err  # counted, not logged


@pytest.mark.slow
def test_a_cut_body_is_retried_and_never_recorded(
    small: tuple[PublisherHub, Population], dflash: Run, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    use(hub, monkeypatch, token=True)
    cut_once = hub.add_faults(match="/config.json", method="GET", truncate=2)
    drafters = sorted(readable(pop, token=True))
    # One repo's config.json is cut every time: it is never recorded, and fails once the retries that fit in the
    # deadline are spent (1 + 2 s of huggingface_hub's back-off in 6 s).
    always = drafters[0]
    hub.add_faults(match=f"/{always}/resolve/", method="GET", truncate=1000)
    started = time.monotonic()
    result = dflash("catalog", "update", *pop.authors, "--deadline", "6", "--format", "json")
    assert time.monotonic() - started < 6
    assert cut_once.fired == 2
    assert result.code == 2
    doc = result.json()
    assert doc["deadline"] is None
    (failed,) = [n for a in doc["authors"] for n in a["failed"]]
    assert failed["repo"] == always and "cut short" in failed["why"]
    recorded = entries(cache)
    assert set(recorded) == set(drafters) - {always}
    for repo, entry in recorded.items():
        assert entry["revisions"][-1]["git_blob_sha1"] == git_blob_id(hub.files(repo)["config.json"])


@pytest.mark.slow
def test_a_deadline_too_short_exits_2_and_keeps_what_was_done(
    small: tuple[PublisherHub, Population], dflash: Run, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    use(hub, monkeypatch, token=True)
    hub.faults.latency = 0.1
    started = time.monotonic()
    result = dflash("catalog", "update", *pop.authors, "--jobs", "2", "--deadline", "1.5", "--format", "json")
    assert time.monotonic() - started < 4
    assert result.code == 2
    doc = result.json()
    assert doc["deadline"] == 1.5 and doc["complete"] is False
    done = names(doc, "new")
    assert done and names(doc, "not_done")
    assert set(entries(cache)) == done  # what was read is kept
    assert "the deadline passed" in result.err

    hub.faults.latency = 0.0
    again = dflash("catalog", "update", *pop.authors, "--format", "json")
    assert again.code == 0, again.err
    assert names(again.json(), "unchanged") >= done
    assert set(entries(cache)) == readable(pop, token=True)


@pytest.mark.slow
def test_ctrl_c_leaves_a_valid_catalog_and_a_rerun_completes_it_with_fewer_requests(
    big: tuple[PublisherHub, Population], cache: Path, dflash: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    hub, pop = big
    use(hub, monkeypatch, token=True)

    def kept_one() -> bool:
        try:
            return bool(catalog_file(cache)["drafters"])
        except (OSError, ValueError):
            return False  # not written yet (never half-written: the write is a rename)

    interrupted(["catalog", "update", *pop.authors, "--jobs", "2"], kept_one, hub)
    kept = set(entries(cache))
    assert kept and kept < readable(pop, token=True)

    rerun, rerun_requests = requests_during(hub, lambda: dflash("catalog", "update", *pop.authors, "--format", "json"))
    assert rerun.code == 0, rerun.err
    assert names(rerun.json(), "unchanged") >= kept
    assert set(entries(cache)) == readable(pop, token=True)
    assert [r for r in kept if about(rerun_requests, r)] == []  # the listing's commit is the catalog's: no request

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "fresh"))
    fresh, fresh_requests = requests_during(hub, lambda: dflash("catalog", "update", *pop.authors))
    assert fresh.code == 0
    # The interrupted run's last requests (two threads) may reach the server's log only now.
    assert len(rerun_requests) <= len(fresh_requests) - 2 * len(kept) + 2


@pytest.mark.slow
def test_the_hub_down_exits_2_within_the_deadline(tmp_path: Path) -> None:
    """Nothing answers: huggingface_hub retries the listing for half a minute, the deadline ends the run first.
    (A process of its own: the listing's retries go on in the background until it exits.)"""
    env = {**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9", "XDG_CACHE_HOME": str(tmp_path / "xdg"), "NO_COLOR": "1"}
    started = time.monotonic()
    child = subprocess.run(
        [sys.executable, "-m", "dflash_cfg", "catalog", "update", "z-lab", "--deadline", "2", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert time.monotonic() - started < 15
    assert child.returncode == 2, child.stderr
    (author,) = json.loads(child.stdout)["authors"]
    assert author["listed"] is None and author["error"] == "the deadline passed first (2 s)"
    assert child.stderr.splitlines() == [
        "dflash-cfg: catalog update incomplete: 1 not read (the deadline passed); what was read is kept"
    ]


# --- offline, and show -----------------------------------------------------------------------------------------


def test_offline_update_refuses_in_one_line_that_says_what_the_catalog_has(
    small: tuple[PublisherHub, Population], dflash: Run, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    use(hub, monkeypatch, token=True)
    assert dflash("catalog", "update", "--repo", plain_drafter(pop)).code == 0
    before = len(hub.requests)
    for how in (["--offline"], []):
        if not how:
            monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        result = dflash("catalog", "update", *pop.authors, *how)
        assert result.code == 2
        (line,) = result.err.splitlines()
        assert "offline" in line and "the catalog has" in line and "updated just now" in line
        assert str(cache / "dflash-cfg" / "catalog.json") in line
    assert len(hub.requests) == before  # nothing reached the Hub


def test_show_lists_the_catalog_with_the_age_of_the_users_copy(
    small: tuple[PublisherHub, Population], dflash: Run, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    shipped = dflash("catalog", "show")
    assert shipped.code == 0
    assert "z-lab/Qwen3.6-27B-DFlash" in shipped.out and "no catalog of your own yet" in shipped.out

    use(hub, monkeypatch, token=True)
    assert dflash("catalog", "update", *pop.authors).code == 0
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # show reads files only
    result = dflash("catalog", "show")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].split() == ["repo", "method", "shape", "base", "model", "revisions", "newest", "trust"]
    for repo in readable(pop, token=True):
        (row,) = [line for line in lines if line.split()[:1] == [repo]]
        assert pop.repo(repo).commits[-1][:12] in row and row.rstrip().endswith("hub")
    assert "updated just now" in result.out and str(cache / "dflash-cfg" / "catalog.json") in result.out

    doc = dflash("catalog", "show", "--format", "json").json()
    assert doc["user_catalog"]["exists"] is True and doc["user_catalog"]["age"] == "just now"
    assert readable(pop, token=True) <= {e["repo"] for e in doc["catalog"]["drafters"]}

    unknown = dflash("catalog", "show", "nobody/nothing")
    assert unknown.code == 2 and "not in the catalog" in unknown.err and "--repo nobody/nothing" in unknown.err


def test_a_catalog_that_cannot_be_read_is_moved_aside_by_update(
    small: tuple[PublisherHub, Population], dflash: Run, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, pop = small
    use(hub, monkeypatch, token=True)
    path = cache / "dflash-cfg" / "catalog.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    shown = dflash("catalog", "show")
    assert shown.code == 2 and "not JSON" in shown.err
    repo = plain_drafter(pop)
    assert dflash("catalog", "update", "--repo", repo).code == 0
    assert set(entries(cache)) == {repo}
    assert path.with_name("catalog.json.unreadable").read_text() == "{not json"


# --- the pure parts ---------------------------------------------------------------------------------------------


def _row(**given: Any) -> Listed:
    base: dict[str, Any] = {"repo": "org/x", "sha": None, "tags": (), "files": None, "config": None, "gated": False}
    return Listed(**{**base, **given})


@pytest.mark.parametrize(
    ("row", "skipped"),
    [
        pytest.param(_row(), False, id="the listing says nothing"),
        pytest.param(_row(files=("README.md", "model.gguf")), True, id="no config.json"),
        pytest.param(_row(config={"architectures": ["DFlashDraftModel"]}), False, id="a DFlash architecture"),
        pytest.param(_row(config={"architectures": ["Qwen3ForCausalLM"]}), True, id="another model"),
        pytest.param(
            _row(repo="org/Qwen3-DFlash-Target", config={"architectures": ["Qwen3ForCausalLM"]}),
            True,
            id="a DFlash name is no drafter",
        ),
        pytest.param(_row(config={"architectures": ["Qwen3ForCausalLM"]}, tags=("dflash",)), False, id="a DFlash tag"),
        pytest.param(_row(config={"architectures": ["Eagle3Speculator"]}), False, id="a speculators class"),
        pytest.param(_row(config={"auto_map": {}}), False, id="nothing that tells"),
    ],
)
def test_what_the_listing_alone_leaves_out(row: Listed, skipped: bool) -> None:
    assert (listing_says_no(row) is not None) == skipped


@pytest.mark.parametrize(
    ("then", "shown"),
    [
        ("2026-06-04T11:59:30Z", "just now"),
        ("2026-06-04T11:58:00Z", "2 minutes ago"),
        ("2026-06-04T11:00:00Z", "1 hour ago"),
        ("2026-06-01T09:00:00Z", "3 days ago"),
        ("2026-06-05T00:00:00Z", "in the future (check the clock)"),
        ("yesterday", "at yesterday"),
    ],
)
def test_age(then: str, shown: str) -> None:
    assert age(then, "2026-06-04T12:00:00Z") == shown


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (dict(authors=()), "name an AUTHOR"),
        (dict(authors=("z-lab",), jobs=0), "--jobs 0"),
        (dict(authors=("z-lab",), deadline=0.0), "--deadline 0"),
        (dict(authors=("bad name",)), "not a Hub user"),
        (dict(authors=(), repos=("no-slash",)), "ORG/NAME"),
    ],
)
def test_options_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        UpdateOptions(**options)

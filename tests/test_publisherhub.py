"""tests/publisherhub.py seen through the real huggingface_hub client (HfApi, hf_hub_download, snapshot_download):
what a command that lists authors' repos and reads their files at pinned commits gets from it, faults included.
What huggingface_hub retries, and how long it waits, is written down in publisherhub's docstring; the timings
asserted here are those waits."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from huggingface_hub import HfApi, hf_hub_download, snapshot_download
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from publisherhub import (
    FIXTURES,
    Faults,
    Population,
    PublishedRepo,
    PublisherHub,
    git_blob_id,
    populate,
    publish_fixtures,
    standard_taps,
)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[PublisherHub, Population]]:
    with PublisherHub() as hub:
        yield hub, populate(hub)


@pytest.fixture
def hub(served: tuple[PublisherHub, Population]) -> Iterator[PublisherHub]:
    """The module's populated hub, with no faults set (and none left for the next test)."""
    served[0].clear_faults()
    yield served[0]
    served[0].clear_faults()


@pytest.fixture
def population(served: tuple[PublisherHub, Population]) -> Population:
    return served[1]


@pytest.fixture
def open_repos(population: Population) -> list[PublishedRepo]:
    """Repos with a config.json that anyone may download (each test takes its own)."""
    return [r for r in population.repos if not r.gated and r.config_path == "config.json"]


def download(hub: PublisherHub, cache: Path, repo: str, name: str = "config.json", **kwargs: Any) -> Path:
    return Path(hf_hub_download(repo, name, cache_dir=cache, endpoint=hub.endpoint, **kwargs))


def cached_files(cache: Path) -> list[str]:
    """Every file and symlink under the cache but the lock files."""
    return sorted(
        str(p.relative_to(cache))
        for p in cache.rglob("*")
        if (p.is_file() or p.is_symlink()) and ".locks" not in p.parts
    )


def timed(call: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    started = time.monotonic()
    result = call(*args, **kwargs)
    return result, time.monotonic() - started


# ----------------------------------------------------------------------------------------------------- listing


def test_the_server_starts_and_stops_in_milliseconds() -> None:
    hub, started = timed(PublisherHub)
    try:
        hub.publish("org/one", {"config.json": b"{}\n"})
        assert HfApi(endpoint=hub.endpoint).model_info("org/one").sha == hub.commits("org/one")[0]
        with pytest.raises(ValueError, match="regardless of case"):
            hub.publish("org/One", {"config.json": b"{}\n"})
    finally:
        _, stopped = timed(hub.close)
    assert started < 0.25 and stopped < 0.25


def test_list_models_pages_through_every_repo_of_each_author(hub: PublisherHub, population: Population) -> None:
    api = HfApi(endpoint=hub.endpoint)
    assert len(population.authors) >= 5
    for author in population.authors:
        listed = [m.id for m in api.list_models(author=author)]
        assert sorted(listed) == sorted(r.repo for r in population.of(author)), author
        assert len(listed) == len(set(listed))
    # z-lab has more repos than a page holds: the client followed the Link header to the next pages.
    assert len(population.of("z-lab")) > hub.page_size
    pages = [path for method, path in hub.requests if path.startswith("/api/models?") and "author=z-lab" in path]
    assert len(pages) >= 2 and sum("cursor=" in p for p in pages) >= 1


def test_list_items_carry_what_the_hub_sends(hub: PublisherHub, population: Population) -> None:
    api = HfApi(endpoint=hub.endpoint)
    plain = {m.id: m for m in api.list_models(author="RedHatAI")}
    spec = next(r for r in population.of("RedHatAI") if r.gated)
    # As the Hub: without full/expand an item has no sha, no siblings, no gated flag.
    item = plain[spec.repo]
    assert item.sha is None and item.siblings is None and item.gated is None and item.created_at is not None
    assert "region:us" in (item.tags or [])
    full = {m.id: m for m in api.list_models(author="RedHatAI", full=True, cardData=True)}
    item = full[spec.repo]
    assert item.sha == spec.commits[-1]
    assert item.gated == spec.gated
    assert {s.rfilename for s in item.siblings or []} >= {"config.json", "README.md"}
    assert item.card_data is not None and item.card_data.base_model in (spec.base_model, [spec.base_model])
    expanded = {m.id: m for m in api.list_models(author="RedHatAI", expand=["sha", "gated"])}
    assert expanded[spec.repo].sha == spec.commits[-1] and expanded[spec.repo].gated == spec.gated
    assert expanded[spec.repo].tags is None
    # The card's tags are the Hub's tags: a filter finds only tagged repos, so it misses untagged drafters.
    tagged = {m.id for m in api.list_models(author="z-lab", filter="dflash")}
    assert tagged == {r.repo for r in population.of("z-lab") if "dflash" in r.card_tags}
    assert {m.id for m in api.list_models(author="nvidia", search="dflash")} == {
        r.repo for r in population.of("nvidia") if "dflash" in r.repo.lower()
    }
    assert len(list(api.list_models(author="z-lab", limit=3))) == 3


def test_list_repo_commits_newest_first_across_pages() -> None:
    with PublisherHub(page_size=2) as hub:
        made = [hub.publish("org/many", {"config.json": b'{"v": %d}\n' % i}) for i in range(5)]
        hub.tag("org/many", "v1.0", made[1])
        api = HfApi(endpoint=hub.endpoint)
        assert api.model_info("org/many", revision="v1.0").sha == made[1]
        assert [t.target_commit for t in api.list_repo_refs("org/many").tags] == [made[1]]
        commits = api.list_repo_commits("org/many")
        assert [c.commit_id for c in commits] == made[::-1]
        assert commits[-1].title == "initial commit"
        assert [c.commit_id for c in api.list_repo_commits("org/many", revision=made[2])] == made[2::-1]
        assert api.list_repo_files("org/many", revision=made[0]) == ["config.json"]


# ----------------------------------------------------------------------------------------------------- model info


def test_model_info_at_main_and_at_an_older_commit(hub: PublisherHub, population: Population) -> None:
    api = HfApi(endpoint=hub.endpoint)
    spec = population.repo(next(r for r in population.retrained if r.startswith("z-lab/")))
    assert len(spec.commits) == 3
    main = api.model_info(spec.repo)
    assert main.sha == spec.commits[-1]
    assert main.card_data is not None and main.card_data.base_model in (spec.base_model, [spec.base_model])
    assert {s.rfilename for s in main.siblings or []} >= {"config.json", "README.md", "model.safetensors"}
    assert main.gated is False
    first = api.model_info(spec.repo, revision=spec.commits[0])
    assert first.sha == spec.commits[0]
    assert first.last_modified is not None and main.last_modified is not None
    assert first.last_modified < main.last_modified
    sized = api.model_info(spec.repo, revision=spec.commits[0], files_metadata=True)
    blob = next(s for s in sized.siblings or [] if s.rfilename == "model.safetensors")
    assert blob.lfs is not None and blob.size == blob.lfs.size
    with pytest.raises(RevisionNotFoundError):
        api.model_info(spec.repo, revision="0" * 40)
    with pytest.raises(RepositoryNotFoundError):
        api.model_info(population.missing_bases[0])
    plain = next(r for r in population.drafters if r.config_path and r.base_model is None)
    card = api.model_info(plain.repo).card_data
    assert card is None or card.base_model is None


def test_a_gated_repo_needs_the_token(hub: PublisherHub, population: Population, tmp_path: Path) -> None:
    spec = population.repo(next(r for r in population.gated if r.startswith("RedHatAI/")))
    api = HfApi(endpoint=hub.endpoint)
    assert api.model_info(spec.repo).gated == spec.gated  # the info of a gated repo is public, as on the Hub
    with pytest.raises(GatedRepoError) as anonymous:
        download(hub, tmp_path, spec.repo, revision=spec.commits[-1])
    assert anonymous.value.response.status_code == 401
    with pytest.raises(GatedRepoError) as guest:
        download(hub, tmp_path, spec.repo, token=hub.guest_token)
    assert guest.value.response.status_code == 403
    path = download(hub, tmp_path, spec.repo, token=hub.token)
    assert json.loads(path.read_bytes())["speculators_model_type"] == "dflash"
    lfs = download(hub, tmp_path, spec.repo, "model.safetensors", token=hub.token)  # from the "CDN", no auth
    assert lfs.read_bytes()[8:9] == b"{"


def test_a_token_the_hub_does_not_know_is_refused(hub: PublisherHub, open_repos: list[PublishedRepo]) -> None:
    with pytest.raises(HfHubHTTPError) as refused:
        HfApi(endpoint=hub.endpoint, token="hf_nobody").model_info(open_repos[0].repo)
    assert refused.value.response.status_code == 401
    assert not isinstance(refused.value, RepositoryNotFoundError)
    assert HfApi(endpoint=hub.endpoint, token=hub.token).whoami()["name"] == "test-owner"


def test_a_private_repo_is_seen_only_with_the_token() -> None:
    with PublisherHub() as hub:
        hub.publish("org/public", {"config.json": b"{}"})
        hub.publish("org/secret", {"config.json": b"{}"}, private=True)
        anonymous, owner = HfApi(endpoint=hub.endpoint), HfApi(endpoint=hub.endpoint, token=hub.token)
        assert [m.id for m in anonymous.list_models(author="org")] == ["org/public"]
        assert [m.id for m in owner.list_models(author="org")] == ["org/public", "org/secret"]
        with pytest.raises(RepositoryNotFoundError) as hidden:
            anonymous.model_info("org/secret")
        assert hidden.value.response.status_code == 401
        assert owner.model_info("org/secret").private is True


# ----------------------------------------------------------------------------------------------------- files


def test_download_at_a_commit_fills_the_cache_as_the_hub_does(tmp_path: Path) -> None:
    old, new = b'{"model_type": "qwen3", "v": 1}\n', b'{"model_type": "qwen3", "v": 2}\n'
    weights = b"\x08\x00\x00\x00\x00\x00\x00\x00{}      "
    with PublisherHub() as hub:
        first = hub.publish("org/drafter", {"config.json": old, "model.safetensors": weights})
        second = hub.publish("org/drafter", {"config.json": new})
        cache = tmp_path / "hub"
        path = download(hub, cache, "org/drafter", revision=first)
        folder = cache / "models--org--drafter"
        assert path == folder / "snapshots" / first / "config.json"
        assert path.read_bytes() == old
        assert os.readlink(path) == f"../../blobs/{git_blob_id(old)}"
        assert download(hub, cache, "org/drafter").read_bytes() == new  # main: through the resolve-cache redirect
        assert (folder / "refs" / "main").read_text() == second
        assert os.readlink(folder / "snapshots" / second / "config.json") == f"../../blobs/{git_blob_id(new)}"
        lfs = download(hub, cache, "org/drafter", "model.safetensors", revision=second)
        assert lfs.read_bytes() == weights
        assert os.readlink(lfs).endswith(f"/blobs/{__import__('hashlib').sha256(weights).hexdigest()}")
        with pytest.raises(RemoteEntryNotFoundError):
            download(hub, cache, "org/drafter", "tokenizer.json", revision=first)
        assert (folder / ".no_exist" / first / "tokenizer.json").exists()
        with pytest.raises(RevisionNotFoundError):
            download(hub, cache, "org/drafter", revision="f" * 40)
        with pytest.raises(RepositoryNotFoundError):
            download(hub, cache, "org/absent")
        snapshot = Path(snapshot_download("org/drafter", cache_dir=cache, endpoint=hub.endpoint))
        assert sorted(p.name for p in snapshot.iterdir()) == ["config.json", "model.safetensors"]
        # What the client's resume after a cut body asks for: a range, answered 206.
        ranged = httpx2.get(f"{hub.endpoint}/org/drafter/resolve/{first}/config.json", headers={"Range": "bytes=5-"})
        assert ranged.status_code == 206 and ranged.content == old[5:]
        assert ranged.headers["Content-Range"] == f"bytes 5-{len(old) - 1}/{len(old)}"


def test_a_drafter_in_a_subfolder_and_a_direct_resolve() -> None:
    with PublisherHub(resolve_cache=False) as hub:
        commit = hub.publish("org/mimo", {"dflash/config.json": b"{}"})
        api = HfApi(endpoint=hub.endpoint)
        assert api.file_exists("org/mimo", "dflash/config.json")
        assert not api.file_exists("org/mimo", "config.json")
        assert api.list_repo_files("org/mimo") == ["dflash/config.json"]
        assert [f.path for f in api.list_repo_tree("org/mimo", revision=commit)] == ["dflash"]
        assert not any("resolve-cache" in path for _, path in hub.requests)


# ----------------------------------------------------------------------------------------------------- faults


@pytest.mark.parametrize(
    "fault",
    [
        Faults(match="/api/models?", rate_limit=1, retry_after=0),
        Faults(match="/api/models?", server_errors=1),
        Faults(match="/api/models?", drop=1),
    ],
    ids=["429", "500", "dropped"],
)
def test_list_models_retries_a_failed_page(hub: PublisherHub, population: Population, fault: Faults) -> None:
    hub.faults = dataclasses.replace(fault)  # a fresh copy: the parameter's counters stay as they were
    listed, took = timed(lambda: [m.id for m in HfApi(endpoint=hub.endpoint).list_models(author="poolside")])
    assert sorted(listed) == sorted(r.repo for r in population.of("poolside"))
    assert took >= 1.0  # paginate's http_backoff: Retry-After 0 + 1 s, or its first backoff of 1 s


def test_model_info_does_not_retry(hub: PublisherHub, open_repos: list[PublishedRepo]) -> None:
    hub.faults = Faults(match="/api/models/", rate_limit=1, retry_after=0)
    repo = open_repos[0].repo
    with pytest.raises(HfHubHTTPError) as limited:
        HfApi(endpoint=hub.endpoint).model_info(repo)
    assert limited.value.response.status_code == 429
    assert limited.value.response.headers["Retry-After"] == "0"
    assert HfApi(endpoint=hub.endpoint).model_info(repo).id == repo


def test_hf_hub_download_retries_its_head_at_once(
    hub: PublisherHub, open_repos: list[PublishedRepo], tmp_path: Path
) -> None:
    spec = open_repos[0]
    hub.faults = Faults(match="/resolve/", method="HEAD", rate_limit=1)
    path, took = timed(download, hub, tmp_path, spec.repo, revision=spec.commits[-1])
    assert path.is_file() and took < 0.9  # the first HEAD has no retry; the second try is made without a wait
    hub.faults = Faults(match="/resolve/", method="HEAD", server_errors=2)
    other = open_repos[1]
    path, took = timed(download, hub, tmp_path, other.repo, revision=other.commits[-1])
    assert path.is_file() and took >= 1.0  # the second 5xx: the retrying HEAD's backoff


def test_hf_hub_download_waits_out_a_429_on_its_get(
    hub: PublisherHub, open_repos: list[PublishedRepo], tmp_path: Path
) -> None:
    spec = open_repos[2]
    hub.faults = Faults(match="config.json", method="GET", rate_limit=1, retry_after=0)
    path, took = timed(download, hub, tmp_path, spec.repo, revision=spec.commits[-1])
    assert path.is_file() and took >= 1.0


def test_a_5xx_on_the_get_is_not_retried(hub: PublisherHub, open_repos: list[PublishedRepo], tmp_path: Path) -> None:
    spec = open_repos[3]
    hub.faults = Faults(match="config.json", method="GET", server_errors=1)
    with pytest.raises(HfHubHTTPError) as failed:
        download(hub, tmp_path, spec.repo, revision=spec.commits[-1])
    assert failed.value.response.status_code == 500
    assert not [f for f in cached_files(tmp_path) if "/blobs/" in f or "/snapshots/" in f]
    assert download(hub, tmp_path, spec.repo, revision=spec.commits[-1]).is_file()


def test_the_third_config_download_fails_once(hub: PublisherHub, population: Population, tmp_path: Path) -> None:
    hub.faults = Faults(match="config.json", method="GET", skip=2, server_errors=1)
    specs = [r for r in population.repos if r.config_path == "config.json" and not r.gated][:4]
    assert download(hub, tmp_path, specs[0].repo, revision=specs[0].commits[-1]).is_file()
    assert download(hub, tmp_path, specs[1].repo, revision=specs[1].commits[-1]).is_file()
    with pytest.raises(HfHubHTTPError):
        download(hub, tmp_path, specs[2].repo, revision=specs[2].commits[-1])
    assert download(hub, tmp_path, specs[2].repo, revision=specs[2].commits[-1]).is_file()
    assert download(hub, tmp_path, specs[3].repo, revision=specs[3].commits[-1]).is_file()


def test_a_cut_download_resumes_with_a_range(
    hub: PublisherHub, open_repos: list[PublishedRepo], tmp_path: Path
) -> None:
    spec = open_repos[4]
    hub.faults = Faults(match="config.json", method="GET", truncate=1)
    path, took = timed(download, hub, tmp_path, spec.repo, revision=spec.commits[-1])
    assert path.read_bytes() == hub.files(spec.repo, spec.commits[-1])["config.json"]
    assert took >= 1.0  # http_get waits a second before it resumes


def test_a_cut_download_that_fails_to_resume_leaves_nothing(
    hub: PublisherHub, open_repos: list[PublishedRepo], tmp_path: Path
) -> None:
    spec = open_repos[5]
    hub.faults = Faults(match="config.json", method="GET", truncate=1)
    hub.add_faults(match="config.json", method="GET", skip=1, server_errors=1)  # the resuming GET fails
    with pytest.raises(HfHubHTTPError):
        download(hub, tmp_path, spec.repo, revision=spec.commits[-1])
    assert not [f for f in cached_files(tmp_path) if "/blobs/" in f or "/snapshots/" in f or "incomplete" in f]


@pytest.mark.slow
def test_a_download_cut_every_time_gives_up(hub: PublisherHub, open_repos: list[PublishedRepo], tmp_path: Path) -> None:
    """Five resumes in a row that bring no byte (1 s apart), then the error: about 5 s."""
    spec = open_repos[6]
    hub.faults = Faults(match="config.json", method="GET", truncate=100, truncate_at=0.0)
    with pytest.raises(httpx2.RemoteProtocolError):
        download(hub, tmp_path, spec.repo, revision=spec.commits[-1])
    assert not [f for f in cached_files(tmp_path) if "/blobs/" in f or "/snapshots/" in f or "incomplete" in f]


def test_latency_is_added(hub: PublisherHub, open_repos: list[PublishedRepo], tmp_path: Path) -> None:
    spec = open_repos[7]
    api = HfApi(endpoint=hub.endpoint)
    hub.faults = Faults(latency=0.15)
    _, took = timed(api.model_info, spec.repo)
    assert took >= 0.15
    _, took = timed(download, hub, tmp_path, spec.repo, revision=spec.commits[-1])  # a HEAD and a GET
    assert took >= 0.3
    hub.faults = Faults(match="config.json", latency=1.0)  # only what matches is slowed
    _, took = timed(api.model_info, spec.repo)
    assert took < 1.0


def test_a_dripped_body_arrives_whole(hub: PublisherHub, open_repos: list[PublishedRepo], tmp_path: Path) -> None:
    spec = open_repos[8]
    expected = hub.files(spec.repo)["config.json"]
    hub.faults = Faults(match="config.json", method="GET", drip=0.002, drip_bytes=64)
    path, took = timed(download, hub, tmp_path, spec.repo, revision=spec.commits[-1])
    assert path.read_bytes() == expected
    assert took >= 0.002 * (len(expected) // 64)


# ----------------------------------------------------------------------------------------------------- population


def _config(hub: PublisherHub, repo: str, revision: str = "main") -> Any:
    return json.loads(hub.files(repo, revision)["config.json"])


def _depth(config: dict[str, Any]) -> int:
    return int((config.get("text_config") or config)["num_hidden_layers"])


def test_the_population_is_deterministic_and_consistent() -> None:
    with PublisherHub() as one, PublisherHub() as two:
        first, second = populate(one, seed=3, count=40), populate(two, seed=3, count=40)
        assert first == second
        with PublisherHub() as three:
            assert populate(three, seed=4, count=40) != first
        hub, population = one, first
        assert len(population.repos) >= 40 and len({r.author for r in population.repos}) >= 5
        assert len({r.repo.lower() for r in population.repos}) == len(population.repos)
        assert {r.kind for r in population.repos} == {"dflash", "dflash2", "speculators", "model"}
        assert len(population.broken) >= 5 and population.retrained and population.gated
        assert any(1 < len(r.commits) <= 4 for r in population.repos)
        assert any(r.is_drafter and "dflash" not in r.repo.lower() for r in population.repos)
        assert any(not r.is_drafter and "dflash" in r.repo.lower() for r in population.repos)
        assert any(r.is_drafter and not r.card_tags for r in population.repos)
        assert any(r.config_path is None for r in population.repos)
        targets = {t.repo: _config(hub, t.repo) for t in population.targets}
        for spec in population.repos:
            assert hub.commits(spec.repo) == spec.commits
            if not spec.is_drafter or spec.broken == "invalid-json":
                continue
            data = _config(hub, spec.repo)
            if spec.base_model is not None:
                assert spec.base_published == (spec.base_model in targets)
            if spec.broken or not spec.base_published or spec.base_model is None:
                continue
            depth = _depth(targets[spec.base_model])
            if spec.kind == "speculators":
                assert data["speculators_model_type"] == "dflash"
                taps = [a - 1 for a in data["aux_hidden_state_layer_ids"]]
                layer = data["transformer_layer_config"]
                assert data["speculators_config"]["verifier"]["name_or_path"] == spec.base_model
                assert data["mask_token_id"] < layer["vocab_size"]
            else:
                architecture = "DFlash2DraftModel" if spec.kind == "dflash2" else "DFlashDraftModel"
                assert data["architectures"] == [architecture] and data["model_type"] == "qwen3"
                taps = data["dflash_config"]["target_layer_ids"]
                layer = data
                assert data["num_target_layers"] == depth
                assert data["dflash_config"]["mask_token_id"] < data["vocab_size"]
            assert len(layer["layer_types"]) == layer["num_hidden_layers"], spec.repo
            assert taps == sorted(set(taps)) and 0 < taps[0] and taps[-1] < depth, spec.repo
        for repo, why in population.broken.items():
            raw = hub.files(repo)["config.json"]
            if why == "invalid-json":
                with pytest.raises(ValueError):
                    json.loads(raw)
                continue
            data = json.loads(raw)
            base = population.repo(repo).base_model
            assert base in targets, repo
            depth = _depth(targets[str(base)])
            if why == "tap-past-depth":
                assert data["dflash_config"]["target_layer_ids"][-1] >= depth
            elif why == "aux-past-depth":
                assert data["aux_hidden_state_layer_ids"][-1] - 1 >= depth
            elif why == "mask-out-of-vocab":
                assert data["dflash_config"]["mask_token_id"] >= data["vocab_size"]
            elif why == "layer-types-length":
                assert len(data["layer_types"]) != data["num_hidden_layers"]
            elif why == "depth-mismatch":
                assert data["num_target_layers"] != depth
                assert _config(hub, repo, population.repo(repo).commits[0])["num_target_layers"] == depth
        for repo in population.retrained:
            spec = population.repo(repo)
            old, new = _config(hub, repo, spec.commits[0]), _config(hub, repo, spec.commits[-1])
            if spec.kind == "speculators":
                assert old["aux_hidden_state_layer_ids"] != new["aux_hidden_state_layer_ids"]
                old, new = old["transformer_layer_config"], new["transformer_layer_config"]
            else:
                taps = new["dflash_config"]["target_layer_ids"]
                assert old["dflash_config"]["target_layer_ids"] != taps
                assert taps != standard_taps(new["num_target_layers"], len(taps))  # trained, not the spread
            assert old["sliding_window"] != new["sliding_window"]


def test_the_real_drafters_and_their_targets(tmp_path: Path) -> None:
    with PublisherHub() as hub:
        published = publish_fixtures(hub)
        api = HfApi(endpoint=hub.endpoint)
        mimo = "XiaomiMiMo/MiMo-V2.5-Pro-FP4-DFlash"
        assert published.files[mimo] == "dflash/config.json"
        assert published.drafters["RedHatAI/DeepSeek-V4-Flash-speculator.dflash"] == (
            "e44fc94ceb1e7ed45550d15e782aeadd08050483"
        )
        for repo, commit in published.drafters.items():
            folder = FIXTURES / "upstream" / repo.replace("/", "__", 1)
            name = published.files[repo]
            assert download(hub, tmp_path, repo, name, revision=commit).read_bytes() == (folder / name).read_bytes()
            card = api.model_info(repo, revision=commit).card_data
            assert card is not None and card.base_model == published.base_models.get(repo)
        assert published.base_models["z-lab/Qwen3.6-27B-DFlash"] == "Qwen/Qwen3.6-27B"
        assert "poolside/Laguna-XS-2.1-DFlash" not in published.base_models
        assert not any("partial" in name for name in published.files.values())
        for repo, commit in published.targets.items():
            folder = FIXTURES / "targets" / repo.replace("/", "__", 1)
            got = download(hub, tmp_path, repo, revision=commit).read_bytes()
            assert got == (folder / "config.json").read_bytes()
        for base in published.base_models.values():
            if (FIXTURES / "targets" / base.replace("/", "__", 1)).is_dir():
                assert api.model_info(base).sha == published.targets[base]

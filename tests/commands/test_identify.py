"""A drafter identified unasked from the user's catalog (what `catalog update` wrote): a same-name retrain is a newer
revision, and a copy of the older one is told what the newer one changed; a corrupt catalog is said in one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, Result, write_config

from dflash_cfg.lint.published import revision_of
from dflash_cfg.model.catalog import Catalog, Published
from dflash_cfg.sources.catalog import add_revision, write_user

Run = Callable[..., Result]
LAGUNA = FIXTURES / "upstream" / "poolside__Laguna-XS-2.1-DFlash" / "config.json"
REPO = "poolside/Laguna-XS-2.1-DFlash"
OLD, NEW = "0" * 39 + "1", "0" * 39 + "2"


def retrained(data: dict[str, Any]) -> dict[str, Any]:
    """The published file with other taps and window: what a same-name retrain publishes."""
    new = json.loads(json.dumps(data))
    new["dflash_config"]["target_layer_ids"] = [1, 10, 20, 30, 39]
    new["sliding_window"] = 1024
    return new


@pytest.fixture
def user_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's catalog holding two Hub revisions of Laguna-XS-2.1-DFlash: the published file, then a retrain."""
    old_raw = LAGUNA.read_bytes()
    new_raw = (json.dumps(retrained(json.loads(old_raw)), indent=2) + "\n").encode()
    old, shape = revision_of(old_raw, commit=OLD, date="2026-05-01T00:00:00Z", trust="hub", source="test")
    new, _ = revision_of(new_raw, commit=NEW, date="2026-06-01T00:00:00Z", trust="hub", source="test")
    entry = add_revision(Published(repo=REPO, shape=shape, base_model=None, base_shape=None, revisions=(old,)), new)
    path = tmp_path / "catalog.json"
    write_user(Catalog(drafters=(entry,), updated="2026-06-02T00:00:00Z"), path)
    monkeypatch.setenv("DFLASH_CFG_CATALOG", str(path))
    return path


def identity_and_rules(result: Result) -> tuple[dict[str, object], dict[str, str]]:
    (f,) = result.json()["files"]
    return f["identity"], {x["rule"]: x["message"] for x in f["findings"] if x["rule"].startswith("DF60")}


def test_a_copy_of_the_older_revision_is_told_what_the_newer_changed(
    dflash: Run, tmp_path: Path, user_catalog: Path
) -> None:
    old = write_config(tmp_path / "old", raw=LAGUNA.read_bytes())
    result = dflash("check", "--gate", old.parent, "--format", "json")
    identity, rules = identity_and_rules(result)
    assert result.code == 0, result.err
    assert identity["match"] == "identical" and identity["commit"] == OLD
    assert f"a newer revision, {REPO}@{NEW[:12]} (2026-06-01), changed taps, sliding_window" in rules["DF605"]
    # Re-indented: the same trained values in other bytes.
    reformatted = write_config(tmp_path / "re", raw=json.dumps(json.loads(LAGUNA.read_bytes()), indent=4).encode())
    identity, rules = identity_and_rules(dflash("check", reformatted.parent, "--format", "json"))
    assert identity["match"] == "older" and "changed taps, sliding_window" in rules["DF606"]


def test_the_retrain_is_known_and_a_mix_of_both_is_not(dflash: Run, tmp_path: Path, user_catalog: Path) -> None:
    new = write_config(tmp_path / "new", retrained(json.loads(LAGUNA.read_bytes())))
    identity, rules = identity_and_rules(dflash("check", new.parent, "--format", "json"))
    assert identity["match"] == "identical" and identity["commit"] == NEW and "newer" not in rules["DF605"]
    # The retrain's taps with the old window: no revision has both.
    mixed = retrained(json.loads(LAGUNA.read_bytes()))
    mixed["sliding_window"] = 512
    path = write_config(tmp_path / "mixed", mixed)
    result = dflash("check", "--gate", path.parent, "--format", "json")
    identity, rules = identity_and_rules(result)
    assert result.code == 1 and identity["match"] == "differs"
    assert "sliding_window 512 matches no published revision" in rules["DF604"]


SHAPE = {"method": "dflash", "hidden_size": [2048], "num_hidden_layers": 5}  # a list where a number belongs


@pytest.mark.parametrize(
    "text",
    [
        '{"version": 1, "drafters": [',
        json.dumps({"version": 1, "drafters": [{"repo": "o/n", "shape": SHAPE, "revisions": []}]}),
        json.dumps({"version": 1, "drafters": [{"repo": "o/n", "revisions": [{"trust": "hub", "values": 5}]}]}),
    ],
    ids=["truncated", "unhashable-shape", "values-not-an-object"],
)
def test_a_corrupt_catalog_is_one_line(dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    bad = tmp_path / "catalog.json"
    bad.write_text(text, encoding="utf-8")
    monkeypatch.setenv("DFLASH_CFG_CATALOG", str(bad))
    result = dflash("check", write_config(tmp_path / "m", raw=LAGUNA.read_bytes()).parent)
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("dflash-cfg: error: catalog ") and result.err.count("\n") == 1, result.err

"""The keys each engine reads, as the rules will ask (dflash_cfg.lint.key_reads over the generated
lint.engine_keys): who reads a key, and which read key an unread one is probably meant as. Never a suggestion
on a published drafter's own key: a false "typo" there is worse than none."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from helpers import FIXTURES

from dflash_cfg.lint import key_reads
from dflash_cfg.lint.engine_keys import KEYS
from dflash_cfg.pinned import ALSO_CHECKED, PINNED


def test_every_checked_release_has_an_entry() -> None:
    for engine in ("vllm", "sglang", "speculators"):
        assert PINNED[engine] in KEYS[engine], engine
    for release in ALSO_CHECKED["vllm"]:
        assert release in KEYS["vllm"]


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        pytest.param(
            "/dflash_config/target_layer_ids",
            {("vllm", "0.33.0"), ("vllm", "0.34.0"), ("sglang", "0.5.23")},
            id="the taps",
        ),
        pytest.param("/no_rope_layers", {("vllm", "0.34.0")}, id="one release only"),
        pytest.param("/speculators_config/proposal_methods/0/speculative_tokens", None, id="a list element"),
        pytest.param("/no_such_key", set(), id="unread"),
    ],
)
def test_readers(pointer: str, expected: set[tuple[str, str]] | None) -> None:
    found = key_reads.readers(pointer)
    if expected is None:
        assert ("speculators", PINNED["speculators"]) in found
    else:
        assert set(found) == expected
    assert list(found) == sorted(found, key=lambda r: (r[0], tuple(int(p) for p in r[1].split("."))))


def test_all_read_is_every_recorded_pointer() -> None:
    everything = {p for releases in KEYS.values() for keys in releases.values() for p in keys}
    assert key_reads.all_read() == everything
    assert isinstance(key_reads.all_read(), frozenset)


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        pytest.param("/hidden_size", None, id="read"),
        pytest.param("/dflash_config/layer_types", "/layer_types", id="at the other DFlash place"),
        pytest.param("/use_swa", "/dflash_config/use_swa", id="and back"),
        pytest.param("/dflash_config/target_layers_ids", "/dflash_config/target_layer_ids", id="typo"),
        pytest.param("/dflash_config/targetLayerIds", "/dflash_config/target_layer_ids", id="camelCase"),
        pytest.param("/num_hiden_layers", "/num_hidden_layers", id="a dropped letter"),
        pytest.param("/mask_id", None, id="too short to call a typo"),
        pytest.param("/loss_decay_gamma", None, id="a training parameter"),
        pytest.param("/transformer_layer_config/hc_mult", None, id="another object's key"),
        pytest.param("", None, id="the whole file"),
        pytest.param("/dflash_config/sample_from_anchor", None, id="read by the source, not at the recorded place"),
    ],
)
def test_closest(pointer: str, expected: str | None) -> None:
    assert key_reads.closest(pointer) == expected


def _pointers(value: Any, at: str = "") -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            here = f"{at}/{key.replace('~', '~0').replace('/', '~1')}"
            yield here
            yield from _pointers(inner, here)


def test_no_published_drafter_key_is_called_a_misspelling() -> None:
    """Every key of every published drafter in fixtures/upstream: read, or unread with no suggestion, or (only) the
    same name at the other DFlash place."""
    suggested = []
    for path in sorted((FIXTURES / "upstream").rglob("config*.json")):
        for pointer in _pointers(json.loads(path.read_text(encoding="utf-8"))):
            found = key_reads.closest(pointer)
            if found is not None and found.rsplit("/", 1)[1] != pointer.rsplit("/", 1)[1]:
                suggested.append(f"{path.relative_to(FIXTURES)}: {pointer} -> {found}")
    assert suggested == []


@pytest.mark.parametrize(
    ("pointer", "recorded", "in_source"),
    [
        pytest.param("/dflash_config/target_layer_ids", True, True, id="both"),
        pytest.param("/has_lm_head", False, True, id="only a path the runs do not take"),
        pytest.param("/loss_decay_gamma", False, False, id="neither"),
    ],
)
def test_a_key_the_source_reads_is_read(pointer: str, recorded: bool, in_source: bool) -> None:
    assert bool(key_reads.readers(pointer)) is recorded
    assert bool(key_reads.source_reads(pointer)) is in_source
    assert key_reads.is_read(pointer) is (recorded or in_source)

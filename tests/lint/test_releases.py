"""lint.releases: which side of a release a version is on, and the releases a finding holds for (pure)."""

from __future__ import annotations

from dataclasses import replace

from dflash_cfg.launch import parse_launch
from dflash_cfg.lint.releases import VLLM_0_34, applies, candidates, ordered, scope

LAUNCH = parse_launch(["vllm", "serve", "m"])


def test_a_release_is_compared_by_its_numbers() -> None:
    assert ordered(["0.10.0", "0.9.1", "0.34", "0.33.0"]) == ["0.9.1", "0.10.0", "0.33.0", "0.34"]
    assert VLLM_0_34.includes("0.34") and VLLM_0_34.includes("0.34.0rc1") and VLLM_0_34.includes("v0.35.0+cpu")
    assert VLLM_0_34.includes("0.33.9") is False and VLLM_0_34.includes("main") is None
    assert VLLM_0_34.holds(replace(LAUNCH, engine_version="0.34")) is True
    assert VLLM_0_34.holds(LAUNCH) is None and VLLM_0_34.sides(LAUNCH) == (True, True)


def test_a_launch_gets_the_table_entry_of_its_release_or_the_newest_before_it() -> None:
    table = ["0.33.0", "0.34.0"]
    assert candidates(LAUNCH, "vllm", table) == ("0.33.0", "0.34.0")
    assert candidates(replace(LAUNCH, engine_version="0.34"), "vllm", table) == ("0.34.0",)
    assert candidates(replace(LAUNCH, engine_version="0.35.2"), "vllm", table) == ("0.34.0",)
    assert candidates(replace(LAUNCH, engine_version="0.30.0"), "vllm", table) == ("0.33.0",)


def test_scope_and_applies_agree() -> None:
    assert scope("vllm", {"0.33.0": False, "0.34.0": True}) == ("vllm>=0.34.0",)
    assert scope("vllm", {"0.33.0": True, "0.34.0": False}) == ("vllm<0.34.0",)
    assert scope("vllm", {"0.33.0": True, "0.34.0": True}) == ()
    assert scope("vllm", {"0.33.0": False, "0.34.0": False}) is None
    assert applies(("vllm>=0.34.0",), "vllm", "0.34") and not applies(("vllm>=0.34.0",), "vllm", "0.33.0")
    assert applies(("vllm<0.34.0",), "vllm", None) and not applies(("vllm<0.34.0",), "sglang", "0.5.23")
    assert applies((), "sglang", None) and applies(("vllm<0.34.0", "sglang"), "sglang", "0.5.23")

"""lint.releases: which side of a release a version is on, and the releases a finding holds for (pure)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dflash_cfg.launch import parse_launch
from dflash_cfg.lint.releases import VLLM_0_34, applies, candidates, ordered, scope
from dflash_cfg.model import Requirement

R = Requirement.parse

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
    assert scope("vllm", {"0.33.0": False, "0.34.0": True}) == (R("vllm>=0.34.0"),)
    assert scope("vllm", {"0.33.0": True, "0.34.0": False}) == (R("vllm<0.34.0"),)
    assert scope("vllm", {"0.33.0": True, "0.34.0": True}) == ()
    assert scope("vllm", {"0.33.0": False, "0.34.0": False}) is None
    assert applies((R("vllm>=0.34.0"),), "vllm", "0.34") and not applies((R("vllm>=0.34.0"),), "vllm", "0.33.0")
    assert applies((R("vllm<0.34.0"),), "vllm", None) and not applies((R("vllm<0.34.0"),), "sglang", "0.5.23")
    assert applies((), "sglang", None) and applies((R("vllm<0.34.0"), R("sglang")), "sglang", "0.5.23")


def test_a_requirement_is_parsed_once_and_a_malformed_one_is_refused() -> None:
    assert R("vllm>=0.34.0") == Requirement("vllm", ">=", "0.34.0") and str(R(" vllm >= 0.34.0 ")) == "vllm>=0.34.0"
    assert R("sglang") == Requirement("sglang") and R("sglang").said == "SGLang"
    assert R("vllm<0.34.0").said == "vLLM before 0.34.0" and R("vllm==0.33.0").said == "vLLM 0.33.0"
    for bad in ("vllm>=", "vllm=>0.34", "vllm>=main", "vlm>=0.34.0", "vllm 0.34.0", "", "vllm>=0.34.0 sglang"):
        with pytest.raises(ValueError):
            R(bad)
    with pytest.raises(ValueError):
        Requirement("vllm", ">=", "")
    with pytest.raises(ValueError):
        Requirement("tgi")  # type: ignore[arg-type]

"""The model's engine identity is one: every narrower engine type is a part of `Engine`, every engine has its name in
prose, and a record's reads go out under every name they have."""

from __future__ import annotations

from dataclasses import fields
from typing import get_args

from dflash_cfg.model import NAMES, Adapted, Engine, Launched, Reads, display, sglang_context_length
from dflash_cfg.sources.adapters import ENGINES, adapter_path, from_json


def test_the_engines_a_launch_starts_or_an_adapter_answers_for_are_engines() -> None:
    assert set(get_args(Launched)) <= set(get_args(Engine))
    assert set(get_args(Adapted)) <= set(get_args(Engine))


def test_every_engine_has_its_name_in_prose() -> None:
    assert list(NAMES) == list(get_args(Engine))
    assert display("vllm", "0.34.0") == "vLLM 0.34.0"
    assert display("sglang") == "SGLang"
    assert display("tgi") == "tgi"  # a name from outside (a metrics label) that is no engine, as it is


def test_every_adapted_engine_has_its_adapter() -> None:
    assert ENGINES == get_args(Adapted)
    assert all(adapter_path(engine).is_file() for engine in ENGINES)


def test_the_named_reads_are_every_read_but_extra() -> None:
    reads = from_json("vllm", "", {"engine": "vllm", "reads": {}}).reads
    assert reads is not None
    assert list(reads.named()) == [f.name for f in fields(Reads) if f.name != "extra"]


def test_sglang_context_length_is_sglangs_derivation_and_none_past_a_finite_number() -> None:
    assert sglang_context_length({"max_position_embeddings": 4096}, None) == (4096, "max_position_embeddings")
    assert sglang_context_length({"seq_length": 8, "max_position_embeddings": 4096}, None) == (8, "seq_length")
    linear = {"rope_type": "linear", "factor": 4.0}
    assert sglang_context_length({"max_position_embeddings": 4096}, linear) == (16384, "max_position_embeddings")
    named = {**linear, "original_max_position_embeddings": 4096}
    assert sglang_context_length({"max_position_embeddings": 4096}, named) == (4096, "max_position_embeddings")
    assert sglang_context_length({}, None) == (2048, "SGLang's default")
    # A factor JSON reads as infinity: SGLang's own int() of the product fails; nothing to compare.
    assert sglang_context_length({"max_position_embeddings": 4096}, {"factor": float("inf")}) is None

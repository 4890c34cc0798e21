"""The branch catalogue (tests/engines/branches.py) against the extracted source reads, and the report's pure parts
(tools/engines/branches.py), without an engine: fast."""

from __future__ import annotations

from engines import branches as catalogue
from tools.engines import branches as tool


def test_every_switch_turns_on_an_extracted_condition() -> None:
    """A switch names the conditions it makes true as the extraction writes them: one the engines no longer
    have is stale, and fails here."""
    conditions = [b.condition for b in catalogue.every_branch()]
    stale = [f"{s.name}: {t}" for s in catalogue.SWITCHES for t in s.turns_on if not any(t in c for c in conditions)]
    assert stale == []


def test_every_unreachable_label_names_a_branch() -> None:
    branches = catalogue.every_branch()
    unused = [f"{lab.citation} {lab.condition}" for lab in catalogue.UNREACHABLE if not any(map(lab.matches, branches))]
    assert unused == []


def test_the_branch_mutants_are_deterministic_and_unique() -> None:
    first, second = catalogue.generate(), catalogue.generate()
    assert [(m.id, m.data) for m in first] == [(m.id, m.data) for m in second]
    assert len({m.id for m in first}) == len(first)
    ids = {m.id for m in first}
    # Every key edit is held against its switched drafter, every switched drafter against its fixture.
    assert all(m.base_id in ids if "+" in m.id else m.base_id.startswith("fixture/") for m in first)
    assert {m.id.split("/")[1].split("+")[0] for m in first} == {s.name for s in catalogue.SWITCHES}


def test_a_branch_is_reached_by_its_own_key_at_its_own_line() -> None:
    branch = catalogue.Branch("sglang", "0.5.23", "a.py:f", "x is None", ("/dflash_config/k", "/j"))
    lines = {("/dflash_config/k", "a.py:f", "x is None"): frozenset({"a.py:10", "a.py:11"})}
    assert tool.reached(branch, lines, {("/dflash_config/k", "a.py:11")})
    assert not tool.reached(branch, lines, {("/dflash_config/k", "a.py:12")})  # another line of the file
    assert not tool.reached(branch, lines, {("/j", "a.py:10")})  # another key at that line


def test_the_report_counts_and_labels_each_state() -> None:
    gpu = catalogue.UNREACHABLE[0]
    found = [
        tool.Outcome(catalogue.Branch("vllm", "0.34.0", "a.py:f", "c", ("/k",)), "reached", None),
        tool.Outcome(
            catalogue.Branch(
                "vllm", "0.34.0", "vllm/v1/worker/gpu/spec_decode/dflash/utils.py:load_dflash_model", "d", ("/k",)
            ),
            "gpu",
            gpu,
        ),
        tool.Outcome(catalogue.Branch("vllm", "0.34.0", "b.py:h", "e", ("/k",)), "not reached", None),
    ]
    text = tool.render({("vllm", "0.34.0"): found})
    assert text.splitlines()[0] == (
        "vllm 0.34.0: 3 branches, 1 reached on CPU, 1 GPU-only, 0 unreachable from a drafter file, 1 not reached"
    )
    worker = "vllm/v1/worker/gpu/spec_decode/dflash/utils.py:load_dflash_model"
    assert f"vllm 0.34.0 gpu: {worker} when d: {gpu.reason} [{gpu.cites}]" in text
    assert "vllm 0.34.0 not reached: b.py:h when e: no switch reaches it" in text

"""The rule cases: one table for every rule of the catalogue (the YAML files of cases/, one per rule, and
clean.yaml), each row linted and judged. A row that is its config.json alone is linted in this process on its
bytes (harness_in_process.py), as `check` would lint it; any other row is written into a temporary dir that no
git work tree holds (row_dir: tmp_path, or another when the run's own is in a checkout) and run through the real
CLI (harness_files.py). The table, its loader and its vocabulary are in harness.py; the verdict in
harness_judge.py."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from checkpoints import save, small_shapes
from harness import CASES_DIR, ROWS, CaseLoader, Row, base, config_bytes
from harness_files import (
    Run,
    inside_a_work_tree,
    needs_no_work_tree,
    outside_any_work_tree,
    prepare,
    qwen3_tokenizer_config,
    shapes_of,
    tokenizer_json,
)
from harness_in_process import InProcess
from harness_judge import (
    Findings,
    catalogue,
    check_fixes,
    declarations,
    findings_of,
    fragment,
    judge,
    linted,
    shown,
)

IN_PROCESS = [r for r in ROWS if r.in_process]
THROUGH_THE_CLI = [r for r in ROWS if not r.in_process]


@pytest.mark.parametrize("row", IN_PROCESS, ids=lambda r: r.id)
def test_rule_case_in_process(row: Row, capsys: pytest.CaptureFixture[str]) -> None:
    raw = config_bytes(row)
    lint = InProcess(row.spec.get("engine"))

    def relint(other: bytes) -> Findings:
        return linted(lint.file_report(other))

    found = relint(raw)
    judge(row, found)
    check_fixes(row, found, raw, relint)
    # The CLI run would say nothing on stderr (findings_of): neither may the lint here, nor print anything.
    assert capsys.readouterr() == ("", "")


@pytest.fixture(scope="session")
def releases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("releases")


@pytest.fixture
def row_dir(tmp_path: Path) -> Iterator[Path]:
    """Where a row is written: tmp_path, or when a git work tree holds it (a --basetemp or TMPDIR inside a
    checkout) a fresh dir outside any, so that the rows that need no work tree around them run all the same."""
    if not inside_a_work_tree(tmp_path) or (elsewhere := outside_any_work_tree()) is None:
        yield tmp_path
        return
    try:
        yield elsewhere
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)


# The rows whose findings hold only outside a git work tree (prepare skips them, saying why, where row_dir finds
# no such place).
NO_WORK_TREE = [r for r in THROUGH_THE_CLI if needs_no_work_tree(r)]


def test_no_row_is_skipped_for_a_work_tree_around_it(row_dir: Path) -> None:
    """The count of the rows skipped because a work tree holds their dir: 0 wherever a temporary dir outside one
    exists (row_dir takes it); on a host with none, this test is skipped too, naming how many and which."""
    assert NO_WORK_TREE, "no row has pointers or files without a clone: needs_no_work_tree is stale"
    skipped = [r.id for r in NO_WORK_TREE if inside_a_work_tree(row_dir)]
    if skipped:
        pytest.skip(f"{len(skipped)} of {len(NO_WORK_TREE)} rows skipped, {row_dir} is in a git work tree: {skipped}")
    assert len(skipped) == 0


def test_a_row_in_a_work_tree_is_written_outside_it(tmp_path: Path) -> None:
    """A run whose temporary dir is in a git checkout: row_dir's fallback is a dir no work tree holds."""
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    assert inside_a_work_tree(checkout / "sub")
    elsewhere = outside_any_work_tree()
    assert elsewhere is not None, "no temporary dir outside a git work tree on this host"
    try:
        assert not inside_a_work_tree(elsewhere)
    finally:
        shutil.rmtree(elsewhere)


@pytest.mark.parametrize("row", THROUGH_THE_CLI, ids=lambda r: r.id)
def test_rule_case_through_the_cli(
    row: Row, dflash: Run, row_dir: Path, monkeypatch: pytest.MonkeyPatch, releases: Path
) -> None:
    prepared = prepare(row, dflash, row_dir, monkeypatch, releases)
    config = prepared.folder / "config.json"
    before = config.read_bytes()
    result = prepared.run(dflash)
    found = findings_of(result)
    assert config.read_bytes() == before, "the check changed the file"
    judge(row, found)
    if "exit" in row.spec:
        assert result.code == row.spec["exit"], f"exit {result.code}:\n{shown(found)}"
    if "text_output" in row.spec:
        text = prepared.run(dflash, "text")
        assert text.code == result.code
        for piece in row.spec["text_output"]:
            assert fragment(piece) in text.out, text.out

    def relint(raw: bytes) -> Findings:
        config.write_bytes(raw)
        try:
            return findings_of(prepared.run(dflash))
        finally:
            config.write_bytes(before)

    check_fixes(row, found, before, relint)


def _one_per_file() -> list[Row]:
    """The first in-process row of each case file: the sample held to the CLI's answer (not an engine row:
    no `check` run brings engine records)."""
    first: dict[str, Row] = {}
    for row in IN_PROCESS:
        if "engine" not in row.spec:
            first.setdefault(row.file, row)
    return list(first.values())


@pytest.mark.parametrize("row", _one_per_file(), ids=lambda r: r.id)
def test_in_process_lints_what_the_cli_lints(
    row: Row, dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The in-process path gathers for a lone config.json what `check` gathers (the rules, the project's
    defaults, the engine's config class, the file's facts): the same file entry but for the path it shows."""
    prepared = prepare(row, dflash, tmp_path, monkeypatch, tmp_path / "releases")
    result = prepared.run(dflash)
    findings_of(result)  # the run's own contract: exit 0 or 1, nothing on stderr
    (through_the_cli,) = result.json()["files"]
    in_process = InProcess().file_report(config_bytes(row))
    assert {k: v for k, v in in_process.items() if k != "path"} == {
        k: v for k, v in through_the_cli.items() if k != "path"
    }


# ------------------------------------------------------------------------------------------ the table


def test_every_rule_has_a_failing_and_a_passing_row() -> None:
    """Each rule of the catalogue has its case file with a row where it fires, and some row (there, or a clean
    input in clean.yaml) names it as a rule that must not fire."""
    ids = set(catalogue())
    files = {p.stem for p in CASES_DIR.glob("*.yaml")}
    assert files - ids == {"clean"}, f"case files of no rule: {sorted(files - ids - {'clean'})}"
    assert ids - files == set(), f"rules without a case file: {sorted(ids - files)}"
    for rule in sorted(ids):
        own = [r for r in ROWS if r.file == rule]
        assert any(rule in r.expected_rules for r in own), f"{rule}.yaml has no row where {rule} fires"
        assert any(rule in r.absent for r in ROWS), f"no row names {rule} in `absent`"
        strays = [r.name for r in own if rule not in r.expected_rules and rule not in r.absent]
        assert strays == [], f"rows of {rule}.yaml about other rules: {strays}"


def test_every_declared_severity_and_fix_is_shown_by_a_row() -> None:
    """The linter refuses a finding outside its rule's declaration (severities, a fix), so every row shows that
    nothing undeclared is produced. This shows each declaration is no wider than the rule: every severity a rule
    declares is expected by some row, and a rule that declares a fix has a row that expects one."""
    wrong = []
    for rule, entry in declarations().items():
        expected = [e for r in ROWS for e in r.expect if e.rule == rule]
        shown = {e.severity for e in expected}
        if shown != set(entry["severities"]):
            wrong.append(f"{rule} declares {entry['severities']}, rows show {sorted(shown)}")
        if any(e.fix is not None for e in expected) != entry["fix"]:
            wrong.append(f"{rule} declares fix={entry['fix']}, but no row expects one (or one does)")
    assert wrong == []


def test_rows_name_known_rules() -> None:
    ids = set(catalogue())
    for row in ROWS:
        unknown = row.expected_rules - ids
        assert not unknown, f"{row.id}: unknown rules {sorted(unknown)}"
        assert all(any(i.startswith(p) for i in ids) for p in row.absent), f"{row.id}: {row.absent}"


def _standard_taps(n: int, k: int) -> list[int]:
    """The DFlash reference's build_target_layer_ids: evenly spaced from 1 to N-3, round-half-even."""
    return [n // 2] if k == 1 else [round(1 + i * (n - 4) / (k - 1)) for i in range(k)]


def test_bases() -> None:
    """What the rows rely on about their bases."""
    v1 = base("Qwen3.5-4B-DFlash").data
    assert v1["architectures"] == ["DFlashDraftModel"] and "rope_theta" not in v1
    assert "block_size" in v1["dflash_config"] and "block_size" not in v1
    assert v1["num_target_layers"] == 32 and v1["dflash_config"]["target_layer_ids"] == _standard_taps(32, 8)
    legacy = base("Qwen3-4B-DFlash-b16").data
    assert legacy["block_size"] == 16 and "block_size" not in legacy["dflash_config"]
    assert "rope_theta" in legacy and "rope_parameters" not in legacy
    assert set(legacy["layer_types"]) == {"full_attention"}
    dflash2 = base("Qwen3.8-27B-DFlash2").data
    assert dflash2["architectures"] == ["DFlash2DraftModel"] and dflash2["is_causal"] is False
    assert dflash2["use_sliding_window"] is True and set(dflash2["layer_types"]) == {"sliding_attention"}
    # Trained taps: DF106 (info) on the unmodified file.
    taps = dflash2["dflash_config"]["target_layer_ids"]
    assert taps != _standard_taps(dflash2["num_target_layers"], len(taps))
    # The test's own copy of the standard-taps formula agrees with published drafters.
    assert _standard_taps(36, 5) == [1, 9, 17, 25, 33] and _standard_taps(64, 5) == [1, 16, 31, 46, 61]
    # The stale incident file is the upstream file with three changes.
    stale = copy.deepcopy(base("Qwen3.6-27B-DFlash").data)
    stale["dflash_config"]["mask_token_id"] = 248064
    stale["dflash_config"]["target_layer_ids"] = [1, 17, 33, 49, 63]
    stale["layer_types"] = ["full_attention"] * 5
    assert base("incident").data == stale
    # The small drafter's sizes are the ones small_shapes() writes.
    small = base("small-b16").data
    assert (small["hidden_size"], small["head_dim"], small["num_hidden_layers"]) == (64, 16, 5)
    assert shapes_of(small) == small_shapes()


def test_qwen3_tokenizer_layout() -> None:
    decoder = qwen3_tokenizer_config()["added_tokens_decoder"]
    assert (decoder["151643"]["content"], decoder["151643"]["special"]) == ("<|endoftext|>", True)
    assert (decoder["151645"]["content"], decoder["151645"]["special"]) == ("<|im_end|>", True)
    assert (decoder["151667"]["content"], decoder["151667"]["special"]) == ("<think>", False)
    assert max(int(i) for i in decoder) == 151668
    # tokenizer.json: the base ids, then the added ones (its text is spliced, so read it back whole).
    tokenizer = json.loads(tokenizer_json(qwen3_tokenizer_config()))
    vocab = tokenizer["model"].pop("vocab")
    assert tokenizer["model"] == {"type": "BPE", "merges": []}
    assert len(vocab) == 151643 and (vocab["t0"], vocab["t151642"]) == (0, 151642)
    added = [(int(i), e["content"], e["special"]) for i, e in decoder.items()]
    assert [(t["id"], t["content"], t["special"]) for t in tokenizer["added_tokens"]] == added


def test_row_names_are_unique_and_the_loader_is_strict() -> None:
    assert len({r.id for r in ROWS}) == len(ROWS)
    assert yaml.load("a: no\nb: 1e-06\nc: !int 1e3\nd: !bytes '\\xff\\n'\n", Loader=CaseLoader) == {
        "a": "no",
        "b": 1e-06,
        "c": 1000,
        "d": b"\xff\n",
    }
    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate key"):
        yaml.load("a: 1\na: 2\n", Loader=CaseLoader)


def test_the_df505_bound_is_below_the_real_weights(tmp_path: Path) -> None:
    """DF505.yaml's bound for the small drafter, 82272 bytes (its 164544 parameters as DF505 counts them, at 4
    bits), is below a quarter of its real F16 file: the rows' pointers test the bound, not a real size."""
    assert save(tmp_path / "model.safetensors", small_shapes()).stat().st_size // 4 > 82272

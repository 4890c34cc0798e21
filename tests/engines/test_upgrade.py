"""The pure parts of `./dev engines --upgrade` (tools/engines/upgrade.py), fast: the requirements held against a
lock, the lock and PINNED rewritten, a frame's line mapped to its qualname, records, launches and cited code
compared, and the release report rendered. No engine, no index."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from engines import build
from tools.engines import upgrade
from tools.engines.upgrade import Case, Cited, Lock, Pin, Report

LOCK = """\
# The engines: vLLM 0.33.0 and SGLang 0.5.23, with torch 2.14.1.
# To update: by hand, with pip freeze.
fastapi==0.165.0
Jinja2==3.1.6
sglang==0.5.23
torch==2.14.1
transformers==5.19.0
vllm==0.33.0
xgrammar==0.2.9
"""


# Engine paths apart from their names and lines (joined in f-strings), so that the repository's own scan does not
# take them for citations of the installed engines.
CFG = "vllm/config.py"
XPY = "vllm/x.py"
GONE = "vllm/gone.py"


def reqs(*lines: str) -> list[Requirement]:
    return upgrade.requirements("\n".join(f"Requires-Dist: {line}" for line in lines))


def verdicts(pins: list[Pin]) -> dict[str, str]:
    return {p.name: p.verdict for p in pins}


def test_requires_dist_keeps_what_applies_here_without_extras() -> None:
    found = upgrade.requirements(
        "Name: vllm\nRequires-Dist: torch==2.14.0\nRequires-Dist: fastapi[standard]<0.137\n"
        'Requires-Dist: pandas; extra == "bench"\nRequires-Dist: protobuf==7.36.1; platform_machine == "s390x"\n'
        'Requires-Dist: six>=1.16; python_version >= "3"\nRequires-Dist: not a requirement (\n',
        {"platform_machine": "x86_64", "python_version": "3.11"},
    )
    assert [str(r) for r in found] == ["torch==2.14.0", "fastapi<0.137", "six>=1.16"]


def test_the_release_is_held_against_the_lock() -> None:
    lock = upgrade.parse_lock(LOCK)
    assert lock.pins["jinja2"] == ("Jinja2", "3.1.6")
    wants = reqs("torch==2.14.0", "transformers<5.23,>=5.16", "xgrammar==0.2.8", "fastapi<0.137", "jinja2>=3.2",
                 "anthropic>=0.71", "vllm-extra")  # fmt: skip
    before = reqs("torch==2.14.0", "transformers<5.21", "xgrammar==0.2.8", "fastapi<0.137")
    others = {"sglang 0.5.23": reqs("torch==2.14.1", "xgrammar==0.2.7", "fastapi", "jinja2<3.3")}
    pins = upgrade.compare(lock, ("vllm", "0.33.0", "0.34.0"), wants, before, others)
    assert verdicts(pins) == {
        "anthropic": "absent",  # the lock does not install it
        "fastapi": "kept",  # broken before too: kept, as the suite ran on it
        "jinja2": "move",  # newly broken: to be moved
        "torch": "kept",
        "transformers": "satisfied",
        "vllm-extra": "absent",
        "xgrammar": "kept",
    }
    torch = next(p for p in pins if p.name == "torch")
    assert torch.why == "sglang 0.5.23 requires ==2.14.1; as with vllm 0.33.0 (wants ==2.14.0)"
    assert torch.others == (("sglang 0.5.23", "==2.14.1"),)
    fastapi = next(p for p in pins if p.name == "fastapi")
    assert fastapi.why.startswith("sglang 0.5.23 requires it;")
    jinja = next(p for p in pins if p.name == "jinja2")
    assert upgrade.move_spec(jinja) == "jinja2>=3.2,<3.3"


def test_a_moving_pin_settles_on_what_the_index_offers() -> None:
    lock = upgrade.parse_lock(LOCK)
    pin = Pin("jinja2", ">=3.2", "3.1.6", "move", others=(("sglang 0.5.23", "<3.3"),))
    assert upgrade.settle(pin, ("3.2.4", reqs("markupsafe>=2")), lock).to == "3.2.4"
    stuck = upgrade.settle(pin, None, lock)
    assert stuck.verdict == "stuck" and "sglang 0.5.23 requires <3.3" in stuck.why
    # The candidate itself breaks a pin of the lock (as torchvision 0.29.0 would break torch 2.14.1).
    blocked = upgrade.settle(pin, ("3.2.4", reqs("torch==2.14.0")), lock)
    assert blocked.verdict == "stuck" and blocked.why == "3.2.4 requires torch==2.14.0, lock 2.14.1"


def test_what_other_engines_ask_of_the_upgraded_one_is_said() -> None:
    notes = upgrade.engine_requirement_notes("vllm", "0.34.0", {"speculators 0.9.0": reqs("vllm>=0.30,<0.34")})
    assert notes == ["speculators 0.9.0 requires vllm<0.34,>=0.30: not met by 0.34.0"]


def test_the_lock_is_rewritten_with_its_header() -> None:
    text = upgrade.rewrite_lock(LOCK, {"vllm": "0.34.0", "jinja2": "3.2.4"})
    lines = text.splitlines()
    assert lines[0] == "# The engines: vLLM 0.34.0 and SGLang 0.5.23, with torch 2.14.1."
    assert "./dev engines --upgrade NAME==VERSION" in text and "pip freeze" not in text
    assert "vllm==0.34.0" in lines and "Jinja2==3.2.4" in lines and "sglang==0.5.23" in lines
    again = upgrade.rewrite_lock(text, {"vllm": "0.34.0"})
    assert again == text  # the update paragraph replaced, not added twice
    assert build.pins_of(_write(text)) == [line for line in lines if not line.startswith("#")]


def _write(text: str) -> Path:
    import tempfile

    path = Path(tempfile.mkdtemp()) / "lock.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_pinned_is_rewritten_entry_by_entry() -> None:
    text = upgrade.PINNED_FILE.read_text(encoding="utf-8")
    from dflash_cfg.pinned import PINNED

    later = PINNED["vllm"] + ".post1"  # any release but the pinned one
    new = upgrade.rewrite_pinned(text, {"vllm": later, "torch": "2.15.0"})
    changed = [(a, b) for a, b in zip(text.splitlines(), new.splitlines(), strict=True) if a != b]
    assert len(changed) == 1  # PINNED's entry only: not ALSO_CHECKED's, nor an unpinned name
    assert f'"vllm": "{PINNED["vllm"]}"' in changed[0][0] and f'"vllm": "{later}"' in changed[0][1]


def test_the_venv_is_named_by_the_pins_and_the_lock_chosen_by_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("# one comment\nvllm==0.33.0\n")
    b.write_text("# another comment\n\nvllm==0.33.0  # trailing\n")
    assert build.venv_dir(tmp_path, a) == build.venv_dir(tmp_path, b)
    b.write_text("vllm==0.34.0\n")
    assert build.venv_dir(tmp_path, a) != build.venv_dir(tmp_path, b)
    monkeypatch.delenv(build.LOCK_VARIABLE, raising=False)
    assert build.default_lock() == build.LOCK
    monkeypatch.setenv(build.LOCK_VARIABLE, str(b))
    assert build.default_lock() == b and build.venv_dir(tmp_path) == build.venv_dir(tmp_path, b)


SOURCE_A = '''\
"""A module."""
LIMIT = 4


class Config:
    def check(self):
        if self.x:
            raise ValueError("no")

    @property
    def size(self):
        return 1


def helper():
    return 2
'''
# The same code two lines further down, and `helper` changed.
SOURCE_B = '"""A module."""\n\n# moved\n' + SOURCE_A.replace("return 2", "return 3").split('"""A module."""\n', 1)[1]


def _site(root: Path, text: str) -> Path:
    (root / "vllm").mkdir(parents=True)
    (root / "vllm" / "config.py").write_text(text, encoding="utf-8")
    return root


def test_a_frame_is_named_by_the_code_holding_it(tmp_path: Path) -> None:
    a, b = _site(tmp_path / "a", SOURCE_A), _site(tmp_path / "b", SOURCE_B)
    assert upgrade.frame_qualname(a, f"{CFG}:8") == f"{CFG}:Config.check"
    assert upgrade.frame_qualname(b, f"{CFG}:10") == f"{CFG}:Config.check"
    assert upgrade.frame_qualname(a, f"{CFG}:10") == f"{CFG}:Config.size"  # the decorator's line
    assert upgrade.frame_qualname(a, f"{CFG}:2") == f"{CFG}:LIMIT"
    assert upgrade.frame_qualname(a, f"{CFG}:4") == f"{CFG}:<module>"
    assert upgrade.frame_qualname(a, f"{GONE}:3") == f"{GONE}:3"  # unreadable: as written
    assert upgrade.frame_qualname(a, None) is None


def _record(refused: dict[str, Any] | None = None, **reads: Any) -> dict[str, Any]:
    return {"engine": "vllm", "version": "x", "python": "p", "checked": True, "refused": refused,
            "reads": None if refused else {"mask_token_id": 1, "layer_types": ["full"], "extra": {}, **reads},
            "stand_ins": [], "failed": None}  # fmt: skip


def test_records_are_compared_field_by_field_and_refusals_by_qualname(tmp_path: Path) -> None:
    a, b = _site(tmp_path / "a", SOURCE_A), _site(tmp_path / "b", SOURCE_B)

    def old(w: str | None) -> str | None:
        return upgrade.frame_qualname(a, w)

    def new(w: str | None) -> str | None:
        return upgrade.frame_qualname(b, w)

    assert upgrade.record_changes(_record(), _record(), old, new) == []
    assert upgrade.record_changes(_record(), _record(mask_token_id=2, extra={"max_model_len": 4}), old, new) == [
        "reads.extra.max_model_len: null -> 4",
        "reads.mask_token_id: 1 -> 2",
    ]
    moved = ({"type": "ValueError", "message": "no", "where": f"{CFG}:8"},
             {"type": "ValueError", "message": "no", "where": f"{CFG}:10"})  # fmt: skip
    assert upgrade.record_changes(_record(moved[0]), _record(moved[1]), old, new) == []  # only the lines moved
    other = {"type": "KeyError", "message": "'x'", "where": f"{CFG}:18"}
    assert upgrade.record_changes(_record(moved[0]), _record(other), old, new) == [
        f"refused: ValueError: no [at {CFG}:Config.check] -> KeyError: 'x' [at {CFG}:helper]"
    ]
    assert upgrade.record_changes(_record(moved[0]), _record(), old, new) == [
        f"refused: ValueError: no [at {CFG}:Config.check] -> reads"
    ]
    assert upgrade.record_changes(_record(), _record(moved[1]), old, new) == [
        f"refused: reads -> ValueError: no [at {CFG}:Config.check]"
    ]
    failed = {**_record(), "failed": "the adapter exited with code 1\ntraceback"}
    assert upgrade.record_changes(_record(), failed, old, new) == [
        "failed: answered -> failed (the adapter exited with code 1)"
    ]


def test_launch_answers_are_compared() -> None:
    assert upgrade.answer_changes({"read": {"tp": 1, "v2_runner": False}}, {"read": {"tp": 1, "v2_runner": True}}) == [
        "v2_runner: false -> true"
    ]
    assert upgrade.answer_changes({"refused": "ValueError: V1"}, {"read": {"tp": 1}}) == [
        "refused (ValueError: V1) -> accepted"
    ]
    assert upgrade.answer_changes({"refused": "x"}, {"refused": "x"}) == []
    pydantic = (
        "ValidationError: 1 validation error for VllmConfig\n  Value error, Model Runner V1 does not support: mixed "
        "drafts [type=value_error, input_value=ArgsKwargs((), {'a': 1}), input_type=ArgsKwargs]\n"
        "    For further information visit https://errors.pydantic.dev/2.14/v/value_error"
    )
    assert upgrade.answer_changes({"refused": pydantic}, {"read": {}}) == [
        "refused (ValidationError: Value error, Model Runner V1 does not support: mixed drafts) -> accepted"
    ]


def test_cited_code_that_moved_is_no_change_and_what_changed_names_its_reads_and_rules(tmp_path: Path) -> None:
    a, b = _site(tmp_path / "a", SOURCE_A), _site(tmp_path / "b", SOURCE_B)
    cited = {c: ["docs/x.md"] for c in (f"{CFG}:Config.check", f"{CFG}:helper", f"{CFG}:LIMIT")}
    cited[f"{CFG}:Config.gone"] = ["tests/y.py"]
    (b / "vllm" / "config.py").write_text(SOURCE_B.replace("LIMIT = 4", "LIMIT = 5"), encoding="utf-8")

    def spans(site: Path) -> dict[str, tuple[tuple[int, int] | None, str | None]]:
        return {c: (upgrade.citations.resolve(site, c), upgrade.normalized_source(site, c)) for c in cited}

    reads = {"vLLM:x": f"checked: {CFG}:helper and more", "vLLM:y": f"{CFG}:LIMIT"}
    rules = {"DF100": (("vLLM:x",), "doc"), "DF200": ((), f"cites {CFG}:LIMIT"), "DF300": (("vLLM:z",), "")}
    found = upgrade.cited_changes(cited, spans(a), spans(b), reads, rules)
    assert found == [
        Cited(f"{CFG}:LIMIT", "changed", "2-2 -> 4-4", ("docs/x.md",), ("vLLM:y",), ("DF200",)),
        Cited(f"{CFG}:helper", "changed", "15-16 -> 17-18", ("docs/x.md",), ("vLLM:x",), ("DF100",)),
    ]  # Config.check moved only; Config.gone named nothing in either


def _report(**change: Any) -> Report:
    cases = {
        "fixture/upstream/a/config.json": Case("fixture/upstream/a/config.json", "fixture", "the fixture as shipped"),
        **{f"rope/m{i}/qwen3-4b": Case(f"rope/m{i}/qwen3-4b", "qwen3-4b", f"edit {i}") for i in range(10)},
        "taps/x/laguna": Case("taps/x/laguna", "laguna", "taps shifted"),
    }
    changes: dict[str, tuple[str, ...]] = {k: () for k in cases}
    for i in range(10):
        changes[f"rope/m{i}/qwen3-4b"] = ("reads.rope_theta: 10000.0 -> 1000000.0",)
    changes["taps/x/laguna"] = (f"refused: KeyError: 'a' [at {XPY}:f] -> reads", "reads.mask_token_id: 1 -> 2")
    fields: dict[str, Any] = dict(
        name="vllm",
        old="0.33.0",
        new="0.34.0",
        lock_path="tests/engines/releases/vllm-0.34.0.lock.txt",
        pins=(
            Pin("torch", "==2.14.0", "2.14.1", "kept", why="sglang 0.5.23 requires ==2.14.1; as with vllm 0.33.0"),
            Pin("anthropic", ">=0.71", None, "absent"),
            Pin("numpy", "any", "2.4.6", "satisfied"),
        ),
        engine_notes=(),
        cases=cases,
        changes=changes,
        launches={"v1-runner #1: {...}": ("refused (V1) -> accepted",), "draft-tp #0: {}": ()},
        launch_count=2,
        cited=(Cited(f"{XPY}:f", "gone", "3-9 -> gone", ("dflash_cfg/lint/engines.py",), ("vLLM:k",), ("DF101",)),),
        cited_count=5,
        adopted=False,
    )
    fields.update(change)
    return Report(**fields)


def test_the_report_groups_identical_changes_and_is_deterministic() -> None:
    text = upgrade.render(_report())
    assert text == upgrade.render(_report(cases=dict(reversed(list(_report().cases.items())))))
    assert text.startswith("# vLLM 0.34.0: release report\n")
    assert "`DFLASH_CFG_ENGINES_LOCK=tests/engines/releases/vllm-0.34.0.lock.txt ./dev test tests/engines`" in text
    assert "- torch: lock 2.14.1, vllm 0.34.0 wants ==2.14.0; kept: sglang 0.5.23 requires ==2.14.1" in text
    assert "`anthropic>=0.71`" in text
    assert (
        "12 drafters (1 fixtures, 11 mutants) through vllm 0.33.0 and 0.34.0: 11 answer differently, 1 the same" in text
    )
    assert "- **reads.rope_theta: 10000.0 -> 1000000.0** (10 cases)\n  by base: qwen3-4b 10\n  <details>" in text
    assert "  - `rope/m3/qwen3-4b`: edit 3" in text
    assert f"- **refused: KeyError: 'a' [at {XPY}:f] -> reads** (1 case)\n  - `taps/x/laguna`: taps shifted" in text
    assert "- **refused (V1) -> accepted** (1)\n  - v1-runner #1: {...}" in text
    assert "2 launches" in text and "1 answered differently" in text
    assert f"- `{XPY}:f` gone (lines 3-9 -> gone); cited in dflash_cfg/lint/engines.py\n  - reads: vLLM:k\n" in text
    assert "  - rules: DF101" in text
    adopted = upgrade.render(_report(adopted=True))
    assert "`./dev test tests/engines`" in adopted and "DFLASH_CFG_ENGINES_LOCK" not in adopted


def test_the_lock_parses_as_pip_reads_it() -> None:
    lock: Lock = upgrade.parse_lock(LOCK)
    assert lock.header == tuple(LOCK.splitlines()[:2])
    assert len(lock.pins) == 7
    assert textwrap.dedent(LOCK) == "\n".join(lock.lines) + "\n"

"""Fuzzing preflight in-process on launch command lines: hostile vLLM and SGLang lines (the speculative config
as JSON, dotted options and the older aliases; env prefixes, odd tokens, hostile model references), and the
campaign's launch-line and preflight surfaces with their `--config` YAML (tests/fuzz/launch.py).

Each defect the fuzzing found in launch lines has a reproducer here (`test_found_bug_*`), and the generators cover
those inputs again now that the defects are fixed. The properties every run must show, and the bounded and
slow runs, are fuzzing.py's.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from fuzz import launch as launch_surface
from fuzzing import (
    FORMATS,
    OSC_TITLE,
    PAIRED_DRAFTER,
    PAIRED_TARGET,
    Box,
    Run,
    bounded,
    box,
    drafter_bytes,
    hostile_json,
    long,
    survive,
    untouched,
)
from helpers import assert_one_line_error
from hypothesis import given
from hypothesis import strategies as st

# --- launch command lines for preflight -----------------------------------------------------------

ODD_TOKENS = [
    "--",
    "-",
    "-O3",
    "-O",
    "--x=y",
    "--unknown",
    "serve",
    "=",
    "A=b",
    "",
    OSC_TITLE,
    "a\udcffb",
    "-1",
    "x" * 300,
]
COUNTS = ["1", "2", "15", "16", "0", "-1", "9" * 5000, "1e3", "1.0", "", "٣", OSC_TITLE]
METHODS = ["dflash", "DFLASH", "eagle3", "", None, 5, OSC_TITLE]


def model_ref(b: Box, data: st.DataObject, label: str, own: Path) -> str:
    return data.draw(
        st.sampled_from(
            [str(own)] * 4
            + [str(own / "config.json"), own.name, "org/name", "", "../..", "/nonexistent", OSC_TITLE, "a\udcffb"]
        ),
        label=label,
    )


def vllm_argv(b: Box, data: st.DataObject, drafter: str, target: str) -> list[str]:
    head = data.draw(
        st.sampled_from(
            [
                ["vllm", "serve"],
                ["/usr/local/bin/vllm", "serve"],
                ["python", "-m", "vllm.entrypoints.cli.main", "serve"],
            ]
        ),
        label="head",
    )
    spec: dict[str, Any] = {
        "method": data.draw(st.sampled_from(METHODS), label="method"),
        "model": drafter,
        "num_speculative_tokens": data.draw(st.sampled_from([15, 16, 0, -1, 10**400, 1.5, True, "15"]), label="n"),
    }
    form = data.draw(st.sampled_from(["json", "json", "hostile-json", "dotted", "aliases"]), label="form")
    if form == "dotted":
        options = [x for key in ("method", "model") for x in (f"--speculative-config.{key}", str(spec[key]))]
        options += ["--speculative-config.num_speculative_tokens", data.draw(st.sampled_from(COUNTS))]
    elif form == "aliases":
        options = ["--spec-model", drafter, "--spec-tokens", data.draw(st.sampled_from(COUNTS), label="tokens")]
    else:
        text = json.dumps(spec) if form == "json" else hostile_json(spec, data, 2).decode("utf-8", "surrogateescape")
        options = [data.draw(st.sampled_from(["--speculative-config", "-sc", "--speculative_config"])), text]
    if data.draw(st.booleans(), label="tp"):
        options += [data.draw(st.sampled_from(["-tp", "--tensor-parallel-size"])), data.draw(st.sampled_from(COUNTS))]
    return [*head, target, *options]


def sglang_argv(b: Box, data: st.DataObject, drafter: str, target: str) -> list[str]:
    head = data.draw(
        st.sampled_from(
            [["python", "-m", "sglang.launch_server", "--model-path", target], ["sglang", "serve", target]]
        ),
        label="head",
    )
    options = ["--speculative-algorithm", str(data.draw(st.sampled_from(METHODS), label="algorithm"))]
    options += ["--speculative-draft-model-path", drafter]
    options += ["--speculative-num-draft-tokens", data.draw(st.sampled_from(COUNTS), label="tokens")]
    if data.draw(st.booleans(), label="tp"):
        options += [data.draw(st.sampled_from(["--tp-size", "--tp"])), data.draw(st.sampled_from(COUNTS))]
    return [*head, *options]


def launch_argv(b: Box, data: st.DataObject) -> list[str]:
    drafter = model_ref(b, data, "drafter", b.model)
    target = model_ref(b, data, "target-ref", b.target)
    engine = vllm_argv if data.draw(st.booleans(), label="vllm") else sglang_argv
    argv = engine(b, data, drafter, target)
    env = data.draw(
        st.lists(st.sampled_from(["CUDA_VISIBLE_DEVICES=0,1", "A=b c", f"X={OSC_TITLE}", "env", "-i", "HF_TOKEN=x"])),
        label="env",
    )
    argv = env + argv
    for _ in range(data.draw(st.integers(0, 2), label="odd")):
        argv.insert(data.draw(st.integers(0, len(argv)), label="at"), data.draw(st.sampled_from(ODD_TOKENS)))
    return argv


def launch_property(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    with box(tmp_path) as b:
        drafter = PAIRED_DRAFTER.read_bytes() if data.draw(st.booleans(), label="real") else drafter_bytes(data)
        (b.model / "config.json").write_bytes(drafter)
        b.target.mkdir()
        for name in ("config.json", "tokenizer_config.json"):
            (b.target / name).write_bytes((PAIRED_TARGET / name).read_bytes())
        argv = launch_argv(b, data)
        fmt = data.draw(st.sampled_from(FORMATS), label="format")
        with untouched(b.root):
            survive(dflash, "preflight", "--format", fmt, "--", *argv, text_out=fmt == "text", json_out=False)


@bounded(25)
@given(data=st.data())
def test_hostile_launch_commands(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    launch_property(dflash, tmp_path, data)


@pytest.mark.slow
@long(1500)
@given(data=st.data())
def test_hostile_launch_commands_long(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    launch_property(dflash, tmp_path, data)


# --- bugs the fuzzing found (reproducers, fixed; the generators above cover these inputs too) ---------


@pytest.mark.parametrize("drafter", ["\\u0000", "a\\u0000b", "\\ud800", "z-lab/x\\udfff"])
def test_found_bug_path_that_cannot_be_encoded(dflash: Run, drafter: str) -> None:
    # The drafter of a launch comes from JSON, where "\\u0000" and "\\ud800" are valid escapes.
    spec = '{"method": "dflash", "model": "' + drafter + '", "num_speculative_tokens": 15}'
    assert_one_line_error(dflash("preflight", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", spec))


# --- found by the campaign (tests/fuzz/campaign.py) -------------------------------------------------


def _launch_world(root: Path) -> tuple[Path, Path]:
    drafter, target = root / "d", root / "t"
    drafter.mkdir(parents=True)
    (drafter / "config.json").write_bytes(PAIRED_DRAFTER.read_bytes())
    target.mkdir()
    for name in ("config.json", "tokenizer_config.json"):
        (target / name).write_bytes((PAIRED_TARGET / name).read_bytes())
    return drafter, target


@pytest.mark.parametrize("number", ["0x" + "f" * 5000, "0" + "7" * 5000, "0b" + "1" * 20000])
@pytest.mark.parametrize("where", ["port: {}", "speculative-config: {{model: ./d, num_speculative_tokens: {}}}"])
def test_found_bug_config_yaml_integer_past_the_digit_limit(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, number: str, where: str
) -> None:
    """YAML reads hexadecimal, octal (0777) and binary integers of any length; turning one back into an option
    (str) raised ValueError: an internal error."""
    _launch_world(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "launch.yaml").write_text(where.format(number) + "\n")
    spec = '{"method": "dflash", "model": "./d", "num_speculative_tokens": 15}'
    result = dflash(
        "preflight", "--no-engine-check", "--", "vllm", "serve", "./t", "--config", "launch.yaml", "-sc", spec
    )
    assert result.code == 2, result
    assert "internal error" not in result.err, result.err
    assert result.err.count("\n") == 1 and "4300 digits" in result.err, result.err


@pytest.mark.parametrize(
    "wrapper",
    [["--directory", "--directory", "/w"], ["--directory", "/w", "--with", "--directory"], ["--with", "--directory"]],
)
def test_found_bug_uv_run_option_value_that_looks_like_an_option(
    dflash: Run, tmp_path: Path, wrapper: list[str]
) -> None:
    """`uv run`'s options were read token by token, a value as an option: `--directory` last in the options
    read past their end (IndexError, an internal error)."""
    drafter, target = _launch_world(tmp_path)
    line = ["uv", "run", *wrapper, "python", "-m", "sglang.launch_server", "--model-path", str(target)]
    line += ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", str(drafter)]
    result = dflash("preflight", "--no-engine-check", "--format", "json", "--", *line)
    assert "internal error" not in result.err, result.err
    assert result.code in (0, 1, 2), result
    json.loads(result.out)
    if result.code == 2:
        assert result.err.count("\n") == 1, result.err


@pytest.mark.parametrize("line", ["port: !!float", "port: !!int ''", "port: !!bool maybe", "port: !!timestamp x"])
def test_found_bug_config_yaml_value_that_does_not_fit_its_tag(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str
) -> None:
    """PyYAML's constructors of tagged scalars raise IndexError, KeyError or AttributeError on a value they
    cannot read: internal errors."""
    _launch_world(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "launch.yaml").write_text(line + "\n")
    spec = '{"method": "dflash", "model": "./d", "num_speculative_tokens": 15}'
    result = dflash(
        "preflight", "--no-engine-check", "--", "vllm", "serve", "./t", "--config", "launch.yaml", "-sc", spec
    )
    assert result.code == 2, result
    assert "internal error" not in result.err, result.err
    assert result.err.count("\n") == 1 and "does not fit its tag" in result.err, result.err


# --- the campaign's surfaces (tests/fuzz/): derandomized slices of its generators -----------------------
# The campaign (tests/fuzz/campaign.py) runs the same generators over more than 10,000 inputs.


@pytest.fixture
def launch_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> launch_surface.World:
    world = launch_surface.make_world(tmp_path / "launch")
    monkeypatch.chdir(world.root)  # the lines name ./d, ./t and launch.yaml
    return world


def launch_lines_property(world: launch_surface.World, rng: random.Random) -> None:
    case = launch_surface.launch_case(rng, world)
    launch_surface.write_case(world, case)
    assert launch_surface.parse_defect(case) is None


@bounded(25)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_launch_lines(launch_world: launch_surface.World, rng: random.Random) -> None:
    launch_lines_property(launch_world, rng)


@pytest.mark.slow
@long(3000)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_launch_lines_long(launch_world: launch_surface.World, rng: random.Random) -> None:
    launch_lines_property(launch_world, rng)


def preflight_property(world: launch_surface.World, rng: random.Random) -> None:
    before = launch_surface.snapshot(world)
    case = launch_surface.launch_case(rng, world)
    launch_surface.write_case(world, case)
    fmt = rng.choice(FORMATS)
    assert launch_surface.preflight_defect(case, fmt, engine_check=False) is None
    assert launch_surface.snapshot(world) == before


@bounded(6)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_preflight(launch_world: launch_surface.World, rng: random.Random) -> None:
    preflight_property(launch_world, rng)


@pytest.mark.slow
@long(600)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_preflight_long(launch_world: launch_surface.World, rng: random.Random) -> None:
    preflight_property(launch_world, rng)

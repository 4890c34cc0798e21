"""The installed command, run the way a user runs it: a non-editable install (tests/installed.py), from the
checkout root or a directory of the user's own, with what it prints, its exit code and the bytes it leaves
on disk as the answer."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import click
import pytest
from checkpoints import lfs_pointer, save, small_config, small_shapes
from helpers import FIXTURES, ROOT, assert_one_line_error, mutated, write_config
from installed import Installed

from dflash_cfg.cli import cli
from dflash_cfg.lint.rules import ALL

INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
INCIDENT_BYTES = (INCIDENT / "config.json").read_bytes()
TARGET = "fixtures/targets/Qwen__Qwen3.6-27B"  # as typed at the checkout root
HF_CACHE = "fixtures/hf-cache/hub"


# --- package data, however the package is imported (issue 32, item 1) ----------------------------------------


def test_python_m_from_the_checkout_root_reads_the_packaged_schemas(installed: Installed, tmp_path: Path) -> None:
    # From the root, `-m` puts the checkout's dflash_cfg/ first on sys.path, ahead of the install: its schemas are
    # the checkout's top-level schemas/, and a violation is still found.
    ok = installed.run("python", "-m", "dflash_cfg", "check", "fixtures/incident/Qwen3.6-27B-DFlash")
    assert ok.returncode == 0 and "internal error" not in ok.stderr, ok.stderr
    assert "\n1 file, 0 errors, 4 warnings, 2 infos, 1 fixable  (transformers " in ok.stdout
    bad = write_config(tmp_path / "m", mutated(lambda d: d.__setitem__("hidden_size", "2560")))
    proc = installed.run("python", "-m", "dflash_cfg", "check", bad, "--select", "DF010", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    (f,) = json.loads(proc.stdout)["files"]
    assert [x["pointer"] for x in f["findings"] if x["rule"] == "DF010"] == ["/hidden_size"]


def test_python_api_in_a_script_run_from_the_checkout_root(installed: Installed, tmp_path: Path) -> None:
    bad = write_config(tmp_path / "m", mutated(lambda d: d.__setitem__("hidden_size", "2560")))
    script = (
        f"import dflash_cfg; report = dflash_cfg.check([{str(bad)!r}], select='DF010'); "
        "print(dflash_cfg.__file__); print([(f.rule, f.pointer) for f in report.files[0].findings])"
    )
    proc = installed.run("python", "-c", script)
    assert proc.returncode == 0, proc.stderr
    where, findings = proc.stdout.splitlines()
    assert Path(where).is_relative_to(ROOT)  # the checkout's package, as a script at the root imports it
    assert findings == "[('DF010', '/hidden_size')]"


def test_console_script_away_from_the_checkout_is_the_installed_package(installed: Installed, tmp_path: Path) -> None:
    proc = installed.run("python", "-c", "import dflash_cfg; print(dflash_cfg.__file__)", cwd=tmp_path)
    package = Path(proc.stdout.strip()).parent
    assert package.is_relative_to(installed.venv), proc.stdout
    assert (package / "py.typed").is_file()  # PEP 561, as the classifier "Typing :: Typed" promises
    assert (package / "schemas" / "dflash.schema.json").is_file()


# --- fix exits as `check` with its inputs would (item 2) ------------------------------------------------------


def test_fix_with_a_target_fails_while_the_target_finds_an_error(installed: Installed, tmp_path: Path) -> None:
    drafter = tmp_path / "Qwen3.6-27B-DFlash"
    shutil.copytree(INCIDENT, drafter)
    proc = installed.run("dflash-cfg", "fix", drafter, "--target", TARGET, "--yes")
    assert f"wrote {drafter}/config.json" in proc.stdout  # the safe fix (DF121's mirror) was written
    assert b'"block_size": 16,\n    "mask_token_id": 248064' in (drafter / "config.json").read_bytes()
    # DF406 (the last target layer tapped, which SGLang cannot capture) needs the target: it is left, and fix says
    # what check says. It concerns SGLang: with nothing saying SGLang serves the drafter, neither fails on it.
    check = installed.run("dflash-cfg", "check", drafter, "--target", TARGET)
    assert "error DF406" in check.stdout and "[SGLang]" in check.stdout
    assert proc.returncode == check.returncode == 0, proc.stderr
    (tmp_path / "dflash-cfg.toml").write_text('engines = ["sglang"]\n')
    proc = installed.run("dflash-cfg", "fix", drafter, "--target", TARGET, "--yes")
    check = installed.run("dflash-cfg", "check", drafter, "--target", TARGET)
    assert proc.returncode == check.returncode == 1, proc.stderr
    assert (
        f"1 error(s) remain that need upstream values or a human: dflash-cfg check {drafter} --target {TARGET}\n"
        in (proc.stderr)
    )
    # Without the target, fix (like check) has no error to go on: exit 0.
    again = installed.run("dflash-cfg", "fix", drafter, "--yes")
    assert again.returncode == installed.run("dflash-cfg", "check", drafter).returncode == 0, again.stderr


def test_fix_rechecks_with_the_weights_and_the_project_config(installed: Installed, tmp_path: Path) -> None:
    folder = tmp_path / "drafter"
    write_config(folder, small_config(block_size=16))
    save(folder / "model.safetensors", small_shapes(kv=4))  # k/v_proj for 4 KV heads; the config says 2: DF503
    assert installed.run("dflash-cfg", "check", folder).returncode == 1
    proc = installed.run("dflash-cfg", "fix", folder, "--yes", cwd=tmp_path)
    assert proc.returncode == 1 and "error(s) remain" in proc.stderr, proc.stdout + proc.stderr
    # The project's fail-on counts warnings: a warning no fix settles fails fix as it fails check.
    (tmp_path / "dflash-cfg.toml").write_text('fail-on = "warning"\n', encoding="utf-8")
    stale = tmp_path / "stale"
    write_config(stale, small_config(use_sliding_window=True, sliding_window=2048))  # DF205: a warning
    assert installed.run("dflash-cfg", "check", stale, cwd=tmp_path).returncode == 1
    proc = installed.run("dflash-cfg", "fix", stale, "--yes", cwd=tmp_path)
    assert proc.returncode == 1 and "error(s) or warning(s) remain" in proc.stderr, proc.stdout + proc.stderr


# --- a missing path is a missing path (item 3) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "said"),
    [
        # org/name shaped: the Hub is asked (here: a closed port), after the missing path is said.
        (
            "models/Qwen3.6-27B-DFlash",
            "path not found: models/Qwen3.6-27B-DFlash; as a Hub repo id: hub unreachable at http://127.0.0.1:9",
        ),
        ("models/", "path not found: models/, and 'models/' is not a Hub repo id (org/name)"),
        ("models/a/b", "path not found: models/a/b\n"),
    ],
)
def test_a_missing_local_path_is_said_first(installed: Installed, tmp_path: Path, argument: str, said: str) -> None:
    proc = installed.run("dflash-cfg", "check", argument, cwd=tmp_path)
    assert_one_line_error(proc, out="")
    assert proc.stderr.startswith(f"dflash-cfg: error: {said}"), proc.stderr
    assert "--offline" not in proc.stderr  # no comparison was asked for: nothing to do offline


def test_offline_advice_only_where_a_comparison_was_asked(installed: Installed, tmp_path: Path) -> None:
    drafter = tmp_path / "d"
    shutil.copytree(INCIDENT, drafter)
    compare = installed.run("dflash-cfg", "check", drafter, "--from-hub", "z-lab/Qwen3.6-27B-DFlash")
    assert compare.returncode == 2 and "; use --offline to compare with the local cache" in compare.stderr
    target = installed.run("dflash-cfg", "check", drafter, "--target", "Qwen/Qwen3.6-27B")
    assert target.returncode == 2 and "--offline" not in target.stderr, target.stderr
    assert target.stderr.startswith("dflash-cfg: error: path not found: Qwen/Qwen3.6-27B; as a Hub repo id: hub")


# --- advice to download names the files the check reads (item 11) -------------------------------------------


def test_download_advice_names_the_files_read(installed: Installed, tmp_path: Path) -> None:
    drafter = tmp_path / "d"
    shutil.copytree(INCIDENT, drafter)
    target = installed.run("dflash-cfg", "check", drafter, "--target", "Qwen/Qwen3.6-27B", "--offline")
    assert_one_line_error(target)
    wanted = "`hf download Qwen/Qwen3.6-27B config.json generation_config.json tokenizer_config.json`"
    assert wanted in target.stderr, target.stderr
    where = installed.run("dflash-cfg", "where", "z-lab/not-downloaded", HF_HUB_OFFLINE="1")
    assert where.returncode == 2 and "`hf download z-lab/not-downloaded config.json`" in where.stderr, where.stderr
    launch = json.dumps({"method": "dflash", "model": str(drafter), "num_speculative_tokens": 15})
    pre = installed.run(
        "dflash-cfg", "preflight", "--", "vllm", "serve", "Qwen/Qwen3.6-27B", "--speculative-config", launch
    )
    assert pre.returncode == 2 and wanted in pre.stderr, pre.stderr


# --- sizes past any real shape never break a message (item 4) ------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        ("head_dim", "num_attention_heads"),  # DF503: q_proj's rows are their product
        ("num_key_value_heads", "head_dim"),  # DF503: k/v_proj
        ("hidden_size", "target_hidden_size"),  # DF501: fc's input width, DF505's count
        ("hidden_size", "intermediate_size"),  # DF503: the MLP; DF505
    ],
)
@pytest.mark.parametrize("weights", ["safetensors", "lfs-pointer"])
def test_config_values_of_thousands_of_digits(
    installed: Installed, tmp_path: Path, fields: tuple[str, ...], weights: str
) -> None:
    huge = int("9" * 2201)  # each prints (Python's limit is 4,300 digits); their product does not
    folder = tmp_path / "d"
    write_config(folder, small_config(**dict.fromkeys(fields, huge)))
    if weights == "safetensors":
        save(folder / "model.safetensors", small_shapes())
    else:
        (folder / "model-00001-of-00001.safetensors").write_bytes(lfs_pointer(1000))
    proc = installed.run("dflash-cfg", "check", folder, cwd=tmp_path)
    assert proc.returncode == 1 and "internal error" not in proc.stderr, proc.stderr
    if weights == "lfs-pointer" or "head_dim" in fields:  # a product of two of them is in the message
        assert re.search(r"\(a 4\d\d\d-digit number\)", proc.stdout), proc.stdout[-3000:]
    assert installed.run("dflash-cfg", "check", folder, "--format", "sarif", cwd=tmp_path).returncode == 1


# --- `rules NAME` (item 13) --------------------------------------------------------------------------------


def test_rules_takes_the_name_a_finding_prints(installed: Installed) -> None:
    by_name = installed.run("dflash-cfg", "rules", "tap-on-last-layer")
    assert by_name.returncode == 0, by_name.stderr
    assert by_name.stdout == installed.run("dflash-cfg", "rules", "DF105").stdout
    assert by_name.stdout.startswith("DF105  tap-on-last-layer ")
    both = installed.run("dflash-cfg", "rules", "window-dropped", "DF6", "--format", "json")
    ids = [r["id"] for r in json.loads(both.stdout)]
    assert ids == ["DF204", *(r.id for r in ALL if r.id.startswith("DF6"))]
    assert len({r.name for r in ALL}) == len(ALL)  # a name finds one rule
    unknown = installed.run("dflash-cfg", "rules", "tap-on-last")
    assert_one_line_error(unknown)


# --- --output-format and shell completion (item 16) ------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ("check", "fixtures/incident/Qwen3.6-27B-DFlash"),
        (
            "verify",
            "fixtures/incident/Qwen3.6-27B-DFlash",
            "--expect-sha256",
            hashlib.sha256(INCIDENT_BYTES).hexdigest(),
        ),
        ("where", "fixtures/incident/Qwen3.6-27B-DFlash"),
        ("rules", "DF105"),
        ("probe", "fixtures/metrics/vllm-incident.prom"),
    ],
)
def test_output_format_is_format(installed: Installed, command: tuple[str, ...]) -> None:
    alias = installed.run("dflash-cfg", *command, "--output-format", "json")
    plain = installed.run("dflash-cfg", *command, "--format=json")
    assert alias.returncode == plain.returncode != 2, alias.stderr
    assert json.loads(alias.stdout) == json.loads(plain.stdout)


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command of the CLI as the words that run it (a group's subcommands under it): from the group itself,
    so a new command is held to the test without anyone listing it."""
    out: list[tuple[str, ...]] = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            out += _commands(command, (*prefix, name))
        else:
            out.append((*prefix, name))
    return out


def test_output_format_in_every_help_that_has_format(installed: Installed) -> None:
    commands = _commands(cli)
    assert ("check",) in commands and ("catalog", "update") in commands
    for command in commands:
        shown = installed.run("dflash-cfg", *command, "--help").stdout
        assert ("--format" in shown) == ("--format, --output-format" in shown), command


def test_shell_completion_from_the_installed_entry_point(installed: Installed, tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'eval "$(_DFLASH_CFG_COMPLETE=bash_source dflash-cfg)"' in readme  # what the README tells users
    bash = installed.run(
        "bash", "-c", 'eval "$(_DFLASH_CFG_COMPLETE=bash_source dflash-cfg)" && complete -p dflash-cfg'
    )
    assert bash.returncode == 0 and "-F _dflash_cfg_completion dflash-cfg" in bash.stdout, bash.stderr
    for shell, first in (("bash", "_dflash_cfg_completion() {"), ("zsh", "#compdef dflash-cfg"), ("fish", "function")):
        script = installed.run("dflash-cfg", cwd=tmp_path, _DFLASH_CFG_COMPLETE=f"{shell}_source")
        assert script.returncode == 0 and script.stdout.lstrip().startswith(first), (shell, script.stdout[:200])
    words = installed.run(
        "dflash-cfg",
        cwd=tmp_path,
        _DFLASH_CFG_COMPLETE="bash_complete",
        COMP_WORDS="dflash-cfg check --output-f",
        COMP_CWORD="2",
    )
    assert words.stdout.split() == ["plain,--output-format"]
    commands = installed.run(
        "dflash-cfg", cwd=tmp_path, _DFLASH_CFG_COMPLETE="bash_complete", COMP_WORDS="dflash-cfg r", COMP_CWORD="1"
    )
    assert commands.stdout.split() == ["plain,rules"]

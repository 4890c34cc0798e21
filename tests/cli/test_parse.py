"""The command line's parsing apart from what the commands do: each command's options land in the one value
it receives (parse_result), the option groups fill their parts, and the rules that span options."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from dflash_cfg.cli.common_options import ci_options, hub_options, parsed, project_options
from dflash_cfg.cli.group import cli
from dflash_cfg.cli.parse_result import (
    AuditArgs,
    CheckArgs,
    CiArgs,
    DiffArgs,
    EnginesArgs,
    FixArgs,
    HubArgs,
    PreflightArgs,
    ProbeArgs,
    ProjectArgs,
    RulesArgs,
    ShowArgs,
    UpdateArgs,
    VerifyArgs,
    WhereArgs,
)
from dflash_cfg.errors import UsageError
from dflash_cfg.model import HubOptions

VALUES = {
    "check": CheckArgs,
    "diff": DiffArgs,
    "fix": FixArgs,
    "verify": VerifyArgs,
    "preflight": PreflightArgs,
    "engines": EnginesArgs,
    "where": WhereArgs,
    "probe": ProbeArgs,
    "rules": RulesArgs,
    "catalog update": UpdateArgs,
    "catalog show": ShowArgs,
    "audit": AuditArgs,
}
GROUPS = {"hub": HubArgs, "ci": CiArgs, "project": ProjectArgs}


def _options(kind: type) -> set[str]:
    """The option names a value holds, its groups' included."""
    names = set()
    for field in dataclasses.fields(kind):
        names |= _options(GROUPS[field.name]) if field.name in GROUPS else {field.name}
    return names


def _commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    """Every command of the CLI by its full name ("catalog update"), a group's subcommands in its place."""
    out: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            out |= _commands(command, f"{prefix}{name} ")
        else:
            out[prefix + name] = command
    return out


def test_every_command_receives_each_of_its_options_in_its_value() -> None:
    commands = _commands(cli)
    assert sorted(commands) == sorted(VALUES)
    for name, command in commands.items():
        options = {p.name for p in command.params if p.name != "help"}
        assert options == _options(VALUES[name]), name


@click.command()
@click.argument("paths", nargs=-1)
@hub_options
@ci_options
@project_options
@click.option("--gate", is_flag=True)
@parsed(dict)
def toy(args: dict[str, object]) -> int:
    received.append(args)
    return 0


received: list[dict[str, object]] = []


def test_the_option_groups_fill_one_value_each() -> None:
    received.clear()
    result = CliRunner().invoke(toy, ["a", "--from-hub", "--strict", "--format", "json", "-q", "b"])
    assert result.exit_code == 0, result.output
    assert received == [
        {
            "paths": ("a", "b"),
            "gate": False,
            "hub": HubArgs("", None, False),
            "ci": CiArgs(fmt="json", color="auto", exit_zero=False, statistics=False, quiet=True),
            "project": ProjectArgs(None, False, True, None),
        }
    ]


def test_a_group_keeps_the_order_help_lists_its_options_in() -> None:
    shown = [p.name for p in toy.params]
    assert shown[:4] == ["paths", "from_hub", "revision", "offline"]
    assert shown[4:9] == ["color", "fmt", "exit_zero", "statistics", "quiet"]
    assert shown[9:] == ["config", "isolated", "strict", "fail_on", "gate"]


# --- the rules that span options ------------------------------------------------------------------------


def test_from_hub_swallowing_the_path_gives_it_back(tmp_path: Path) -> None:
    path = str(tmp_path)
    assert HubArgs(path, None, False).resolve(()) == ((path,), HubOptions(None, None, False))
    assert HubArgs(path, "v1", True).resolve(("x",)) == (("x",), HubOptions(path, "v1", True))
    assert HubArgs("org/repo", None, False).resolve(()) == ((), HubOptions("org/repo", None, False))
    assert HubArgs("", None, True).resolve(("x",)) == (("x",), HubOptions(None, None, True))
    assert HubArgs(None, None, False).resolve(("x",)) == (("x",), None)
    with pytest.raises(UsageError, match="--revision needs --from-hub"):
        HubArgs(None, "v1", False).options()


@pytest.mark.parametrize(
    ("strict", "fail_on", "failing"),
    [(False, None, None), (False, "error", "error"), (True, None, "warning"), (True, "warning", "warning")],
)
def test_strict_is_fail_on_warning(strict: bool, fail_on: str | None, failing: str | None) -> None:
    assert ProjectArgs(None, False, strict, fail_on).failing() == failing


def test_strict_and_fail_on_error_contradict() -> None:
    with pytest.raises(UsageError, match="contradict"):
        ProjectArgs(None, False, True, "error").failing()


def _probe(interval: float | None = None, watch: bool = False, keep_going: bool = False) -> ProbeArgs:
    hub = HubArgs(None, None, False)
    return ProbeArgs(
        url="u",
        interval=interval,
        timeout=10.0,
        min_length=None,
        drafter=None,
        target=None,
        hub=hub,
        watch=watch,
        keep_going=keep_going,
        fmt="text",
        color="auto",
        config=None,
        isolated=False,
    )


def test_the_watch_window_defaults_to_30_seconds() -> None:
    assert (_probe().every, _probe(watch=True).every, _probe(5.0, watch=True).every) == (None, 30.0, 5.0)
    with pytest.raises(UsageError, match="--keep-going needs --watch"):
        _probe(keep_going=True)


def test_preflight_launches_only_on_a_clean_check() -> None:
    hub, project = HubArgs(None, None, False), ProjectArgs(None, False, False, None)
    ci = CiArgs(fmt="text", color="auto", exit_zero=False, statistics=False, quiet=False)
    args = PreflightArgs(
        command=("--", "vllm", "serve", "m"),
        hub=hub,
        ci=ci,
        project=project,
        no_cache=False,
        exec_=True,
        no_engine_check=False,
    )
    assert args.launch == ["vllm", "serve", "m"]
    with pytest.raises(UsageError, match="--exec launches only on a clean check"):
        dataclasses.replace(args, ci=dataclasses.replace(ci, exit_zero=True))

"""The options several commands share, as decorators, and how a command receives them: each option group
fills one value of parse_result (`hub`, `ci`, `project`), and `parsed` hands the command all of its options
as one frozen value. A decorator declares options and nothing else: what they mean is parse_result's."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

import click

from dflash_cfg.cli.parse_result import CiArgs, HubArgs, ProjectArgs
from dflash_cfg.model.catalog import HUB_DEADLINE, HUB_JOBS, HUB_MAX_JOBS
from dflash_cfg.report.formats import FORMATS

F = TypeVar("F", bound=Callable[..., Any])
A = TypeVar("A")


def _group(name: str, kind: type[Any], *options: Callable[[Any], Any]) -> Callable[[F], F]:
    """Add `options` (in the order --help lists them) to a command, and hand their values on as one
    keyword, `name=kind(...)`: their names are `kind`'s fields."""
    fields = [f.name for f in dataclasses.fields(kind)]

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def grouped(**values: Any) -> Any:
            value = kind(**{field: values.pop(field) for field in fields})
            return command(**values, **{name: value})

        for option in reversed(options):  # as stacked decorators apply: the last one listed first
            grouped = option(grouped)
        return cast(F, grouped)

    return decorate


def parsed(kind: Callable[..., A]) -> Callable[[Callable[[A], int]], Callable[..., int]]:
    """The command receives its options as one value, `kind(**options)`, and returns its exit code. Below
    every option of the command: the option groups above it have filled their values by then."""

    def decorate(command: Callable[[A], int]) -> Callable[..., int]:
        @functools.wraps(command)
        def invoked(**values: Any) -> int:
            return command(kind(**values))

        return invoked

    return decorate


# --format's other name: ruff and check-jsonschema call it --output-format, and a CI line written for them works.
ALIASES = ("--output-format",)


def format_option(help: str | None = None) -> Callable[[F], F]:
    """--format for the commands that answer text or one JSON document."""
    return click.option(
        "--format",
        *ALIASES,
        "fmt",
        type=click.Choice(("text", "json")),
        default="text",
        show_default=True,
        help=help,
    )


jobs_option = click.option(
    "--jobs", type=click.IntRange(1, HUB_MAX_JOBS), default=HUB_JOBS, show_default=True, help="Repos read at once."
)


def deadline_option(help: str) -> Callable[[F], F]:
    """--deadline of a run over many Hub repos (`catalog update`, `audit`): `help` says what is kept at the end."""
    return click.option(
        "--deadline",
        metavar="SECONDS",
        type=click.FloatRange(min=0, min_open=True),
        default=HUB_DEADLINE,
        show_default=True,
        help=help,
    )


colour_option = click.option(
    "--color",
    "color",
    type=click.Choice(("auto", "always", "never")),
    default="auto",
    show_default=True,
    help="Colour the text output (auto: on a terminal, unless NO_COLOR is set or FORCE_COLOR forces it).",
)

# How a check's result is shown and what it exits with, for CI (check and preflight) -> `ci`.
ci_options = _group(
    "ci",
    CiArgs,
    colour_option,
    click.option(
        "--format",
        *ALIASES,
        "fmt",
        type=click.Choice(FORMATS),
        default="text",
        show_default=True,
        help="text; json (versioned); github (Actions annotations); sarif (2.1.0, code scanning).",
    ),
    click.option("--exit-zero", "exit_zero", is_flag=True, help="Exit 0 even when findings fail the run (2 stays 2)."),
    click.option(
        "--statistics",
        is_flag=True,
        help='Add the count of findings per rule, with how many `fix` repairs (json: a "statistics" list).',
    ),
    click.option(
        "-q", "--quiet", is_flag=True, help="Text: the findings only (no file headers, layouts, fixes or summary)."
    ),
)

# What decides a gate: the project config, and what fails -> `project`.
project_options = _group(
    "project",
    ProjectArgs,
    click.option(
        "--config",
        "config",
        metavar="FILE",
        type=click.Path(path_type=str, readable=False),
        help="The project config (default: the nearest dflash-cfg.toml or pyproject.toml [tool.dflash-cfg]).",
    ),
    click.option("--isolated", is_flag=True, help="Ignore every project config file."),
    click.option("--strict", is_flag=True, help="Warnings fail too (as --fail-on warning)."),
    click.option(
        "--fail-on",
        "fail_on",
        type=click.Choice(("error", "warning")),
        help="Fail (exit 1) on findings this severe (default: the project's fail-on, else error; gates: warning).",
    ),
)

# The comparison with upstream -> `hub`.
hub_options = _group(
    "hub",
    HubArgs,
    click.option(
        "--from-hub",
        "from_hub",
        metavar="[REPO]",
        is_flag=False,
        flag_value="",
        default=None,
        help="Compare with config.json of this Hub repo; without REPO, inferred from a cache snapshot path.",
    ),
    click.option("--revision", metavar="REV", help="Branch, tag or commit of the Hub repo (default: main)."),
    click.option(
        "--offline", is_flag=True, help="Answer from the local Hugging Face cache only (as HF_HUB_OFFLINE=1)."
    ),
)

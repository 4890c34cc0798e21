"""What a command line asked for, as one frozen value per command. click fills it: the option groups of
common_options each fill their part (HubArgs, CiArgs, ProjectArgs), a command's own options the rest, and
the command receives the whole as one argument. Field names are the options' names; the defaults are
click's. The rules that span options live here, beside the values they read: a combination that is never
valid is refused when the value is made; one that must wait for another error (a missing PATH is said
first) is a method the command calls."""

from __future__ import annotations

import os
from dataclasses import dataclass

from dflash_cfg.errors import UsageError
from dflash_cfg.model import HubOptions

# --- the option groups ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class HubArgs:
    """--from-hub [REPO], --revision, --offline: the comparison with upstream."""

    from_hub: str | None  # "": --from-hub without REPO (inferred from where the file lives)
    revision: str | None
    offline: bool

    def options(self) -> HubOptions | None:
        """The comparison asked for, or None."""
        if self.from_hub is None:
            if self.revision:
                raise UsageError("--revision needs --from-hub")
            return None
        return HubOptions(self.from_hub or None, self.revision, self.offline)

    def resolve(self, paths: tuple[str, ...]) -> tuple[tuple[str, ...], HubOptions | None]:
        """The paths and the comparison. `--from-hub PATH` (REPO omitted, PATH swallowed as its value)
        gives the path back, and the repo is inferred."""
        hub = self.options()
        if hub is not None and not paths and self.from_hub and os.path.exists(self.from_hub):
            return (self.from_hub,), HubOptions(None, self.revision, self.offline)
        return paths, hub


@dataclass(frozen=True, kw_only=True)
class CiArgs:
    """How a check's result is shown and what it exits with, for CI (check and preflight)."""

    fmt: str
    color: str
    exit_zero: bool
    statistics: bool
    quiet: bool


@dataclass(frozen=True)
class ProjectArgs:
    """What decides a gate: the project config, and what fails."""

    config: str | None
    isolated: bool
    strict: bool
    fail_on: str | None

    def failing(self) -> str | None:
        """The severity that fails the run as the command line says it (None: the project's, else error)."""
        if self.strict and self.fail_on == "error":
            raise UsageError("--strict and --fail-on error contradict each other")
        return "warning" if self.strict else self.fail_on


# --- one value per command ------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CheckArgs:
    paths: tuple[str, ...]
    target: str | None
    hub: HubArgs
    expect_sha256: str | None
    ci: CiArgs
    project: ProjectArgs
    gate: bool
    engine: tuple[str, ...]  # --engine, as given (each may be comma-separated)
    select: tuple[str, ...]  # --select, as given (each may be comma-separated)
    ignore: tuple[str, ...]
    failing_only: bool  # --failing-only (text: the files that fail, and the summary); -v/--verbose turns it off
    min_severity: str
    no_cache: bool


@dataclass(frozen=True)
class DiffArgs:
    path: str | None
    hub: HubArgs
    fmt: str
    color: str


@dataclass(frozen=True, kw_only=True)
class FixArgs:
    paths: tuple[str, ...]
    hub: HubArgs
    only_critical: bool
    target: str | None
    dry_run: bool
    yes: bool
    no_backup: bool
    no_lock: bool
    exit_non_zero_on_fix: bool
    min_severity: str
    failing_only: bool  # --failing-only: no line for a file with nothing to change and nothing left failing
    fmt: str
    color: str


@dataclass(frozen=True)
class VerifyArgs:
    paths: tuple[str, ...]
    expect_sha256: str | None
    fmt: str
    color: str


@dataclass(frozen=True, kw_only=True)
class PreflightArgs:
    command: tuple[str, ...]  # the launch, with the `--` before it when one was given
    hub: HubArgs
    ci: CiArgs
    project: ProjectArgs
    no_cache: bool
    exec_: bool
    no_engine_check: bool
    launch_file: str | None = None  # the launch written once: a file holding its command line
    launch_env: str | None = None  # or an environment variable holding it

    def __post_init__(self) -> None:
        if self.exec_ and self.ci.exit_zero:
            raise UsageError("--exec launches only on a clean check: --exit-zero would launch whatever it found")
        given = [name for name, v in (("--launch-file", self.launch_file), ("--launch-env", self.launch_env)) if v]
        if self.launch:
            given.insert(0, "a COMMAND")
        if len(given) > 1:
            raise UsageError(f"one launch to check: {' and '.join(given)} both name one")
        if not given:
            raise UsageError("no launch to check: give it after `--`, or with --launch-file FILE or --launch-env NAME")

    @property
    def launch(self) -> list[str]:
        """The launch's command line, when given after `--`."""
        return list(self.command[1:] if self.command and self.command[0] == "--" else self.command)


@dataclass(frozen=True, kw_only=True)
class EnginesArgs:
    drafter: str
    target: str | None
    pythons: tuple[str, ...]
    fmt: str
    color: str


@dataclass(frozen=True)
class WhereArgs:
    model: str
    revision: str | None
    fmt: str
    color: str


@dataclass(frozen=True, kw_only=True)
class ProbeArgs:
    url: str | None
    interval: float | None
    timeout: float
    min_length: float | None
    drafter: str | None
    target: str | None
    hub: HubArgs
    watch: bool
    keep_going: bool
    fmt: str
    color: str
    config: str | None
    isolated: bool
    wait: float | None = None
    emit_rules: bool = False  # print Prometheus rules judging as probe does, instead of probing
    hold: float | None = None  # --for: with --emit-rules, how long a collapse holds before the alert fires

    def __post_init__(self) -> None:
        if self.keep_going and not self.watch:
            raise UsageError("--keep-going needs --watch")
        if self.emit_rules:
            probing = [
                name
                for name, given in (
                    ("URL", self.url is not None),
                    ("--watch", self.watch),
                    ("--wait", self.wait is not None),
                    ("--drafter", self.drafter is not None),
                    ("--target", self.target is not None),
                    ("--format json", self.fmt != "text"),
                )
                if given
            ]
            if probing:
                raise UsageError(f"--emit-rules writes rules and probes nothing: {', '.join(probing)} has no use there")
        else:
            if self.url is None:
                raise UsageError("missing the engine's metrics URL (or a saved scrape, or - for stdin)")
            if self.hold is not None:
                raise UsageError("--for needs --emit-rules: how long a collapse holds before Prometheus alerts")

    @property
    def every(self) -> float | None:
        """The window: --interval, which --watch defaults to 30 s."""
        return 30.0 if self.watch and self.interval is None else self.interval


@dataclass(frozen=True)
class RulesArgs:
    ids: tuple[str, ...]
    fmt: str
    verbose: bool
    color: str


@dataclass(frozen=True, kw_only=True)
class UpdateArgs:
    """catalog update."""

    authors: tuple[str, ...]
    repos: tuple[str, ...]
    jobs: int
    deadline: float
    offline: bool
    fmt: str


@dataclass(frozen=True)
class ShowArgs:
    """catalog show."""

    repo: str | None
    fmt: str


@dataclass(frozen=True, kw_only=True)
class AuditArgs:
    targets: tuple[str, ...]  # authors and ORG/NAME[@REV] repos
    jobs: int
    fmt: str
    output: str | None
    deadline: float

"""probe: is speculative decoding working on a serving engine, and if not, is it the drafter's config?

Scrapes the engine's /metrics (sources/scrape), reads acceptance (sources/metrics) and judges it
(lint/acceptance), and on a collapse checks the drafter: named with --drafter, or found through the project
config's [[models]] entry whose `served-name` is the collapsed model's `model_name`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from dflash_cfg import progress
from dflash_cfg.errors import DflashCfgError, NotReady, ProbeError, UsageError
from dflash_cfg.lint import acceptance
from dflash_cfg.model import Diagnosis, HubOptions, Judged, Report, RuleSettings, Window
from dflash_cfg.sources import metrics, scrape
from dflash_cfg.sources.project import ProjectConfig
from dflash_cfg.sources.project import resolve as resolve_project

_FOREVER = 1e6  # seconds or tokens: a finite bound past any real interval, timeout or acceptance length


@dataclass(frozen=True, kw_only=True)
class Settings:
    """probe's options, as the command line and the project config give them: the command's own input (as check's
    CheckOptions is), not a value it returns, so it stays here; it holds the project config, a `sources` value."""

    source: str
    interval: float | None
    timeout: float
    min_acceptance_length: float | None  # the command line's; wins over the project config
    project: ProjectConfig
    wait: float | None = None  # --wait: how long an engine still loading is waited for, at the first scrape

    def thresholds(self) -> tuple[dict[str, float], float]:
        """Per served model name, and the default."""
        if self.min_acceptance_length is not None:
            return {}, self.min_acceptance_length
        default = self.project.min_acceptance_length or acceptance.DEFAULT_MIN_ACCEPTANCE_LENGTH
        per_model = {
            m.served_name: m.min_acceptance_length
            for m in self.project.models
            if m.served_name is not None and m.min_acceptance_length is not None
        }
        return per_model, default


def settings(
    source: str,
    interval: float | None,
    timeout: float,
    min_acceptance_length: float | None,
    config: str | None,
    isolated: bool,
    wait: float | None = None,
) -> Settings:
    # click reads "nan" and "inf" as floats: a NaN threshold judges every record healthy (no comparison
    # with NaN is true), a NaN interval is time.sleep's ValueError, an infinite one never ends.
    if interval is not None and not scrape.is_url(source):
        raise UsageError("--interval needs the engine's URL: a saved scrape cannot be scraped again")
    if interval is not None and not 0 < interval < _FOREVER:
        raise UsageError(f"--interval must be more than 0 seconds and less than {_FOREVER:g}")
    if not 0 < timeout < _FOREVER:
        raise UsageError(f"--timeout must be more than 0 seconds and less than {_FOREVER:g}")
    if min_acceptance_length is not None and not 1 <= min_acceptance_length < _FOREVER:
        raise UsageError("--min-acceptance-length is a number, at least 1 (the bonus token alone)")
    if wait is not None and not scrape.is_url(source):
        raise UsageError("--wait needs the engine's URL: a saved scrape is not loading")
    if wait is not None and not 0 <= wait < _FOREVER:
        raise UsageError(f"--wait must be 0 seconds or more and less than {_FOREVER:g}")
    project = resolve_project(Path.cwd(), config, isolated)
    return Settings(
        source=source,
        interval=interval,
        timeout=timeout,
        min_acceptance_length=min_acceptance_length,
        project=project,
        wait=wait,
    )


def rule_settings(
    interval: float | None, hold: float | None, min_acceptance_length: float | None, config: str | None, isolated: bool
) -> RuleSettings:
    """`--emit-rules`: probe's window and thresholds (the command line's, else the project config's, per served model
    and default) for Prometheus rules. Prometheus counts durations in whole seconds here: a fraction is refused."""
    window = _whole("--interval", 300.0 if interval is None else interval)
    held = _whole("--for", 600.0 if hold is None else hold)
    s = settings("-", None, 10.0, min_acceptance_length, config, isolated)
    per_model, default = s.thresholds()
    return RuleSettings(
        window=window,
        hold=held,
        default=default,
        per_model=tuple(sorted(per_model.items())),
        vllm_counters=metrics.VLLM_COUNTERS,
        sglang_gauges=metrics.SGLANG_GAUGES,
    )


def _whole(option: str, seconds: float) -> int:
    if not (seconds.is_integer() and 1 <= seconds < _FOREVER):
        raise UsageError(f"{option} must be a whole number of seconds, at least 1, with --emit-rules")
    return int(seconds)


def _judge(s: Settings, scraped: metrics.Scrape, interval: float | None) -> Window:
    per_model, default = s.thresholds()
    return Window(s.source, interval, acceptance.judge(metrics.acceptance(scraped), per_model, default))


def _quiet(line: str) -> None:
    pass


def first_scrape(
    s: Settings,
    sleep: Callable[[float], None] = time.sleep,
    waiting: Callable[[str], None] = _quiet,
    clock: Callable[[], float] = time.monotonic,
) -> metrics.Scrape:
    """The first scrape. With --wait, an engine still loading (refused, 503, no speculative-decoding series
    yet) is scraped again each second until `s.wait` seconds have passed, `waiting` told once why."""
    end = None if s.wait is None else clock() + s.wait
    told = False
    while True:
        try:
            return metrics.parse(scrape.read(s.source, s.timeout))
        except NotReady as exc:
            if end is None:
                raise
            if clock() >= end:
                raise NotReady(f"{exc} (waited {s.wait:g} s)") from None
            if not told:
                waiting(f"waiting up to {s.wait:g} s for the engine to be ready ({exc})")
                told = True
            sleep(min(1.0, max(end - clock(), 0.0)))


def once(s: Settings, sleep: Callable[[float], None] = time.sleep, waiting: Callable[[str], None] = _quiet) -> Window:
    """One verdict: over the counters' lifetime, or with an interval over the window between two scrapes."""
    first = first_scrape(s, sleep, waiting)
    if s.interval is None:
        return _judge(s, first, None)
    _window(s.interval, sleep)
    second = metrics.parse(scrape.read(s.source, s.timeout))
    return _judge(s, metrics.window(first, second), s.interval)


def _window(seconds: float, sleep: Callable[[float], None]) -> None:
    """The wait between a window's two scrapes: one sleep, or on a terminal steps of a second it shows going by."""
    if not progress.shown():
        sleep(seconds)
        return
    with progress.waiting(seconds, "probe: the window") as count:
        left = seconds
        while left > 0:
            step = min(1.0, left)
            sleep(step)
            count.advance(step)
            left -= step


def watch(
    s: Settings,
    keep_going: bool,
    sleep: Callable[[float], None] = time.sleep,
    waiting: Callable[[str], None] = _quiet,
) -> Iterator[Window | ProbeError]:
    """A window every interval, forever. A restart (counters backwards) is yielded as a ProbeError and, with
    `keep_going`, the next window starts from the new counters; with `keep_going` an engine not ready (refused,
    503: restarting) is yielded too and scraped again at the next interval; any other failure raises."""
    assert s.interval is not None
    before = first_scrape(s, sleep, waiting)
    while True:
        _window(s.interval, sleep)
        try:
            after = metrics.parse(scrape.read(s.source, s.timeout))
        except NotReady as exc:
            if not keep_going:
                raise
            yield exc
            continue
        try:
            yield _judge(s, metrics.window(before, after), s.interval)
        except ProbeError as exc:
            if not keep_going:
                raise
            yield exc
        before = after


def diagnose(judged: Judged, s: Settings, drafter: DrafterCheck) -> Diagnosis | None:
    """The drafter's check for a collapsed model: --drafter, else the project's [[models]] entry serving it."""
    from dflash_cfg.commands.check import CheckOptions, check

    entry = next((m for m in s.project.models if m.served_name == judged.acceptance.model_name), None)
    if drafter.drafter is None and entry is None:
        return None
    # A [[models]] path is a local dir or an s3://, gs://, hf:// URL; check reads either from its text.
    path = drafter.drafter if drafter.drafter is not None else str(entry.path)  # type: ignore[union-attr]
    hub = drafter.hub
    upstream = (hub.repo if hub is not None else None) or (entry.upstream if entry is not None else None)
    # As the gate checks it: compared with upstream whenever the repo is known (project, lock, cache path).
    options = CheckOptions(
        paths=(path,),
        target=drafter.target,
        hub=hub,
        offline=drafter.offline,
        config=drafter.config,
        isolated=drafter.isolated,
        gate=True,
    )
    report = check(options)
    return Diagnosis(judged.acceptance.model_name, path, upstream or _known_upstream(report), report)


def _known_upstream(report: Report) -> str | None:
    return next((f.upstream.repo for f in report.files if f.upstream is not None), None)


# --- what the command answers: each window explained --------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DrafterCheck:
    """How to check the drafter behind a collapse: --drafter, else the project's [[models]] entry serving the
    collapsed model; its target and upstream as the command line names them."""

    drafter: str | None = None
    target: str | None = None
    hub: HubOptions | None = None
    offline: bool = False
    config: str | None = None
    isolated: bool = False


@dataclass(frozen=True)
class Unchecked:
    """A collapsed model whose drafter could not be checked, and why."""

    model_name: str
    reason: str


@dataclass(frozen=True)
class Explained:
    """A window with, for each collapsed model whose drafter is known, its check (or why it could not be
    made: that never hides the collapse, which still exits 1). `when`: the UTC time a watched window ended."""

    window: Window
    diagnoses: tuple[Diagnosis, ...] = ()
    unchecked: tuple[Unchecked, ...] = ()
    when: str | None = None


def explain(window: Window, s: Settings, check: DrafterCheck, when: str | None = None) -> Explained:
    diagnoses, unchecked = [], []
    for judged in window.collapsed:
        try:
            found = diagnose(judged, s, check)
        except DflashCfgError as exc:
            unchecked.append(Unchecked(judged.acceptance.model_name, str(exc)))
            continue
        if found is not None:
            diagnoses.append(found)
    return Explained(window, tuple(diagnoses), tuple(unchecked), when)


def probe_once(
    s: Settings,
    check: DrafterCheck,
    sleep: Callable[[float], None] = time.sleep,
    waiting: Callable[[str], None] = _quiet,
) -> Explained:
    """One window (`once`), explained; a window with no draft scored has no verdict to give."""
    window = once(s, sleep, waiting)
    if window.idle:
        raise ProbeError("no draft scored yet: no traffic to judge (probe again under load, or use --interval)")
    return explain(window, s, check)


def probe_watch(
    s: Settings,
    check: DrafterCheck,
    keep_going: bool,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], time.struct_time] = time.gmtime,
    waiting: Callable[[str], None] = _quiet,
) -> Iterator[Explained | ProbeError]:
    """`watch`, each window explained and stamped. The drafter is checked once, on the first collapse (the
    windows after it would only repeat the check); the first collapse ends the watch unless `keep_going`."""
    collapsed = False
    for item in watch(s, keep_going, sleep, waiting):
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", clock())
        if isinstance(item, ProbeError):
            yield item
            continue
        yield Explained(item, when=when) if collapsed else explain(item, s, check, when)
        if item.collapsed:
            collapsed = True
            if not keep_going:
                return

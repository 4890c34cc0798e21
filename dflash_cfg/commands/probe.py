"""probe: is speculative decoding working on a serving engine, and if not, is it the drafter's config?

Scrapes the engine's /metrics (sources/scrape), reads acceptance (sources/metrics) and judges it
(lint/acceptance), and on a collapse checks the drafter: named with --drafter, or found through the project
config's [[models]] entry whose `served-name` is the collapsed model's `model_name`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from dflash_cfg.commands.common import HubOptions
from dflash_cfg.errors import ProbeError, UsageError
from dflash_cfg.lint import acceptance
from dflash_cfg.model import Judged, Report
from dflash_cfg.sources import metrics, scrape
from dflash_cfg.sources.project import ProjectConfig
from dflash_cfg.sources.project import resolve as resolve_project


@dataclass(frozen=True)
class Window:
    """One judged scrape (`interval` None: the counters' lifetime) or window between two scrapes."""

    source: str
    interval: float | None
    judged: tuple[Judged, ...]

    @property
    def collapsed(self) -> tuple[Judged, ...]:
        return tuple(j for j in self.judged if j.verdict == "collapse")

    @property
    def idle(self) -> bool:
        return all(j.verdict == "idle" for j in self.judged)


@dataclass(frozen=True)
class Diagnosis:
    """The collapsed model's drafter, its check, and what to try first."""

    model_name: str
    drafter: str
    upstream: str | None
    report: Report


@dataclass(frozen=True)
class Settings:
    source: str
    interval: float | None
    timeout: float
    min_acceptance_length: float | None  # the command line's; wins over the project config
    project: ProjectConfig

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
) -> Settings:
    if interval is not None and not scrape.is_url(source):
        raise UsageError("--interval needs the engine's URL: a saved scrape cannot be scraped again")
    if interval is not None and interval <= 0:
        raise UsageError("--interval must be more than 0 seconds")
    if min_acceptance_length is not None and min_acceptance_length < 1:
        raise UsageError("--min-acceptance-length is at least 1 (the bonus token alone)")
    return Settings(source, interval, timeout, min_acceptance_length, resolve_project(Path.cwd(), config, isolated))


def _judge(s: Settings, scraped: metrics.Scrape, interval: float | None) -> Window:
    per_model, default = s.thresholds()
    return Window(s.source, interval, acceptance.judge(metrics.acceptance(scraped), per_model, default))


def once(s: Settings, sleep: Callable[[float], None] = time.sleep) -> Window:
    """One verdict: over the counters' lifetime, or with an interval over the window between two scrapes."""
    first = metrics.parse(scrape.read(s.source, s.timeout))
    if s.interval is None:
        return _judge(s, first, None)
    sleep(s.interval)
    second = metrics.parse(scrape.read(s.source, s.timeout))
    return _judge(s, metrics.window(first, second), s.interval)


def watch(s: Settings, keep_going: bool, sleep: Callable[[float], None] = time.sleep) -> Iterator[Window | ProbeError]:
    """A window every interval, forever. A restart (counters backwards) is yielded as a ProbeError and, with
    `keep_going`, the next window starts from the new counters; any other failure raises."""
    assert s.interval is not None
    before = metrics.parse(scrape.read(s.source, s.timeout))
    while True:
        sleep(s.interval)
        after = metrics.parse(scrape.read(s.source, s.timeout))
        try:
            yield _judge(s, metrics.window(before, after), s.interval)
        except ProbeError as exc:
            if not keep_going:
                raise
            yield exc
        before = after


def diagnose(
    judged: Judged,
    s: Settings,
    drafter: str | None,
    target: str | None,
    hub: HubOptions | None,
    offline: bool,
    config: str | None,
    isolated: bool,
) -> Diagnosis | None:
    """The drafter's check for a collapsed model: --drafter, else the project's [[models]] entry serving it."""
    from dflash_cfg.commands.check import CheckOptions, check

    entry = next((m for m in s.project.models if m.served_name == judged.acceptance.model_name), None)
    if drafter is None and entry is None:
        return None
    # A [[models]] path is a local dir or an s3://, gs://, hf:// URL; check reads either from its text.
    path = drafter if drafter is not None else str(entry.path)  # type: ignore[union-attr]
    upstream = (hub.repo if hub is not None else None) or (entry.upstream if entry is not None else None)
    # As the gate checks it: compared with upstream whenever the repo is known (project, lock, cache path).
    options = CheckOptions(
        (path,),
        target=target,
        hub=hub,
        offline=offline,
        config=config,
        isolated=isolated,
        gate=True,
    )
    report = check(options)
    return Diagnosis(judged.acceptance.model_name, path, upstream or _known_upstream(report), report)


def _known_upstream(report: Report) -> str | None:
    return next((f.upstream.repo for f in report.files if f.upstream is not None), None)

"""What long work is doing, shown on a terminal: the engine being started and for how long, files done of a
tree, probe's window going by.

An effect, kept to this module: the CLI turns it on (`shown_on`) for a text run whose stderr is a terminal,
and every call below is a no-op otherwise, so the commands and the library stay silent in machine formats,
in pipes, in CI logs and under tests. The lines are tqdm's (a dependency of huggingface_hub, and what its
downloads show); each clears itself when its work ends, so the report that follows is unchanged.
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm

# Work shorter than this shows nothing: a check of one file, a cached engine step.
DELAY = 0.5
# How often an activity's elapsed time is redrawn (tqdm redraws only when told).
TICK = 0.25

_stream: TextIO | None = None


@contextlib.contextmanager
def shown_on(stream: TextIO) -> Iterator[None]:
    """Show progress on `stream` for the duration (the CLI's run of one command)."""
    global _stream
    before, _stream = _stream, stream
    try:
        yield
    finally:
        _stream = before


def _bar(**options: Any) -> tqdm[Any] | None:
    if _stream is None:
        return None
    from tqdm import tqdm

    columns, rows = _size(_stream)
    return tqdm(file=_stream, leave=False, delay=DELAY, ncols=columns, nrows=rows, **options)


def _size(stream: TextIO) -> tuple[int, int]:
    """The terminal's columns and rows; 80 x 24 where it says 0 (a pseudo-terminal nobody sized, as `script` or
    a container's exec makes), on which tqdm would hide every line as past the screen's last row."""
    try:
        size = os.get_terminal_size(stream.fileno())
        columns, rows = size.columns, size.lines
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        columns, rows = 0, 0
    return columns or 80, rows or 24


@contextlib.contextmanager
def activity(label: str) -> Iterator[None]:
    """`label` and its elapsed time while the block runs ("vLLM 0.34.0: building the drafter  00:12"). A label
    too long for the terminal is cut in its middle (a long interpreter path), never the time after it: tqdm
    cuts the whole line at the last column."""
    bar = _bar(total=None, desc=label, bar_format="{desc}  {elapsed}")
    if bar is None:
        yield
        return
    bar.set_description_str(fitted(label, (bar.ncols or 80) - ELAPSED), refresh=False)
    done = threading.Event()

    def tick() -> None:
        if done.wait(DELAY):  # short work shows nothing
            return
        while True:
            bar.refresh()
            if done.wait(TICK):
                return

    ticker = threading.Thread(target=tick, name="dflash-cfg-progress", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()
        _close(bar)


# The columns an activity's elapsed time takes after its label: two spaces, up to "999:59:59", the cursor's column.
ELAPSED = 12


def fitted(text: str, width: int) -> str:
    """`text` cut to at most `width` characters ("..." where it was cut), keeping a little of its start (what
    runs) and as much of its end (what it does) as fits."""
    if len(text) <= width:
        return text
    if width <= 3:
        return text[:width]
    head = min(16, (width - 3) // 3)
    return text[:head] + "..." + text[len(text) - (width - 3 - head) :]


@dataclass
class Count:
    """Items done of a known total; `advance()` after each."""

    bar: tqdm[Any] | None

    def advance(self, n: float = 1) -> None:
        if self.bar is not None:
            self.bar.update(n)


@contextlib.contextmanager
def counting(total: int, desc: str, unit: str) -> Iterator[Count]:
    """ "checked  12/480 files" while the block runs."""
    bar = _bar(total=total, desc=desc, unit=unit, bar_format="{desc}  {n_fmt}/{total_fmt} {unit}  {elapsed}")
    try:
        yield Count(bar)
    finally:
        if bar is not None:
            _close(bar)


def shown() -> bool:
    """Whether progress is shown: work that would wait in one call can then wait in steps it reports."""
    return _stream is not None


@contextlib.contextmanager
def waiting(seconds: float, desc: str) -> Iterator[Count]:
    """ "probe: the window  12/60 s" while a wait of `seconds` goes by; `advance(n)` per n seconds waited."""
    bar = _bar(total=seconds, desc=desc, bar_format="{desc}  {n:.0f}/{total:.0f} s")
    try:
        yield Count(bar)
    finally:
        if bar is not None:
            _close(bar)


def _close(bar: tqdm[Any]) -> None:
    """Blank the line, then end the bar: tqdm's leave=False leaves the last frame on some streams. A bar that
    never drew (work shorter than DELAY) writes nothing."""
    if time.time() - bar.start_t >= DELAY:  # tqdm times with time.time
        bar.clear()
    bar.close()

"""The threads a run over many Hub repos (`catalog update`, `audit`) reads on: the main thread submits reads and
takes their results, in the order they finish, from one queue; everything else stays on the main thread."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable


class Readers:
    """`jobs` daemon threads named `{name}-{i}`. Daemons: a read still waiting on the Hub when the run ends (the
    deadline, Ctrl-C) is left behind, not waited for; a read that raised hands its exception back as its result (the
    main thread raises it as a bug)."""

    def __init__(self, jobs: int, name: str) -> None:
        self.tasks: queue.Queue[tuple[int, Callable[[], object]] | None] = queue.Queue()
        self.results: queue.Queue[tuple[int, object]] = queue.Queue()
        self.stopped = threading.Event()
        self.jobs = jobs
        for i in range(jobs):
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True).start()

    def submit(self, key: int, read: Callable[[], object]) -> None:
        self.tasks.put((key, read))

    def _work(self) -> None:
        while (task := self.tasks.get()) is not None and not self.stopped.is_set():
            key, read = task
            try:
                out: object = read()
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it as a bug
                out = exc
            if not self.stopped.is_set():
                self.results.put((key, out))

    def close(self) -> None:
        """No more reads start; those running finish in the background and are dropped."""
        self.stopped.set()
        with contextlib.suppress(queue.Empty):
            while True:
                self.tasks.get_nowait()
        for _ in range(self.jobs):
            self.tasks.put(None)

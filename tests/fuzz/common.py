"""What every campaign surface shares: the CLI run in-process with its output captured, a world kept on
loopback, and the invariants of any run (exit 0, 1 or 2, never a traceback or an "internal error")."""

from __future__ import annotations

import contextlib
import io
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dflash_cfg.cli import cli, run

LOOPBACK = ("127.0.0.1", "::1", "localhost")


@dataclass(frozen=True)
class Outcome:
    """What one CLI run showed: exit code, stdout, stderr."""

    code: int
    out: str
    err: str


@dataclass
class Tally:
    """Inputs run and defects found, per surface."""

    counts: dict[str, int] = field(default_factory=dict)
    found: list[str] = field(default_factory=list)
    notes: dict[str, int] = field(default_factory=dict)  # outcomes worth a count that are not defects

    def note(self, what: str) -> None:
        self.notes[what] = self.notes.get(what, 0) + 1

    def ran(self, surface: str, n: int = 1) -> None:
        self.counts[surface] = self.counts.get(surface, 0) + n

    def defect(self, surface: str, what: str) -> None:
        self.found.append(f"{surface}: {what}")


def invoke(*args: str | Path) -> Outcome:
    """`dflash-cfg ARGS` in this process, as the test suite's `dflash` fixture runs it."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(cli, [str(a) for a in args])
    return Outcome(code, out.getvalue(), err.getvalue())


def broken(outcome: Outcome) -> str | None:
    """What breaks the contract of every run, or None: an exit code past 2, a traceback, an internal error."""
    if outcome.code not in (0, 1, 2):
        return f"exit code {outcome.code}"
    for name, stream in (("stdout", outcome.out), ("stderr", outcome.err)):
        for bad in ("Traceback", "internal error"):
            if bad in stream:
                at = stream.index(bad)
                return f"{bad!r} on {name}: {stream[max(0, at - 200) : at + 400]!r}"
    return None


@contextlib.contextmanager
def environ(**values: str | None) -> Iterator[None]:
    """Set (or, for None, unset) these environment variables for the block, and restore them after."""
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def isolated(home: Path) -> Iterator[None]:
    """Run with no connection past loopback and none of the user's Hub, AWS or cache settings (what the
    tests' conftest does for the suite), restored after."""
    saved = dict(os.environ)
    for name in [n for n in os.environ if n.startswith(("AWS_", "HF_", "HUGGINGFACE_", "TRANSFORMERS_"))]:
        del os.environ[name]
    os.environ.update(
        {
            "HF_ENDPOINT": "http://127.0.0.1:9",  # the discard port: closed
            "HF_HOME": str(home / "hf-home"),
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "XDG_CACHE_HOME": str(home / "xdg-cache"),
            "AWS_CONFIG_FILE": str(home / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-aws-config"),
            "AWS_EC2_METADATA_DISABLED": "true",
            "NO_COLOR": "1",
        }
    )
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and self.family in (socket.AF_INET, socket.AF_INET6) and host not in LOOPBACK:
            raise OSError(f"the campaign tried to connect to {host}: only loopback is allowed")
        return real_connect(self, address)

    socket.socket.connect = guarded  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        socket.socket.connect = real_connect  # type: ignore[method-assign]
        os.environ.clear()
        os.environ.update(saved)

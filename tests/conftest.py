"""Fixtures: run the real CLI in-process and capture what a user would see; keep the tests on loopback;
the Hub servers. Plain constants and helpers live in helpers.py."""

from __future__ import annotations

import itertools
import os
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from faultproxy import FaultProxy
from gcsserver import GcsServer
from helpers import CACHE, FIXTURES, Result, Store
from hubserver import ErrorHub, Olah
from hypothesis.configuration import set_hypothesis_home_dir
from installed import Installed, install
from s3server import S3Server

from dflash_cfg.cli import cli as cli_group
from dflash_cfg.cli import run


@pytest.fixture
def dflash(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """`dflash("check", path, "--format", "json")` -> Result(exit code, stdout, stderr)."""
    monkeypatch.setenv("NO_COLOR", "1")

    def invoke(*args: str | Path) -> Result:
        capsys.readouterr()
        code = run(cli_group, [str(a) for a in args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


@pytest.fixture(autouse=True, scope="session")
def ctrl_c_as_a_terminal_sends_it() -> None:
    """A run started in the background (CI's, `nohup`, `cmd &` in a script) and pytest-xdist's workers inherit
    SIGINT ignored, and so would every command the tests start: an ignored Ctrl-C stays ignored across exec,
    and the interrupt tests of tests/cli/ would test nothing. Python's own handler here is reset to the
    default in every process the tests start, as a terminal's shell would have it."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# The shared checks beside the test modules that import them: pytest rewrites their asserts too (by default only
# test modules' and conftest's), so a failing check shows its values.
pytest.register_assert_rewrite("fuzzing", "launch_fields")

# Hypothesis keeps its example database (and its unicode tables) under the tests' cache, not in
# .hypothesis/ of the working directory (the checkout).
set_hypothesis_home_dir(CACHE / "hypothesis")

LOOPBACK = ("127.0.0.1", "::1", "localhost")


_FRESH = itertools.count()


def _unmade(factory: pytest.TempPathFactory, name: str) -> Path:
    """A path of this test's own under the run's temporary dir, not created: what uses it creates it. (mktemp
    would list the whole base dir at every call, twice per test: quadratic over a run of thousands.)"""
    return factory.getbasetemp() / f"{name}-{next(_FRESH)}"


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Nothing leaves this machine: no test may connect past loopback, and Hub settings never point at
    the real Hub or at the user's cache or token."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and self.family in (socket.AF_INET, socket.AF_INET6) and host not in LOOPBACK:
            raise OSError(f"test tried to connect to {host}: only loopback is allowed")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: closed
    monkeypatch.setenv("HF_HOME", str(_unmade(tmp_path_factory, "hf-home")))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(_unmade(tmp_path_factory, "xdg-cache")))  # never the user's cache
    # Nor the user's AWS keys, profiles or endpoints; and no instance-metadata lookup for credentials.
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name, raising=False)
    empty = tmp_path_factory.getbasetemp() / "no-aws-config"
    monkeypatch.setenv("AWS_CONFIG_FILE", str(empty))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(empty))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    # Nor the user's Google credentials, gcloud login or emulator; and no metadata-server lookup.
    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "STORAGE_EMULATOR_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path_factory.getbasetemp() / "no-gcloud-config"))
    monkeypatch.setenv("NO_GCE_CHECK", "true")


def pytest_report_header() -> str:
    """The lock the engine suite runs on: the default one, or the release's `./dev test --lock` (or
    $DFLASH_CFG_ENGINES_LOCK) names; said once at the top of every run, so a log shows which release it checked."""
    from engines import build

    lock = build.default_lock()
    root = build.LOCK.parent.parent.parent
    return f"engines lock: {lock.relative_to(root) if lock.is_relative_to(root) else lock}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test served by olah, moto or the GCS emulator (`store`: either) is slow: the session starts the server
    (and may build its venv); so is every test of the installed wheel (built and installed once per session)."""
    for item in items:
        if {"olah", "s3_server", "gcs_server", "store", "installed"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def olah(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Olah]:
    """The real olah server, serving every repo under fixtures/hub/<org>/<name>/ as a git mirror."""
    server = Olah(tmp_path_factory.mktemp("olah"))
    for repo_dir in sorted((FIXTURES / "hub").glob("*/*")):
        server.publish_dir(f"{repo_dir.parent.name}/{repo_dir.name}", repo_dir)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def hub(olah: Olah, monkeypatch: pytest.MonkeyPatch) -> Olah:
    """olah as this test's Hub (HF_ENDPOINT), with a cache of this test's own (HF_HOME)."""
    monkeypatch.setenv("HF_ENDPOINT", olah.endpoint)
    return olah


@pytest.fixture(scope="session")
def error_hub() -> Iterator[ErrorHub]:
    server = ErrorHub()
    yield server
    server.close()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """moto's standalone S3 server on loopback, checking request signatures."""
    server = S3Server(tmp_path_factory.mktemp("moto"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def s3(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    """moto as this test's S3 (AWS_ENDPOINT_URL_S3 and a valid key in the standard AWS variables)."""
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    return s3_server


@pytest.fixture(scope="session")
def gcs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GcsServer]:
    """gcp-storage-emulator, a GCS JSON-API server, on loopback."""
    server = GcsServer(tmp_path_factory.mktemp("gcs"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def gcs(gcs_server: GcsServer, monkeypatch: pytest.MonkeyPatch) -> GcsServer:
    """The emulator as this test's GCS (STORAGE_EMULATOR_HOST), reached without credentials."""
    for name, value in gcs_server.env().items():
        monkeypatch.setenv(name, value)
    return gcs_server


@pytest.fixture(params=["s3", "gcs"])
def store(request: pytest.FixtureRequest) -> Store:
    """Each object store in turn as this test's (the `s3` fixture, then `gcs`): a test that holds for every store
    the tool reads is written once."""
    server: Store = request.getfixturevalue(request.param)
    return server


@pytest.fixture
def proxy(store: Store, monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultProxy]:
    """The fault-injecting proxy (tests/faultproxy.py) in front of this test's store, the tool's endpoint."""
    server = FaultProxy(store.port)
    server.start()
    monkeypatch.setenv(store.endpoint_variable, server.endpoint)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """dflash-cfg built into a wheel and pip-installed (not editable) into a venv of its own (tests/installed.py)."""
    return install(tmp_path_factory.mktemp("installed"))

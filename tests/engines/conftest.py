"""The engine venv for the suite, built on first use (never skipped: a venv that cannot be built fails the tests
that need it). Every test that uses it is marked `engines` and `slow`, so the inner loop (-m "not slow")
deselects them and `./dev test` runs them."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import CACHE

from engines import build


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "engine_python" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.engines)
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def engine_patience(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engines command and preflight's engine step give an adapter minutes, not the default: on a shared
    2-core host an engine import can take several (an answer that never comes fails the test anyway)."""
    monkeypatch.setenv("DFLASH_CFG_ENGINE_TIMEOUT", "1500")


@pytest.fixture(autouse=True)
def vllm_model_info(monkeypatch: pytest.MonkeyPatch) -> None:
    """vLLM's cache of what each model class supports (its "modelinfos", keyed by the class's source hash) kept
    across tests, as on a user's host: cold, each vLLM adapter start inspects every architecture in a subprocess of
    its own (a vLLM import each, a minute per adapter here); the per-test XDG_CACHE_HOME would make it always cold."""
    monkeypatch.setenv("VLLM_CACHE_ROOT", str(CACHE / "vllm-cache"))


@pytest.fixture(scope="session")
def engine_python() -> Path:
    """The pinned engine venv's python ($DFLASH_CFG_TEST_CACHE or ~/.cache/dflash-cfg-tests/engines-<hash>), of
    tests/engines/requirements.lock.txt or of the lock $DFLASH_CFG_ENGINES_LOCK names (a release's, to run the
    suite on it before it is adopted)."""
    return build.engine_python(CACHE, lock=build.default_lock())

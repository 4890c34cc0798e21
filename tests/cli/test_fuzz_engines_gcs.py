"""Derandomized slices of the campaign's engine and gs:// surfaces (tests/fuzz/engines.py, tests/fuzz/gcs.py): the
same generators and invariants the campaign runs at scale (tests/fuzz/campaign.py), a few inputs each, the same
ones every run. Real processes and a real server: `slow`."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from checkpoints import save, small_shapes
from faultproxy import FaultProxy
from fuzz import engines as engines_surface
from fuzz import gcs as gcs_surface
from gcsserver import GcsServer
from helpers import examples
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

HEALTH = (HealthCheck.function_scoped_fixture,)


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> engines_surface.Interpreter:
    return engines_surface.Interpreter(tmp_path_factory.mktemp("engine"))


@pytest.mark.slow
@examples(12, *HEALTH)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_engine_answers(stand_in: engines_surface.Interpreter, rng: random.Random) -> None:
    case = engines_surface.engine_case(rng, rng.randrange(1 << 30))
    assert engines_surface.engine_defect(case, stand_in, memory=False) is None


@pytest.fixture
def bucket(gcs_server: GcsServer, tmp_path: Path) -> Iterator[gcs_surface.Bucket]:
    proxy = FaultProxy(gcs_server.port)
    proxy.start()
    save(tmp_path / "model.safetensors", small_shapes())
    yield gcs_surface.Bucket(gcs_server, proxy, (tmp_path / "model.safetensors").read_bytes())
    proxy.stop()


@pytest.mark.slow
@examples(4, *HEALTH)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_gcs_faults(bucket: gcs_surface.Bucket, rng: random.Random) -> None:
    assert gcs_surface.gcs_defect(bucket, gcs_surface.gcs_case(rng), memory=False) is None

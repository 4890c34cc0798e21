"""probe reads what the engines' own metrics code writes: vLLM's SpecDecodingProm and SGLang's
SchedulerMetricsCollector, run in the pinned engine venv with the incident's numbers, served over loopback
HTTP. The fixtures the fast tests serve (fixtures/metrics) must read the same: the engine text differs from
them only in the `_created` timestamps."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers import FIXTURES, Result

SCRIPT = Path(__file__).with_name("metrics_script.py")
TARGET = FIXTURES / "targets" / "Qwen__Qwen3.6-27B"


def _generate(engine_python: Path, engine: str, out: Path) -> None:
    out.mkdir()
    args = [str(engine_python), str(SCRIPT), engine, str(out)] + ([str(TARGET)] if engine == "sglang" else [])
    done = subprocess.run(args, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def engine_metrics(engine_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("engine-metrics")
    _generate(engine_python, "vllm", out / "vllm")
    _generate(engine_python, "sglang", out / "sglang")
    return out


@pytest.fixture
def serve() -> Iterator[Callable[..., str]]:
    bodies: list[bytes] = []
    hits = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = bodies[min(hits[0], len(bodies) - 1)]
            hits[0] += 1
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def set_bodies(*paths: Path) -> str:
        bodies[:] = [p.read_bytes() for p in paths]
        hits[0] = 0
        return f"http://127.0.0.1:{server.server_address[1]}/metrics"

    yield set_bodies
    server.shutdown()
    server.server_close()


def _records(result: Result) -> list[dict[str, object]]:
    doc = result.json()
    return [{k: v for k, v in r.items()} for r in doc["engines"]]


@pytest.mark.parametrize(
    ("engine", "name", "code", "verdict", "length"),
    [
        ("vllm", "vllm-incident.prom", 1, "collapse", 1.165),
        ("vllm", "vllm-healthy.prom", 0, "healthy", 2.8),
        ("sglang", "sglang-incident.prom", 1, "collapse", 1.165),
        ("sglang", "sglang-healthy.prom", 0, "healthy", 2.8),
    ],
)
def test_probe_reads_the_engines_own_metrics(
    engine: str,
    name: str,
    code: int,
    verdict: str,
    length: float,
    engine_metrics: Path,
    serve: Callable[..., str],
    dflash: Callable[..., Result],
) -> None:
    result = dflash("probe", serve(engine_metrics / engine / name), "--format", "json")
    assert result.code == code, result
    [record] = _records(result)
    assert record["verdict"] == verdict and record["mean_acceptance_length"] == pytest.approx(length)
    assert record["model_name"] == "Qwen/Qwen3.6-27B"
    if "incident" in name:
        assert record["acceptance_rate"] == pytest.approx(0.011)
    # The fixture the fast tests serve reads the same.
    fixture = dflash("probe", serve(FIXTURES / "metrics" / name), "--format", "json")
    assert _records(fixture) == [record]


def test_the_window_between_two_vllm_scrapes(
    engine_metrics: Path, serve: Callable[..., str], dflash: Callable[..., Result]
) -> None:
    url = serve(
        engine_metrics / "vllm" / "vllm-healthy.prom", engine_metrics / "vllm" / "vllm-healthy-then-incident.prom"
    )
    result = dflash("probe", url, "--interval", "0.01", "--format", "json")
    assert result.code == 1, result
    [record] = _records(result)
    assert record["mean_acceptance_length"] == pytest.approx(1.165)
    assert (record["drafts"], record["draft_tokens"], record["accepted_tokens"]) == (1000, 15000, 165)

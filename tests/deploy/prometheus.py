"""Debian's Prometheus for the tests of deploy/: promtool (check and unit-test the rules) and the server (an
end-to-end run on loopback). Installed here when missing and the tests run as root (as CI does; .ci/run installs it
first), else the tests that need it skip, saying why. And a stand-in engine: its /metrics as vLLM's or SGLang's own
Prometheus code writes it (prometheus_client, the names probe reads), its counters growing with time."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest


def binaries() -> tuple[str, str]:
    """(promtool, prometheus): Debian's `prometheus` package, apt-installed once when absent and root."""
    missing = shutil.which("promtool") is None or shutil.which("prometheus") is None
    if missing and os.geteuid() == 0 and shutil.which("apt-get"):
        # One install for all pytest-xdist workers: a second apt-get would fail on apt's lock.
        with open(os.path.join(tempfile.gettempdir(), "dflash-cfg-prometheus-install.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if shutil.which("promtool") is None or shutil.which("prometheus") is None:
                env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
                for command in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "prometheus"]):
                    subprocess.run(command, env=env, capture_output=True, timeout=900, check=False)
    promtool, prometheus = shutil.which("promtool"), shutil.which("prometheus")
    if promtool is None or prometheus is None:
        pytest.skip("no promtool and prometheus on PATH, and not root to `apt-get install prometheus`")
    return promtool, prometheus


@dataclass(frozen=True)
class Traffic:
    """What a stand-in engine does each second: vLLM drafts of 15 tokens, `accepted` of them per draft on average
    (healthy 1.8: mean acceptance length 2.8; the incident 0.165: 1.165); or SGLang's gauge at `1 + accepted`."""

    server: str  # "vllm" or "sglang"
    model: str
    accepted: float
    drafts_per_second: float = 50.0


class StandIn:
    """An engine's /metrics on loopback, one registry per path (`/<name>/metrics`), as the engine's own code fills
    it (vLLM: counters labelled model_name and engine; SGLang: gauges labelled model_name and tp_rank); each scrape
    adds the traffic since the last one, so the counters grow as a serving engine's do."""

    def __init__(self, engines: dict[str, Traffic]) -> None:
        self.engines = engines
        self.lock = threading.Lock()
        self.registries: dict[str, tuple[CollectorRegistry, Traffic, list[object]]] = {}
        for name, traffic in engines.items():
            registry = CollectorRegistry()
            if traffic.server == "vllm":
                labels = ["model_name", "engine"]
                metrics: list[object] = [
                    Counter(f"vllm:spec_decode_{m}", m, labels, registry=registry)
                    for m in ("num_drafts", "num_draft_tokens", "num_accepted_tokens")
                ]
            else:
                labels = ["model_name", "tp_rank"]
                metrics = [
                    Gauge("sglang:spec_accept_length", "length", labels, registry=registry),
                    Gauge("sglang:spec_accept_rate", "rate", labels, registry=registry),
                ]
            self.registries[name] = (registry, traffic, metrics)
        self.last = dict.fromkeys(engines, time.monotonic())  # each engine's last scrape
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = self.path.strip("/").split("/")
                if len(parts) != 2 or parts[1] != "metrics" or parts[0] not in stand_in.registries:
                    self.send_error(404)
                    return
                body = stand_in.scrape(parts[0])
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def scrape(self, name: str) -> bytes:
        registry, traffic, metrics = self.registries[name]
        with self.lock:
            now = time.monotonic()
            if traffic.server == "vllm":
                drafts, tokens, accepted = metrics
                seconds = max(now - self.last[name], 0.001)
                n = traffic.drafts_per_second * seconds
                drafts.labels(traffic.model, "0").inc(n)  # type: ignore[attr-defined]
                tokens.labels(traffic.model, "0").inc(15 * n)  # type: ignore[attr-defined]
                accepted.labels(traffic.model, "0").inc(traffic.accepted * n)  # type: ignore[attr-defined]
            else:
                length, rate = metrics
                length.labels(traffic.model, "0").set(1 + traffic.accepted)  # type: ignore[attr-defined]
                rate.labels(traffic.model, "0").set(traffic.accepted / 15)  # type: ignore[attr-defined]
            self.last[name] = now
            return generate_latest(registry)

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)

"""probe against a real HTTP server on loopback serving /metrics text written by the engines' own metrics code
(fixtures/metrics, made and re-checked by tests/engines/test_probe_engines.py): the verdicts, the window
between scrapes, the failures that exit 2, the diagnosis of the incident's drafter, the project config, and
the sidecar."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers import FIXTURES, Result, assert_one_line_error

from dflash_cfg.commands import probe
from dflash_cfg.errors import ProbeError

METRICS = FIXTURES / "metrics"
INCIDENT, HEALTHY, LATER = "vllm-incident.prom", "vllm-healthy.prom", "vllm-healthy-then-incident.prom"
DRAFTER = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
UPSTREAM = "z-lab/Qwen3.6-27B-DFlash"


@dataclass(frozen=True)
class Answer:
    body: bytes
    status: int = 200
    content_type: str = "text/plain; version=0.0.4; charset=utf-8"
    delay: float = 0.0


def metrics(name: str) -> Answer:
    return Answer((METRICS / name).read_bytes())


class Endpoint:
    """A /metrics endpoint answering each GET with the next answer; the last one repeats."""

    def __init__(self) -> None:
        self.answers: list[Answer] = []
        self.hits = 0
        self.authorization: str | None = None
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                answer = endpoint.answers[min(endpoint.hits, len(endpoint.answers) - 1)]
                endpoint.hits += 1
                endpoint.authorization = self.headers.get("Authorization")
                time.sleep(answer.delay)
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", answer.content_type)
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    # A probe that gave up on a slow answer: said by the test that made it slow. Printed by the
                    # server's thread, the traceback would land in whichever test's stderr runs next.
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/metrics"

    def serve(self, *answers: Answer) -> str:
        self.answers, self.hits = list(answers), 0
        return self.url


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    e = Endpoint()
    # shutdown() waits for the loop's next poll: 0.5 s by default, at every test's teardown.
    thread = threading.Thread(target=e.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield e
    e.server.shutdown()
    e.server.server_close()


@pytest.fixture
def offline_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(FIXTURES / "hf-cache" / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def no_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from an empty dir: the checkout's own pyproject.toml is no project config of a deployment."""
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")


def test_the_incident_is_a_collapse(endpoint: Endpoint, dflash: Callable[..., Result]) -> None:
    url = endpoint.serve(metrics(INCIDENT))
    result = dflash("probe", url)
    assert result.code == 1, result
    assert result.out.splitlines()[:4] == [
        f"{url}: speculative decoding over the counters' lifetime",
        "  vLLM Qwen/Qwen3.6-27B (engine 0): collapse",
        "    mean acceptance length 1.17 of 16, below 1.5",
        "    acceptance rate 1.1% (165 of 15000 draft tokens, 1000 drafts)",
    ]
    assert result.out.splitlines()[4].startswith("    per position: 0.150 0.015 0.000")


def test_the_repaired_drafter_is_healthy(endpoint: Endpoint, dflash: Callable[..., Result]) -> None:
    result = dflash("probe", endpoint.serve(metrics(HEALTHY)))
    assert result.code == 0, result
    assert "  vLLM Qwen/Qwen3.6-27B (engine 0): healthy\n" in result.out
    assert "    mean acceptance length 2.80 of 16, at least 1.5\n" in result.out
    assert "acceptance rate 12.0% (1800 of 15000 draft tokens, 1000 drafts)" in result.out


def test_json_has_one_record_per_engine_and_model(endpoint: Endpoint, dflash: Callable[..., Result]) -> None:
    url = endpoint.serve(metrics(INCIDENT))
    doc = dflash("probe", url, "--format", "json").json()
    assert (doc["version"], doc["url"], doc["interval"]) == (1, url, None)
    [record] = doc["engines"]
    assert record["engine"] == "0" and record["model_name"] == "Qwen/Qwen3.6-27B" and record["server"] == "vllm"
    assert record["acceptance_rate"] == pytest.approx(0.011)
    assert record["mean_acceptance_length"] == pytest.approx(1.165)
    assert record["per_position"][:3] == pytest.approx([0.15, 0.015, 0.0]) and len(record["per_position"]) == 15
    assert record["verdict"] == "collapse"
    assert record["ceiling"] == 16  # num_speculative_tokens 15, and the bonus token


@pytest.mark.parametrize("name", ["sglang-incident.prom", "sglang-healthy.prom"])
def test_sglang_gauges(name: str, endpoint: Endpoint, dflash: Callable[..., Result]) -> None:
    result = dflash("probe", endpoint.serve(metrics(name)), "--format", "json")
    [record] = result.json()["engines"]
    if "incident" in name:
        assert (result.code, record["verdict"], record["mean_acceptance_length"]) == (1, "collapse", 1.165)
        assert record["acceptance_rate"] == 0.011
    else:
        assert (result.code, record["verdict"], record["mean_acceptance_length"]) == (0, "healthy", 2.8)
    assert record["server"] == "sglang" and record["per_position"] is None and record["ceiling"] is None
    assert " of " not in dflash("probe", endpoint.url).out.splitlines()[2]  # SGLang's gauges say no ceiling


def test_the_window_between_scrapes_shows_what_the_lifetime_hides(
    endpoint: Endpoint, dflash: Callable[..., Result]
) -> None:
    # Over its lifetime the later scrape still looks healthy (1.98) ...
    assert dflash("probe", endpoint.serve(metrics(LATER))).code == 0
    # ... the window since the healthy scrape is the incident alone.
    result = dflash("probe", endpoint.serve(metrics(HEALTHY), metrics(LATER)), "--interval", "0.05")
    assert result.code == 1, result
    assert "over 0.05 s between two scrapes" in result.out
    assert "mean acceptance length 1.17 of 16, below 1.5" in result.out
    assert "(165 of 15000 draft tokens, 1000 drafts)" in result.out
    assert endpoint.hits == 2


def test_an_idle_window_cannot_be_judged(endpoint: Endpoint, dflash: Callable[..., Result]) -> None:
    assert_one_line_error(
        dflash("probe", endpoint.serve(metrics(HEALTHY)), "--interval", "0.01"),
        contains=("no draft scored yet: no traffic",),
        out="",
    )


def test_counters_that_went_backwards_are_a_restart(endpoint: Endpoint, dflash: Callable[..., Result]) -> None:
    url = endpoint.serve(metrics(LATER), metrics(HEALTHY))
    assert_one_line_error(
        dflash("probe", url, "--interval", "0.01"), contains=("went backwards between scrapes", "restarted"), out=""
    )


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_endpoint_that_is_down(dflash: Callable[..., Result]) -> None:
    assert_one_line_error(
        dflash("probe", f"http://127.0.0.1:{_closed_port()}/metrics"), contains=("endpoint down",), out=""
    )


def test_a_slow_endpoint_times_out(endpoint: Endpoint, dflash: Callable[..., Result]) -> None:
    url = endpoint.serve(Answer((METRICS / INCIDENT).read_bytes(), delay=1.0))
    assert_one_line_error(
        dflash("probe", url, "--timeout", "0.2"), contains=("no complete answer within 0.2 s",), out=""
    )


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        (Answer(b"<!DOCTYPE html><html><body>Grafana</body></html>", content_type="text/html"), "HTML"),
        (Answer(b'vllm:spec_decode_num_drafts_total{engine="0" 12 oops\n'), "not Prometheus text"),
        (Answer(b"\xff\xfe\x00garbage"), "not Prometheus text"),
        (Answer(b"# TYPE up gauge\nup 1\n"), "no speculative-decoding metrics"),
        (Answer(b"", status=404), "HTTP 404"),
        (Answer(b"", status=503), "HTTP 503"),
    ],
    ids=["html", "garbage", "binary", "no-spec-metrics", "404", "503"],
)
def test_what_is_not_an_engines_metrics(
    answer: Answer, fragment: str, endpoint: Endpoint, dflash: Callable[..., Result]
) -> None:
    assert_one_line_error(dflash("probe", endpoint.serve(answer)), contains=(fragment,), out="")


def test_a_machine_format_error_is_still_a_document(dflash: Callable[..., Result]) -> None:
    result = dflash("probe", f"http://127.0.0.1:{_closed_port()}/metrics", "--format", "json")
    assert result.code == 2
    assert "endpoint down" in result.json()["errors"][0]


def test_the_threshold_is_the_users(endpoint: Endpoint, dflash: Callable[..., Result]) -> None:
    url = endpoint.serve(metrics(INCIDENT))
    result = dflash("probe", url, "--min-acceptance-length", "1.1")
    assert result.code == 0 and "mean acceptance length 1.17 of 16, at least 1.1" in result.out
    assert_one_line_error(dflash("probe", url, "--min-acceptance-length", "0.5"), contains=("at least 1",), out="")


def test_the_diagnosis_checks_the_incidents_drafter_against_upstream(
    endpoint: Endpoint, dflash: Callable[..., Result], offline_hub: None, tmp_path: Path
) -> None:
    drafter = tmp_path / "Qwen3.6-27B-DFlash"
    shutil.copytree(DRAFTER, drafter)
    result = dflash("probe", endpoint.serve(metrics(INCIDENT)), "--drafter", drafter, "--from-hub", UPSTREAM)
    assert result.code == 1, result
    assert f"The drafter serving Qwen/Qwen3.6-27B: {drafter}" in result.out
    # The stale values, each against upstream's.
    assert "error DF601" in result.out and "mask_token_id" in result.out and "target_layer_ids" in result.out
    assert f"dflash-cfg fix {drafter} --from-hub {UPSTREAM}" in result.out
    assert f"dflash-cfg diff {drafter} --from-hub {UPSTREAM}" in result.out


def test_a_drafter_that_cannot_be_checked_does_not_hide_the_collapse(
    endpoint: Endpoint, dflash: Callable[..., Result], tmp_path: Path
) -> None:
    result = dflash("probe", endpoint.serve(metrics(INCIDENT)), "--drafter", tmp_path / "gone")
    assert result.code == 1 and "collapse" in result.out
    assert result.err.startswith("dflash-cfg: cannot check the drafter of Qwen/Qwen3.6-27B: ")
    assert len(result.err.splitlines()) == 1


def test_a_healthy_engine_needs_no_diagnosis(endpoint: Endpoint, dflash: Callable[..., Result]) -> None:
    result = dflash("probe", endpoint.serve(metrics(HEALTHY)), "--drafter", DRAFTER)
    assert result.code == 0 and "The drafter serving" not in result.out


def _project(tmp_path: Path, extra: str = "") -> Path:
    shutil.copytree(DRAFTER, tmp_path / "cwd" / "models" / "drafter")
    (tmp_path / "cwd" / "dflash-cfg.toml").write_text(
        f'{extra}\n[[models]]\npath = "models/drafter"\nupstream = "{UPSTREAM}"\n'
        'served-name = "Qwen/Qwen3.6-27B"\nmin-acceptance-length = 3.0\n',
        encoding="utf-8",
    )
    return tmp_path / "cwd" / "models" / "drafter"


def test_the_project_config_names_the_drafter_and_its_threshold(
    endpoint: Endpoint, dflash: Callable[..., Result], offline_hub: None, tmp_path: Path
) -> None:
    drafter = _project(tmp_path)
    # 2.8 is healthy by default, a collapse for a drafter whose team expects at least 3.
    result = dflash("probe", endpoint.serve(metrics(HEALTHY)), "--format", "json")
    assert result.code == 1, result
    doc = result.json()
    assert doc["engines"][0]["min_acceptance_length"] == 3.0 and doc["engines"][0]["verdict"] == "collapse"
    [diagnosis] = doc["diagnosis"]
    assert diagnosis["drafter"] == str(drafter) and diagnosis["upstream"] == UPSTREAM
    rules = {f["rule"] for f in diagnosis["check"]["files"][0]["findings"]}
    assert "DF601" in rules
    # The command line wins; --isolated ignores the file.
    assert dflash("probe", endpoint.url, "--min-acceptance-length", "2").code == 0
    assert dflash("probe", endpoint.url, "--isolated").code == 0


def test_a_global_threshold_and_a_bad_one(endpoint: Endpoint, dflash: Callable[..., Result], tmp_path: Path) -> None:
    project = tmp_path / "cwd" / "dflash-cfg.toml"
    project.write_text("min-acceptance-length = 2.9\n", encoding="utf-8")
    assert dflash("probe", endpoint.serve(metrics(HEALTHY))).code == 1
    project.write_text('min-acceptance-length = "high"\n', encoding="utf-8")
    assert_one_line_error(dflash("probe", endpoint.url), contains=("min-acceptance-length", "must be a number"), out="")


def test_watch_stops_on_the_first_collapse(endpoint: Endpoint, dflash: Callable[..., Result]) -> None:
    url = endpoint.serve(metrics(HEALTHY), metrics(HEALTHY), metrics(LATER))
    result = dflash("probe", url, "--watch", "--interval", "0.01", "--drafter", DRAFTER)
    assert result.code == 1, result
    lines = result.out.splitlines()
    assert lines[0].endswith("vLLM Qwen/Qwen3.6-27B (engine 0): idle: no draft scored: no traffic to judge")
    assert "vLLM Qwen/Qwen3.6-27B (engine 0): collapse: mean acceptance length 1.17 of 16, below 1.5; " in lines[1]
    assert "The drafter serving Qwen/Qwen3.6-27B" in result.out
    assert endpoint.hits == 3


def test_watch_keeps_going_in_json_lines(endpoint: Endpoint, dflash: Callable[..., Result]) -> None:
    # idle, collapse, a restart (reported, then a new baseline), idle, a 503 (an engine reloading: reported,
    # scraped again), idle, then the endpoint fails: the watch ends, with exit 1 for the collapse it saw.
    url = endpoint.serve(
        *map(metrics, (HEALTHY, HEALTHY, LATER, HEALTHY, HEALTHY)),
        Answer(b"", 503),
        metrics(HEALTHY),
        Answer(b"", 500),
    )
    result = dflash("probe", url, "--watch", "--keep-going", "--interval", "0.01", "--format", "json")
    assert result.code == 1, result
    docs = [json.loads(line) for line in result.out.splitlines()]
    verdicts = [d["engines"][0]["verdict"] for d in docs if "engines" in d]
    assert verdicts == ["idle", "collapse", "idle", "idle"]
    assert all(d["version"] == 1 and d["url"] == url for d in docs if "engines" in d)
    assert "HTTP 500" in docs[-1]["errors"][0]
    assert "went backwards" in result.err and "HTTP 500" in result.err
    assert result.err.splitlines()[-1].endswith("(exit 1: a window collapsed during the watch)")
    assert "HTTP 503 Service Unavailable (the engine is not ready) (scraped again at the next interval)" in result.err


def test_a_watch_that_saw_nothing_collapse_still_ends_with_exit_2(
    endpoint: Endpoint, dflash: Callable[..., Result]
) -> None:
    url = endpoint.serve(metrics(HEALTHY), metrics(HEALTHY), Answer(b"", 500))
    result = dflash("probe", url, "--watch", "--keep-going", "--interval", "0.01")
    assert result.code == 2 and "HTTP 500" in result.err, result


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_keep_going_watch_stopped_after_a_collapse_exits_1(endpoint: Endpoint, stop: signal.Signals) -> None:
    """The sidecar's supervisor stops it; its exit code still says a window collapsed. Synchronised on the
    collapse line the child prints, never on a sleep."""
    url = endpoint.serve(metrics(HEALTHY), metrics(HEALTHY), metrics(LATER), metrics(LATER))
    child = subprocess.Popen(
        [sys.executable, "-m", "dflash_cfg", "probe", url, "--watch", "--keep-going", "--interval", "0.05"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if ": collapse: " in line:
                break
        else:
            raise AssertionError(f"no collapse line: {child.communicate(timeout=60)}")
        child.send_signal(stop)
        _, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert child.returncode == 1, err
    assert err.strip().splitlines()[-1] == "dflash-cfg: stopped (exit 1: a window collapsed during the watch)"


def test_the_watch_explains_the_first_collapse_only(endpoint: Endpoint) -> None:
    # idle, collapse (its drafter checked), a restart, idle, a second collapse (not checked again), then a failure.
    url = endpoint.serve(
        *map(metrics, (HEALTHY, HEALTHY, LATER, HEALTHY, HEALTHY, LATER)), Answer(b"", 500), Answer(b"", 500)
    )
    s = probe.settings(url, 0.01, 10.0, None, None, True)
    check = probe.DrafterCheck(drafter=str(DRAFTER))
    seen: list[probe.Explained | ProbeError] = []
    with pytest.raises(ProbeError, match="HTTP 500"):
        for item in probe.probe_watch(s, check, True, sleep=lambda _: None, clock=lambda: time.gmtime(0)):
            seen.append(item)
    answers = [item for item in seen if isinstance(item, probe.Explained)]
    assert [[j.verdict for j in a.window.judged] for a in answers] == [["idle"], ["collapse"], ["idle"], ["collapse"]]
    assert [len(a.diagnoses) for a in answers] == [0, 1, 0, 0]
    assert answers[1].diagnoses[0].drafter == str(DRAFTER) and answers[1].unchecked == ()
    assert {a.when for a in answers} == {"1970-01-01T00:00:00Z"}
    assert isinstance(seen[2], ProbeError) and "went backwards" in str(seen[2])


def test_a_drafter_that_cannot_be_checked_is_said_beside_the_collapse(tmp_path: Path) -> None:
    s = probe.settings(str(METRICS / INCIDENT), None, 10.0, None, None, True)
    answer = probe.probe_once(s, probe.DrafterCheck(drafter=str(tmp_path / "missing")))
    assert answer.window.collapsed and answer.diagnoses == ()
    [unchecked] = answer.unchecked
    assert unchecked.model_name == "Qwen/Qwen3.6-27B" and "missing" in unchecked.reason


def test_credentials_in_the_url_are_never_shown(endpoint: Endpoint, dflash: Callable[..., Result]) -> None:
    url = endpoint.serve(metrics(HEALTHY)).replace("http://", "http://scraper:s3cret-pass@")
    for fmt in ("text", "json"):
        result = dflash("probe", url, "--format", fmt)
        assert result.code == 0 and "s3cret-pass" not in result.out + result.err
    assert endpoint.authorization == "Basic c2NyYXBlcjpzM2NyZXQtcGFzcw=="  # basic auth, as curl would send it
    down = dflash("probe", f"http://scraper:s3cret-pass@127.0.0.1:{_closed_port()}/metrics")
    assert down.code == 2 and "s3cret-pass" not in down.out + down.err


def test_usage_errors(dflash: Callable[..., Result]) -> None:
    assert_one_line_error(
        dflash("probe", str(METRICS / INCIDENT), "--interval", "1"),
        contains=("--interval needs the engine's URL",),
        out="",
    )
    assert_one_line_error(
        dflash("probe", "http://127.0.0.1:1/metrics", "--keep-going"), contains=("--keep-going needs --watch",), out=""
    )
    assert_one_line_error(dflash("probe", "missing.prom"), contains=("missing.prom",), out="")


def test_a_saved_scrape(dflash: Callable[..., Result]) -> None:
    assert dflash("probe", METRICS / INCIDENT).code == 1
    assert dflash("probe", METRICS / HEALTHY).code == 0


def test_color_as_every_command_has_it(dflash: Callable[..., Result], monkeypatch: pytest.MonkeyPatch) -> None:
    """--color always colours a pipe, whatever NO_COLOR says; never wins over FORCE_COLOR; auto follows them."""
    scrape = METRICS / INCIDENT
    coloured = dflash("probe", scrape, "--drafter", DRAFTER, "--color", "always")  # NO_COLOR=1 is set
    assert coloured.code == 1
    assert "\x1b[31m\x1b[1mcollapse\x1b[0m" in coloured.out and "\x1b[33m" in coloured.out  # and the findings
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" not in dflash("probe", scrape, "--color", "never").out
    monkeypatch.delenv("NO_COLOR")
    assert "\x1b[31m" in dflash("probe", scrape).out  # auto: FORCE_COLOR
    healthy = dflash("probe", METRICS / HEALTHY, "--color", "always")
    assert healthy.code == 0 and "\x1b[32mhealthy\x1b[0m" in healthy.out
    assert "\x1b[" not in dflash("probe", scrape, "--format", "json", "--color", "always").out

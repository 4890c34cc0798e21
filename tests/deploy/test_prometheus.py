"""deploy/prometheus/: probe's judgement as Prometheus rules (`probe --emit-rules`), checked and unit-tested by the
real promtool, and run end to end by a real Prometheus on loopback scraping stand-in engines; and the Grafana
dashboard of deploy/grafana/, held to the series the rules record."""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT, Result, assert_one_line_error, stop_process
from hubserver import free_port

from dflash_cfg.lint.acceptance import DEFAULT_MIN_ACCEPTANCE_LENGTH
from dflash_cfg.sources import metrics

from .prometheus import StandIn, Traffic, binaries

RULES = ROOT / "deploy" / "prometheus" / "dflash-cfg.rules.yaml"
RULES_TEST = ROOT / "deploy" / "prometheus" / "dflash-cfg.rules.test.yaml"
DASHBOARD = ROOT / "deploy" / "grafana" / "dflash-cfg-dashboard.json"
# The panels docs/deploy.md names, in the dashboard's order.
PANELS = (
    "Mean acceptance length per model",
    "Drafts per second",
    "Mean acceptance length per engine",
    "Acceptance rate per engine",
)
ALERT = "DflashCfgAcceptanceCollapse"

Run = Callable[..., Result]


@pytest.fixture(scope="module")
def promtool() -> str:
    return binaries()[0]


def recorded(text: str) -> set[str]:
    return set(re.findall(r"^  - record: (\S+)$", text, re.MULTILINE))


def test_the_shipped_rules_are_what_emit_rules_writes(dflash: Run) -> None:
    """The file operators load is the command's output with probe's defaults: window 5m, threshold 1.5, held 10m."""
    result = dflash("probe", "--emit-rules", "--isolated")
    assert result.code == 0, result.err
    assert result.out == RULES.read_text(encoding="utf-8"), "regenerate: dflash-cfg probe --emit-rules --isolated"


def test_the_rules_read_the_names_probe_reads_with_its_threshold() -> None:
    text = RULES.read_text(encoding="utf-8")
    for name in metrics.VLLM_COUNTERS:
        assert f"rate({name}_total[5m])" in text
    for name in metrics.SGLANG_GAUGES:
        assert name in text
    assert f"dflash_cfg:spec_decode_mean_acceptance_length < {DEFAULT_MIN_ACCEPTANCE_LENGTH}" in text
    assert "for: 10m" in text and "Run `dflash-cfg check` on the drafter" in text


def test_per_model_thresholds_come_from_the_project_config(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As probe judges: a served model's own min-acceptance-length, the global one for every other model."""
    (tmp_path / "dflash-cfg.toml").write_text(
        'min-acceptance-length = 1.8\n\n[[models]]\npath = "d"\nserved-name = "Qwen/Qwen3.6-27B"\n'
        "min-acceptance-length = 2.5\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    result = dflash("probe", "--emit-rules", "--interval", "120", "--for", "90")
    assert result.code == 0, result.err
    expressions = re.findall(r"^    expr: (.*< .*)$", result.out, re.MULTILINE)
    assert expressions == [
        'dflash_cfg:spec_decode_mean_acceptance_length{model_name="Qwen/Qwen3.6-27B"} < 2.5',
        'dflash_cfg:spec_decode_mean_acceptance_length{model_name!="Qwen/Qwen3.6-27B"} < 1.8',
    ]
    assert "[2m])" in result.out and "for: 90s" in result.out
    flag = dflash("probe", "--emit-rules", "--min-acceptance-length", "2")  # the command line wins, for every model
    assert re.findall(r"^    expr: (.*< .*)$", flag.out, re.MULTILINE) == [
        "dflash_cfg:spec_decode_mean_acceptance_length < 2"
    ]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        pytest.param(("--emit-rules", "http://127.0.0.1:1/metrics"), "URL has no use there", id="url"),
        pytest.param(("--emit-rules", "--watch"), "--watch has no use there", id="watch"),
        pytest.param(("--emit-rules", "--interval", "1.5"), "whole number of seconds", id="fraction"),
        pytest.param(("--emit-rules", "--for", "0"), "whole number of seconds", id="zero"),
        pytest.param(("fixtures/metrics/vllm-incident.prom", "--for", "60"), "--for needs --emit-rules", id="for"),
        pytest.param((), "missing the engine's metrics URL", id="nothing"),
    ],
)
def test_emit_rules_usage_errors(dflash: Run, args: tuple[str, ...], fragment: str) -> None:
    assert_one_line_error(dflash("probe", *args), contains=(fragment,))


@pytest.mark.slow  # runs promtool
def test_promtool_checks_and_unit_tests_the_shipped_rules(promtool: str) -> None:
    """A healthy, a collapsed and an idle engine of each kind: the collapsed ones fire after 10 minutes, with their
    model, pod and runbook; the others record their numbers (idle: none) and stay silent."""
    checked = subprocess.run([promtool, "check", "rules", RULES], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0 and "SUCCESS: 8 rules found" in checked.stdout, checked.stdout + checked.stderr
    tested = subprocess.run(
        [promtool, "test", "rules", RULES_TEST.name], capture_output=True, text=True, timeout=120, cwd=RULES.parent
    )
    assert tested.returncode == 0 and "SUCCESS" in tested.stdout, tested.stdout + tested.stderr


@pytest.mark.slow  # runs promtool
def test_promtool_fails_rules_whose_threshold_differs(promtool: str, tmp_path: Path) -> None:
    """The unit test holds the threshold: the same series judged at 1.1 fire nothing, and promtool says so."""
    text = RULES.read_text(encoding="utf-8").replace("< 1.5", "< 1.1")
    (tmp_path / RULES.name).write_text(text, encoding="utf-8")
    (tmp_path / RULES_TEST.name).write_text(RULES_TEST.read_text(encoding="utf-8"), encoding="utf-8")
    tested = subprocess.run(
        [promtool, "test", "rules", RULES_TEST.name], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert tested.returncode == 1 and "FAILED" in tested.stdout + tested.stderr


# --- the dashboard --------------------------------------------------------------------------------------------


def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return data


def expressions(board: dict[str, Any]) -> list[str]:
    return [t["expr"] for p in board["panels"] for t in p["targets"]]


def test_the_dashboard_has_the_panels_it_names_on_the_recorded_series() -> None:
    board = dashboard()
    assert tuple(p["title"] for p in board["panels"]) == PANELS
    assert len({p["id"] for p in board["panels"]}) == len(PANELS)
    names = recorded(RULES.read_text(encoding="utf-8"))
    for panel in board["panels"]:
        assert panel["type"] == "timeseries" and panel["targets"], panel["title"]
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        for target in panel["targets"]:
            used = set(re.findall(r"dflash_cfg:[a-z_:]+", target["expr"]))
            assert used and used <= names, (panel["title"], used - names)
            assert 'model_name=~"$model"' in target["expr"], panel["title"]
    grid = [p["gridPos"] for p in board["panels"]]
    cells = [(x, y) for g in grid for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])]
    assert len(cells) == len(set(cells)) and all(g["x"] + g["w"] <= 24 for g in grid), "panels overlap"
    thresholds = [p["fieldConfig"]["defaults"].get("thresholds") for p in board["panels"] if "length" in p["title"]]
    for steps in thresholds:
        assert steps is not None and steps["steps"][1]["value"] == DEFAULT_MIN_ACCEPTANCE_LENGTH
    variables = {v["name"] for v in board["templating"]["list"]}
    assert variables == {"datasource", "model"}


@pytest.mark.slow  # runs promtool
def test_promtool_parses_every_panel_query(promtool: str, tmp_path: Path) -> None:
    """Each panel's PromQL, as a recording rule promtool must accept ($model as Grafana fills it for All)."""
    queries = [e.replace("$model", ".*") for e in expressions(dashboard())]
    rules = {
        "groups": [{"name": "panels", "rules": [{"record": f"panel:{i}", "expr": q} for i, q in enumerate(queries)]}]
    }
    (tmp_path / "panels.yaml").write_text(json.dumps(rules), encoding="utf-8")
    checked = subprocess.run([promtool, "check", "rules", tmp_path / "panels.yaml"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


# --- end to end: a real Prometheus on loopback ----------------------------------------------------------------


def api(port: int, path: str, **query: str) -> Any:
    url = f"http://127.0.0.1:{port}{path}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
    with urllib.request.urlopen(url, timeout=5) as answer:
        return json.loads(answer.read())


def poll(what: str, deadline: float, probe: Callable[[], Any]) -> Any:
    """`probe()` until it answers something true, or fail at the deadline naming `what` and its last answer."""
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except OSError as exc:  # the server is not listening yet
            last = exc
        else:
            if last:
                return last
        time.sleep(0.2)  # the poll's own pace; each answer is the server's state, not a guess at it
    pytest.fail(f"{what}: not seen before the deadline (last: {last!r})")


@pytest.fixture
def prometheus(tmp_path: Path, dflash: Run) -> Iterator[tuple[int, StandIn]]:
    """Prometheus on loopback with the rules of `probe --emit-rules --interval 5 --for 3` (a 5 s window, a collapse
    held 3 s), scraping a stand-in serving a healthy vLLM, a collapsed vLLM and a collapsed SGLang every second."""
    binary = binaries()[1]
    rules = dflash("probe", "--emit-rules", "--isolated", "--interval", "5", "--for", "3")
    assert rules.code == 0, rules.err
    (tmp_path / "rules.yaml").write_text(rules.out, encoding="utf-8")
    engines = {
        "healthy": Traffic("vllm", "Qwen/Qwen3.6-27B", 1.8),
        "collapsed": Traffic("vllm", "Qwen/Qwen3.6-27B", 0.165),
        "sglang-collapsed": Traffic("sglang", "Qwen/Qwen3-8B", 0.17),
    }
    with StandIn(engines) as stand_in:
        jobs = [
            {
                "job_name": name,
                "metrics_path": f"/{name}/metrics",
                "static_configs": [{"targets": [f"127.0.0.1:{stand_in.port}"], "labels": {"pod": name}}],
            }
            for name in engines
        ]
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"},
            "rule_files": [str(tmp_path / "rules.yaml")],
            "scrape_configs": jobs,
        }
        (tmp_path / "prometheus.yml").write_text(json.dumps(config), encoding="utf-8")
        port = free_port()
        log = (tmp_path / "prometheus.log").open("wb")
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 60
            poll(
                "Prometheus ready",
                deadline,
                lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready").status == 200,
            )
            yield port, stand_in
        finally:
            stop_process(process)
            log.close()


def alerts(port: int) -> list[dict[str, Any]]:
    return [a for a in api(port, "/api/v1/alerts")["data"]["alerts"] if a["labels"]["alertname"] == ALERT]


@pytest.mark.slow  # starts Prometheus
def test_a_real_prometheus_fires_on_the_collapsed_engines_only(prometheus: tuple[int, StandIn]) -> None:
    port, _ = prometheus
    deadline = time.monotonic() + 120

    def firing() -> set[str]:
        found = {a["labels"]["pod"] for a in alerts(port) if a["state"] == "firing"}
        return found if found >= {"collapsed", "sglang-collapsed"} else set()

    assert poll("the collapse alerts firing", deadline, firing) == {"collapsed", "sglang-collapsed"}
    fired = {a["labels"]["pod"]: a for a in alerts(port)}
    assert "healthy" not in fired, fired["healthy"]  # neither firing nor pending, judged all along
    vllm = fired["collapsed"]
    assert vllm["labels"]["model_name"] == "Qwen/Qwen3.6-27B" and vllm["labels"]["server"] == "vllm"
    assert vllm["annotations"]["summary"] == "Speculative decoding collapsed for Qwen/Qwen3.6-27B on collapsed"
    assert vllm["annotations"]["runbook"].startswith("Run `dflash-cfg check` on the drafter this pod serves")
    assert 1.1 < float(vllm["value"]) < 1.25  # 1 + 0.165 accepted per draft
    lengths = api(port, "/api/v1/query", query="dflash_cfg:spec_decode_mean_acceptance_length")["data"]["result"]
    by_pod = {r["metric"]["pod"]: float(r["value"][1]) for r in lengths}
    assert by_pod.keys() == {"healthy", "collapsed", "sglang-collapsed"}
    assert abs(by_pod["healthy"] - 2.8) < 0.05 and abs(by_pod["sglang-collapsed"] - 1.17) < 1e-9
    # Every panel of the dashboard answers from the same server ($model as Grafana fills it for All).
    for expr in expressions(dashboard()):
        answer = api(port, "/api/v1/query", query=expr.replace("$model", ".*"))
        assert answer["status"] == "success" and answer["data"]["result"], expr

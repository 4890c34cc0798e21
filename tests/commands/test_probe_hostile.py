"""probe against endpoints that misbehave (issue 33), on loopback, written byte by byte (tests/rawhttp.py): a
trickle held to one deadline, credentials kept from another origin, answers that are not HTTP or are cut
short, values that are not numbers, series that repeat, URLs with typos. Each answer is what the user sees:
one line and exit 2 when the scrape cannot be judged, never a verdict made from half an answer."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import FIXTURES, Result, assert_one_line_error
from rawhttp import RawEndpoint, cut, plain, raw, redirect, trickle

from dflash_cfg.sources import scrape

METRICS = FIXTURES / "metrics"
HEALTHY = (METRICS / "vllm-healthy.prom").read_bytes()
INCIDENT = (METRICS / "vllm-incident.prom").read_bytes()


@pytest.fixture
def endpoint() -> Iterator[RawEndpoint]:
    e = RawEndpoint()
    yield e
    e.close()


@pytest.fixture
def elsewhere() -> Iterator[RawEndpoint]:
    e = RawEndpoint()
    yield e
    e.close()


@pytest.fixture(autouse=True)
def no_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")


# --- 1. one deadline for the whole scrape ---------------------------------------------------------------


def test_a_trickle_is_held_to_the_timeout(endpoint: RawEndpoint, dflash: Callable[..., Result]) -> None:
    # A byte every 0.2 s is never silent for --timeout, and would take minutes; for 6 s, then the rest.
    url = endpoint.serve(trickle(HEALTHY, 0.2, 6.0))
    assert_one_line_error(dflash("probe", url, "--timeout", "1"), contains=("no complete answer within 1 s",), out="")


def test_a_watch_on_a_trickle_exits_2(endpoint: RawEndpoint, dflash: Callable[..., Result]) -> None:
    url = endpoint.serve(plain(HEALTHY), trickle(HEALTHY, 0.2, 6.0))
    result = dflash("probe", url, "--watch", "--interval", "0.01", "--timeout", "1")
    assert result.code == 2 and "no complete answer within 1 s" in result.err, result


# --- 2. credentials stay with the URL's origin ----------------------------------------------------------


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_gets_no_credentials(
    status: int, endpoint: RawEndpoint, elsewhere: RawEndpoint, dflash: Callable[..., Result]
) -> None:
    elsewhere.serve(plain(HEALTHY))
    url = endpoint.serve(redirect(elsewhere.url, status)).replace("http://", "http://scraper:s3cret@")
    result = dflash("probe", url)
    assert result.code == 0, result
    assert endpoint.headers(0)["authorization"] == _basic("scraper", "s3cret")
    assert len(elsewhere.requests) == 1 and "authorization" not in elsewhere.headers(0)


def test_a_redirect_on_the_same_origin_keeps_them(endpoint: RawEndpoint, dflash: Callable[..., Result]) -> None:
    url = endpoint.serve(redirect("/other/metrics"), plain(HEALTHY)).replace("http://", "http://scraper:s3cret@")
    assert dflash("probe", url).code == 0
    assert [endpoint.headers(i).get("authorization") for i in (0, 1)] == [_basic("scraper", "s3cret")] * 2
    assert endpoint.requests[1].startswith(b"GET /other/metrics ")


@pytest.mark.parametrize(
    ("first", "then", "same"),
    [
        ("http://h:80/a", "http://H/b", True),
        ("https://h/a", "https://h:443/b", True),
        ("http://h/a", "http://h:8080/b", False),
        ("http://h/a", "https://h/b", False),
        ("https://h/a", "http://h/b", False),
        ("http://h/a", "http://h.evil/b", False),
    ],
)
def test_the_origin(first: str, then: str, same: bool) -> None:
    assert (scrape.origin(first) == scrape.origin(then)) is same


def test_redirects_that_go_nowhere(endpoint: RawEndpoint, dflash: Callable[..., Result]) -> None:
    assert_one_line_error(dflash("probe", endpoint.serve(redirect("/again"))), contains=("too many redirects",), out="")
    assert_one_line_error(
        dflash("probe", endpoint.serve(redirect("file:///etc/passwd"))), contains=("redirect", "not http"), out=""
    )
    assert_one_line_error(dflash("probe", endpoint.serve(plain(b"", "302 Found"))), contains=("HTTP 302",), out="")


# --- 3. answers that are not HTTP -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"HELLO THERE\r\n\r\n", "not an HTTP answer"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", "chunked answer broke off"),
        (b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * 101 + b"\r\n", "not an HTTP answer"),
        (b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n", "not an HTTP answer"),
        (b"", "not an HTTP answer"),
    ],
    ids=["status-line", "chunk-size", "101-headers", "70k-header", "empty"],
)
def test_what_is_not_http(data: bytes, fragment: str, endpoint: RawEndpoint, dflash: Callable[..., Result]) -> None:
    assert_one_line_error(dflash("probe", endpoint.serve(raw(data))), contains=(fragment,), out="")


# --- 4. values that are not numbers ---------------------------------------------------------------------


@pytest.mark.parametrize("value", ["NaN", "+Inf", "-Inf"])
@pytest.mark.parametrize("gauge", ["spec_accept_length", "spec_accept_rate"])
def test_a_gauge_that_is_not_a_number_is_no_verdict(
    gauge: str, value: str, endpoint: RawEndpoint, dflash: Callable[..., Result]
) -> None:
    values = {"spec_accept_length": "2.8", "spec_accept_rate": "0.12", gauge: value}
    body = "".join(f'sglang:{k}{{model_name="m"}} {v}\n' for k, v in values.items()).encode()
    url = endpoint.serve(plain(body))
    assert_one_line_error(dflash("probe", url), contains=(f"sglang:{gauge}", "not a number"), out="")
    result = dflash("probe", url, "--format", "json")
    assert result.code == 2 and f"sglang:{gauge}" in json.loads(result.out)["errors"][0]


def test_counters_that_make_no_finite_length(endpoint: RawEndpoint, dflash: Callable[..., Result]) -> None:
    body = (
        b'vllm:spec_decode_num_drafts_total{model_name="m",engine="0"} 1e-320\n'
        b'vllm:spec_decode_num_draft_tokens_total{model_name="m",engine="0"} 1e300\n'
        b'vllm:spec_decode_num_accepted_tokens_total{model_name="m",engine="0"} 1e300\n'
    )
    url = endpoint.serve(plain(body))
    result = dflash("probe", url, "--format", "json")
    assert result.code == 2, result
    assert "not a number" in json.loads(result.out)["errors"][0]  # strict JSON: no NaN, no Infinity


@pytest.mark.parametrize("option", ["--min-acceptance-length", "--interval", "--timeout"])
@pytest.mark.parametrize("value", ["nan", "inf"])
def test_options_that_are_not_numbers(option: str, value: str, dflash: Callable[..., Result]) -> None:
    assert_one_line_error(dflash("probe", "http://127.0.0.1:9/metrics", option, value), contains=(option,), out="")


def test_a_project_threshold_that_is_not_a_number(dflash: Callable[..., Result], tmp_path: Path) -> None:
    (tmp_path / "cwd" / "dflash-cfg.toml").write_text("min-acceptance-length = nan\n", encoding="utf-8")
    assert_one_line_error(dflash("probe", METRICS / "vllm-healthy.prom"), contains=("min-acceptance-length",), out="")


# --- 5. a body cut short --------------------------------------------------------------------------------


def test_a_body_cut_mid_number_is_no_collapse(endpoint: RawEndpoint, dflash: Callable[..., Result]) -> None:
    # The healthy scrape, cut inside "1800.0" of the accepted tokens: as text, 18 accepted, a collapse.
    lines = [line for line in HEALTHY.split(b"\n") if b"_created" not in line and b"per_pos" not in line]
    body = b"\n".join(lines)
    at = body.index(b"accepted_tokens_total") + body[body.index(b"accepted_tokens_total") :].index(b"} 1800") + 4
    url = endpoint.serve(cut(body, at))
    assert_one_line_error(dflash("probe", url), contains=("cut short",), out="")


def test_a_chunked_body_cut_short(endpoint: RawEndpoint, dflash: Callable[..., Result]) -> None:
    data = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + f"{len(HEALTHY):x}\r\n".encode() + HEALTHY[:100]
    assert_one_line_error(dflash("probe", endpoint.serve(raw(data))), contains=("cut short",), out="")


# --- 6. series that repeat ------------------------------------------------------------------------------


def test_two_scrapes_in_one_file_are_refused(tmp_path: Path, dflash: Callable[..., Result]) -> None:
    saved = tmp_path / "two.prom"
    saved.write_bytes(INCIDENT + HEALTHY)  # the collapse first: keeping the last would say healthy
    assert_one_line_error(dflash("probe", saved), contains=("twice",), out="")


def test_a_federated_endpoint_judges_each_instance(endpoint: RawEndpoint, dflash: Callable[..., Result]) -> None:
    def instance(text: bytes, name: str) -> bytes:
        return text.replace(b'engine="0"', f'engine="0",instance="{name}"'.encode())

    body = instance(INCIDENT, "a:8000") + b"\n".join(
        line for line in instance(HEALTHY, "b:8000").split(b"\n") if not line.startswith(b"#")
    )
    result = dflash("probe", endpoint.serve(plain(body)), "--format", "json")
    assert result.code == 1, result
    verdicts = {r["labels"]["instance"]: r["verdict"] for r in result.json()["engines"]}
    assert verdicts == {"a:8000": "collapse", "b:8000": "healthy"}
    text = dflash("probe", endpoint.url)
    assert 'vLLM Qwen/Qwen3.6-27B (engine 0, instance="a:8000"): collapse' in text.out, text


# --- 7. URL typos ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://127.0.0.1:abc/metrics", "port"),
        ("http://127.0.0.1:99999/metrics", "port"),
        ("http://[::1/metrics", "IPv6"),
        ("http://127.0.0.1:9/met rics", "space"),
        ("http:///metrics", "no host"),
    ],
)
def test_url_typos(url: str, fragment: str, dflash: Callable[..., Result]) -> None:
    assert_one_line_error(dflash("probe", url), contains=(fragment,), out="")


# --- 8. a password with an @ ----------------------------------------------------------------------------


def test_a_password_with_an_at_sign_is_never_shown(endpoint: RawEndpoint, dflash: Callable[..., Result]) -> None:
    url = endpoint.serve(plain(HEALTHY)).replace("http://", "http://scraper:p@ss-w0rd@")
    for fmt in ("text", "json"):
        result = dflash("probe", url, "--format", fmt)
        assert result.code == 0 and "ss-w0rd" not in result.out + result.err, result
    assert endpoint.headers()["authorization"] == _basic("scraper", "p@ss-w0rd")
    endpoint.serve(raw(b"garbage\r\n\r\n"))
    for fmt in ("text", "json"):
        failed = dflash("probe", url, "--format", fmt)
        assert failed.code == 2 and "ss-w0rd" not in failed.out + failed.err, failed
        assert "scraper" not in failed.out + failed.err


# --- issue 32: an engine still loading ------------------------------------------------------------------


def test_wait_for_an_engine_still_loading(endpoint: RawEndpoint, dflash: Callable[..., Result]) -> None:
    # 503 while the model loads, then metrics without the speculative series, then the scrape.
    loading = (plain(b"", "503 Service Unavailable"), plain(b"# TYPE up gauge\nup 1\n"), plain(HEALTHY))
    url = endpoint.serve(*loading)
    assert_one_line_error(dflash("probe", url), contains=("HTTP 503", "not ready"), out="")
    result = dflash("probe", endpoint.serve(*loading), "--wait", "30")
    assert result.code == 0 and "healthy" in result.out, result
    assert result.err.splitlines() == [
        f"dflash-cfg: waiting up to 30 s for the engine to be ready ({url}: HTTP 503 Service Unavailable "
        "(the engine is not ready))"
    ]
    assert len(endpoint.requests) == 3


def test_wait_gives_up(endpoint: RawEndpoint, dflash: Callable[..., Result]) -> None:
    result = dflash("probe", endpoint.serve(plain(b"", "503 Service Unavailable")), "--wait", "0.5")
    assert result.code == 2 and result.err.splitlines()[-1].endswith("(waited 0.5 s)"), result
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/metrics"
    refused = dflash("probe", closed, "--wait", "0.5")
    assert refused.code == 2 and "endpoint down" in refused.err and "(waited 0.5 s)" in refused.err, refused
    assert_one_line_error(
        dflash("probe", METRICS / "vllm-healthy.prom", "--wait", "1"),
        contains=("--wait needs the engine's URL",),
        out="",
    )
    assert_one_line_error(dflash("probe", endpoint.url, "--wait", "nan"), contains=("--wait",), out="")

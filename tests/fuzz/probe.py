"""probe's answers (issue 33): `probe URL` against a loopback endpoint (tests/rawhttp.py) that misbehaves in
one way per input: a trickle past the deadline, an endless body, a body cut short, a chunked body broken or
whole, redirects to another origin or the same one, a status line that is not HTTP, a flood of headers or
one too long, gauges that are not numbers, a series twice or two instances of one model, a mutated body;
and well-formed scrapes whose verdict is known. A URL carries credentials (a password with an @) at random.

Invariants: exit 0, 1 or 2 with no traceback or internal error; --format json writes strict JSON (no NaN,
no Infinity); the password is never printed; the other origin never receives an Authorization header;
a broken answer (trickle, flood, cut, status line, headers, non-finite, a series twice) exits 2; two
instances of which one collapsed exit 1; a well-formed scrape gets the verdict its numbers give; a scrape
ends within its deadline and a second."""

from __future__ import annotations

import json
import random
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from rawhttp import Answer, RawEndpoint, cut, plain, raw, redirect, trickle

from fuzz.common import Tally, broken, invoke

MODES = ["trickle", "flood", "cut", "chunked", "redirect", "status-line", "headers"]
MODES += ["non-finite", "duplicates", "federated", "garbage", "healthy"]
PASSWORD = "p@ss-W0rd-7"  # an @ inside: the redaction must reach the authority's last one


@dataclass(frozen=True)
class Case:
    mode: str
    answers: tuple[Answer, ...]
    elsewhere: tuple[Answer, ...]  # the other origin's answers (a redirect's target)
    to_elsewhere: bool  # the first answer redirects there
    exits: frozenset[int]  # the exit codes this input may end with
    timeout: float
    fmt: str
    credentials: bool
    shown: str  # the input, for the report


def _number(rng: random.Random) -> float:
    return rng.choice([0.0, 1.0, 3.0, 15.0, 1000.0, 12345.0, 1e9, rng.uniform(0, 1e6)])


def vllm(rng: random.Random, extra: str = "", drafts: float | None = None, accepted: float | None = None) -> bytes:
    """vLLM's counters for one model and engine (and any `extra` labels)."""
    drafts = _number(rng) if drafts is None else drafts
    accepted = rng.uniform(0, 15 * drafts) if accepted is None else accepted
    labels = f'engine="0",model_name="m"{extra}'
    text = (
        f"vllm:spec_decode_num_drafts_total{{{labels}}} {drafts!r}\n"
        f"vllm:spec_decode_num_draft_tokens_total{{{labels}}} {15 * drafts!r}\n"
        f"vllm:spec_decode_num_accepted_tokens_total{{{labels}}} {accepted!r}\n"
    )
    return text.encode()


def sglang(length: str, rate: str) -> bytes:
    text = f'sglang:spec_accept_length{{model_name="m"}} {length}\n'
    return (text + f'sglang:spec_accept_rate{{model_name="m"}} {rate}\n').encode()


def _verdict(body: bytes) -> int:
    """The exit a well-formed one-series vLLM scrape gets: 2 idle, 1 collapse, 0 healthy."""
    values = {line.split("{")[0]: float(line.rsplit(" ", 1)[1]) for line in body.decode().splitlines()}
    drafts, accepted = values["vllm:spec_decode_num_drafts_total"], values["vllm:spec_decode_num_accepted_tokens_total"]
    if drafts <= 0:
        return 2
    return 1 if 1 + accepted / drafts < 1.5 else 0


def _mutate(rng: random.Random, body: bytes) -> bytes:
    data = bytearray(body)
    for _ in range(rng.randint(1, 6)):
        what = rng.random()
        at = rng.randrange(len(data) + 1)
        if what < 0.3 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif what < 0.5:
            data[at:at] = rng.choice([b"{", b"}", b'"', b"\n", b" ", b"#", b"\\", b"NaN", b"1e999", b"\xc2\x9b"])
        elif what < 0.7:
            del data[at : at + rng.randint(1, 20)]
        else:
            data[at:at] = 'position="x",\u2028é\U0001f600'.encode()
    return bytes(data)


def _chunked(body: bytes, broken_how: str | None) -> bytes:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    if broken_how == "size":
        return head + b"zz\r\n" + body + b"\r\n0\r\n\r\n"
    if broken_how == "cut":
        return head + f"{len(body):x}\r\n".encode() + body[: len(body) // 2]
    return head + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"


def _flood(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1099511627776\r\n\r\n")
    chunk = b'vllm:spec_decode_num_drafts_total{model_name="m"} 1\n' * 1200
    while True:
        conn.sendall(chunk)


def case(rng: random.Random, elsewhere_url: str) -> Case:
    mode = rng.choice(MODES)
    body = vllm(rng)
    answers: tuple[Answer, ...] = (plain(body),)
    elsewhere: tuple[Answer, ...] = (plain(body),)
    to_elsewhere, exits, shown = False, frozenset({2}), mode
    if mode == "trickle":
        answers = (trickle(body, rng.choice([0.02, 0.05]), 5.0),)
    elif mode == "flood":
        answers = (_flood,)
    elif mode == "cut":
        at = rng.randrange(len(body))
        answers, shown = (cut(body, at),), f"cut at {at} of {len(body)}"
    elif mode == "chunked":
        how = rng.choice(["size", "cut", None])
        answers, shown = (raw(_chunked(body, how)),), f"chunked {how}"
        exits = frozenset({2} if how else {_verdict(body)})
    elif mode == "redirect":
        status = rng.choice([301, 302, 303, 307, 308])
        to_elsewhere = rng.random() < 0.7
        target = elsewhere_url if to_elsewhere else rng.choice(["/next", "next", "/metrics?x=1"])
        answers = (redirect(target, status), plain(body))
        exits, shown = frozenset({_verdict(body)}), f"{status} to {target}"
    elif mode == "status-line":
        line = rng.choice([b"HTTP/1.1 abc OK", b"HTTP/9.9 200 OK", b"FOO BAR", b"\x00\xff\xfe", b"HTTP/1.1", b""])
        line = line + bytes(rng.randrange(256) for _ in range(rng.randint(0, 40))) if rng.random() < 0.3 else line
        answers, shown = (raw(line + b"\r\nContent-Length: 3\r\n\r\nabc"),), f"status line {line[:40]!r}"
    elif mode == "headers":
        if rng.random() < 0.5:
            n = rng.randint(101, 400)
            answers, shown = (raw(b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * n + b"\r\n" + body),), f"{n} headers"
        else:
            n = rng.randint(65_537, 200_000)
            answers, shown = (raw(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * n + b"\r\n\r\n"),), f"a {n}-byte header"
    elif mode == "non-finite":
        bad = rng.choice(["NaN", "+Inf", "-Inf", "nan", "Inf"])
        length, rate = (bad, "0.5") if rng.random() < 0.5 else ("2.5", bad)
        body = sglang(length, rate) if rng.random() < 0.8 else vllm(rng).replace(b" ", f" {bad} #".encode(), 1)
        answers, shown = (plain(body),), f"non-finite {body[:120]!r}"
    elif mode == "duplicates":
        answers, shown = (plain(body + vllm(rng)),), "a series twice"
    elif mode == "federated":
        collapse = vllm(rng, ',instance="a"', drafts=1000.0, accepted=100.0)
        healthy = vllm(rng, ',instance="b"', drafts=1000.0, accepted=5000.0)
        parts = [collapse, healthy]
        rng.shuffle(parts)
        answers, exits, shown = (plain(b"".join(parts)),), frozenset({1}), "instances a (collapse) and b"
    elif mode == "garbage":
        mutated = _mutate(rng, body if rng.random() < 0.7 else sglang("2.5", "0.4"))
        answers, exits, shown = (plain(mutated),), frozenset({0, 1, 2}), f"garbage {mutated[:160]!r}"
    else:  # healthy: a well-formed scrape, the verdict its numbers give
        exits, shown = frozenset({_verdict(body)}), f"well-formed {body[:160]!r}"
    return Case(
        mode,
        answers,
        elsewhere,
        to_elsewhere,
        exits,
        timeout=rng.choice([0.2, 0.3]) if mode in ("trickle", "flood") else 5.0,
        fmt=rng.choice(["text", "json"]),
        credentials=rng.random() < 0.5,
        shown=shown,
    )


def _strict(text: str) -> object:
    def refuse(name: str) -> object:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def defect(endpoint: RawEndpoint, other: RawEndpoint, c: Case) -> str | None:
    url = endpoint.serve(*c.answers)
    other.serve(*c.elsewhere)
    if c.credentials:
        url = url.replace("http://", f"http://scraper:{PASSWORD}@")
    began = time.monotonic()
    outcome = invoke("probe", url, "--timeout", str(c.timeout), "--format", c.fmt, "--isolated")
    took = time.monotonic() - began
    found = broken(outcome)
    said = outcome.out + outcome.err
    if found is None and c.fmt == "json":
        try:
            _strict(outcome.out)
        except ValueError as exc:
            found = f"stdout is no strict JSON ({exc}): {outcome.out[:200]!r}"
    if found is None and c.credentials and ("W0rd" in said or "scraper" in said):
        found = f"the credentials were printed: {said[:300]!r}"
    if found is None and any(b"authorization" in r.lower() for r in other.requests):
        found = "the other origin received an Authorization header"
    if found is None and c.credentials and c.to_elsewhere and endpoint.requests and not other.requests:
        found = "the redirect was not followed"
    if found is None and outcome.code not in c.exits:
        found = f"exit {outcome.code}, expected {sorted(c.exits)}: {said[-300:]!r}"
    if found is None and took > c.timeout + 1.5:
        found = f"took {took:.1f} s with --timeout {c.timeout}"
    return None if found is None else f"{found} <- {c.mode}: {c.shown} ({c.fmt})"


def campaign(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    endpoint, other = RawEndpoint(), RawEndpoint()
    try:
        for i in range(n):
            c = case(rng, other.url)
            if (found := defect(endpoint, other, c)) is not None:
                tally.defect("probe", f"{i}: {found}")
            else:
                tally.note(f"probe {c.mode}: nothing new")
            tally.ran("probe")
    finally:
        endpoint.close()
        other.close()

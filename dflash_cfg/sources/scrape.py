"""Read an engine's Prometheus endpoint (http:// or https://), or a saved scrape (a file, `-` for stdin); its text is
parsed by sources/metrics.py.

Every failure is one ProbeError line: down, slow, not found, too big, not text."""

from __future__ import annotations

import base64
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from dflash_cfg.errors import PathError, ProbeError
from dflash_cfg.sources import files

MAX_BYTES = 64 * 1024 * 1024  # a large vLLM /metrics is a few MB; more is not a metrics endpoint
TIMEOUT = 10.0


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def read(source: str, timeout: float = TIMEOUT) -> str:
    """The text at `source`: an http(s) URL, a file, or `-` (stdin)."""
    if source == "-":
        return sys.stdin.read(MAX_BYTES + 1)[:MAX_BYTES]
    if not is_url(source):
        try:
            raw = files.read(Path(source), MAX_BYTES)
        except PathError as exc:
            raise ProbeError(f"{exc} (give the engine's metrics URL, e.g. http://host:8000/metrics)") from None
        return _decode(raw, source)
    request = _request(source)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            raw = answer.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise ProbeError(f"{source}: HTTP {exc.code} {exc.reason} (is this the engine's /metrics endpoint?)") from None
    except TimeoutError:
        raise ProbeError(f"{source}: no answer within {timeout:g} s (the engine is busy or hung)") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            raise ProbeError(f"{source}: no answer within {timeout:g} s (the engine is busy or hung)") from None
        raise ProbeError(f"{source}: endpoint down ({' '.join(str(reason).split())})") from None
    if len(raw) > MAX_BYTES:
        raise ProbeError(f"{source}: more than {MAX_BYTES} bytes: not a metrics endpoint")
    return _decode(raw, source)


def _request(source: str) -> urllib.request.Request:
    """GET `source`; user:password in the URL (a scrape behind basic auth) goes into the header urllib
    would not make from it."""
    headers = {"Accept": "text/plain;version=0.0.4"}
    parts = urllib.parse.urlsplit(source)
    if parts.username is not None:
        secret = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(secret.encode("utf-8")).decode("ascii")
        source = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
    return urllib.request.Request(source, headers=headers)


def _decode(raw: bytes, source: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ProbeError(f"{source}: not Prometheus text (not UTF-8)") from None

"""Read an engine's Prometheus endpoint (http:// or https://), or a saved scrape (a file, `-` for stdin); its text is
parsed by sources/metrics.py.

Every failure is one ProbeError line: a URL with a typo, down, slow, not found, too big, not HTTP, cut short,
not text. The whole scrape (connecting, each redirect, the headers, the body) is held to one deadline,
`timeout` seconds: a socket timeout alone bounds each read, and an endpoint that sends a byte a second never
trips it. Credentials in the URL (user:password@) go as basic auth to the URL's origin only: a redirect to
another scheme, host or port is followed without them, as curl and requests do. The endpoint is reached
directly: a metrics scrape is the engine's own port, not the web (no proxy variables are read)."""

from __future__ import annotations

import base64
import http.client
import io
import socket
import ssl
import sys
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from dflash_cfg.errors import NotReady, PathError, ProbeError
from dflash_cfg.sources import files

MAX_BYTES = 64 * 1024 * 1024  # a large vLLM /metrics is a few MB; more is not a metrics endpoint
TIMEOUT = 10.0
MAX_REDIRECTS = 5  # a metrics endpoint behind a proxy redirects once or twice; more is a loop
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


@dataclass(frozen=True, kw_only=True)
class Target:
    """Where one GET goes: `path` with its query; `authorization` the basic-auth header, if any."""

    scheme: str
    host: str
    port: int
    path: str
    authorization: str | None

    @property
    def origin(self) -> tuple[str, str, int]:
        return self.scheme, self.host, self.port


def target(url: str) -> Target:
    """`url` checked and split. ProbeError naming the typo: a port that is not a number, an unclosed `[`,
    a space or control character (http.client would refuse it later with a message about its own internals)."""
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise ProbeError(f"{url}: a space or control character in the URL (write a space as %20)")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:  # "Port out of range 0-65535", "Invalid IPv6 URL", "Port could not be cast..."
        if "port" in str(exc).lower():
            raise ProbeError(f"{url}: not a URL (its port is not a number from 1 to 65535)") from None
        if "ipv6" in str(exc).lower():
            raise ProbeError(f"{url}: not a URL (an IPv6 host is written in brackets, e.g. [::1]:8000)") from None
        raise ProbeError(f"{url}: not a URL ({_said(exc)})") from None
    if port == 0:
        raise ProbeError(f"{url}: not a URL (its port is not a number from 1 to 65535)")
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ProbeError(f"{url}: not an http:// or https:// URL")
    if not parts.hostname:
        raise ProbeError(f"{url}: no host in the URL")
    authorization = None
    if parts.username is not None:
        secret = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        authorization = "Basic " + base64.b64encode(secret.encode("utf-8")).decode("ascii")
    try:  # http.client writes the Host header in ASCII: a name in another script goes as IDNA
        host = parts.hostname.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise ProbeError(f"{url}: {parts.hostname!r} is not a host name") from None
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    path = "".join(c if c.isascii() else urllib.parse.quote(c) for c in path)  # the request line is ASCII too
    return Target(scheme=scheme, host=host, port=port or _DEFAULT_PORTS[scheme], path=path, authorization=authorization)


def origin(url: str) -> tuple[str, str, int]:
    """Scheme, host and port: where credentials given for `url` may go."""
    return target(url).origin


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
    return _decode(fetch(source, timeout), source)


def fetch(url: str, timeout: float) -> bytes:
    """The body of a 2xx answer to GET `url`, following redirects, all within `timeout` seconds."""
    end = time.monotonic() + timeout
    first = here = target(url)
    where = url
    for _ in range(MAX_REDIRECTS + 1):
        try:
            status, reason, location, body = _get(here, end)
        except TimeoutError:
            raise ProbeError(f"{url}: no complete answer within {timeout:g} s (the engine is busy or hung)") from None
        except _BrokenChunks:
            raise ProbeError(f"{url}: the chunked answer broke off (cut short, or a chunk size not in hex)") from None
        except http.client.IncompleteRead as exc:
            raise ProbeError(f"{url}: the answer was cut short ({_cut(exc)})") from None
        except http.client.HTTPException as exc:  # a status line, too many headers, a header line too long
            raise ProbeError(f"{url}: not an HTTP answer ({type(exc).__name__}: {_said(exc)})") from None
        except ssl.SSLError as exc:  # before OSError, which it is: the cause is TLS, not a dead endpoint
            raise ProbeError(f"{url}: TLS failed ({_said(exc)})") from None
        except ConnectionRefusedError as exc:  # nothing listens yet: an engine still loading, or gone
            raise NotReady(f"{url}: endpoint down ({_said(exc)})") from None
        except OSError as exc:
            raise ProbeError(f"{url}: endpoint down ({_said(exc)})") from None
        if status in _REDIRECTS and location is not None:
            where = urllib.parse.urljoin(where, location)
            if not is_url(where.lower()):
                raise ProbeError(f"{url}: a redirect to {where!r}, not http(s): not followed")
            following = target(where)
            # Credentials were given for the URL's origin; elsewhere they would be handed to a stranger.
            keep = here.authorization if following.origin == first.origin else None
            here = Target(
                scheme=following.scheme,
                host=following.host,
                port=following.port,
                path=following.path,
                authorization=keep,
            )
            continue
        if status == 503:  # vLLM and SGLang answer it while the model loads
            raise NotReady(f"{url}: HTTP 503 {reason} (the engine is not ready)")
        if not 200 <= status < 300:
            raise ProbeError(f"{url}: HTTP {status} {reason} (is this the engine's /metrics endpoint?)")
        if len(body) > MAX_BYTES:
            raise ProbeError(f"{url}: more than {MAX_BYTES} bytes: not a metrics endpoint")
        return body
    raise ProbeError(f"{url}: too many redirects (more than {MAX_REDIRECTS})")


def _get(t: Target, end: float) -> tuple[int, str, str | None, bytes]:
    """One GET: status, reason, Location, and the body (read whole for a 2xx, else not read)."""
    left = end - time.monotonic()
    if left <= 0:
        raise TimeoutError
    conn: http.client.HTTPConnection
    if t.scheme == "https":
        conn = _DeadlineHTTPS(t.host, t.port, timeout=left, end=end)
    else:
        conn = _DeadlineHTTP(t.host, t.port, timeout=left, end=end)
    headers = {"Accept": "text/plain;version=0.0.4", "Connection": "close"}
    if t.authorization is not None:
        headers["Authorization"] = t.authorization
    answer = None
    try:
        conn.request("GET", t.path, headers=headers)
        answer = conn.getresponse()
        if not 200 <= answer.status < 300:
            return answer.status, answer.reason, answer.getheader("Location"), b""
        return answer.status, answer.reason, None, _body(answer)
    finally:
        if answer is not None:
            answer.close()
        conn.close()


class _BrokenChunks(http.client.HTTPException):
    """A chunked body that ended early or whose chunk size was not hex: http.client says IncompleteRead
    for both."""


def _body(answer: http.client.HTTPResponse) -> bytes:
    """At most MAX_BYTES + 1 bytes of the body; IncompleteRead when it ends before its Content-Length
    (http.client's read(n) returns what came, and a healthy scrape cut mid-number reads as a collapse)."""
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_BYTES:
        try:
            chunk = answer.read(min(1 << 20, MAX_BYTES + 1 - size))
        except http.client.IncompleteRead:
            if answer.chunked:
                raise _BrokenChunks() from None
            raise
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    body = b"".join(chunks)
    declared = (answer.getheader("Content-Length") or "").strip()
    expected = int(declared) if declared.isascii() and declared.isdigit() and not answer.chunked else 0
    if len(body) < expected:
        raise http.client.IncompleteRead(body, expected - len(body))
    return body


class _DeadlineReader(io.RawIOBase):
    """The socket's bytes, each read given only the time left before the deadline."""

    def __init__(self, owner: _DeadlineSocket) -> None:
        self._owner = owner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        left = self._owner.end - time.monotonic()
        if left <= 0:
            raise TimeoutError
        self._owner.sock.settimeout(left)
        return self._owner.sock.recv_into(buffer)

    def close(self) -> None:
        if not self.closed:
            self._owner.release()
        super().close()


class _DeadlineSocket:
    """The connection's socket, as http.client uses it (sendall, makefile, close), with reads held to the
    deadline: http.client reads a status line, headers and body through makefile(). As a socket does, it
    stays open while a file made from it is: http.client closes the connection of a `Connection: close`
    answer before its body is read."""

    def __init__(self, sock: socket.socket, end: float) -> None:
        self.sock, self.end = sock, end
        self._files, self._closed = 0, False

    def sendall(self, data: bytes) -> None:
        self.sock.settimeout(max(self.end - time.monotonic(), 0.001))
        self.sock.sendall(data)

    def makefile(self, mode: str) -> io.BufferedReader:
        self._files += 1
        return io.BufferedReader(_DeadlineReader(self))

    def release(self) -> None:
        self._files -= 1
        if self._closed and not self._files:
            self.sock.close()

    def close(self) -> None:
        self._closed = True
        if not self._files:
            self.sock.close()


class _DeadlineHTTP(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, timeout: float, end: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._end = end

    def connect(self) -> None:
        super().connect()
        self.sock = _DeadlineSocket(self.sock, self._end)


class _DeadlineHTTPS(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, timeout: float, end: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._end = end

    def connect(self) -> None:
        super().connect()  # TCP and the TLS handshake, each bounded by the time left when it began
        self.sock = _DeadlineSocket(self.sock, self._end)


def _cut(exc: http.client.IncompleteRead) -> str:
    got = len(exc.partial)
    if exc.expected is None:
        return f"{got} bytes, then the connection closed"
    return f"{got} bytes of {got + exc.expected}, then the connection closed"


def _said(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:160]


def _decode(raw: bytes, source: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ProbeError(f"{source}: not Prometheus text (not UTF-8)") from None

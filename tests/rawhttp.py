"""A /metrics endpoint on loopback that writes its answers byte by byte as a test scripts them: the status
line, headers and body of a misbehaving server (a trickle, a body cut short, a redirect elsewhere, a status
line that is not HTTP, a flood of headers), which http.server would not send. Each request's head is kept,
so a test can assert what reached this server (an Authorization header it should never have seen)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

Answer = Callable[[socket.socket], None]  # writes one whole answer to the connection


def plain(body: bytes, status: str = "200 OK", headers: tuple[str, ...] = ()) -> Answer:
    """A well-formed answer with its Content-Length."""
    head = "".join(f"{h}\r\n" for h in headers)
    raw = f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n{head}Connection: close\r\n\r\n".encode() + body
    return lambda conn: conn.sendall(raw)


def raw(data: bytes) -> Answer:
    """These bytes as they are, then the connection closes."""
    return lambda conn: conn.sendall(data)


def redirect(location: str, status: int = 302) -> Answer:
    return plain(b"", f"{status} Moved", (f"Location: {location}",))


def cut(body: bytes, keep: int) -> Answer:
    """The full Content-Length announced, `keep` bytes of the body sent, then the connection closed."""
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
    return raw(head + body[:keep])


def trickle(body: bytes, delay: float, limit: float) -> Answer:
    """A valid answer written one byte every `delay` seconds, for at most `limit` seconds (then the rest at
    once): an endpoint that is alive, never silent for long, and never done."""

    def send(conn: socket.socket) -> None:
        data = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body
        end = time.monotonic() + limit
        for i in range(len(data)):
            if time.monotonic() >= end:
                conn.sendall(data[i:])
                return
            conn.sendall(data[i : i + 1])
            time.sleep(delay)

    return send


class RawEndpoint:
    """Answers each request with the next of `answers` (the last one repeats)."""

    def __init__(self) -> None:
        self.answers: list[Answer] = []
        self.requests: list[bytes] = []  # each request's head, as received
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def serve(self, *answers: Answer) -> str:
        self.answers, self.requests = list(answers), []
        return self.url

    def headers(self, i: int = -1) -> dict[str, str]:
        """Request `i`'s headers, names lower-cased."""
        lines = self.requests[i].decode("latin-1").split("\r\n")[1:]
        return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)}

    def close(self) -> None:
        self._closed = True
        self._sock.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                head = b""
                conn.settimeout(10)
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    head += chunk
                self.requests.append(head.split(b"\r\n\r\n")[0])
                answer = self.answers[min(len(self.requests) - 1, len(self.answers) - 1)]
                answer(conn)
                conn.shutdown(socket.SHUT_WR)
                # Read until the client hangs up: a close with unread data would reset the connection and
                # lose the answer's tail before the client read it.
                while conn.recv(4096):
                    pass
            except OSError:  # the client hung up first (a deadline, a bounded read): its business
                pass

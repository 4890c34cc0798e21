"""A fault-injecting HTTP proxy on loopback in front of the tests' S3 server (moto): the answers a
flaky or hostile endpoint gives, on demand. Requests are forwarded byte for byte (the Host header too,
so request signatures still verify); what comes back is changed by the fault set:

- "drop-put": a PUT is applied by the server, then the connection is closed without its answer;
- "die-after-put": as drop-put, and every request after it is refused (the endpoint went away);
- "ignore-range": a ranged GET is answered 200 with a megabyte more than the range (as a server that
  ignores Range answers the whole object), or an endless body (`endless`);
- "refuse-put": a PUT is answered 503 without reaching the server;
- "trickle": answers are sent one byte per `trickle_delay` seconds;
- "reset-after-put": a PUT is applied by the server, then the connection is reset (RST, not a close);
- "reset-before-put": a PUT's request is read whole, then the connection is reset before it reaches the
  server (not applied, and the client cannot tell the two resets apart);
- "drop-get": a GET reaches the server, then the connection is closed without its answer;
- "cut-get": a GET is answered with its full Content-Length but half of its body, then a reset.
"""

from __future__ import annotations

import http.client
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from hubserver import free_port


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up on an answer it will not read to the end (a bounded reader, the very thing the
        # faults test) resets the connection: no error of the proxy's, and not to be printed into the stderr of
        # an in-process run (the campaign reads that stderr as the tool's).
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FaultProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = free_port()
        self.faults: set[str] = set()
        self.only_key: str | None = None  # a fault applies only to requests whose path ends with this
        self.trickle_delay = 1.0
        self.endless = False
        self.dead = False
        self.puts_applied = 0
        self.requests: list[str] = []  # "GET /bucket/key?query", in the order they came
        self._server: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reset(self) -> None:
        self.faults, self.only_key, self.dead, self.endless, self.puts_applied = set(), None, False, False, 0
        self.requests = []

    def start(self) -> None:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _reset(self) -> None:
                """Close with an RST (linger 0): what a middlebox or a crashed endpoint leaves."""
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True

            def _forward(self) -> None:
                proxy.requests.append(f"{self.command} {self.path}")
                if proxy.dead:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                applies = proxy.only_key is None or self.path.split("?")[0].endswith(proxy.only_key)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items()}
                # Range is signed, so it is forwarded; the answer then gets the rest of an object
                # appended (filler), as a server that ignores Range sends the whole of it.
                ranged = "ignore-range" in proxy.faults and applies and "range" in {k.lower() for k in headers}
                if "refuse-put" in proxy.faults and applies and self.command == "PUT":
                    self.send_response(503)  # not applied: the server is overloaded
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if "reset-before-put" in proxy.faults and applies and self.command == "PUT":
                    self._reset()
                    return
                conn = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=30)
                conn.request(self.command, self.path, body=body, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
                conn.close()
                if self.command == "PUT" and applies and answer.status == 200:
                    proxy.puts_applied += 1
                    if "reset-after-put" in proxy.faults:
                        self._reset()
                        return
                    if {"drop-put", "die-after-put"} & proxy.faults:
                        if "die-after-put" in proxy.faults:
                            proxy.dead = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        self.close_connection = True
                        return
                if self.command == "GET" and applies and "drop-get" in proxy.faults:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                status = answer.status
                if ranged and status == 206:
                    status, data = 200, data + b"\0" * (1 << 20)
                self.send_response(status)
                for key, value in answer.getheaders():
                    skip = ("content-length", "transfer-encoding", "connection", "date", "server", "content-range")
                    if key.lower() not in skip:
                        self.send_header(key, value)
                endless = proxy.endless and ranged and self.command == "GET"
                if endless:
                    self.send_header("Content-Length", str(1 << 40))
                else:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command == "HEAD":
                    return
                try:
                    if "trickle" in proxy.faults and applies:
                        for i in range(len(data)):
                            self.wfile.write(data[i : i + 1])
                            self.wfile.flush()
                            time.sleep(proxy.trickle_delay)
                    elif "cut-get" in proxy.faults and applies and self.command == "GET" and len(data) > 1:
                        self.wfile.write(data[: len(data) // 2])
                        self.wfile.flush()
                        self._reset()
                    elif endless:
                        chunk = (data or b" ") * (65536 // max(len(data), 1) + 1)
                        while True:
                            self.wfile.write(chunk)
                    else:
                        self.wfile.write(data)
                except OSError:
                    self.close_connection = True

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _forward

        self._server = _Server(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

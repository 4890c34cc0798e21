"""Hub-compatible servers on loopback for the tests.

`Olah` runs the real olah mirror server (offline mode, serving plain git repos) in its own venv, so its
fastapi/uvicorn/httpx pins never meet the tool's. `ErrorHub` answers the status codes and
`X-Error-Code` headers of the real Hub for the error classes olah cannot produce (it answers 401 for
every miss).
"""

from __future__ import annotations

import hashlib
import http.server
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

from helpers import stop_process, tool_venv

OLAH_VERSION = "0.5.4"
OLAH_REQUIREMENT = f"olah=={OLAH_VERSION}"
GIT = [
    "git",
    "-c",
    "user.name=dflash-cfg tests",
    "-c",
    "user.email=tests@dflash-cfg.invalid",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "init.defaultBranch=main",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def olah_cli() -> Path:
    """olah's console script, in its own venv under the tests' cache."""
    return tool_venv(f"olah-{OLAH_VERSION}", OLAH_REQUIREMENT, "olah-cli")


class Olah:
    def __init__(self, workdir: Path) -> None:
        self.mirrors = workdir / "mirrors"
        self.repos = workdir / "olah-repos"
        self.config = workdir / "olah.toml"
        self.log = workdir / "olah.log"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.mirrors.mkdir(parents=True, exist_ok=True)
        self.repos.mkdir(parents=True, exist_ok=True)
        self.publish("dflash-cfg-tests/ready", {"README.md": b"readiness probe\n"})

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.config.write_text(
            "[basic]\n"
            'host = "127.0.0.1"\n'
            f"port = {self.port}\n"
            f'repos-path = "{self.repos}"\n'
            'mirror-scheme = "http"\n'
            f'mirror-netloc = "127.0.0.1:{self.port}"\n'
            f'mirror-lfs-netloc = "127.0.0.1:{self.port}"\n'
            f'mirrors-path = ["{self.mirrors}"]\n'
            "[accessibility]\n"
            "offline = true\n",
            encoding="utf-8",
        )
        with open(self.log, "ab") as log:  # the child keeps its own copy of the descriptor
            self.process = subprocess.Popen(
                [str(olah_cli()), "-c", str(self.config)],
                stdout=log,
                stderr=log,
                cwd=self.repos,
                start_new_session=True,
            )
        deadline = time.monotonic() + 30
        # GET / answers 500 in olah 0.5.4 (template bug); the refs route of a mirrored repo is the probe.
        probe = f"{self.endpoint}/api/models/dflash-cfg-tests/ready/refs"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"olah exited with {self.process.returncode}: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(probe, timeout=1) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"olah did not start within 30 s: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        stop_process(self.process)
        self.process = None

    @contextmanager
    def stopped(self) -> Iterator[None]:
        """The server is down inside the block: any request would fail to connect."""
        self.stop()
        try:
            yield
        finally:
            self.start()

    def publish(self, repo: str, files: dict[str, bytes], message: str = "update") -> str:
        """Commit `files` to the mirror of `repo` (created on first use); returns the commit sha."""
        path = self.mirrors / "models" / repo
        if not (path / ".git").exists():
            path.mkdir(parents=True, exist_ok=True)
            subprocess.run([*GIT, "init", "-q", str(path)], check=True)
        for name, data in files.items():
            target = path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        subprocess.run([*GIT, "-C", str(path), "add", "-A"], check=True)
        subprocess.run([*GIT, "-C", str(path), "commit", "-q", "--allow-empty", "-m", message], check=True)
        return self.head(repo)

    def tag(self, repo: str, name: str) -> None:
        subprocess.run(
            [*GIT, "-C", str(self.mirrors / "models" / repo), "tag", "-f", name], check=True, capture_output=True
        )

    def head(self, repo: str) -> str:
        out = subprocess.run(
            ["git", "-C", str(self.mirrors / "models" / repo), "rev-parse", "HEAD"],
            check=True,
            capture_output=True,
            text=True,
        )
        return out.stdout.strip()

    def publish_dir(self, repo: str, source: Path) -> str:
        return self.publish(
            repo,
            {p.relative_to(source).as_posix(): p.read_bytes() for p in sorted(source.rglob("*")) if p.is_file()},
            "import fixture",
        )


class ErrorHub:
    """Answers `HEAD|GET /{org}/{repo}/resolve/{rev}/{file}` like the Hub does for failures.

    repo name -> (status, X-Error-Code); "slow" sleeps past any client timeout.
    """

    ROUTES: ClassVar[dict[str, tuple[int, str]]] = {
        "gated": (403, "GatedRepo"),
        "missing-revision": (404, "RevisionNotFound"),
        "no-config": (404, "EntryNotFound"),
        "private": (401, "RepoNotFound"),
        "broken": (500, ""),
    }

    # Hostile behaviours, for the tests of what the tool does with a server it should not trust:
    # "anyrev" serves CONFIG at every revision (a lax mirror or proxy), with COMMIT as its commit;
    # "badcommit" answers with a commit id that is a path; "echo" answers a malformed status line that
    # echoes the request's Authorization header (as a broken proxy did).
    CONFIG: ClassVar[bytes] = b'{"architectures": ["DFlashDraftModel"], "dflash_config": {}}\n'
    COMMIT: ClassVar[str] = "c0ffee" + "0" * 34

    def __init__(self) -> None:
        self.seen_auth: list[str] = []
        self.seen_paths: list[str] = []
        routes, seen, paths = self.ROUTES, self.seen_auth, self.seen_paths
        delay = {"slow": 0.0}
        self.delay = delay
        config, commit = self.CONFIG, self.COMMIT
        blob = hashlib.sha1(b"blob %d\0" % len(config) + config).hexdigest()

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                seen.append(self.headers.get("authorization", ""))
                paths.append(self.path)
                parts = self.path.split("/")
                name = parts[2] if len(parts) > 2 else ""
                if name == "echo":
                    line = f"HTTP/1.1 {self.headers.get('authorization', '')}\r\n\r\n"
                    self.wfile.write(line.encode("latin-1"))
                    self.close_connection = True
                    return
                if name in ("anyrev", "badcommit"):
                    self.send_response(200)
                    self.send_header("X-Repo-Commit", commit if name == "anyrev" else "../../../../escaped")
                    self.send_header("ETag", f'"{blob}"')
                    self.send_header("Content-Length", str(len(config)))
                    self.end_headers()
                    if self.command == "GET":
                        self.wfile.write(config)
                    return
                if name == "slow":
                    time.sleep(delay["slow"])
                status, code = routes.get(name, (404, "RepoNotFound"))
                self.send_response(status)
                if code:
                    self.send_header("X-Error-Code", code)
                    self.send_header("X-Error-Message", f"{code} (test server)")
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_HEAD

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

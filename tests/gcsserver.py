"""A real GCS JSON-API server on loopback for the tests: gcp-storage-emulator (pure Python, in memory), in a
subprocess of its own. gcsfs finds it through STORAGE_EMULATOR_HOST, its standard setting, and connects
without credentials, as it does to any emulator. The tests' own hands on the buckets (create, upload, read
back, list) are plain JSON-API requests, independent of the gcsfs code under test."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

from helpers import stop_process
from hubserver import free_port


class GcsServer:
    scheme = "gs"  # the tool's URLs of it: gs://BUCKET/KEY
    endpoint_variable = "STORAGE_EMULATOR_HOST"  # what points the tool at a server

    def __init__(self, workdir: Path) -> None:
        self.log = workdir / "gcs-emulator.log"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._buckets = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        command = [sys.executable, "-m", "gcp_storage_emulator", "start", "--host", "127.0.0.1"]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [*command, "--port", str(self.port), "--in-memory"],
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the emulator exited with {self.process.returncode}: {self._tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"the emulator did not start within 30 s: {self._tail()}")

    def _tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        stop_process(self.process)
        self.process = None

    def env(self) -> dict[str, str]:
        """The standard setting that points gcsfs (and Google's own clients) at this server."""
        return {"STORAGE_EMULATOR_HOST": self.endpoint}

    def _call(self, method: str, path: str, data: bytes | None = None, content_type: str = "") -> bytes:
        request = urllib.request.Request(self.endpoint + path, data=data, method=method)
        if content_type:
            request.add_header("Content-Type", content_type)
        with urllib.request.urlopen(request, timeout=30) as answer:
            body: bytes = answer.read()
        return body

    def new_bucket(self) -> str:
        self._buckets += 1
        name = f"models-{self._buckets}"
        self._call("POST", "/storage/v1/b?project=tests", json.dumps({"name": name}).encode(), "application/json")
        return name

    def put(self, bucket: str, key: str, data: bytes) -> None:
        where = f"/upload/storage/v1/b/{bucket}/o?uploadType=media&name={quote(key, safe='')}"
        self._call("POST", where, data, "application/octet-stream")

    def upload_dir(self, bucket: str, prefix: str, source: Path) -> None:
        for path in sorted(source.rglob("*")):
            if path.is_file():
                self.put(bucket, f"{prefix}/{path.relative_to(source).as_posix()}", path.read_bytes())

    def get(self, bucket: str, key: str) -> bytes:
        return self._call("GET", f"/storage/v1/b/{bucket}/o/{quote(key, safe='')}?alt=media")

    def keys(self, bucket: str) -> list[str]:
        listed = json.loads(self._call("GET", f"/storage/v1/b/{bucket}/o"))
        return sorted(item["name"] for item in listed.get("items", []))

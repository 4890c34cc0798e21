"""A real S3 API server on loopback for the tests: moto's standalone server (`moto[server]`), in its own venv
under the tests' cache dir (as olah is), with request signing checked: the first three requests create an
IAM user, its access key and an allow-all policy; every request after them must be signed with that key,
so wrong credentials are refused as S3 refuses them (SignatureDoesNotMatch, InvalidAccessKeyId)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from helpers import stop_process, tool_venv
from hubserver import free_port

MOTO_REQUIREMENT = "moto[server]==5.2.5"
REGION = "us-east-1"


def moto_server() -> Path:
    """moto's console script, in its own venv under the tests' cache."""
    return tool_venv("moto-5.2.5", MOTO_REQUIREMENT, "moto_server")


class S3Server:
    scheme = "s3"  # the tool's URLs of it: s3://BUCKET/KEY
    endpoint_variable = "AWS_ENDPOINT_URL_S3"  # what points the tool at a server

    def __init__(self, workdir: Path) -> None:
        self.log = workdir / "moto.log"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.key_id = ""
        self.secret = ""
        self._buckets = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "3", "MOTO_PORT": str(self.port)}
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [str(moto_server()), "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=log,
                stderr=log,
                env=env,
                start_new_session=True,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # a TCP connect, not a request: requests count against the 3
            if self.process.poll() is not None:
                raise RuntimeError(f"moto exited with {self.process.returncode}: {self.log.read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError(f"moto did not start within 30 s: {self.log.read_text()[-2000:]}")
        iam = self._client("iam", "bootstrap", "bootstrap")
        iam.create_user(UserName="dflash-cfg-tests")
        key = iam.create_access_key(UserName="dflash-cfg-tests")["AccessKey"]
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        iam.put_user_policy(UserName="dflash-cfg-tests", PolicyName="all", PolicyDocument=json.dumps(policy))
        self.key_id, self.secret = key["AccessKeyId"], key["SecretAccessKey"]

    def stop(self) -> None:
        stop_process(self.process)
        self.process = None

    def _client(self, service: str, key_id: str, secret: str) -> Any:
        import botocore.session

        session = botocore.session.Session()
        return session.create_client(
            service,
            region_name=REGION,
            endpoint_url=self.endpoint,
            aws_access_key_id=key_id,
            aws_secret_access_key=secret,
        )

    def client(self) -> Any:
        """A botocore S3 client with the server's valid key (the tests' own hands on the bucket)."""
        return self._client("s3", self.key_id, self.secret)

    def env(self) -> dict[str, str]:
        """The standard AWS settings that point a client at this server with its valid key."""
        return {
            "AWS_ENDPOINT_URL_S3": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_DEFAULT_REGION": REGION,
        }

    def new_bucket(self) -> str:
        self._buckets += 1
        name = f"models-{self._buckets}"
        self.client().create_bucket(Bucket=name)
        return name

    def upload_dir(self, bucket: str, prefix: str, source: Path) -> None:
        s3 = self.client()
        for path in sorted(source.rglob("*")):
            if path.is_file():
                key = f"{prefix}/{path.relative_to(source).as_posix()}"
                s3.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())

    def get(self, bucket: str, key: str) -> bytes:
        body: bytes = self.client().get_object(Bucket=bucket, Key=key)["Body"].read()
        return body

    def put(self, bucket: str, key: str, data: bytes) -> None:
        self.client().put_object(Bucket=bucket, Key=key, Body=data)

    def keys(self, bucket: str) -> list[str]:
        listed = self.client().list_objects_v2(Bucket=bucket).get("Contents", [])
        return sorted(o["Key"] for o in listed)

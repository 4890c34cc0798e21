"""S3 answers: `check`, `fix` and `verify` on s3:// through the fault-injecting proxy (tests/faultproxy.py) in
front of moto, with random fault sets (dropped answers, ignored Range and an endless body, a trickle held to a
short DFLASH_CFG_REMOTE_DEADLINE, a reset after or before a PUT was applied, a refused PUT, a GET cut in
half), on one object or on every request.

Invariants, the object read back from moto directly: exit 0, 1 or 2 with no traceback or internal error;
JSON output parses; check and verify leave every object as it was; after fix, config.json holds either its
old bytes or the bytes a fault-free fix writes; fix never says "unchanged" when the object changed, never
says "wrote" when it holds other bytes, and exit 0 means the object holds the fix's bytes."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from faultproxy import FaultProxy
from helpers import REAL, REAL_DATA
from s3server import S3Server

from fuzz.common import Outcome, Tally, broken, environ, invoke

Invoke = Callable[..., Outcome]
BOM = b"\xef\xbb\xbf"
KEY = "team/drafter/config.json"
CONTENTS: dict[str, bytes] = {
    "bom": BOM + REAL.read_bytes(),  # DF003: the safe fix strips it
    "window": json.dumps({**REAL_DATA, "use_sliding_window": False}, indent=2).encode(),  # DF204's safe fix
    "clean": REAL.read_bytes(),  # nothing to fix
    "broken": REAL.read_bytes()[:300],  # DF001: nothing a fix can do
}
FAULTS = ["drop-put", "die-after-put", "ignore-range", "refuse-put", "trickle", "reset-after-put", "reset-before-put"]
FAULTS += ["drop-get", "cut-get"]
COMMANDS = [
    ["check"],
    ["check", "--format", "json"],
    ["check", "--format", "sarif"],
    ["fix", "--yes"],
    ["fix", "--yes", "--format", "json"],
    ["fix", "--yes", "--no-backup"],
    ["fix", "--dry-run"],
    ["verify"],
]


@dataclass(frozen=True)
class S3Case:
    content: str
    lock: bytes | None  # a lock object beside config.json before the run
    shard: bool  # a safetensors shard beside it (its header is read with a Range)
    command: list[str]
    faults: frozenset[str]
    only_key: str | None
    endless: bool
    trickle_delay: float
    deadline: str


def s3_case(rng: random.Random) -> S3Case:
    faults = frozenset(rng.sample(FAULTS, rng.choice([0, 1, 1, 1, 2, 3])))
    return S3Case(
        content=rng.choice(sorted(CONTENTS)),
        lock=rng.choice([None, None, None, b"{}", b"not json", b'{"files": {"config.json": 1}}', b"[" * 5000]),
        shard=rng.random() < 0.3,
        command=rng.choice(COMMANDS),
        faults=faults,
        only_key=rng.choice(["config.json", "config.json", ".dflash-cfg.lock", "model.safetensors", None]),
        endless=rng.random() < 0.5,
        trickle_delay=rng.choice([0.02, 0.1, 0.3]),
        deadline=rng.choice(["1", "2", "5"]) if "trickle" in faults else "10",
    )


def _shard() -> bytes:
    header = json.dumps({"layers.0.mlp.weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}).encode()
    return len(header).to_bytes(8, "little") + header + b"\0" * 16


class Store:
    """moto and the proxy in front of it; the bytes a fault-free fix writes, per content."""

    def __init__(self, s3: S3Server, proxy: FaultProxy, run: Invoke = invoke) -> None:
        self.s3, self.proxy, self.run = s3, proxy, run
        self.fixed: dict[str, bytes] = {}

    def upload(self, case: S3Case) -> tuple[str, str]:
        bucket = self.s3.new_bucket()
        self.s3.put(bucket, KEY, CONTENTS[case.content])
        if case.lock is not None:
            self.s3.put(bucket, "team/drafter/.dflash-cfg.lock", case.lock)
        if case.shard:
            self.s3.put(bucket, "team/drafter/model.safetensors", _shard())
        return bucket, f"s3://{bucket}/team/drafter"

    def env(self, deadline: str) -> dict[str, str]:
        return {**self.s3.env(), "AWS_ENDPOINT_URL_S3": self.proxy.endpoint, "DFLASH_CFG_REMOTE_DEADLINE": deadline}

    def fixed_bytes(self, content: str) -> bytes:
        """What `fix --yes` leaves in config.json when nothing goes wrong."""
        if content not in self.fixed:
            case = S3Case(content, None, False, ["fix", "--yes"], frozenset(), None, False, 0, "10")
            bucket, url = self.upload(case)
            self.proxy.reset()
            with environ(**self.env("10")):
                outcome = self.run("fix", url, "--yes")
            assert outcome.code in (0, 1), outcome
            self.fixed[content] = self.s3.get(bucket, KEY)
        return self.fixed[content]


def s3_defect(store: Store, case: S3Case) -> str | None:
    old, fixed = CONTENTS[case.content], store.fixed_bytes(case.content)
    bucket, url = store.upload(case)
    before = {key: store.s3.get(bucket, key) for key in store.s3.keys(bucket)}
    proxy = store.proxy
    proxy.reset()
    proxy.faults, proxy.only_key = set(case.faults), case.only_key
    proxy.endless, proxy.trickle_delay = case.endless, case.trickle_delay
    with environ(**store.env(case.deadline)):
        outcome = store.run(case.command[0], url, *case.command[1:])
    proxy.reset()
    found = broken(outcome)
    now = store.s3.get(bucket, KEY)
    said = outcome.out + outcome.err
    if found is None and ("json" in case.command or "sarif" in case.command):
        try:
            json.loads(outcome.out)
        except ValueError:
            found = f"stdout is no document (exit {outcome.code}): {outcome.out[:200]!r}"
    writes = case.command[0] == "fix" and "--dry-run" not in case.command
    if found is None and not writes:
        after = {key: store.s3.get(bucket, key) for key in store.s3.keys(bucket)}
        if found is None and after != before:
            changed = sorted(set(after.items()) ^ set(before.items()))[:2]
            found = f"{case.command[0]} changed the bucket: {changed!r:.300}"
    if found is None and now not in (old, fixed):
        found = f"config.json holds neither the old bytes nor the fix's: {now[:120]!r}"
    if found is None and writes and now != old and "unchanged" in said:
        found = f"said unchanged, but the object changed: {said[-400:]!r}"
    if found is None and writes and "wrote " in outcome.out and now != fixed:
        found = f"said it wrote, but the object holds other bytes: {said[-400:]!r}"
    if found is None and writes and outcome.code == 0 and now != fixed:
        found = f"fix exited 0 but the object holds other bytes: {said[-400:]!r}"
    return None if found is None else f"{found} <- {case}"


def campaign(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    s3 = S3Server(home)
    s3.start()
    proxy = FaultProxy(s3.port)
    proxy.start()
    try:
        store = Store(s3, proxy)
        for i in range(n):
            if (found := s3_defect(store, s3_case(rng))) is not None:
                tally.defect("s3", f"{i}: {found}")
            tally.ran("s3")
    finally:
        proxy.stop()
        s3.stop()

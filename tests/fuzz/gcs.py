"""gs:// answers: `check`, `where`, `verify` and `fix` (which refuses to write there, or plans a dry run) on a model
dir on the GCS server the tests start, through the fault-injecting proxy (tests/faultproxy.py) in front of it, with
random fault sets (ignored Range with a megabyte more or an endless body, a trickle held to a short
DFLASH_CFG_REMOTE_DEADLINE, a GET dropped or cut in half, an endpoint gone), on one object or on every request.

Invariants, the bucket read back from the server directly: exit 0, 1 or 2 with no traceback or internal error;
JSON and SARIF output parses; every object is left as it was (nothing writes to gs://); a run ends within the
deadline per request (plus a margin), and its memory does not grow with what the store sends."""

from __future__ import annotations

import json
import os
import random
import resource
import time
from dataclasses import dataclass
from pathlib import Path

from checkpoints import save, small_config, small_shapes
from faultproxy import FaultProxy
from gcsserver import GcsServer
from helpers import REAL, REAL_DATA

from fuzz.common import Tally, broken, environ, invoke

PREFIX = "team/drafter"
BOM = b"\xef\xbb\xbf"
CONTENTS: dict[str, bytes] = {
    "bom": BOM + REAL.read_bytes(),
    "window": json.dumps({**REAL_DATA, "use_sliding_window": False}, indent=2).encode(),
    "clean": REAL.read_bytes(),
    "broken": REAL.read_bytes()[:300],
    "small": json.dumps(small_config()).encode(),  # the shard's shapes fit it
}  # no empty object: the emulator's media upload fails on an empty body
LOCKS = [None, None, None, b"{}", b"not json", b'{"version": 1, "files": {"config.json": 1}}', b"[" * 5000]
FAULTS = ["ignore-range", "trickle", "drop-get", "cut-get"]
COMMANDS = [
    ["check"],
    ["check", "--format", "json"],
    ["check", "--format", "sarif"],
    ["where", "--format", "json"],
    ["verify"],
    ["fix", "--yes"],
    ["fix", "--dry-run"],
]
REQUESTS = 10  # more than a run sends (listing, stats, config.json, the lock, a shard's two ranges)
GROWTH_MIB = 300  # an oversized config.json is read to its hash limit (64 MiB, held twice); an endless one is not


@dataclass(frozen=True)
class GcsCase:
    content: str
    lock: bytes | None
    shard: bool
    command: list[str]
    faults: frozenset[str]
    only_key: str | None
    endless: bool
    dead: bool
    trickle_delay: float
    deadline: str


def gcs_case(rng: random.Random) -> GcsCase:
    faults = frozenset(rng.sample(FAULTS, rng.choice([0, 1, 1, 1, 2])))
    return GcsCase(
        content=rng.choice(sorted(CONTENTS)),
        lock=rng.choice(LOCKS),
        shard=rng.random() < 0.4,
        command=rng.choice(COMMANDS),
        faults=faults,
        only_key=rng.choice(["config.json", "config.json", ".dflash-cfg.lock", "model.safetensors", None]),
        endless=rng.random() < 0.5,
        dead=rng.random() < 0.03,
        trickle_delay=rng.choice([0.02, 0.1, 0.3]),
        deadline=rng.choice(["1", "2", "3"]) if faults else "10",
    )


class Bucket:
    """The GCS server and the proxy in front of it."""

    def __init__(self, gcs: GcsServer, proxy: FaultProxy, shard: bytes) -> None:
        self.gcs, self.proxy, self.shard = gcs, proxy, shard

    def upload(self, case: GcsCase) -> tuple[str, str]:
        bucket = self.gcs.new_bucket()
        self.gcs.put(bucket, f"{PREFIX}/config.json", CONTENTS[case.content])
        if case.lock is not None:
            self.gcs.put(bucket, f"{PREFIX}/.dflash-cfg.lock", case.lock)
        if case.shard:
            self.gcs.put(bucket, f"{PREFIX}/model.safetensors", self.shard)
        return bucket, f"gs://{bucket}/{PREFIX}"

    def objects(self, bucket: str) -> dict[str, bytes]:
        return {key: self.gcs.get(bucket, key) for key in self.gcs.keys(bucket)}


def gcs_defect(store: Bucket, case: GcsCase, *, memory: bool = True) -> str | None:
    """What `case` breaks, or None. `memory`: judge the growth of this process' peak memory (see engines.py)."""
    bucket, url = store.upload(case)
    before = store.objects(bucket)
    proxy = store.proxy
    proxy.reset()
    proxy.faults, proxy.only_key = set(case.faults), case.only_key
    proxy.endless, proxy.trickle_delay, proxy.dead = case.endless, case.trickle_delay, case.dead
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with environ(STORAGE_EMULATOR_HOST=proxy.endpoint, DFLASH_CFG_REMOTE_DEADLINE=case.deadline):
        outcome = invoke(case.command[0], url, *case.command[1:])
    seconds = time.monotonic() - started
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) / 1024
    proxy.reset()
    found = broken(outcome)
    if found is None and ("json" in case.command or "sarif" in case.command):
        try:
            json.loads(outcome.out)
        except ValueError:
            found = f"stdout is no document (exit {outcome.code}): {outcome.out[:200]!r}"
    if found is None and store.objects(bucket) != before:
        found = "the bucket changed"
    if found is None and seconds > float(case.deadline) * REQUESTS + 20:
        found = f"took {seconds:.0f} s with a deadline of {case.deadline} s"
    if found is None and memory and grew > GROWTH_MIB:
        found = f"the peak memory grew by {grew:.0f} MiB"
    return None if found is None else f"{found} <- {case}"


def campaign(rng: random.Random, n: int, home: Path, tally: Tally) -> None:
    # gcsfs's default file system asks a gRPC storage-layout API what kind of bucket each request reads; the
    # emulator has none, and each question costs 3 s before gcsfs falls back to the JSON API the faults act on.
    # Its plain JSON-API file system (chosen when gcsfs is imported) sends the same requests, without them.
    os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
    gcs = GcsServer(home)
    gcs.start()
    proxy = FaultProxy(gcs.port)
    proxy.start()
    shard = home / "model.safetensors"
    save(shard, small_shapes())
    try:
        store = Bucket(gcs, proxy, shard.read_bytes())
        for i in range(n):
            if (found := gcs_defect(store, gcs_case(rng))) is not None:
                tally.defect("gcs", f"{i}: {found}")
            tally.ran("gcs")
    finally:
        proxy.stop()
        gcs.stop()

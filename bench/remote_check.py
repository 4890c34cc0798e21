"""bench.py's [6]: a model dir on a loopback S3 server (moto, started as the tests start it) against the same
dir on local disk. A warm check of each in one process (bench.py --remote-child), their ratio and the bytes
a check of s3:// receives, counted in dflash-cfg's remote reader (at most config.json + 8 + n per shard); the
same pair as whole processes and one bare GET's latency are reported beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from runs import BenchError, Series, interleave, ms, ratio_line, run_timed

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().with_name("bench.py")  # the entry point: it runs --remote-child
REMOTE_TARGET = 2.5  # ratio of medians, warm check of s3://... / warm check of the same local dir
CALLS_TARGET = 1  # requests to the store per warm check of an unchanged dir: its listing


def remote_model(folder: Path) -> int:
    """A small drafter dir with two shards and 32 MiB of tensor data; returns the bytes a check may read:
    config.json plus 8 + n header bytes per shard."""
    sys.path.insert(0, str(ROOT / "tests"))
    from checkpoints import save, small_config, small_shapes

    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(small_config(), indent=2) + "\n")
    shapes = small_shapes()
    names = sorted(shapes)
    save(folder / "model-a.safetensors", {n: shapes[n] for n in names[: len(names) // 2]} | {"pad.a": (2048, 4096)})
    save(folder / "model-b.safetensors", {n: shapes[n] for n in names[len(names) // 2 :]} | {"pad.b": (2048, 4096)})
    allowed = len((folder / "config.json").read_bytes())
    for shard in sorted(folder.glob("*.safetensors")):
        with open(shard, "rb") as fh:
            allowed += 8 + int.from_bytes(fh.read(8), "little")
    return allowed


def remote_child(folder: Path, url: str, rounds: int) -> int:
    """In one process: warm both, then local, remote, local, remote, ...; prints the times and the bytes."""
    import dflash_cfg
    from dflash_cfg.sources import remote

    def once(path: str, cached: bool = True) -> float:
        start = time.perf_counter()
        report = dflash_cfg.check([path], use_cache=cached)
        elapsed = time.perf_counter() - start
        if report.errors or not report.files:
            raise BenchError(f"check {path}: {report.errors or 'no file'}")
        return elapsed

    for _ in range(3):  # imports, the content cache, connections
        once(str(folder))
        once(url)
    before, calls = remote.bytes_received(), remote.calls_made()
    once(url, cached=False)  # what a first check reads: nothing kept from an earlier one
    cold = {"bytes": remote.bytes_received() - before, "calls": remote.calls_made() - calls}
    local, far, received, asked = [], [], [], []
    for _ in range(rounds):
        local.append(once(str(folder)))
        before, calls = remote.bytes_received(), remote.calls_made()
        far.append(once(url))
        received.append(remote.bytes_received() - before)
        asked.append(remote.calls_made() - calls)
    print(json.dumps({"local": local, "remote": far, "bytes": received, "calls": asked, "cold": cold}))
    return 0


def measure_remote(args: argparse.Namespace, python: str, script: Path, work: Path) -> list[tuple[str, str, bool]]:
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from s3server import S3Server
    except ImportError as exc:
        raise BenchError(f"[6] needs the test dependencies (pip install -e . --group test): {exc}") from None
    folder = work / "remote-model"
    allowed = remote_model(folder)
    server = S3Server(work)
    print("\n[6] a model dir on a loopback S3 server (moto, request signatures checked) against the same dir on disk")
    try:
        server.start()
        bucket = server.new_bucket()
        server.upload_dir(bucket, "fleet/drafter", folder)
        url = f"s3://{bucket}/fleet/drafter"
        env = dict(os.environ, NO_COLOR="1", XDG_CACHE_HOME=str(work / "cache-remote"), **server.env())
        client = server.client()
        latency, listing = [], []
        for _ in range(max(args.rounds, 10)):
            start = time.perf_counter()
            client.get_object(Bucket=bucket, Key="fleet/drafter/config.json")["Body"].read()
            latency.append(time.perf_counter() - start)
            start = time.perf_counter()
            client.list_objects_v2(Bucket=bucket, Prefix="fleet/drafter/")
            listing.append(time.perf_counter() - start)
        child = subprocess.run(
            [python, str(BENCH), "--remote-child", str(folder), url, str(args.rounds)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if child.returncode != 0:
            raise BenchError(f"[6] the in-process run failed: {child.stderr.strip()[-2000:]}")
        got = json.loads(child.stdout.strip().splitlines()[-1])
        local, far = Series("local", tuple(got["local"])), Series("s3", tuple(got["remote"]))
        print(f"  in one process, warm (imports, content cache, connections): check {folder}  vs  check {url}")
        print(local.line())
        print(far.line())
        ratio, ok = ratio_line("s3/local", local, far, REMOTE_TARGET)
        print(f"  one bare GET of config.json with botocore: median {ms(statistics.median(latency))}")
        # The one request a warm check must make is the listing: its latency bounds the ratio from below.
        listed = statistics.median(listing)
        print(
            f"  one bare listing of the dir with botocore: median {ms(listed)}; local + that listing = "
            f"{(local.median + listed) / local.median:.3f} x local (the least a warm check of s3:// can be); "
            f"beyond the listing: {ms(far.median - local.median - listed)}"
        )
        calls = max(got["calls"])
        calls_ok = calls <= CALLS_TARGET
        print(
            f"  requests per warm check: {sorted(set(got['calls']))} (the listing; config.json and the shard headers "
            f"from the content cache, {sorted(set(got['bytes']))} bytes received), target {CALLS_TARGET}: "
            f"{'MET' if calls_ok else 'MISSED'}"
        )
        most = got["cold"]["bytes"]
        bytes_ok = most <= allowed
        print(
            f"  a check with nothing kept (--no-cache): {got['cold']['calls']} requests, {most} bytes received; "
            f"allowed {allowed} (config.json + 8 + n per shard; the shards hold "
            f"{sum(p.stat().st_size for p in folder.glob('*.safetensors'))} bytes): {'MET' if bytes_ok else 'MISSED'}"
        )
        check_local = [python, str(script), "check", str(folder)]
        check_far = [python, str(script), "check", url]
        run_timed(check_local, env, frozenset({0, 1}))
        run_timed(check_far, env, frozenset({0, 1}))
        f6, r6 = interleave(args.rounds, check_local, check_far, env, frozenset({0, 1}), "s3", floor_label="local")
        print("  as whole processes, content cache warm (reported, not a target: s3fs and botocore load per process)")
        print(f6.line())
        print(r6.line())
        print(f"  ratio of medians s3/local as processes = {r6.median / f6.median:.3f}")
    finally:
        server.stop()
    return [
        ("warm check s3:// / local (one process)", f"{ratio:.3f} (<= {REMOTE_TARGET})", ok),
        ("requests per warm check of an unchanged s3:// dir", f"{calls} (<= {CALLS_TARGET})", calls_ok),
        ("bytes read from s3:// per check, nothing kept", f"{most} (<= {allowed})", bytes_ok),
    ]

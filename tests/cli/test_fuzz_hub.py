"""Fuzzing the CLI in-process on where a drafter comes from: hostile `.dflash-cfg.lock` files, model names,
revisions, digests and rule ids through verify, check, where and rules; Hub servers that should not be trusted
(tests/hubserver.py's ErrorHub) behind check, fix and diff --from-hub, with the token and the endpoint's
password kept out of every message and the Hub cache kept to its directory; and object storage: a listing
trickled past the deadline, and the campaign's s3:// surface through a fault-injecting proxy (tests/fuzz/s3.py).

Each defect the fuzzing found there has a reproducer here (`test_found_bug_*`), and the generators cover
those inputs again now that the defects are fixed. The properties every run must show, and the bounded and
slow runs, are fuzzing.py's.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faultproxy import FaultProxy
from fuzz import s3 as s3_surface
from fuzz.common import environ
from fuzzing import (
    FORMATS,
    HOSTILE_STRINGS,
    MANGLES,
    OPS,
    OSC_TITLE,
    PAIRED_DRAFTER,
    UPSTREAM,
    Run,
    bounded,
    box,
    drafter_bytes,
    drafter_commands,
    hostile_json,
    long,
    survive,
    untouched,
)
from helpers import assert_one_line_error, write_config
from hubserver import ErrorHub
from hypothesis import given
from hypothesis import strategies as st
from s3server import S3Server

# --- .dflash-cfg.lock ------------------------------------------------------------------------------

REVISIONS = ["main", "v1.0", "../../../../victim", "/etc", "a\\b", "refs/pr/1", "a" * 300, OSC_TITLE, "\ud800", ""]
COMMITS = ["0" * 40, "a" * 40, "../../x", "0" * 39 + "G", "", OSC_TITLE, "\udcff"]


def lock_bytes(config: bytes, data: st.DataObject) -> bytes:
    entry: dict[str, Any] = {
        "path": "/elsewhere/config.json",
        "sha256": hashlib.sha256(config).hexdigest(),
        "git_blob_sha1": hashlib.sha1(b"blob %d\0" % len(config) + config).hexdigest(),
        "source": None,
        "written_at": "2026-01-01T00:00:00Z",
        "tool_version": "0.1.0",
    }
    if data.draw(st.booleans(), label="source"):
        entry["source"] = {
            "repo": data.draw(st.sampled_from(["z-lab/x", "anyrev", "../..", "a/b/c", OSC_TITLE]), label="repo"),
            "revision": data.draw(st.sampled_from(REVISIONS), label="revision"),
            "commit": data.draw(st.sampled_from(COMMITS), label="commit"),
        }
    if data.draw(st.booleans(), label="stale"):
        entry["sha256"] = "f" * 64
    doc = {"version": 1, "files": {"config.json": entry}}
    mutations = data.draw(st.sampled_from([0, 0, 1, 3]), label="lock-mutations")
    return hostile_json(doc, data, max_mutations=mutations, ops=list(OPS))


def locks_property(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    with box(tmp_path) as b:
        hostile = data.draw(st.booleans(), label="hostile")
        config = drafter_bytes(data, list(MANGLES)) if hostile else UPSTREAM[0].read_bytes()
        (b.model / "config.json").write_bytes(config)
        lock = b.model / ".dflash-cfg.lock"
        lock.write_bytes(lock_bytes(config, data))
        was_json = is_json(lock.read_bytes())
        with untouched(b.root):
            survive(dflash, "verify", b.model, "--expect-sha256", hashlib.sha256(config).hexdigest(), text_out=True)
            fmt = data.draw(st.sampled_from(FORMATS), label="format")
            survive(dflash, "check", b.model, "--from-hub", "--offline", "--format", fmt, text_out=fmt == "text")
        drafter_commands(dflash, b, data, with_target=False)
        if was_json:  # fix records its write in a lock that stays JSON (a corrupt one is refused, kept as is)
            assert is_json(lock.read_bytes()), lock.read_bytes()[:300]


def is_json(raw: bytes) -> bool:
    try:
        json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return True


@bounded(12)
@given(data=st.data())
def test_hostile_lock_files(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    locks_property(dflash, tmp_path, data)


@pytest.mark.slow
@long(600)
@given(data=st.data())
def test_hostile_lock_files_long(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    locks_property(dflash, tmp_path, data)


# --- where and rules --------------------------------------------------------------------------------

# Paths with NUL, unencodable lone surrogates and `~unknown-user` included (test_found_bug_path_*).
PATH_STRINGS = list(HOSTILE_STRINGS)
SHA256S = [hashlib.sha256(UPSTREAM[0].read_bytes()).hexdigest(), "0" * 64, "A" * 64, "0" * 63, "g" * 64, "", OSC_TITLE]
RULE_IDS = ["DF1", "df2", "DF204", "DF9999", "", ",", "DF", "X", OSC_TITLE, "\ud800", "DF1,,DF2"]


def names_property(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    with box(tmp_path) as b:
        (b.model / "config.json").write_bytes(UPSTREAM[0].read_bytes())
        name = data.draw(st.sampled_from([str(b.model), "model", "org/name", "a/b/c", "", "x" * 300, *PATH_STRINGS]))
        revision = data.draw(st.sampled_from([None, *REVISIONS, *COMMITS]), label="revision")
        fmt = data.draw(st.sampled_from(["text", "json"]), label="format")
        with untouched(b.root):
            survive(
                dflash,
                "where",
                name,
                *(["--revision", revision] if revision is not None else []),
                "--format",
                fmt,
                text_out=fmt == "text",
                json_out=fmt == "json",
            )
            ids = data.draw(st.lists(st.sampled_from(RULE_IDS), max_size=2), label="ids")
            fmt = data.draw(st.sampled_from(["text", "json"]), label="rules-format")
            verbose = ["-v"] if data.draw(st.booleans(), label="verbose") else []
            survive(dflash, "rules", *ids, "--format", fmt, *verbose, text_out=fmt == "text", json_out=fmt == "json")
            options = [
                *(["--select", ",".join(ids)] if data.draw(st.booleans(), label="select") else []),
                *(
                    ["--ignore", data.draw(st.sampled_from(RULE_IDS), label="ignore")]
                    if data.draw(st.booleans())
                    else []
                ),
                *(
                    ["--expect-sha256", data.draw(st.sampled_from(SHA256S), label="sha")]
                    if data.draw(st.booleans())
                    else []
                ),
            ]
            fmt = data.draw(st.sampled_from(FORMATS), label="check-format")
            survive(dflash, "check", b.model, *options, "--format", fmt, text_out=fmt == "text", json_out=fmt != "text")
            if "--expect-sha256" in options:
                survive(dflash, "verify", b.model, *options[options.index("--expect-sha256") :], text_out=True)


@bounded(15)
@given(data=st.data())
def test_hostile_names(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    names_property(dflash, tmp_path, data)


@pytest.mark.slow
@long(600)
@given(data=st.data())
def test_hostile_names_long(dflash: Run, tmp_path: Path, data: st.DataObject) -> None:
    names_property(dflash, tmp_path, data)


# --- the Hub: revisions and servers that should not be trusted -------------------------------------

TOKEN = "hf_fuzzsecrettoken0123456789"
PASSWORD = "fuzzpassw0rd"
HUB_REPOS = ["t/anyrev", "t/badcommit", "t/echo", "t/gated", "t/broken", "t/missing-revision", "t/no-config", "t/x"]
HUB_REVISIONS = [
    *REVISIONS,
    *COMMITS,
    "../../../../victim",
    "../../../../outside/keep.txt",
    "..",
    ".",
    "refs/../../x",
    "main/../..",
    "~",
    "a b",
    "v1.0\n",
]


def hub_property(dflash: Run, tmp_path: Path, endpoint: str, data: st.DataObject) -> None:
    with box(tmp_path) as b:
        local = UPSTREAM[0].read_bytes() if data.draw(st.booleans(), label="real") else drafter_bytes(data)
        (b.model / "config.json").write_bytes(local)
        hf = b.root / "hf"
        hf.mkdir()
        repo = data.draw(st.sampled_from(["t/anyrev"] * 4 + HUB_REPOS), label="repo")
        revision = data.draw(
            st.sampled_from(["main", "v1.0", "refs/pr/1"]) | st.sampled_from(HUB_REVISIONS) | st.text(max_size=20),
            label="revision",
        )
        if data.draw(st.booleans(), label="userinfo"):
            endpoint = endpoint.replace("http://", f"http://user:{PASSWORD}@")
        token = TOKEN if data.draw(st.booleans(), label="token") else None
        command = data.draw(
            st.sampled_from(
                [
                    ["check", "--format", "json"],
                    ["check"],
                    ["check", "--format", "sarif"],
                    ["fix", "--dry-run"],
                    ["fix", "--dry-run", "--only-critical"],
                    ["fix", "--yes"],
                    ["fix", "--yes", "--only-critical"],
                    ["diff"],
                    ["diff", "--format", "json"],
                ]
            ),
            label="command",
        )
        writes = [b.model] if "--yes" in command else []
        with environ(HF_ENDPOINT=endpoint, HF_TOKEN=token, HF_HOME=str(hf)), untouched(b.root, hf, *writes):
            text = "--format" not in command
            result = survive(dflash, *command, b.model, "--from-hub", repo, "--revision", revision, text_out=text)
        for secret in (TOKEN, PASSWORD):
            assert secret not in result.out + result.err, (command, repo, revision, result)
        # Whatever the revision says, the cache keeps to its own directory.
        for dirpath, dirnames, filenames in os.walk(hf):
            for name in dirnames + filenames:
                resolved = Path(os.path.realpath(Path(dirpath) / name))
                assert resolved.is_relative_to(hf.resolve()), resolved


@bounded(15)
@given(data=st.data())
def test_hostile_hub(dflash: Run, tmp_path: Path, error_hub: ErrorHub, data: st.DataObject) -> None:
    hub_property(dflash, tmp_path, error_hub.endpoint, data)


@pytest.mark.slow
@long(600)
@given(data=st.data())
def test_hostile_hub_long(dflash: Run, tmp_path: Path, error_hub: ErrorHub, data: st.DataObject) -> None:
    hub_property(dflash, tmp_path, error_hub.endpoint, data)


# --- bugs the fuzzing found (reproducers, fixed; the generators above cover these inputs too) ---------


@pytest.mark.parametrize("how", ["where", "preflight"])
def test_found_bug_tilde_of_an_unknown_user(dflash: Run, how: str) -> None:
    name = "~no-such-user-dflash/model"
    if how == "where":
        result = dflash("where", name)
    else:
        spec = json.dumps({"method": "dflash", "model": name, "num_speculative_tokens": 15})
        result = dflash("preflight", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", spec)
    assert_one_line_error(result)


@pytest.mark.parametrize("where", ["option", "lock-file"])
def test_found_bug_revision_with_a_lone_surrogate(
    dflash: Run, tmp_path: Path, error_hub: ErrorHub, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", error_hub.endpoint)
    config = tmp_path / "m" / "config.json"
    config.parent.mkdir()
    config.write_bytes(UPSTREAM[0].read_bytes())
    if where == "option":
        # `--revision $'\xff'` in a shell: Python decodes the argument to "\udcff" (surrogateescape).
        result = dflash("check", config.parent, "--from-hub", "t/anyrev", "--revision", "\udcff")
    else:
        raw = config.read_bytes()
        entry = {
            "path": str(config),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "git_blob_sha1": hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest(),
            "source": {"repo": "t/anyrev", "revision": "\ud800", "commit": "0" * 40},
            "written_at": "2026-01-01T00:00:00Z",
            "tool_version": "0.1.0",
        }
        (config.parent / ".dflash-cfg.lock").write_text(json.dumps({"version": 1, "files": {"config.json": entry}}))
        result = dflash("check", config.parent, "--from-hub")
    assert_one_line_error(result)


@pytest.mark.parametrize("how", ["where", "preflight"])
def test_found_bug_revision_read_outside_the_cache(
    dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    commit = "a" * 40
    repo_dir = tmp_path / "hf" / "hub" / "models--org--name"
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(commit)
    (repo_dir / "snapshots" / commit).mkdir(parents=True)
    (repo_dir / "snapshots" / commit / "config.json").write_bytes(PAIRED_DRAFTER.read_bytes())
    planted = tmp_path / "planted"  # outside the cache
    planted.write_text(commit)
    revision = os.path.relpath(planted, repo_dir / "refs")
    assert revision.startswith("../")
    if how == "where":
        result = dflash("where", "org/name", "--revision", revision)
    else:
        spec = json.dumps({"method": "dflash", "model": "org/name", "revision": revision})
        result = dflash("preflight", "--", "vllm", "serve", "org/name", "--speculative-config", spec)
    assert_one_line_error(result)
    assert "branch, tag or commit" in result.err


@pytest.mark.slow  # each case imports huggingface_hub afresh in a child process
@pytest.mark.parametrize(
    ("name", "value", "command"),
    [
        ("HF_HUB_ETAG_TIMEOUT", "", ("where", "z-lab/x")),
        ("HF_HUB_DOWNLOAD_TIMEOUT", "", ("check", str(UPSTREAM[0]), "--no-cache")),
        ("HF_ENDPOINT", "http://127.0.0.1:99999", ("check", str(UPSTREAM[0]), "--no-cache")),
        ("HF_ENDPOINT", "http://[::1", ("where", "z-lab/x")),
    ],
    ids=["etag-timeout-empty", "download-timeout-empty", "endpoint-port", "endpoint-bracket"],
)
def test_found_bug_hub_settings_that_break_the_import(
    tmp_path: Path, name: str, value: str, command: tuple[str, ...]
) -> None:
    # huggingface_hub reads these once, at import: a fresh process is needed.
    proc = subprocess.run(
        [sys.executable, "-m", "dflash_cfg", *command],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1", name: value},
        check=False,
    )
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1, 2)
    if proc.returncode == 2:
        assert proc.stderr.startswith("dflash-cfg: error: ") and proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize("command", [("check",), ("verify",), ("fix", "--yes"), ("fix", "--dry-run")])
def test_found_bug_lock_file_nested_too_deeply(dflash: Run, tmp_path: Path, command: tuple[str, ...]) -> None:
    config = write_config(tmp_path / "m")
    lock = tmp_path / "m" / ".dflash-cfg.lock"
    lock.write_text('{"version": 1, "files": {"config.json": ' + "[" * 5000 + "]" * 5000 + "}}")
    before = config.read_bytes(), lock.read_bytes()
    result = dflash(*command, tmp_path / "m")
    assert (config.read_bytes(), lock.read_bytes()) == before
    assert "internal error" not in result.err, result.err
    assert result.code in (1, 2) and result.err.count("\n") <= 1, result


# --- found by the campaign (tests/fuzz/campaign.py) -------------------------------------------------


@pytest.mark.parametrize("command", [["check"], ["fix", "--yes"], ["verify"]])
def test_found_bug_a_trickled_listing_is_held_to_the_deadline(s3: S3Server, tmp_path: Path, command: list[str]) -> None:
    """DFLASH_CFG_REMOTE_DEADLINE bounded the reads of objects only: a listing (or a HEAD, or a put's answer)
    trickled a byte a second held the run for as many seconds as the answer had bytes, times the retries."""
    bucket = s3.new_bucket()
    s3.put(bucket, "team/drafter/config.json", b"\xef\xbb\xbf" + PAIRED_DRAFTER.read_bytes())
    proxy = FaultProxy(s3.port)
    proxy.start()
    proxy.faults, proxy.only_key, proxy.trickle_delay = {"trickle"}, bucket, 1.0  # the bucket's listings
    env = {**os.environ, "AWS_ENDPOINT_URL_S3": proxy.endpoint, "DFLASH_CFG_REMOTE_DEADLINE": "2", "NO_COLOR": "1"}
    try:
        child = subprocess.run(
            [sys.executable, "-m", "dflash_cfg", *command[:1], f"s3://{bucket}/team/drafter", *command[1:]],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,  # a hang guard: the listing alone is minutes long at a byte a second
        )
    finally:
        proxy.stop()
    assert child.returncode == 2, child
    assert child.stderr.count("\n") == 1 and "within the deadline" in child.stderr, child.stderr


# --- the campaign's surfaces (tests/fuzz/): derandomized slices of its generators -----------------------
# The campaign (tests/fuzz/campaign.py) runs the same generators over more than 10,000 inputs.


@pytest.fixture
def s3_store(s3: S3Server) -> Iterator[s3_surface.Store]:
    proxy = FaultProxy(s3.port)
    proxy.start()
    yield s3_surface.Store(s3, proxy)
    proxy.stop()


@pytest.mark.slow
@bounded(4)
@given(rng=st.randoms(use_true_random=False))
def test_campaign_s3_faults(s3_store: s3_surface.Store, rng: random.Random) -> None:
    assert s3_surface.s3_defect(s3_store, s3_surface.s3_case(rng)) is None

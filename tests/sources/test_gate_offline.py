"""The commit hook off the network (issue 32, item 10): a project that records its drafter's upstream keeps its
gate when the Hub cannot be reached, by comparing with the copy in the local Hugging Face cache, and says so.
The installed command against olah on loopback, stopped for the offline runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers import FIXTURES
from hubserver import Olah
from installed import Installed

REPO = "z-lab/Qwen3.6-27B-DFlash"
UPSTREAM = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"
INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json"


def project(tmp_path: Path, source: Path) -> Path:
    """A repository of one drafter whose dflash-cfg.toml records its upstream, as the hook sees it."""
    folder = tmp_path / "models" / "Qwen3.6-27B-DFlash"
    folder.mkdir(parents=True)
    shutil.copyfile(source, folder / "config.json")
    (tmp_path / "dflash-cfg.toml").write_text(
        f'[[models]]\npath = "models/Qwen3.6-27B-DFlash"\nupstream = "{REPO}"\n', encoding="utf-8"
    )
    return folder / "config.json"


def test_gate_compares_with_the_cached_commit_when_the_hub_is_down(
    installed: Installed, hub: Olah, tmp_path: Path
) -> None:
    config = project(tmp_path, INCIDENT)
    gate = ("dflash-cfg", "check", "--gate", "models/Qwen3.6-27B-DFlash/config.json")
    online = installed.run(*gate, "--format", "json", cwd=tmp_path)  # a run online caches the upstream copy
    assert online.returncode == 1, online.stderr
    commit = hub.head(REPO)
    (seen,) = json.loads(online.stdout)["files"]
    assert seen["upstream"]["commit"] == commit and seen["upstream"]["unreachable"] is None
    with hub.stopped():
        text = installed.run(*gate, cwd=tmp_path)
        doc = installed.run(*gate, "--format", "json", cwd=tmp_path)
    assert text.returncode == 1, text.stderr  # the same verdict: the three DF601 errors, from the cached copy
    found = "found by the project config"
    assert f"  upstream {REPO}@{commit[:12]} (main, {found}; hub unreachable at {hub.endpoint}" in text.stdout
    assert "compared with the local cache's copy)" in text.stdout
    # No error about the Hub on stderr: the next command only, with --offline as the run was made.
    assert "unreachable" not in text.stderr and "error" not in text.stderr, text.stderr
    assert f"dflash-cfg fix models/Qwen3.6-27B-DFlash/config.json --from-hub {REPO} --offline" in text.stderr
    (offline,) = json.loads(doc.stdout)["files"]
    assert offline["upstream"]["commit"] == commit
    assert offline["upstream"]["unreachable"].startswith(f"hub unreachable at {hub.endpoint}")
    assert offline["findings"] == seen["findings"]
    # The file repaired from upstream passes the gate offline as online (DF603: identical to upstream).
    config.write_bytes(UPSTREAM.read_bytes())
    with hub.stopped():
        fixed = installed.run(*gate, cwd=tmp_path)
    assert fixed.returncode == 0 and "info DF603 upstream-identical" in fixed.stdout, fixed.stdout + fixed.stderr


def test_gate_with_nothing_cached_says_how_to_proceed(installed: Installed, hub: Olah, tmp_path: Path) -> None:
    project(tmp_path, INCIDENT)
    with hub.stopped():
        proc = installed.run("dflash-cfg", "check", "--gate", "models/Qwen3.6-27B-DFlash", cwd=tmp_path)
    # The comparison cannot be made: said for the file, naming its entry, and the file checked without it (the
    # catalog still knows the stale-file signature); the run exits 2, not 1: its verdict is not the whole one.
    assert proc.returncode == 2, proc.stderr
    assert "warning DF205 window-without-sliding" in proc.stdout
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(
        f'dflash-cfg: error: models/Qwen3.6-27B-DFlash/config.json: not compared with upstream = "{REPO}" of its '
        "[[models]] entry in "
    )
    assert f"hub unreachable at {hub.endpoint}" in proc.stderr
    assert f"and {REPO}@main is not in the local cache to compare with: run the check once online" in proc.stderr
    assert "(SKIP=dflash-cfg git commit)" in proc.stderr


def test_check_without_the_gate_still_refuses_to_guess(installed: Installed, hub: Olah, tmp_path: Path) -> None:
    project(tmp_path, INCIDENT)
    assert installed.run("dflash-cfg", "check", "models/Qwen3.6-27B-DFlash", cwd=tmp_path).returncode == 1
    with hub.stopped():
        proc = installed.run("dflash-cfg", "check", "models/Qwen3.6-27B-DFlash", cwd=tmp_path)
    # Asked for a check, not a gate: the comparison the project asks for cannot be made as asked, and --offline
    # is how to make it with the cached copy.
    assert proc.returncode == 2 and "; use --offline to compare with the local cache" in proc.stderr, proc.stderr

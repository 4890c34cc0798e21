"""Commit subjects stay at 72 characters or fewer, so `git log --oneline` stays readable and the why goes in
the body. The commit-msg hook (.pre-commit-config.yaml, installed by ./dev with .venv) stops a long subject
at commit time; this test holds CI to the same rule, for a commit made where the hook was not installed."""

from __future__ import annotations

import subprocess

import pytest
from helpers import ROOT

MAX_SUBJECT = 72
# The last commit before CI checked subjects. Earlier ones are history: 23 of the 63 commits between
# 5d3d5a6 (when the rule was first asked of CI) and this one were made with the hook opt-in and exceed it.
CHECKED_AFTER = "664a6402742cc5ae4cb8eb5955b019ce01ab9aa3"


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False)


def test_commit_subjects_are_at_most_72_characters() -> None:
    if _git("rev-parse", "--is-inside-work-tree").stdout.strip() != "true":
        pytest.skip("not a git checkout (an sdist or an unpacked archive): there is no history to check")
    if _git("merge-base", "--is-ancestor", CHECKED_AFTER, "HEAD").returncode != 0:
        pytest.fail(f"{CHECKED_AFTER[:12]} is not in this checkout's history: fetch the whole history (no --depth)")
    log = _git("log", "--format=%h %s", f"{CHECKED_AFTER}..HEAD")
    assert log.returncode == 0, log.stderr
    long = [line for line in log.stdout.splitlines() if len(line.split(" ", 1)[1]) > MAX_SUBJECT]
    assert long == [], f"subjects over {MAX_SUBJECT} characters (reword them; the why goes in the body): {long}"

"""`audit --format html`: a self-contained page. The renderer alone on hostile values (everything escaped, nothing
fetched, nothing linked), then a real audit's page in Debian's headless Chromium: it renders (a screenshot), every
repo is a row of the DOM after the script ran, and the script sorts the table when a header is clicked (driven by
the page's own `#sort=KEY-DIR` fragment, which clicks the header as a reader would)."""

from __future__ import annotations

import fcntl
import os
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers import Result
from publisherhub import Population, PublisherHub, populate

from dflash_cfg.model import Requirement, Severity
from dflash_cfg.model.audit import AuditResult, AuditRow, AuditTarget, AuthorNote, Noted, Step
from dflash_cfg.report.audit_html import CSP, audit_html

Run = Callable[..., Result]
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
HOSTILE = "\"'><img src=x onerror=alert(1)></script><script>alert(2)</script>&amp;\x1b[2J"


class Page(HTMLParser):
    """What the tests read of a page: its tags with their attributes, in order, and its text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def all(self, tag: str) -> list[dict[str, str]]:
        return [attrs for name, attrs in self.tags if name == tag]


def _result(rows: tuple[AuditRow, ...]) -> AuditResult:
    return AuditResult(
        asked=("z-lab", f"evil/{HOSTILE}"),
        endpoint="https://huggingface.co",
        rows=rows,
        authors=(
            AuthorNote(author="z-lab", listed=3, drafters=2),
            AuthorNote(author="x", listed=None, drafters=0, error=HOSTILE),
        ),
        reused=1,
        retries=2,
        seconds=1.5,
        deadline=None,
        journal="/tmp/j.jsonl",
        transformers_version="5.0.0",
        tool_version="0.1.0",
    )


def _judged(repo: str, errors: int, warnings: int = 0) -> AuditRow:
    findings = tuple(
        Noted(rule="DF104", name="tap-range", severity=Severity.ERROR, pointer="/dflash_config", message=HOSTILE)
        for _ in range(errors)
    ) + tuple(
        Noted(
            rule="DF403",
            name="target-depth",
            severity=Severity.WARNING,
            pointer="",
            message="m",
            engines=(Requirement("mlx"),),
        )
        for _ in range(warnings)
    )
    return AuditRow(
        repo=repo,
        revision="main",
        status="judged",
        commit="ab" * 20,
        date="2026-03-01T10:00:00Z",
        path="config.json",
        kind="dflash",
        target=AuditTarget(repo="Qwen/Qwen3-8B", status="read", commit="cd" * 20),
        findings=findings,
        fails=errors > 0,
        values=(("target_layer_ids", [1, 9]), ("sliding_window", HOSTILE)),
        history=(
            Step(
                commit="ab" * 20,
                date="2026-03-01",
                git_blob_sha1="ef" * 20,
                values=(("target_layer_ids", [1, 9]), ("sliding_window", HOSTILE)),
                changed=("target_layer_ids",),
            ),
            Step(commit="01" * 20, date="2026-02-01", git_blob_sha1="23" * 20, values=(("target_layer_ids", [1, 8]),)),
            Step(commit="45" * 20, date=None, git_blob_sha1=None, values=None, note="no config file at this commit"),
        ),
    )


def test_every_string_is_escaped_and_nothing_is_fetched_or_linked() -> None:
    rows = (
        _judged(f"evil/{HOSTILE}", errors=2),
        _judged("z-lab/ok", errors=0, warnings=1),
        AuditRow(repo="z-lab/gated", revision="v1", status="unreadable", reason=HOSTILE),
        AuditRow(repo="z-lab/gone", revision="main", status="unreadable", reason="not found on https://huggingface.co"),
    )
    text = audit_html(_result(rows))
    assert "<script>alert(2)" not in text and "<img" not in text and "\x1b" not in text
    page = Page(text)
    assert [name for name, _ in page.tags].count("script") == 1  # the page's own
    assert not page.all("img") and not page.all("link") and not page.all("iframe") and not page.all("base")
    for name, attrs in page.tags:
        assert not {"src", "href", "action", "srcset", "background"} & set(attrs), name
        assert not [k for k in attrs if k.startswith("on")], (name, attrs)
        assert not [v for v in attrs.values() if "://" in v and v != CSP], (name, attrs)
    assert "url(" not in text and "@import" not in text and "://" not in text
    (meta,) = [a for a in page.all("meta") if a.get("http-equiv") == "Content-Security-Policy"]
    assert meta["content"].startswith("default-src 'none';")
    bodies = [a for a in page.all("tbody")]
    shown_hostile = HOSTILE.replace("\x1b", "\\x1b")  # what a terminal would act on is shown as an escape
    assert [b["data-repo"] for b in bodies] == [f"evil/{shown_hostile}", "z-lab/ok", "z-lab/gated@v1", "z-lab/gone"]
    assert [b["class"] for b in bodies] == ["repo fail", "repo ok", "repo unread", "repo unread"]
    shown = "".join(page.text)
    assert shown_hostile in shown  # the text reads as it was, escaped only for HTML
    assert "not found on huggingface.co" in shown  # the Hub named as a host, never by its URL


def test_the_history_marks_what_each_revision_changed() -> None:
    text = audit_html(_result((_judged("z-lab/a", errors=0),)))
    assert "<td class=changed><code>[1,9]</code></td>" in text
    assert "<code>[1,8]</code>" in text
    assert "no config file at this commit" in text
    assert "3 revisions of config.json" in text


# --- in a real browser -------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium: installed here when missing and the tests run as root (as CI does, .ci/run), else skipped."""
    found = shutil.which("chromium")
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        # One install for all pytest-xdist workers: apt holds its own lock, but a second apt-get would fail on it.
        with open(os.path.join(tempfile.gettempdir(), "dflash-cfg-chromium-install.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if shutil.which("chromium") is None:
                env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
                for command in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "chromium"]):
                    subprocess.run(command, env=env, capture_output=True, timeout=900, check=False)
        found = shutil.which("chromium")
    if found is None:
        pytest.skip("no chromium on PATH, and not root to `apt-get install chromium`")
    return found


def browse(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Chromium, headless, with a profile of its own and nothing that reaches the network."""
    return subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "HOME": str(profile)},
        check=False,
    )


@pytest.fixture
def audited(tmp_path: Path, dflash: Run, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Population]]:
    """A real audit's page: every author of a 40-repo population, read with the token (the gated ones too)."""
    with PublisherHub() as hub:
        pop = populate(hub, seed=1, count=40)
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        monkeypatch.setenv("HF_TOKEN", hub.token)
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        out = tmp_path / "report.html"
        result = dflash("audit", *pop.authors, "--format", "html", "--output", out)
        assert result.code == 1, result.err
        assert result.out == "" and f"report written to {out}" in result.err
        yield out, pop


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.slow
def test_the_page_renders_and_sorts_in_headless_chromium(
    chromium: str, audited: tuple[Path, Population], tmp_path: Path
) -> None:
    page, pop = audited
    shot = tmp_path / "shot.png"
    done = browse(chromium, tmp_path / "profile-1", f"--screenshot={shot}", "--window-size=1400,2000", page.as_uri())
    assert shot.is_file(), done.stderr[-2000:]
    data = shot.read_bytes()
    assert _png_size(data) == (1400, 2000)
    assert len(data) > 20_000  # a rendered table, not a blank page (a white 1400x2000 PNG is a few KB)

    text = page.read_text(encoding="utf-8")
    assert "://" not in text  # no asset, no link, not even a URL in a reason (the Hub is named by its host)
    original = Page(text)
    rows = original.all("tbody")
    assert sorted(b["data-repo"] for b in rows) == sorted(r.repo for r in pop.drafters)

    def errors(body: dict[str, str]) -> int:
        return int(body["data-errors"])

    # The order the script must give: by the column (descending here), ties in the table's own order.
    wanted = {
        "errors-desc": sorted(rows, key=lambda b: (-errors(b), int(b["data-index"]))),
        "repo-desc": sorted(rows, key=lambda b: b["data-repo"].lower(), reverse=True),
    }
    assert errors(wanted["errors-desc"][0]) > 0  # a table whose order changes
    for fragment, expected in wanted.items():
        dumped = browse(chromium, tmp_path / f"profile-{fragment}", "--dump-dom", f"{page.as_uri()}#sort={fragment}")
        assert dumped.returncode == 0, dumped.stderr[-2000:]
        dom = Page(dumped.stdout)
        (table,) = [t for t in dom.all("table") if t.get("id") == "audit"]
        assert table["data-sortable"] == "yes"  # the script ran
        assert table["data-sorted"] == fragment
        order = [b["data-repo"] for b in dom.all("tbody") if "data-repo" in b]  # not the inner tables' tbody
        assert order == [b["data-repo"] for b in expected]  # every row, once, in the sorted order
        heads = {h["data-key"]: h["aria-sort"] for h in dom.all("th") if "data-key" in h}
        assert heads[fragment.split("-")[0]] == "descending"
        assert [v for k, v in heads.items() if k != fragment.split("-")[0]] == ["none"] * (len(heads) - 1)

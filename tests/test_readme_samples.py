"""The sample outputs of README.md and docs/*.md are produced by the code. A sample is a bare code block whose
first line is `$ COMMAND`: what a user pastes at a shell in the repository root, environment included
(`HF_HUB_CACHE=fixtures/hf-cache/hub dflash-cfg diff ...`), and the rest of the block must be exactly what it
prints there, run that way: by `sh`, with the installed (non-editable) `dflash-cfg` first on PATH, offline
(the tests' Hub is a closed port on loopback, their Hugging Face cache empty: a sample needing either says so).

`$TMP` in a command is the shell's variable, set to a scratch directory holding a copy of the incident's
drafter, `$TMP/Qwen3.6-27B-DFlash`, as `./dev demo` has it: one copy per page, shared by the page's samples in
order, so a page can show `fix` writing the file and then `verify` proving it.

Regenerate after an intended change: DFLASH_CFG_README=record ./dev test tests/test_readme_samples.py
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT, recorded, recording
from installed import Installed

README = ROOT / "README.md"
SAMPLE = re.compile(r"```\n\$ (?P<command>[^\n]+)\n(?P<out>.*?)```\n", re.DOTALL)
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
WITH_SAMPLES = [page for page in PAGES if SAMPLE.search(page.read_text(encoding="utf-8"))]
SCRATCH = "$TMP"


def _normalise(text: str) -> str:
    # The installed transformers version is part of every report; the page shows the one it was made with.
    text = re.sub(r"transformers \d+\.\d+\.\d+\S*", "transformers X", text)
    # verify says when the file was written.
    return re.sub(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\b", "(time)", text)


def test_the_readme_shows_samples() -> None:
    assert len(SAMPLE.findall(README.read_text(encoding="utf-8"))) >= 2, "the README lost its samples"


@pytest.mark.parametrize("page", WITH_SAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_samples_are_what_the_code_prints(page: Path, installed: Installed, tmp_path: Path) -> None:
    scratch = tmp_path.resolve()
    shutil.copytree(FIXTURES / "incident" / "Qwen3.6-27B-DFlash", scratch / "Qwen3.6-27B-DFlash")
    text = page.read_text(encoding="utf-8")
    # In page order, one run each: the same command may show a different answer later on (after a fix).
    produced = []
    for match in SAMPLE.finditer(text):
        command = match["command"]
        assert re.match(r"([A-Z_]+=\S+ )*dflash-cfg ", command), f"a sample runs dflash-cfg: {command}"
        result = installed.run("sh", "-c", command, TMP=str(scratch))  # as pasted after `TMP=$(mktemp -d)`
        out = (result.stdout + result.stderr).replace(str(scratch), SCRATCH)
        # Absolute paths (fix prints them, to be checked on another host) as seen from the root.
        produced.append(out.replace(f"{ROOT}{os.sep}", ""))
    if recording("DFLASH_CFG_README"):
        outputs = iter(produced)
        text = SAMPLE.sub(lambda m: f"```\n$ {m['command']}\n{next(outputs)}```\n", text)
        page.write_text(text, encoding="utf-8")
        recorded(f"the samples of {page.name}", "DFLASH_CFG_README")
    for match, out in zip(SAMPLE.finditer(page.read_text(encoding="utf-8")), produced, strict=True):
        assert _normalise(match["out"]) == _normalise(out), match["command"]

"""The README's sample outputs are produced by the code: each `<!-- sample: ARGS -->` block must be exactly
what `dflash-cfg ARGS` prints from the repository root, offline, with the fixture Hugging Face cache.

Regenerate after an intended change: DFLASH_CFG_README=record ./dev test tests/test_readme_samples.py
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from importlib import metadata

import pytest
from helpers import FIXTURES, ROOT, Result

README = ROOT / "README.md"
SAMPLE = re.compile(r"<!-- sample: (?P<args>.+?) -->\n```\n(?P<out>.*?)```\n", re.DOTALL)


def _normalise(text: str) -> str:
    # The installed transformers version is part of every report; the README shows the one it was made with.
    return re.sub(r"transformers \d+\.\d+\.\d+\S*", "transformers X", text)


def test_samples_are_what_the_code_prints(dflash: Callable[..., Result], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("HF_HUB_CACHE", str(FIXTURES / "hf-cache" / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    text = README.read_text(encoding="utf-8")
    samples = list(SAMPLE.finditer(text))
    assert len(samples) >= 2, "the README lost its samples"
    produced = {}
    for match in samples:
        result = dflash(*shlex.split(match["args"]))
        # Absolute paths (diff and fix print them, to be checked on another host) as seen from the root.
        produced[match["args"]] = (result.out + result.err).replace(f"{ROOT}{os.sep}", "")
    if os.environ.get("DFLASH_CFG_README") == "record":
        text = SAMPLE.sub(lambda m: f"<!-- sample: {m['args']} -->\n```\n{produced[m['args']]}```\n", text)
        README.write_text(text, encoding="utf-8")
    for match in SAMPLE.finditer(README.read_text(encoding="utf-8")):
        assert _normalise(match["out"]) == _normalise(produced[match["args"]]), match["args"]
    assert metadata.version("dflash-cfg")

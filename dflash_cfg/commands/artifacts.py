"""What the CI formats (GitHub annotations, SARIF) need beyond a report: the repository root paths are
relative to, and the text of each file with findings, for end columns, line hashes and fix replacements."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path

from dflash_cfg.errors import DflashCfgError
from dflash_cfg.model import Artifact, Report
from dflash_cfg.sources import files


def repository_root(start: Path) -> Path:
    """The nearest enclosing git work tree (a `.git` dir or file), else `start` itself."""
    for folder in (start, *start.parents):
        try:
            if files.probe(folder / ".git") != "missing":
                return folder
        except DflashCfgError:  # a parent we may not look into: no root above it that we can know
            break
    return start


def attach(report: Report) -> Report:
    """The report with `root` and each finding file's `artifact`. A file that changed since it was checked
    (its sha256 differs), is gone or is not UTF-8 gets no text: no end columns, line hashes or fixes."""
    root = str(repository_root(Path(os.getcwd())))
    out = []
    for f in report.files:
        if not f.findings:
            out.append(f)
            continue
        text, bom = None, False
        try:
            raw = files.read(Path(f.path))
            if f.sha256 is not None and hashlib.sha256(raw).hexdigest() == f.sha256:
                bom = raw.startswith(b"\xef\xbb\xbf")
                text = raw[3 if bom else 0 :].decode("utf-8")
        except (DflashCfgError, UnicodeDecodeError):
            pass
        absolute = os.path.abspath(f.path)
        inside = os.path.commonpath([absolute, root]) == root
        relative = Path(os.path.relpath(absolute, root)).as_posix() if inside else None
        out.append(dataclasses.replace(f, artifact=Artifact(text, bom, relative)))
    return dataclasses.replace(report, files=tuple(out), root=root)

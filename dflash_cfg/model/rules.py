"""A rule as its documentation shows it: the values the renderers (the `rules` catalogue, SARIF's rule
descriptions, docs) read, so that they never need the Rule itself (lint/), only what it declares and says."""

from __future__ import annotations

from dataclasses import dataclass

from dflash_cfg.model.findings import Severity


@dataclass(frozen=True, kw_only=True)
class ReadDoc:
    """One engine read behind a rule, as `dflash-cfg rules --format json` gives it: the reader's name as prose
    writes it and each field's text, its placeholders expanded. A launch option has no "absent" and a read may
    have no wrong type, so those two may not apply (None); where it looks and its source always do."""

    reader: str
    key: str
    order: str
    default: str | None
    bad_type: str | None
    source: str

    def to_json(self) -> dict[str, str | None]:
        return {
            "reader": self.reader,
            "key": self.key,
            "order": self.order,
            "default": self.default,
            "bad_type": self.bad_type,
            "source": self.source,
        }


@dataclass(frozen=True, kw_only=True)
class RuleDoc:
    """What a rule declares and its documentation says. The texts are the docstring's own, with its reST-style
    ``code`` spans: each renderer makes plain text or Markdown of them."""

    id: str
    name: str
    severity: Severity  # the default
    severities: tuple[Severity, ...]  # every severity a finding may have, highest first
    fix: bool  # some findings carry a safe fix
    own_check: bool  # a check of dflash-cfg's own, not an engine read
    summary: str  # the first paragraph, on one line
    description: str  # the docstring before its examples
    examples: tuple[tuple[str, str], ...]  # (label, text): ("Fail", ...), ("Pass", ...)
    reads: tuple[ReadDoc, ...]  # the engine behaviour behind the rule, in the order it names it
    doc: str  # the whole doc: docstring, Severity and Fix lines, the engine reads described

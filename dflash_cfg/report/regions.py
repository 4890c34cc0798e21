"""Where a finding is in its file, start to end, for the CI formats: values in, values out, no I/O.

A finding carries the line and column of its member's key (or array element). With the file's text
(Artifact.text) the region runs to the end of the member's value; a finding about something the file
lacks (located at an ancestor), about the whole document, or in a file that is not valid JSON covers
the rest of its line. Lines and columns count as the linter's do: lines split at "\\n", columns in
characters (Unicode code points), both from 1; an end column is the column after the last character.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cached_property

from dflash_cfg.jsondoc.pointer import split
from dflash_cfg.jsondoc.spans import Item, Node, Unexpected, tree
from dflash_cfg.model import Finding

_INDEX = re.compile(r"(?:0|[1-9][0-9]*)\Z", re.ASCII)


@dataclass(frozen=True)
class Region:
    start_line: int
    start_column: int
    end_line: int
    end_column: int  # exclusive

    @property
    def one_line(self) -> bool:
        return self.start_line == self.end_line


class Text:
    """One file's text with its line starts and (lazily) its spans."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    @cached_property
    def root(self) -> Node | None:
        try:
            return tree(self.text)
        except (Unexpected, ValueError, RecursionError):  # not JSON json.loads accepts
            return None

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def line_end(self, line: int) -> int:
        """The column after the last character of `line` (its "\\r\\n" or "\\n" not counted)."""
        if not 1 <= line <= len(self.starts):
            return 1
        start = self.starts[line - 1]
        end = self.starts[line] - 1 if line < len(self.starts) else len(self.text)
        if end > start and self.text[end - 1] == "\r":
            end -= 1
        return end - start + 1

    def item(self, pointer: str) -> Item | None:
        """The member or element `pointer` names (the last copy of a repeated key: json keeps it)."""
        node = self.root
        if node is None or not pointer:
            return None
        try:
            tokens = split(pointer)
        except ValueError:
            return None
        found: Item | None = None
        for token in tokens:
            if node.items is None:
                return None
            if node.is_object:
                matches = [i for i in node.items if i.key == token]
                if not matches:
                    return None
                found = matches[-1]
            else:
                if not _INDEX.match(token) or int(token) >= len(node.items):
                    return None
                found = node.items[int(token)]
            node = found.value
        return found

    def region(self, finding: Finding) -> Region | None:
        if finding.line is None:
            return None
        line, column = finding.line, finding.column or 1
        item = self.item(finding.pointer)
        if item is not None and self.position(item.start) == (line, column):
            return Region(line, column, *self.position(item.value.end))
        return Region(line, column, line, max(column, self.line_end(line)))

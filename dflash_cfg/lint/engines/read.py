"""One row of the engine reads (`Read`), how a row says it was verified (its source's prefix, `MARKERS`), and the
row as a rule's documentation shows it (`describe`). The rows themselves are in the module of their reader."""

from __future__ import annotations

from dataclasses import dataclass

from dflash_cfg.lint.citations import with_lines
from dflash_cfg.lint.cited_lines import LINES, VERSIONS
from dflash_cfg.model import NAMES, Engine, ReadDoc
from dflash_cfg.pinned import expand, named

# The engine versions the suite runs (tests/engines/requirements.lock.txt); a row checked against them cites the
# installed code (`path:qualname`) after this prefix.
CHECKED = (
    f"checked by execution against {named('vllm')}, {named('sglang')}, {named('speculators')} "
    "(tests/engines/test_truth.py):"
)

# The transformers rows checked by execution: the library both engines load config.json through, in the version
# pinned with them.
TRANSFORMERS_CHECKED = (
    f"checked by execution against {named('transformers')}, as pinned with the engines (tests/engines/test_truth.py):"
)
# A row whose behaviour cannot be executed here (no GPU, no weights, no target forward pass): it says why and
# cites the code of the pinned versions instead, read by hand.
UNEXECUTABLE = "not executable on this CPU-only suite"
# A row not yet checked by execution, with the code it was transcribed from: said, never silent.
UNCHECKED = "not yet checked by execution; transcribed from"
# Every row's source starts with one of these (tests/lint/rules/test_registry.py holds it).
MARKERS = (CHECKED, TRANSFORMERS_CHECKED, UNEXECUTABLE, UNCHECKED)


def unexecutable(why: str) -> str:
    """The source prefix of a row that cannot be executed here, saying why."""
    return f"{UNEXECUTABLE} ({why}); read in the installed {named('vllm')} / {named('sglang')} code:"


NOT_APPLICABLE = "-"  # a field that does not apply to the row (a launch option has no "absent" in the file)


@dataclass(frozen=True, kw_only=True)
class Read:
    reader: Engine  # who reads the file: an engine, vLLM's speculators translator, or transformers
    key: str
    order: str  # where it looks, first to last
    default: str  # when absent
    bad_type: str  # what a value of the wrong type (or a wrong value) does
    source: str

    @property
    def name(self) -> str:
        """The row as reports name it: the reader as prose names it, then the key ("vLLM:target_layer_ids")."""
        return f"{NAMES[self.reader]}:{self.key}"

    def documented(self) -> ReadDoc:
        """The row as a rule's documentation gives it as fields (`dflash-cfg rules --format json`): the
        placeholders expanded, a field that does not apply None."""

        def applies(value: str) -> str | None:
            return None if value == NOT_APPLICABLE else expand(value)

        return ReadDoc(
            reader=expand(NAMES[self.reader]),
            key=expand(self.key),
            order=expand(self.order),
            default=applies(self.default),
            bad_type=applies(self.bad_type),
            source=expand(self.source),
        )


def describe(read: Read) -> str:
    """One read as a paragraph of a rule's documentation; fields that do not apply are left out."""
    parts = [f"{NAMES[read.reader]} reads {read.key}: {read.order}."]
    if read.default != NOT_APPLICABLE:
        parts.append(f"Absent: {read.default}.")
    if read.bad_type != NOT_APPLICABLE:
        parts.append(f"Wrong type or value: {read.bad_type}.")
    parts.append(f"Source: {with_lines(read.source, LINES, VERSIONS)}.")
    return expand(" ".join(parts))


def config_keys(reader: Engine) -> Read:
    """The row of an engine's recorded config-key reads (DF011): the same for every engine, the data per engine."""
    return Read(
        reader=reader,
        key="config.json keys",
        order="the top-level and dflash_config keys its config code asks for (attributes of the config objects and "
        "items of the dicts it is handed, present or not) and those the config class it loads the file through "
        "takes; every other key of those two places it ignores",
        default=NOT_APPLICABLE,
        bad_type=NOT_APPLICABLE,
        source=CHECKED + " every fixture drafter run with DFLASH_ADAPTER_KEYS=1, which records the reads "
        "(dflash_cfg/adapters/dflash_adapter_keys.py), written to dflash_cfg/lint/engine_keys.py by "
        "./dev engines --keys and held to the installed engines by tests/engines/test_engine_keys.py",
    )

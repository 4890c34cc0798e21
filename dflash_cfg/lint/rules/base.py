"""The rule contract: a rule is a documented function from a Context to Problems.

A rule never sees file names or line numbers; the linter attaches those and the rule's default severity,
and holds every finding to what `@rule` declares (its severities, whether it has a fix). A rule's docstring
is its user documentation (shown by `dflash-cfg rules`): a first paragraph that sums it up, the explanation,
and a last paragraph of examples, one per line ("Fail: ...", "Pass: ...").
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

from dflash_cfg.jsondoc.document import Document
from dflash_cfg.lint.engines.read import Read
from dflash_cfg.lint.releases import Change, Since
from dflash_cfg.model import (
    Effective,
    EngineCheck,
    HubFile,
    Integrity,
    Kind,
    Launch,
    Launched,
    Problem,
    RuleDoc,
    Severity,
    Target,
    Weights,
)
from dflash_cfg.pinned import expand

if TYPE_CHECKING:
    from dflash_cfg.lint.linter import Inputs  # the linter imports the rules: a cycle at run time
    from dflash_cfg.lint.published import Judgement
    from dflash_cfg.model.catalog import Published

Needs = Literal[
    "bytes", "data", "effective", "target", "weights", "upstream", "integrity", "launch", "engine", "catalog"
]


@dataclass(frozen=True, kw_only=True)
class Context:
    """Everything a rule may look at for one file: the Inputs it was gathered into, whole (a rule reads them
    as `ctx.target`, `ctx.upstream`, ...), and what the linter made of them."""

    inputs: Inputs
    # The document the rules read: `inputs.doc`, or what an engine translates it into (the speculators format).
    doc: Document
    kind: Kind
    # The file as written, when `doc.data` is what an engine translates it into (the speculators format).
    written: dict[str, Any] | None = None
    # The file against the catalog of published drafters (lint.published), when no upstream copy was compared.
    published: Judgement | None = None
    # The catalog's entry for the drafter this file is (its upstream repo, or the published revision it matches).
    base: Published | None = None

    # What was read, as the rules have always asked for it: the fields of `inputs`, by name.
    @property
    def target(self) -> Target | None:
        return self.inputs.target

    @property
    def weights(self) -> Weights | None:
        return self.inputs.weights

    @property
    def weights_error(self) -> str | None:
        return self.inputs.weights_error

    @property
    def view(self) -> Effective | None:
        """What the engine's config class made of the file (None: not asked for)."""
        return self.inputs.view

    @property
    def upstream(self) -> HubFile | None:
        return self.inputs.upstream

    @property
    def upstream_doc(self) -> Document | None:
        return self.inputs.upstream_doc

    @property
    def upstream_view(self) -> Effective | None:
        return self.inputs.upstream_view

    @property
    def integrity(self) -> Integrity | None:
        return self.inputs.integrity

    @property
    def launch(self) -> Launch | None:
        """The engine command line (preflight)."""
        return self.inputs.launch

    @property
    def engine(self) -> EngineCheck | None:
        """What the launch's own engine answered (preflight's engine step; never `check`)."""
        return self.inputs.engine

    @property
    def target_repo(self) -> str | None:
        """The Hub repo id of the target, when it is known (a Hub id, a cache snapshot)."""
        return self.inputs.target_repo

    @property
    def data(self) -> dict[str, Any]:
        """The file's JSON object (rules that need "data" run only when it is one; `doc.raw` is its bytes)."""
        data = self.doc.data
        assert isinstance(data, dict)
        return data

    @property
    def effective(self) -> Effective:
        """The engine's view, for rules that declare they need it (they run only when it is there)."""
        assert self.view is not None
        return self.view

    @property
    def upstream_data(self) -> dict[str, Any] | None:
        """Upstream's JSON object, when --from-hub fetched one that is an object."""
        data = self.upstream_doc.data if self.upstream_doc is not None else None
        return data if isinstance(data, dict) else None

    @property
    def dflash(self) -> dict[str, Any]:
        block = self.data.get("dflash_config")
        return block if isinstance(block, dict) else {}

    def draft_value(self, name: str) -> Any:
        """dflash_config first, then the top level: the order newer loaders read in."""
        return self.dflash[name] if name in self.dflash else self.data.get(name)

    def draft_pointer(self, name: str) -> str:
        """Where `draft_value(name)` comes from: in dflash_config when it is there, else the top level
        (also where a finding about a value the file lacks points)."""
        return f"/dflash_config/{name}" if name in self.dflash else f"/{name}"

    def taps(self) -> list[int] | None:
        """target_layer_ids when they are a usable list of ints, else None."""
        value = self.draft_value("target_layer_ids")
        if isinstance(value, list) and value and all(is_int(v) for v in value):
            return value
        return None

    def num_target_layers(self) -> int | None:
        value = self.draft_value("num_target_layers")
        return value if is_int(value) and value > 0 else None

    def layer_types(self) -> list[str] | None:
        value = self.data.get("layer_types")
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
        return None

    def int_field(self, name: str) -> int | None:
        value = self.data.get(name)
        return value if is_int(value) else None


SHOW_LIMIT = 120


def show(value: Any, limit: int = SHOW_LIMIT) -> str:
    """A value from the file as a message shows it: JSON, the file's own language (`null`, `true`,
    `["a"]`), cut to `limit` characters with "…" (a hostile list may be huge)."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # an integer too long to print, or nesting too deep
        text = f"(a JSON {type(value).__name__} too large to show)"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def nemotron_35(data: Mapping[str, Any]) -> bool:
    """Whether SGLang takes the file for its Nemotron 3.5 layout (is_nemotron_35_draft_config, the same tests in
    the same order): a DFlash or Qwen3 DSpark class with its own embeddings and no lm_head, quantized W4A16_NVFP4,
    eagle aux ids one past the taps, and sample_from_anchor false. On it SGLang reads keys it reads nowhere else
    (the top-level attention_sink_bias, dflash_config.swa_window_size as the window's fallback)."""
    archs = data.get("architectures")
    if not isinstance(archs, list) or not {"DFlashDraftModel", "Qwen3DSparkModel"} & {
        a for a in archs if isinstance(a, str)
    }:
        return False
    if not data.get("has_embed_tokens") or data.get("has_lm_head"):
        return False
    quant = data.get("quantization_config")
    if not isinstance(quant, dict) or quant.get("quant_algo") != "W4A16_NVFP4":
        return False
    block = data.get("dflash_config")
    block = block if isinstance(block, dict) else {}
    taps, aux = (
        block.get("target_layer_ids", data.get("target_layer_ids")),
        data.get("eagle_aux_hidden_state_layer_ids"),
    )
    if not isinstance(taps, list) or not isinstance(aux, list) or not taps or len(taps) != len(aux):
        return False
    if not all(is_int(t) and is_int(a) and t + 1 == a for t, a in zip(taps, aux, strict=True)):
        return False
    return block.get("sample_from_anchor", data.get("sample_from_anchor", True)) is False


def dspark(data: Mapping[str, Any]) -> bool:
    """Whether `architectures` names a DSpark drafter class (a speculative method of its own: vLLM's `dspark`)."""
    archs = data.get("architectures")
    return isinstance(archs, list) and any(isinstance(a, str) and "DSpark" in a for a in archs)


def trtllm_mha_enabled(data: Mapping[str, Any], view: Effective | None) -> bool:
    """Whether SGLang keeps a DFlash draft on the trtllm_mha attention backend when the launch asks for it
    (_resolve_dflash_draft_attention_backend): every layer sliding (the layer types its config class gives, as
    many as its layers) or the draft explicitly causal (`is_causal` true); otherwise it falls back to another."""
    values = view.values if view is not None and view.values is not None else data
    types, layers = values.get("layer_types"), values.get("num_hidden_layers")
    all_sliding = isinstance(types, list) and len(types) == layers and set(types) == {"sliding_attention"}
    return (bool(types) and all_sliding) or data.get("is_causal") is True


_DECIMAL = re.compile(r"[+-]?[0-9]+")


def as_int(value: Any) -> int | None:
    """`value` as SGLang's `int()` reads an integer field (vLLM reads none of those it is used for): an int,
    an integral float (16.0) or a string of decimal digits ("36"); None for anything else (bools too)."""
    if is_int(value):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        return int(value)
    return None


Check = Callable[[Context], Iterable[Problem]]


@dataclass(frozen=True, kw_only=True)
class LaunchCheck:
    """A row of docs/launch-checks.md: a check an engine makes between a launch and its drafter, where its code
    is, and what preflight does about it (naming the rules). Declared on the rule that answers it, so the page
    cannot miss a launch rule; the rows of checks no rule answers stay in the page's template."""

    engine: Launched
    check: str
    where: str
    preflight: str

    @property
    def row(self) -> str:
        return f"| {self.check} | {self.where} | {self.preflight} |"


@dataclass(frozen=True, kw_only=True)
class Rule:
    id: str
    name: str
    severity: Severity  # the default: a finding's severity unless its Problem gives another
    needs: tuple[Needs, ...]
    check: Check = field(compare=False)
    kinds: tuple[Kind, ...] = ("dflash", "dflash2", "speculators")
    # The engine behaviour behind the rule: rows of lint.engines (`vllm.MASK_TOKEN_ID`), in the order it names them.
    reads: tuple[Read, ...] = ()
    # Every severity a finding of this rule may have, highest first (the default among them), and whether
    # a finding may carry a fix (always a safe one). The linter refuses a finding outside the declaration,
    # so the doc sections built from it cannot drift from what the rule does.
    severities: tuple[Severity, ...] = ()
    fix: bool = False
    # A check of dflash-cfg's own rather than an engine read (the schema, the comparison with upstream, the
    # lock): such a rule names no `reads`, every other rule names the engine behaviour behind it.
    own_check: bool = False
    # The engine release changes the rule knows: some findings hold from `since`'s release on, some before
    # `until`'s (both: it says what each side does). The linter refuses a finding scoped to a release bound the
    # rule does not declare, and the release report lists each change with the rules declaring it.
    since: Change | None = None
    until: Change | None = None
    checks: tuple[LaunchCheck, ...] = ()  # its rows of docs/launch-checks.md

    @property
    def changes(self) -> tuple[Change, ...]:
        return tuple(dict.fromkeys(c for c in (self.since, self.until) if c is not None))

    def bounds(self, op: str) -> tuple[Since, ...]:
        """The release bounds a finding of this rule may be scoped by with `op` (">=": since, "<": until)."""
        sides = {">=": (self.since,), "<": (self.until,), "==": (self.since, self.until)}.get(op, ())
        return tuple(c.since for c in sides if c is not None)

    @property
    def doc(self) -> str:
        """The docstring (its last paragraph the examples), the Severity and Fix lines beside the examples,
        then the engine reads behind the rule with their sources. The lines and the reads come from the
        declaration, so they say what the linter holds the rule to."""
        from dflash_cfg.lint import engines

        text = self.docstring + "\n" + self.severity_line + "\n" + self.fix_line
        behind = [engines.describe(read) for read in self.reads]
        return text + "\n\nWhat the engines do:\n" + "\n".join(f"- {b}" for b in behind) if behind else text

    @property
    def docstring(self) -> str:
        return expand(inspect.cleandoc(self.check.__doc__ or ""))

    @property
    def summary(self) -> str:
        return " ".join(self.docstring.split("\n\n", 1)[0].split())

    @property
    def description(self) -> str:
        """The docstring before its examples (the summary its first paragraph)."""
        head, _ = _split_examples(self.docstring)
        return head

    @property
    def examples(self) -> tuple[tuple[str, str], ...]:
        """The examples as (label, text): the label "Fail", "Fail (info)", "Warn", "Pass", ...; the text as
        written, its lines joined."""
        _, tail = _split_examples(self.docstring)
        pairs: list[tuple[str, str]] = []
        for line in tail.splitlines():
            start = _EXAMPLE.match(line)
            if start:
                pairs.append((start.group(1), line[start.end() :].strip()))
            elif pairs:  # an example wrapped over several lines
                pairs[-1] = (pairs[-1][0], f"{pairs[-1][1]} {line.strip()}")
        return tuple(pairs)

    @property
    def severity_line(self) -> str:
        others = [s.label for s in self.severities if s != self.severity]
        also = f"; {' or '.join(others)} for some findings" if others else ""
        return f"Severity: {self.severity.label}{also}"

    @property
    def fix_line(self) -> str:
        return "Fix: safe, for some findings (``dflash-cfg fix`` applies it)" if self.fix else "Fix: none"

    def documented(self) -> RuleDoc:
        """The rule as its documentation shows it: the values the renderers take instead of the Rule."""
        return RuleDoc(
            id=self.id,
            name=self.name,
            severity=self.severity,
            severities=self.severities,
            fix=self.fix,
            own_check=self.own_check,
            summary=self.summary,
            description=self.description,
            examples=self.examples,
            reads=tuple(read.documented() for read in self.reads),
            doc=self.doc,
        )

    def run(self, ctx: Context) -> Iterator[Problem]:
        yield from self.check(ctx)


# A line that starts an example of the docstring's last paragraph: "Fail:", "Fail (info):", "Pass:", "Warn:".
_EXAMPLE = re.compile(r"((?:Fail|Warn|Pass)(?: \([a-z ]+\))?): ")


def _split_examples(docstring: str) -> tuple[str, str]:
    """(the docstring before its examples, the examples paragraph); no examples: (docstring, "")."""
    head, _, last = docstring.rpartition("\n\n")
    return (head, last) if head and _EXAMPLE.match(last) else (docstring, "")


ALL_KINDS: tuple[Kind, ...] = ("dflash", "dflash2", "speculators")
ENGINE_FORMAT: tuple[Kind, ...] = ("dflash", "dflash2")  # rules about keys only the z-lab/engine format has


def rule(
    rule_id: str,
    name: str,
    severity: Severity,
    *needs: Needs,
    kinds: tuple[Kind, ...] = ALL_KINDS,
    reads: tuple[Read, ...] = (),
    severities: tuple[Severity, ...] = (),
    fix: bool = False,
    own_check: bool = False,
    since: Change | None = None,
    until: Change | None = None,
    checks: tuple[LaunchCheck, ...] = (),
) -> Callable[[Check], Rule]:
    """Make `check` a Rule. `severity` is the default; `severities` adds the others its findings may have
    (a Problem that sets its own); `fix`: some findings carry a safe fix; `own_check`: a check of
    dflash-cfg's own, which names no engine reads; `since`/`until`: the engine release changes it knows;
    `checks`: the engine launch checks it answers (its rows of docs/launch-checks.md)."""

    declared = tuple(sorted({severity, *severities}, reverse=True))

    def wrap(check: Check) -> Rule:
        return Rule(
            id=rule_id,
            name=name,
            severity=severity,
            needs=needs or ("data",),
            check=check,
            kinds=kinds,
            reads=reads,
            severities=declared,
            fix=fix,
            own_check=own_check,
            since=since,
            until=until,
            checks=checks,
        )

    return wrap

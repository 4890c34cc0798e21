"""One table of rule cases, run through the real CLI (`check --format json`, or `preflight` for the launch
rules): every rule in the catalogue has at least one row that makes it fire.

A row names a real published drafter config (a base), a small change to it, and what else the check gets:
a target dir from fixtures/targets, safetensors weights written beside the config, the upstream file in
an offline Hugging Face cache (`--from-hub`), extra options, or a launch command. It lists the
(rule, pointer, severity) findings that must appear; a "pass" row lists rules that must not fire.
Adding a rule means one rule-module edit plus rows here.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from checkpoints import HEAD_DIM, HIDDEN, LAYERS, save, small_config, small_shapes
from helpers import FIXTURES, Result, offline_hub_cache

Run = Callable[..., Result]
Mutation = Callable[[dict[str, Any]], object]
Expected = tuple[str, str, str]  # (rule id, JSON pointer, severity)

UPSTREAM = FIXTURES / "upstream"
TARGETS = FIXTURES / "targets"
TAPS = "/dflash_config/target_layer_ids"
MASK = "/dflash_config/mask_token_id"
ERR, WARN, INFO = "error", "warning", "info"


def _load(name: str) -> dict[str, Any]:
    data = json.loads((UPSTREAM / name / "config.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


# base name -> (the published config, its Hub repo)
BASES: dict[str, tuple[dict[str, Any], str]] = {
    # 6 draft layers (5 sliding + 1 full) reading 8 taps of a 32-layer target; rope_parameters only.
    "v1": (_load("z-lab__Qwen3.5-4B-DFlash"), "z-lab/Qwen3.5-4B-DFlash"),
    # Legacy layout: top-level block_size, flat rope_theta, five full_attention layers (Qwen3-4B target).
    "legacy": (_load("z-lab__Qwen3-4B-DFlash-b16"), "z-lab/Qwen3-4B-DFlash-b16"),
    # DFlash2: five sliding layers, conv/selector keys in dflash_config.
    "dflash2": (_load("z-lab__Qwen3.8-27B-DFlash2"), "z-lab/Qwen3.8-27B-DFlash2"),
    # The upstream file of the incident (Qwen3.6-27B target, 64 layers, composite config).
    "q36": (_load("z-lab__Qwen3.6-27B-DFlash"), "z-lab/Qwen3.6-27B-DFlash"),
    # MiMo-V2.5-Pro's drafter: no layer_types, dflash_config.use_swa with swa_window_size (A, byte-verified).
    "mimo": (
        json.loads((UPSTREAM / "XiaomiMiMo__MiMo-V2.5-Pro-FP4-DFlash" / "dflash" / "config.json").read_text("utf-8")),
        "XiaomiMiMo/MiMo-V2.5-Pro-FP4-DFlash",
    ),
    # poolside's Laguna drafter: DFlashLagunaForCausalLM, model_type laguna, five sliding layers (C).
    "laguna": (_load("poolside__Laguna-XS-2.1-DFlash"), "poolside/Laguna-XS-2.1-DFlash"),
    # A speculators-format file in the layout of the speculators library's DFlashSpeculatorConfig, with the
    # b16 drafter as its decoder (no published speculators DFlash config.json was found: see PROVENANCE.md).
    "speculators": (
        {
            "architectures": ["DFlashSpeculator"],
            "speculators_model_type": "dflash",
            "aux_hidden_state_layer_ids": [
                t + 1 for t in _load("z-lab__Qwen3-4B-DFlash-b16")["dflash_config"]["target_layer_ids"]
            ],
            "mask_token_id": 151669,
            "block_size": 16,
            "draft_vocab_size": 151936,
            "speculators_config": {
                "algorithm": "dflash",
                "proposal_methods": [{"proposal_type": "dflash", "speculative_tokens": 15}],
                "default_proposal_method": "dflash",
                "verifier": {"name_or_path": "Qwen/Qwen3-4B", "architectures": ["Qwen3ForCausalLM"]},
            },
            "transformer_layer_config": {
                k: v
                for k, v in _load("z-lab__Qwen3-4B-DFlash-b16").items()
                if k not in ("architectures", "auto_map", "block_size", "dflash_config", "num_target_layers")
            },
        },
        "z-lab/Qwen3-4B-DFlash-b16",
    ),
    # The b16 config shrunk to match checkpoints.small_shapes() (for the weights rules).
    "small": (small_config(), "z-lab/Qwen3-4B-DFlash-b16"),
}
V1_TAPS: list[int] = BASES["v1"][0]["dflash_config"]["target_layer_ids"]


def setting(*path: str | int, value: Any) -> Mutation:
    def apply(data: dict[str, Any]) -> None:
        node: Any = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return apply


def all_of(*steps: Mutation) -> Mutation:
    def apply(data: dict[str, Any]) -> None:
        for step in steps:
            step(data)

    return apply


def dropping(*path: str) -> Mutation:
    def apply(data: dict[str, Any]) -> None:
        node: Any = data
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return apply


def vllm(
    drafter: Path, target: Path, *, tokens: int = 15, method: str = "dflash", extra: tuple[str, ...] = ()
) -> list[str]:
    spec = json.dumps({"method": method, "model": str(drafter), "num_speculative_tokens": tokens})
    return ["vllm", "serve", str(target), "--speculative-config", spec, *extra]


def serialise(data: Any) -> str:
    return json.dumps(data, indent=2) + "\n"


def lock_then_replace(folder: Path, dflash: Run) -> None:
    """`fix` repairs the file and records it in .dflash-cfg.lock; then other bytes land on it."""
    original = (folder / "config.json").read_bytes()
    broken = json.loads(original)
    broken["use_sliding_window"] = False
    (folder / "config.json").write_text(serialise(broken), encoding="utf-8")
    assert dflash("fix", folder, "--yes").code == 0
    assert (folder / ".dflash-cfg.lock").exists()
    (folder / "config.json").write_bytes(original)


def link_into_cache_blob(folder: Path, dflash: Run) -> None:
    """config.json becomes a symlink straight at a Hugging Face cache blob (not a snapshot)."""
    data = (folder / "config.json").read_bytes()
    blob = folder.parent / "hub" / "models--z-lab--Qwen3.5-4B-DFlash" / "blobs" / hashlib.sha256(data).hexdigest()
    blob.parent.mkdir(parents=True)
    blob.write_bytes(data)
    (folder / "config.json").unlink()
    (folder / "config.json").symlink_to(blob)


def lfs_pointer(size: int) -> bytes:
    """A Git LFS pointer file, as a clone without `git lfs pull` has in place of model.safetensors."""
    oid = hashlib.sha256(b"%d" % size).hexdigest()
    return b"version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n" % (oid.encode(), size)


@dataclass(frozen=True)
class Case:
    name: str
    base: str = "v1"
    change: Mutation | None = None
    text: Callable[[str], bytes] | None = None  # edits the serialised (changed) base; or the raw bytes
    raw: bytes | None = None
    expect: tuple[Expected, ...] = ()
    absent: tuple[str, ...] = ()  # rule ids that must not fire (pass rows)
    target: str | None = None  # a dir under fixtures/targets, given as --target (or the launch's target)
    weights: dict[str, tuple[int, ...]] | bytes | None = None  # model.safetensors beside the config
    hub: bool = False  # the unchanged base in an offline Hugging Face cache; check --from-hub its repo
    options: tuple[str, ...] = ()
    setup: Callable[[Path, Run], None] | None = None  # after the files are written, before the check
    launch: Callable[[Path, Path], list[str]] | None = None  # preflight this command (drafter, target)


def row(name: str, base: str = "v1", change: Mutation | None = None, *expect: Expected, **more: Any) -> Any:
    """A table row; the expected findings follow `change`, or come as expect=(...)."""
    expect = (*expect, *more.pop("expect", ()))
    return pytest.param(Case(name, base, change, expect=expect, **more), id=name)


CASES = [
    # --- DF0xx: the file
    row("DF001-trailing-comma", raw=b'{"architectures": ["DFlashDraftModel"],}\n', expect=(("DF001", "", ERR),)),
    row(
        "DF002-duplicate-key",
        text=lambda t: t.replace("{", '{\n  "vocab_size": 1,', 1).encode(),
        expect=(("DF002", "/vocab_size", ERR),),
    ),
    row("DF003-utf8-bom", text=lambda t: b"\xef\xbb\xbf" + t.encode(), expect=(("DF003", "", ERR),)),
    row("DF004-nan", "v1", setting("rms_norm_eps", value=float("nan")), ("DF004", "/rms_norm_eps", ERR)),
    row("DF005-number", raw=b"42\n", expect=(("DF005", "", ERR),)),
    row("DF010-string-for-int", "v1", setting("hidden_size", value="2560"), ("DF010", "/hidden_size", ERR)),
    # --- DF1xx: the DFlash block
    row("DF101-missing", "v1", dropping("dflash_config"), ("DF101", "/dflash_config", ERR)),
    row("DF102-missing", "v1", dropping("dflash_config", "target_layer_ids"), ("DF102", TAPS, ERR)),
    row(
        "DF103-decreasing",
        "v1",
        setting("dflash_config", "target_layer_ids", value=V1_TAPS[::-1]),
        ("DF103", TAPS, ERR),
    ),
    row(
        "DF104-tap-equals-depth",
        "v1",
        setting("dflash_config", "target_layer_ids", 7, value=32),
        ("DF104", f"{TAPS}/7", ERR),
    ),
    row("DF104-pass-last-valid", "v1", setting("dflash_config", "target_layer_ids", 7, value=31), absent=("DF104",)),
    row(
        "DF105-last-layer",
        "v1",
        setting("dflash_config", "target_layer_ids", 7, value=31),
        ("DF105", f"{TAPS}/7", WARN),
    ),
    row("DF106-shifted", "v1", setting("dflash_config", "target_layer_ids", 7, value=28), ("DF106", TAPS, INFO)),
    row("DF106-pass-published", "v1", absent=("DF106",)),
    row(
        "DF107-unshifted",
        "v1",
        setting("eagle_aux_hidden_state_layer_ids", value=list(V1_TAPS)),
        ("DF107", "/eagle_aux_hidden_state_layer_ids", ERR),
    ),
    row("DF111-missing", "v1", dropping("dflash_config", "mask_token_id"), ("DF111", MASK, ERR)),
    row("DF112-equals-vocab", "v1", setting("dflash_config", "mask_token_id", value=248320), ("DF112", MASK, ERR)),
    row("DF121-disagree", "v1", setting("block_size", value=8), ("DF121", "/dflash_config/block_size", WARN)),
    row("DF121-pass-both-agree", "v1", setting("block_size", value=16), absent=("DF121",)),
    row("DF122-too-small", "v1", setting("num_target_layers", value=4), ("DF122", "/num_target_layers", ERR)),
    row("DF131-model-type", "v1", setting("model_type", value="dflash"), ("DF131", "/model_type", ERR)),
    row("DF151-gelu", "v1", setting("hidden_act", value="gelu"), ("DF151", "/hidden_act", ERR)),
    row("DF152-laguna-no-draft-vocab", "laguna", dropping("draft_vocab_size"), ("DF152", "/draft_vocab_size", ERR)),
    row("DF152-pass-published-laguna", "laguna", absent=("DF152", "DF151", "DF131", "DF301")),
    row(
        "DF153-aux-hidden-state-off",
        "v1",
        setting("dflash_config", "use_aux_hidden_state", value=False),
        ("DF153", "/dflash_config/use_aux_hidden_state", ERR),
    ),
    row(
        "DF154-target-hidden-size-differs",
        "v1",
        setting("target_hidden_size", value=4096),
        ("DF154", "/target_hidden_size", ERR),
    ),
    row(
        "DF161-no-aux-ids",
        "speculators",
        dropping("aux_hidden_state_layer_ids"),
        ("DF161", "/aux_hidden_state_layer_ids", ERR),
    ),
    row(
        "DF103-speculators-aux-zero",
        "speculators",
        setting("aux_hidden_state_layer_ids", 0, value=0),
        ("DF103", "/aux_hidden_state_layer_ids/0", ERR),
    ),
    row(
        "DF141-conv-group-missing",
        "dflash2",
        dropping("dflash_config", "conv_group_size"),
        ("DF141", "/dflash_config/conv_group_size", ERR),
    ),
    row("DF141-pass-v1", "v1", absent=("DF141",)),
    # --- DF2xx: attention
    row(
        "DF201-one-too-many", "v1", lambda d: d["layer_types"].append("full_attention"), ("DF201", "/layer_types", ERR)
    ),
    row("DF202-swa", "v1", setting("layer_types", 0, value="swa"), ("DF202", "/layer_types/0", ERR)),
    row("DF203-window-null", "v1", setting("sliding_window", value=None), ("DF203", "/sliding_window", ERR)),
    row("DF204-false", "v1", setting("use_sliding_window", value=False), ("DF204", "/use_sliding_window", ERR)),
    row(
        "DF205-all-full",
        "v1",
        setting("layer_types", value=["full_attention"] * len(BASES["v1"][0]["layer_types"])),
        ("DF205", "/layer_types", WARN),
    ),
    row("DF206-absent", "v1", dropping("layer_types"), ("DF206", "/layer_types", WARN)),
    row("DF207-is-causal-true", "dflash2", setting("is_causal", value=True), ("DF207", "/is_causal", ERR)),
    row(
        "DF208-use-swa-no-window",
        "v1",
        all_of(dropping("layer_types"), dropping("sliding_window"), setting("dflash_config", "use_swa", value=True)),
        ("DF208", "/dflash_config/swa_window_size", ERR),
    ),
    row(
        "DF209-windows-differ",
        "v1",
        setting("dflash_config", "swa_window_size", value=1024),
        ("DF209", "/dflash_config/swa_window_size", ERR),
    ),
    row("DF209-mimo-use-swa", "mimo", None, ("DF209", "/dflash_config/use_swa", WARN)),
    row(
        "DF210-sink-as-string",
        "mimo",
        setting("dflash_config", "attention_sink_bias", value="true"),
        ("DF210", "/dflash_config/attention_sink_bias", ERR),
    ),
    row(
        "DF210-sink-only-top-level",
        "v1",
        setting("add_swa_attention_sink_bias", value=True),
        ("DF210", "/add_swa_attention_sink_bias", ERR),
    ),
    row("DF210-pass-mimo", "mimo", absent=("DF210",)),
    row("DF211-not-neox", "v1", setting("rope_is_neox_style", value=False), ("DF211", "/rope_is_neox_style", WARN)),
    row(
        "DF212-value-scale-string",
        "v1",
        setting("dflash_config", "attention_value_scale", value="0.5"),
        ("DF212", "/dflash_config/attention_value_scale", ERR),
    ),
    row(
        "DF2-pass-published-dflash2", "dflash2", absent=("DF201", "DF202", "DF203", "DF204", "DF205", "DF206", "DF207")
    ),
    # --- DF3xx: through the installed transformers' Qwen3Config
    row("DF301-head-dim-null", "v1", setting("head_dim", value=None), ("DF301", "", ERR)),
    row(
        "DF302-kv-heads-null", "v1", setting("num_key_value_heads", value=None), ("DF302", "/num_key_value_heads", ERR)
    ),
    row("DF303-top-level-mask-out-of-vocab", "v1", setting("mask_token_id", value=248320), ("DF303", "", WARN)),
    row(
        "DF304-flat-and-nested-disagree",
        "v1",
        setting("rope_theta", value=1000000),
        ("DF304", "/rope_parameters/rope_theta", ERR),
    ),
    row("DF304-pass-legacy-flat", "legacy", absent=("DF304",)),
    # --- DF4xx: against the target model (--target)
    row("DF401-wider-target", "legacy", target="Qwen__Qwen3-8B", expect=(("DF401", "/hidden_size", ERR),)),
    row("DF402-smaller-vocab", "v1", target="Qwen__Qwen3-4B", expect=(("DF402", "/vocab_size", ERR),)),
    row("DF403-deeper-target", "v1", target="Qwen__Qwen3-4B", expect=(("DF403", "/num_target_layers", WARN),)),
    row(
        "DF404-mask-on-image-token",
        "q36",
        setting("dflash_config", "mask_token_id", value=248056),
        ("DF404", MASK, WARN),
        target="Qwen__Qwen3.6-27B",
    ),
    row(
        "DF404-mask-on-added-non-special-token",
        "q36",
        setting("dflash_config", "mask_token_id", value=248064),
        ("DF404", MASK, WARN),
        target="Qwen__Qwen3.6-27B",
    ),
    row(
        "DF405-taps-past-target",
        "legacy",
        setting("dflash_config", "target_layer_ids", value=[1, 10, 20, 30, 36, 40]),
        ("DF405", f"{TAPS}/4", ERR),
        ("DF405", f"{TAPS}/5", ERR),
        target="Qwen__Qwen3-4B",
    ),
    row(
        "DF406-tap-on-last-qwen35-layer",
        "q36",
        setting("dflash_config", "target_layer_ids", value=[1, 17, 33, 49, 63]),
        ("DF406", f"{TAPS}/4", ERR),
        target="Qwen__Qwen3.6-27B",
    ),
    row("DF4-pass-own-target", "legacy", target="Qwen__Qwen3-4B", absent=("DF401", "DF402", "DF403", "DF404", "DF405")),
    row(
        "DF4-pass-q36-own-target",
        "q36",
        target="Qwen__Qwen3.6-27B",
        absent=("DF401", "DF402", "DF403", "DF404", "DF405", "DF406"),
    ),
    # --- DF5xx: against the safetensors weights beside the config
    row("DF500-three-bytes", "small", weights=b"\x01\x02\x03", expect=(("DF500", "", ERR),)),
    row("DF501-fc-for-eight-taps", "small", weights=small_shapes(taps=8), expect=(("DF501", TAPS, ERR),)),
    row(
        "DF502-extra-layer",
        "small",
        weights=small_shapes(layers=LAYERS + 1),
        expect=(("DF502", "/num_hidden_layers", ERR),),
    ),
    row(
        "DF503-intermediate-size",
        "small",
        setting("intermediate_size", value=256),
        ("DF503", "/intermediate_size", ERR),
        weights=small_shapes(),
    ),
    row(
        "DF503-head-dim",
        "small",
        setting("head_dim", value=HEAD_DIM * 8),
        ("DF503", "/head_dim", ERR),
        weights=small_shapes(),
    ),
    row(
        "DF504-lfs-pointer",
        "small",
        weights=lfs_pointer(400_000),
        expect=(("DF504", "", INFO),),
        absent=("DF500", "DF501", "DF502", "DF503", "DF505"),
    ),
    row("DF505-lfs-pointer-too-small", "small", weights=lfs_pointer(1_000), expect=(("DF505", "", ERR),)),
    row(
        "DF5-pass-consistent",
        "small",
        weights=small_shapes(),
        absent=("DF500", "DF501", "DF502", "DF503", "DF504", "DF505"),
    ),
    # --- DF6xx: against the upstream file (--from-hub, from an offline Hugging Face cache)
    row(
        "DF601-incident-mask",
        "q36",
        setting("dflash_config", "mask_token_id", value=248064),
        ("DF601", MASK, ERR),
        hub=True,
    ),
    row(
        "DF602-non-critical-edit",
        "q36",
        setting("max_position_embeddings", value=131072),
        ("DF602", "/max_position_embeddings", INFO),
        hub=True,
        absent=("DF601",),
    ),
    row("DF603-identical", "q36", hub=True, expect=(("DF603", "", INFO),), absent=("DF601", "DF602")),
    # --- DF7xx: integrity of the file on disk
    row("DF701-lock-mismatch", "v1", setup=lock_then_replace, expect=(("DF701", "", ERR),)),
    row("DF702-sha256-mismatch", "v1", options=("--expect-sha256", "0" * 64), expect=(("DF702", "", ERR),)),
    row("DF703-link-into-cache-blob", "v1", setup=link_into_cache_blob, expect=(("DF703", "", WARN),)),
    row("DF7-pass-plain-file", "v1", absent=("DF701", "DF702", "DF703")),
    # --- DF8xx: a launch command (preflight)
    row(
        "DF801-draft-tokens-for-block-16",
        "q36",
        target="Qwen__Qwen3.6-27B",
        launch=lambda d, t: vllm(d, t, tokens=7),
        expect=(("DF801", "/block_size", ERR),),
    ),
    row(
        "DF802-tensor-parallel-3",
        "q36",
        target="Qwen__Qwen3.6-27B",
        launch=lambda d, t: vllm(d, t, extra=("--tensor-parallel-size", "3")),
        expect=(("DF802", "/num_attention_heads", ERR),),
    ),
    row(
        "DF803-method-eagle3",
        "q36",
        target="Qwen__Qwen3.6-27B",
        launch=lambda d, t: vllm(d, t, method="eagle3"),
        expect=(("DF803", "/architectures", ERR),),
    ),
    row(
        "DF8-pass-matching-launch",
        "q36",
        target="Qwen__Qwen3.6-27B",
        launch=lambda d, t: vllm(d, t, extra=("-tp", "4")),
        absent=("DF801", "DF802", "DF803"),
    ),
]


def config_bytes(case: Case) -> bytes:
    if case.raw is not None:
        return case.raw
    data = copy.deepcopy(BASES[case.base][0])
    if case.change is not None:
        case.change(data)
    text = serialise(data)
    return case.text(text) if case.text is not None else text.encode("utf-8")


def run_case(case: Case, dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Expected]:
    folder = tmp_path / "drafter"
    folder.mkdir()
    (folder / "config.json").write_bytes(config_bytes(case))
    if isinstance(case.weights, bytes):
        (folder / "model.safetensors").write_bytes(case.weights)
    elif case.weights is not None:
        save(folder / "model.safetensors", case.weights)
    options = list(case.options)
    if case.hub:
        data, repo = BASES[case.base]
        offline_hub_cache(repo, serialise(data).encode("utf-8"), monkeypatch)
        options += ["--from-hub", repo]
    if case.setup is not None:
        case.setup(folder, dflash)
    target = TARGETS / case.target if case.target is not None else None
    if case.launch is not None:
        assert target is not None, "a launch needs the target dir"
        result = dflash("preflight", "--format", "json", *options, "--", *case.launch(folder, target))
    else:
        if target is not None:
            options += ["--target", str(target)]
        result = dflash("check", folder, "--format", "json", *options)
    assert result.code in (0, 1), result.err
    assert "Traceback" not in result.err
    (report,) = result.json()["files"]
    return [(f["rule"], f["pointer"], f["severity"]) for f in report["findings"]]


@pytest.mark.parametrize("case", CASES)
def test_rule_case(case: Case, dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found = run_case(case, dflash, tmp_path, monkeypatch)
    for expected in case.expect:
        assert expected in found, f"{expected} not in {found}"
    fired = {rule for rule, _, _ in found}
    assert not fired & set(case.absent), f"{sorted(fired & set(case.absent))} fired: {found}"


def test_every_rule_in_the_catalogue_has_a_case(dflash: Run) -> None:
    catalogue = {r["id"] for r in dflash("rules", "--format", "json").json()}
    covered = {rule for param in CASES for rule, _, _ in param.values[0].expect}
    assert covered == catalogue, (
        f"without a case: {sorted(catalogue - covered)}; unknown: {sorted(covered - catalogue)}"
    )
    names = [param.values[0].name for param in CASES]
    assert len(names) == len(set(names))


def test_the_small_drafter_matches_its_checkpoint() -> None:
    # The weights rows rely on these: the config's sizes are the ones small_shapes() writes.
    config = BASES["small"][0]
    assert (config["hidden_size"], config["head_dim"], config["num_hidden_layers"]) == (HIDDEN, HEAD_DIM, LAYERS)

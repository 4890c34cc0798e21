"""The rule cases' files: what a row that needs more than its config.json bytes writes into tmp_path (the
checkpoint, LFS pointers, other files, a git work tree, the target, an offline Hub cache, the setup steps), and
the command that checks it through the real CLI. The row vocabulary is harness.py's docstring."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from checkpoints import lfs_pointer, save, save_sharded, save_sparse, small_shapes
from harness import Row, as_bytes, base, changed, config_bytes, config_data, dump
from helpers import FIXTURES, Result, installed_release, offline_hub_cache

Run = Callable[..., Result]

TARGETS = FIXTURES / "targets"


def shapes_of(config: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """The tensors a z-lab checkpoint of `config` holds (DF505's count, done independently)."""
    return small_shapes(
        hidden=config["hidden_size"],
        heads=config["num_attention_heads"],
        kv=config["num_key_value_heads"],
        head_dim=config["head_dim"],
        inter=config["intermediate_size"],
        layers=config["num_hidden_layers"],
        taps=len(config["dflash_config"]["target_layer_ids"]),
    )


def write_checkpoint(folder: Path, spec: dict[str, Any]) -> None:
    tensors = small_shapes(**spec.get("shapes", {}))
    for pattern, shape in spec.get("tensors", {}).items():
        matching = fnmatch.filter(tensors, pattern) or [pattern]
        for name in matching:
            if shape is None:
                del tensors[name]
            else:
                tensors[name] = tuple(shape)
    dtype = np.dtype(spec.get("dtype", "float16"))
    if spec.get("sharded"):
        save_sharded(folder, tensors, dtype, sparse=spec.get("sparse"))
    elif "sparse" in spec:
        save_sparse(folder / "model.safetensors", tensors, spec["sparse"])
    else:
        save(folder / "model.safetensors", tensors, dtype)


def write_files(folder: Path, files: dict[str, Any], config: dict[str, Any] | None = None) -> None:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is None:
            path.unlink()
        elif isinstance(content, (bytes, str)):
            path.write_bytes(as_bytes(content))
        elif "json" in content:
            path.write_bytes(dump(content["json"]))
        elif "fifo" in content:
            os.mkfifo(path)
        elif isinstance(content["lfs_pointer"], int):
            path.write_bytes(lfs_pointer(content["lfs_pointer"]))
        else:
            assert config is not None
            parameters = sum(int(np.prod(s)) for s in shapes_of(config).values())
            path.write_bytes(lfs_pointer(parameters * content["lfs_pointer"]["bits"] // 8))


# Qwen3's tokenizer_config.json added_tokens_decoder: 151643..151668 (26 added tokens after the 151643-token
# base vocabulary), with their `special` flags; eos <|im_end|>, pad <|endoftext|> (test_bases checks these).
QWEN3_ADDED = [
    ("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True), ("<|object_ref_start|>", True),
    ("<|object_ref_end|>", True), ("<|box_start|>", True), ("<|box_end|>", True), ("<|quad_start|>", True),
    ("<|quad_end|>", True), ("<|vision_start|>", True), ("<|vision_end|>", True), ("<|vision_pad|>", True),
    ("<|image_pad|>", True), ("<|video_pad|>", True), ("<tool_call>", False), ("</tool_call>", False),
    ("<|fim_prefix|>", False), ("<|fim_middle|>", False), ("<|fim_suffix|>", False), ("<|fim_pad|>", False),
    ("<|repo_name|>", False), ("<|file_sep|>", False), ("<tool_response>", False), ("</tool_response>", False),
    ("<think>", False), ("</think>", False),
]  # fmt: skip
QWEN3_BASE_VOCAB = 151643


def qwen3_tokenizer_config() -> dict[str, Any]:
    def added(content: str, special: bool) -> dict[str, Any]:
        flags = dict.fromkeys(("lstrip", "normalized", "rstrip", "single_word"), False)
        return {"content": content, **flags, "special": special}

    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": {str(QWEN3_BASE_VOCAB + i): added(*t) for i, t in enumerate(QWEN3_ADDED)},
        "additional_special_tokens": [c for c, s in QWEN3_ADDED if s][1:],
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 131072,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def tokenizer_json(tokenizer_config: dict[str, Any]) -> str:
    """The text of a tokenizer.json of QWEN3_BASE_VOCAB base ids and the added tokens of `tokenizer_config`."""
    flags = dict.fromkeys(("single_word", "lstrip", "rstrip", "normalized"), False)
    added = [
        {"id": int(i), "content": e["content"], **flags, "special": e["special"]}
        for i, e in tokenizer_config["added_tokens_decoder"].items()
    ]
    text = json.dumps({"version": "1.0", "added_tokens": added, "model": {"type": "BPE", "vocab": {}, "merges": []}})
    return text.replace('"vocab": {}', f'"vocab": {_base_vocab()}', 1)


@cache
def _base_vocab() -> str:
    """The base vocabulary as JSON, made once a session (0.4 s to build and dump, for each of several rows)."""
    return json.dumps({f"t{i}": i for i in range(QWEN3_BASE_VOCAB)})


TARGET_KEYS = {"config", "set", "drop", "flatten", "tokenizer", "tokenizer_set", "tokenizer_json", "files"}


def write_target(spec: str | dict[str, Any], tmp_path: Path) -> Path:
    if isinstance(spec, str):
        return TARGETS / spec
    assert set(spec) <= TARGET_KEYS, f"unknown target keys {sorted(set(spec) - TARGET_KEYS)}"
    folder = tmp_path / "target"
    folder.mkdir()
    config = changed(json.loads((TARGETS / spec["config"] / "config.json").read_bytes()), spec)
    if spec.get("flatten"):
        config = {k: v for k, v in config.items() if k != "text_config"} | config["text_config"]
    (folder / "config.json").write_bytes(dump(config))
    if "tokenizer" in spec:
        assert spec["tokenizer"] == "qwen3", spec["tokenizer"]
        tokenizer = changed(qwen3_tokenizer_config(), {"set": spec.get("tokenizer_set", {})})
        (folder / "tokenizer_config.json").write_bytes(dump(tokenizer))
        if spec.get("tokenizer_json"):
            (folder / "tokenizer.json").write_text(tokenizer_json(tokenizer), encoding="utf-8")
    write_files(folder, spec.get("files", {}))
    return folder


def fix_then_restore(folder: Path, dflash: Run) -> None:
    """`fix` repairs the file and records it in .dflash-cfg.lock; then other bytes land on it."""
    original = (folder / "config.json").read_bytes()
    broken = json.loads(original)
    broken["use_sliding_window"] = False
    (folder / "config.json").write_bytes(dump(broken))
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


def cache_snapshot(tmp_path: Path, row: Row) -> Path:
    """The base repo's snapshot dir in a Hugging Face cache under tmp_path, as huggingface_hub lays it out: its
    config.json links to ../../blobs/<the unchanged base's git blob id>, which holds the row's bytes (a row that
    changes the base has edited the snapshot in place)."""
    published = base(row.spec["base"])
    org, name = published.repo.split("/")
    repo_dir = tmp_path / "hub" / f"models--{org}--{name}"
    original = dump(published.data)
    blob = repo_dir / "blobs" / hashlib.sha1(b"blob %d\0" % len(original) + original).hexdigest()
    snapshot = repo_dir / "snapshots" / ("5eed" * 10)
    blob.parent.mkdir(parents=True)
    snapshot.mkdir(parents=True)
    blob.write_bytes(config_bytes(row))
    (snapshot / "config.json").symlink_to(os.path.relpath(blob, snapshot))
    return snapshot


SETUP: dict[str, Callable[[Path, Run], None]] = {
    "fix-then-restore": fix_then_restore,
    "link-into-cache-blob": link_into_cache_blob,
}


def inside_a_work_tree(path: Path) -> bool:
    return any((p / ".git").exists() for p in (path.resolve(), *path.resolve().parents))


def needs_no_work_tree(row: Row) -> bool:
    """Whether the row's findings hold only where no git work tree holds its drafter dir: LFS pointers or other
    files without a `clone:` of its own (what DF504 advises, `git lfs pull` in that tree or not, depends on it)."""
    return ("pointers" in row.spec or "files" in row.spec) and "clone" not in row.spec


# Where a row's dir goes when the run's own temporary dir is inside a git work tree (a --basetemp or TMPDIR in a
# checkout): the first of these that no work tree holds.
ELSEWHERE = (Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))


def outside_any_work_tree() -> Path | None:
    """A fresh dir that no git work tree holds (the caller removes it), or None when there is no such place."""
    for root in ELSEWHERE:
        if root.is_dir() and os.access(root, os.W_OK) and not inside_a_work_tree(root):
            return Path(tempfile.mkdtemp(prefix="dflash-cfg-row-", dir=root))
    return None


@dataclass(frozen=True)
class Prepared:
    """A row written to disk: the drafter dir and the command that checks it."""

    folder: Path
    command: tuple[str, ...]  # without --format

    def run(self, dflash: Run, fmt: str = "json") -> Result:
        verb, *rest = self.command
        if verb == "preflight":
            return dflash("preflight", "--format", fmt, *rest)
        return dflash("check", self.folder, "--format", fmt, *rest)


def prepare(row: Row, dflash: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, releases: Path) -> Prepared:
    """Write the row into tmp_path; `releases`: where the interpreters of `release:` launches are kept, one per
    release for the whole session (each is a venv: 0.2 s to make, and the same for every row)."""
    spec = row.spec
    top = tmp_path / "clone" if "clone" in spec else tmp_path
    folder = (top / spec["clone"]).resolve() if "clone" in spec else tmp_path / "drafter"
    if spec.get("snapshot"):
        folder = cache_snapshot(tmp_path, row)
    folder.mkdir(parents=True, exist_ok=True)
    if "clone" in spec:
        (top / ".git").mkdir()  # all git-lfs needs to match paths
    elif needs_no_work_tree(row) and inside_a_work_tree(tmp_path):
        pytest.skip(f"{row.id}: its dir {tmp_path} is inside a git work tree and no temporary dir is outside one")
    if not spec.get("snapshot"):
        (folder / "config.json").write_bytes(config_bytes(row))
    if "checkpoint" in spec:
        write_checkpoint(folder, spec["checkpoint"])
    for pattern in spec.get("pointers", ()):
        for path in sorted(folder.glob(pattern)):
            path.write_bytes(lfs_pointer(path.stat().st_size))
    write_files(folder, spec.get("files", {}), config_data(row) if "base" in spec else None)
    options = [str(o) for o in spec.get("options", ())]
    if spec.get("hub"):
        repo = base(spec["base"]).repo
        offline_hub_cache(repo, dump(base(spec["base"]).data), monkeypatch)
        options += ["--from-hub", repo]
    for step in spec.get("setup", ()):
        SETUP[step](folder, dflash)
    target = write_target(spec["target"], tmp_path) if "target" in spec else None
    if "launch" in spec:
        assert target is not None, "a launch needs the target"
        launch = dict(spec["launch"])
        args = [str(a) for a in launch.pop("args", ())]
        env = [f"{k}={v}" for k, v in launch.pop("env", {}).items()]
        if launch.pop("engine", "vllm") == "sglang":
            # The tests' own interpreter, which has no SGLang: the engine step surveys it and finds none. Not
            # whatever `python` the host's PATH finds (a pyenv shim costs 0.3 s a start; one with SGLang would
            # run the engine).
            command = [
                sys.executable, "-m", "sglang.launch_server", "--model-path", str(target),
                "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", str(folder), *args,
            ]  # fmt: skip
            return Prepared(folder, ("preflight", *options, "--", *env, *command))
        release = launch.pop("release", None)
        speculative = {"method": "dflash", "model": str(folder), "num_speculative_tokens": 15} | launch
        serve = ["vllm", "serve", str(target)]
        if release is not None:  # the launch runs an interpreter with that vLLM release installed
            python = installed_release(releases, "vllm", str(release))
            serve = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(target)]
            options.append("--no-engine-check")
        command = [*serve, "--speculative-config", json.dumps(speculative), *args]
        return Prepared(folder, ("preflight", *options, "--", *env, *command))
    if target is not None:
        options += ["--target", str(target)]
    return Prepared(folder, ("check", *options))

"""What `audit` reads from the Hub beyond what sources/publishers.py offers: a commit's recent history
(`HfApi.list_repo_commits`), and a base model as a Target, read into memory at its current commit. Listing an
author's repos, a repo at a revision and a file at a commit are publishers.py's (`list_author`, `repo_info`,
`fetch_file`); this module adds to them and does not repeat them.

Retries and failures are publishers.py's, so `catalog update` and `audit` treat the Hub alike: model_info through its
`_retrying` (Retry-After honoured, never past the run's deadline), the commit list through huggingface_hub's own
pagination (http_backoff on every page), files through `fetch_file` (verified against their git blob id), and every
failure sorted by `_classified` into Gated, NotFound or another HubError. Nothing here writes to the Hugging Face
cache: a base model is read into a Target value, not downloaded into anyone's cache.
"""

from __future__ import annotations

from dataclasses import dataclass

from dflash_cfg.errors import HubError, TargetError
from dflash_cfg.model import Target
from dflash_cfg.sources import target as target_files
from dflash_cfg.sources.hub import COMMIT, CONFIG, Settings
from dflash_cfg.sources.publishers import Deadline, _api, _classified, fetch_file, iso, repo_info


@dataclass(frozen=True, kw_only=True)
class Commit:
    commit: str
    date: str | None  # ISO-8601


def recent_commits(repo: str, commit: str, limit: int, s: Settings) -> tuple[Commit, ...]:
    """The newest `limit` commits of `repo`'s history up to `commit` (which comes first). huggingface_hub pages
    through the whole history; a drafter repo's is a page or two."""
    api = _api(s)
    try:
        found = api.list_repo_commits(repo, revision=commit)
    except Exception as exc:  # noqa: BLE001
        raise _classified(exc, repo, commit, s) from None
    out = []
    for item in found[:limit]:
        sha = str(item.commit_id)
        if not COMMIT.match(sha):
            raise HubError(f"{s.endpoint} listed a commit of {repo} that is not a commit id (40 hex digits)")
        out.append(Commit(commit=sha, date=None if item.created_at is None else iso(item.created_at)))
    return tuple(out)


def read_target(repo: str, s: Settings, deadline: Deadline) -> tuple[Target, str]:
    """A base model as the drafter's target, and the commit it was read at: its config.json, with
    generation_config.json and tokenizer_config.json where it has them, as `check --target ORG/NAME` reads them.
    tokenizer.json is not read (10-35 MB for a real target; check does not fetch it either): the added tokens of
    tokenizer_config.json are what the mask id is checked against."""
    info = repo_info(repo, s, deadline, "main")
    has = set(info.files) if info.files is not None else None
    at = f"{repo}@{info.sha[:12]}"

    def read(name: str) -> dict[str, object] | None:
        if has is not None and name not in has:
            return None
        data = fetch_file(repo, info.sha, name, s, deadline, info.blobs.get(name)).data
        return target_files.parse_json_object(data, f"{at}/{name}")

    config = read(CONFIG)
    if config is None:
        raise TargetError(f"{at} has no {CONFIG}")
    if _is_drafter(config):
        raise TargetError(f"{at}/{CONFIG} is a DFlash drafter's config, not a target model's")
    names = [CONFIG]
    generation: tuple[tuple[str, int], ...] = ()
    found = read(target_files.GENERATION_CONFIG)
    if found is not None:
        generation = target_files.parse_generation_config(found, f"{at}/{target_files.GENERATION_CONFIG}")
        names.append(target_files.GENERATION_CONFIG)
    tokenizer = None
    found = read(target_files.TOKENIZER_CONFIG)
    if found is not None:
        tokenizer = target_files.parse_tokenizer_config(found, f"{at}/{target_files.TOKENIZER_CONFIG}")
        names.append(target_files.TOKENIZER_CONFIG)
    built = target_files.build_target(
        at,
        tuple(names),
        target_files.parse_config(config, f"{at}/{CONFIG}"),
        generation,
        tokenizer,
        tokenizer_config_source=f"{at}/{target_files.TOKENIZER_CONFIG}",
    )
    return built, info.sha


def _is_drafter(config: dict[str, object]) -> bool:
    """A card naming a drafter as its base: its depth and width are the drafter's own, not a target's."""
    archs = config.get("architectures")
    names = [a for a in archs if isinstance(a, str)] if isinstance(archs, list) else []
    return "dflash_config" in config or "speculators_model_type" in config or any("dflash" in n.lower() for n in names)

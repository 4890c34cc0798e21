"""verify: is a config.json still the file dflash-cfg last wrote (or the one with a given sha256)?"""

from __future__ import annotations

from dflash_cfg.commands.common import check_sha256_option, one_config
from dflash_cfg.errors import LockError, UsageError
from dflash_cfg.model import Verification
from dflash_cfg.sources import storage
from dflash_cfg.sources.lockfile import read_lock


def verify(path_arg: str, expect_sha256: str | None) -> Verification:
    check_sha256_option(expect_sha256)
    path = one_config(path_arg)
    sha, _ = storage.hashes(path)  # the whole file, whatever its size
    try:
        entry = read_lock(path)
    except LockError:
        if expect_sha256 is None:
            raise
        entry = None
    if expect_sha256 is not None:
        return Verification(path, sha, entry, expect_sha256.lower())
    if entry is None:
        raise UsageError(
            f"{path}: no .dflash-cfg.lock entry beside it, so nothing to verify against; run "
            "`dflash-cfg fix` there first, or pass --expect-sha256 HEX"
        )
    return Verification(path, sha, entry, entry.sha256)

"""`python writer_child.py CONFIG NEW_BYTES_FILE EXPECTED_OLD_SHA256`: one write_verified in a process of
its own, so test_verified.py can SIGKILL it at a step (DFLASH_CFG_FAULT=<step>:pause:<flag>)."""

from __future__ import annotations

import sys
from pathlib import Path

from dflash_cfg.errors import WriteError
from dflash_cfg.write.verified import write_verified


def main() -> int:
    config, new_file, expected = sys.argv[1:4]
    try:
        written = write_verified(Path(config), Path(new_file).read_bytes(), expected)
    except WriteError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    sys.stdout.write(f"{written.path} {written.sha256}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

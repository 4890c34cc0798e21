"""`python -m dflash_cfg`, and the `dflash-cfg` command (its console script imports only this module and the
package root before `run`): a Ctrl-C while the CLI is still being imported gets the same answer as during
a run, "aborted" and exit 2, not a traceback."""

import sys


def run() -> None:
    try:
        from dflash_cfg.cli import main
    except KeyboardInterrupt:
        sys.stderr.write("dflash-cfg: aborted\n")
        raise SystemExit(2) from None
    main()


if __name__ == "__main__":
    run()

"""`python -m dflash_cfg`, and the `dflash-cfg` command (its console script imports only this module and the
package root before `run`): a Ctrl-C while the CLI is still being imported gets the same answer as during
a run, "aborted" and exit 2, not a traceback."""

import sys


def _forget_interrupt() -> None:
    """Under `python -m`, CPython ends the process by SIGINT (exit status -2, not 2) when a KeyboardInterrupt
    once escaped an `eval` of a string, even one the program then handled: the flag it sets is kept to the
    end (namedtuple and others eval while the CLI imports). Evaluating a string clears it; the CLI answers
    every Ctrl-C itself, so the flag never means anything here."""
    eval("0")  # a constant: what matters is that it is evaluated from a string


def run() -> None:
    try:
        try:
            from dflash_cfg.cli import main
        except KeyboardInterrupt:
            sys.stderr.write("dflash-cfg: aborted\n")
            raise SystemExit(2) from None
        main()
    finally:
        _forget_interrupt()


if __name__ == "__main__":
    run()

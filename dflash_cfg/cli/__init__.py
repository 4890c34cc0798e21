"""The command line, the tool's one edge to a terminal: options -> one value -> one call -> render -> one
exit code. No domain logic here: what a command does is commands/'s, how its answer reads is report/'s.

group: the `dflash-cfg` group and `run`/`main` (every failure -> a one-line cause and its exit code);
parse_result: one frozen value per command, what its options asked for, and the rules that span options;
common_options: the shared option groups that fill it; output: what goes to stdout and stderr;
files (check, diff, fix, verify), serving (preflight, engines, where), probe, rules: the commands."""

from dflash_cfg.cli.group import cli, main, run

__all__ = ["cli", "main", "run"]

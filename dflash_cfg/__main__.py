try:
    from dflash_cfg.cli import main
except KeyboardInterrupt:  # Ctrl-C while the CLI is still being imported: the same answer as during a run
    import sys

    sys.stderr.write("dflash-cfg: aborted\n")
    raise SystemExit(2) from None

main()

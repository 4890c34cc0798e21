from dflash_cfg.cli import main

main()

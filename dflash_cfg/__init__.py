"""dflash-cfg: lint and repair the config.json of DFlash speculative-decoding drafters."""

__version__ = "0.1.0"

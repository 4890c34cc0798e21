"""Adapters: scripts that run inside an engine's own interpreter and say, by calling that engine's config code,
what it reads from a drafter config or why it refuses it.

Each `adapter_<engine>.py` is started as `PYTHON adapter_<engine>.py` (dflash_cfg.sources.adapters does that),
reads JSON requests one a line and answers one JSON record a line. They import only the engine and the
standard library (plus `dflash_adapter_io`, their shared protocol), because the interpreter that runs them may
not have dflash_cfg installed. Nothing in dflash_cfg imports them.
"""

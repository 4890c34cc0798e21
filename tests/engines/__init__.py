"""The engine suite: vLLM's, SGLang's and speculators' own config code, run through dflash_cfg/adapters/ in the
pinned engine venv (build.py), as the oracle for what the engines read. A package, so that its conftest and
modules have names of their own next to tests/conftest.py."""

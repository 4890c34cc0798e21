"""Importing huggingface_hub (directly, or through transformers) with the user's environment as it is.

huggingface_hub reads HF_HUB_ETAG_TIMEOUT and HF_HUB_DOWNLOAD_TIMEOUT with int() when it is first
imported, so `HF_HUB_ETAG_TIMEOUT=1.5` makes the import itself fail, in every command, even one that
never talks to the Hub. dflash-cfg reads the timeout itself (sources/hub.py passes it to every call),
so the first import runs with those two values rounded up to whole seconds, and the environment is
restored right after: an engine started by `preflight --exec` sees exactly what the user set.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_INT_SETTINGS = ("HF_HUB_ETAG_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT")


@contextmanager
def importable() -> Iterator[None]:
    saved: dict[str, str] = {}
    for name in _INT_SETTINGS:
        value = os.environ.get(name)
        if not value:
            continue
        try:
            int(value)
            continue
        except ValueError:
            saved[name] = value
        try:
            seconds = float(value)
            usable = math.isfinite(seconds) and seconds > 0
        except ValueError:
            usable = False
        if usable:
            os.environ[name] = str(math.ceil(seconds))
        else:
            del os.environ[name]  # huggingface_hub's default; sources/hub.py says what is wrong with it
    try:
        yield
    finally:
        os.environ.update(saved)


def import_hub() -> None:
    """Import huggingface_hub once, before anything else (transformers included) does."""
    if "huggingface_hub.constants" in sys.modules:
        return
    with importable():
        import huggingface_hub.constants  # noqa: F401

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
from urllib.parse import urlsplit

_INT_SETTINGS = ("HF_HUB_ETAG_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT")


@contextmanager
def importable() -> Iterator[None]:
    saved: dict[str, str] = {}
    endpoint = os.environ.get("HF_ENDPOINT")
    if endpoint is not None and not usable_url(endpoint):
        saved["HF_ENDPOINT"] = endpoint  # its own import would fail; sources/hub.py says what is wrong
        del os.environ["HF_ENDPOINT"]
    for name in _INT_SETTINGS:
        value = os.environ.get(name)
        if value is None:
            continue
        try:
            int(value)
            continue
        except ValueError:  # "" too: huggingface_hub runs int() on any value that is set
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


def usable_url(value: str) -> bool:
    """An http(s) URL whose host and port parse (huggingface_hub and httpx parse HF_ENDPOINT)."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def import_hub() -> None:
    """Import huggingface_hub once, before anything else (transformers included) does."""
    if "huggingface_hub.constants" in sys.modules:
        return
    with importable():
        import huggingface_hub.constants  # noqa: F401


def secrets() -> list[str | None]:
    """Credentials a message must never show: the Hub token from the environment or its token file."""
    found: list[str | None] = [os.environ.get(name) for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")]
    try:
        import_hub()
        from huggingface_hub import get_token

        found.append(get_token())
    except Exception:  # noqa: BLE001 - only for hiding it; an unreadable token file hides nothing
        pass
    return found

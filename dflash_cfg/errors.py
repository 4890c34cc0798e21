"""Every failure a user can cause or meet, as one hierarchy with its exit code.

Modules raise the class that says what went wrong; the CLI prints `str(exc)` as one line and exits
with `exc.exit_code` (cli.run is the only place that does). Exit codes, for every command:
1 refused (the file changed since it was read, a read-back mismatch), 2 usage or environment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

# What a server, a proxy or a URL can put into a message that must never be printed: URL user info
# (https://user:password@host, up to the authority's last @: a password may hold one, and urllib reads
# the host after the last), an Authorization header echoed back, a Hugging Face token.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s]*@")
_AUTHORIZATION = re.compile(
    r"(?i)\b(authorization\s*[:=]\s*(?:bearer\s+|basic\s+|token\s+)?)[^\s'\",;]+"
    r"|\b(bearer\s+|basic\s+)[A-Za-z0-9._~+/=-]{8,}"
)
_HF_TOKEN = re.compile(r"\bhf_[A-Za-z0-9]{6,}")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` without credentials: the given secrets (e.g. HF_TOKEN's value) and anything shaped like one."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _USERINFO.sub(r"\1***@", text)
    text = _AUTHORIZATION.sub(lambda m: f"{m.group(1) or m.group(2)}***", text)
    return _HF_TOKEN.sub("hf_***", text)


def causes(exc: BaseException) -> list[BaseException]:
    """`exc` and what it was raised from or during, outermost first (each once): a library's failure is
    often three wrappers deep, and the one line for the user names the innermost."""
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in out:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


class DflashCfgError(Exception):
    """A one-line cause and what to do; never a traceback, never a credential."""

    exit_code = EXIT_USAGE

    def __str__(self) -> str:
        return redact(super().__str__())


class UsageError(DflashCfgError):
    """Something the user asked for cannot be done as asked."""


class PathError(DflashCfgError):
    """A path the user gave cannot be used (missing, unreadable, not a regular file)."""


class HubError(DflashCfgError):
    """The Hub could not answer as asked. Never contains the token."""


class HubUnreachable(HubError):
    """No answer from the Hub at all (refused, no route, no name): the local cache is all there is."""


class CatalogError(DflashCfgError):
    """The catalog of published drafters cannot be read, written or refreshed as asked."""


class TargetError(DflashCfgError):
    """The target model dir cannot be read or is malformed: which file, what is wrong, what to do."""


class WeightsError(DflashCfgError):
    """A safetensors file or index beside config.json cannot be read (reported as DF500, not raised to
    the user by `check`)."""


class LockError(DflashCfgError):
    """.dflash-cfg.lock is unreadable, corrupt or not ours."""


class WhereError(DflashCfgError):
    """The model cannot be found locally."""


class LaunchError(DflashCfgError):
    """An engine launch command that cannot be read for sure: what was not understood."""


class NotADrafter(LaunchError):
    """preflight: the launch's drafter argument leads to no drafter config (a target, a repo root whose
    drafter is in a subfolder, another kind of model). The gate fails on it: exit 1, a finding about the
    launch, not a run that could not be made."""

    exit_code = EXIT_FINDINGS


class PatchError(DflashCfgError):
    """A JSON Patch cannot be applied: which op, which pointer, why."""


class WriteError(DflashCfgError):
    """A write that did not happen; the file is intact. `exit_code` 1: refused (the file changed since
    it was read, or the read-back did not match); 2: environment (permission, disk full, another fix
    holds the directory, the path is a Hugging Face cache snapshot)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class Documented(DflashCfgError):
    """`cause` again, after the command already wrote the document or report that says it (a fix run's JSON
    document, a preflight report before its launch failed): the CLI adds the one-line cause on stderr and
    no second document."""

    def __init__(self, cause: DflashCfgError) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.exit_code = cause.exit_code


class ProbeError(DflashCfgError):
    """The engine's metrics cannot be judged: the endpoint is down or slow, the answer is not Prometheus text,
    it holds no speculative-decoding metrics, or its counters went backwards between scrapes (a restart)."""


class NotReady(ProbeError):
    """An engine still loading: its port refuses connections, it answers 503, or its metrics hold no
    speculative-decoding series yet. `probe --wait` waits for it; `--watch --keep-going` retries."""

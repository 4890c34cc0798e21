"""A launch written once as a shell command line (a Kubernetes ConfigMap value, an environment variable, a file)
-> its words, as `sh` splits them.

The engine's container runs that line through the shell (`sh -c 'eval "exec $DFLASH_CFG_LAUNCH"'`) and preflight
reads the same text, so both must find the same words. Quoting is what a launch needs (single quotes around a
JSON `--speculative-config`, double quotes, backslashes, lines joined by a trailing backslash, comment lines); what
the shell would compute instead of read is refused with one line: `$` and backquote expansions, globs, `~`,
operators (`;`, `&&`, `|`, redirections) and a second command. A guess there would check another launch than
the one the engine starts. Pure: text in, words out.
"""

from __future__ import annotations

from dflash_cfg.errors import LaunchError

_OPERATORS = set(";&|<>()")
_COMPUTED = {"$": "a `$` expansion", "`": "a backquote command"}
_GLOBS = set("*?[")


def words(text: str, where: str) -> tuple[str, ...]:
    """The words of one simple command; `where` names the text's origin in every refusal."""
    out: list[str] = []
    word: list[str] | None = None  # None between words; [] is a word begun by quotes ('' is an empty word)
    ended = False  # a newline ended the command: only blank and comment lines may follow
    i, n = 0, len(text)

    def refuse(what: str) -> LaunchError:
        line = text.count("\n", 0, i) + 1
        return LaunchError(f"{where}, line {line}: {what}: the shell would compute it; write the value itself")

    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":  # a continued line: both characters go
            i += 2
            continue
        if c in " \t\n":
            if word is not None:
                out.append("".join(word))
                word = None
            if c == "\n" and out:
                ended = True
            i += 1
            continue
        if c == "#" and word is None:  # a comment, to the end of its line
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ended:
            raise LaunchError(
                f"{where}, line {text.count(chr(10), 0, i) + 1}: a second command; the launch is one command "
                "(join its lines with a trailing backslash)"
            )
        if word is None:
            word = []
            if c == "~":
                raise refuse("a `~` home directory")
        if c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise LaunchError(f"{where}: a single quote is not closed")
            word.append(text[i + 1 : end])
            i = end + 1
        elif c == '"':
            i += 1
            while True:
                if i >= n:
                    raise LaunchError(f"{where}: a double quote is not closed")
                q = text[i]
                if q == '"':
                    i += 1
                    break
                if q in _COMPUTED:
                    raise refuse(_COMPUTED[q])
                if q == "\\" and i + 1 < n and text[i + 1] in '"\\\n':
                    if text[i + 1] != "\n":  # within double quotes too, a backslash-newline joins lines
                        word.append(text[i + 1])
                    i += 2
                    continue
                word.append(q)
                i += 1
        elif c == "\\":
            if i + 1 >= n:
                raise LaunchError(f"{where}: a backslash ends the text")
            word.append(text[i + 1])
            i += 2
        elif c in _COMPUTED:
            raise refuse(_COMPUTED[c])
        elif c in _OPERATORS:
            raise refuse(f"the shell operator `{c}`")
        elif c in _GLOBS:
            raise refuse(f"a `{c}` pattern")
        else:
            word.append(c)
            i += 1
    if word is not None:
        out.append("".join(word))
    if not out:
        raise LaunchError(f"{where}: no launch command in it")
    return tuple(out)

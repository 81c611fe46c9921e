"""Text from outside the process made safe to show: secrets redacted, control characters escaped.

Every message, row, log line and `-v` echo goes through here before it reaches a terminal, a file or a window:
a name from outside (a Prometheus label, a host name, a key, a file name) could otherwise draw over a row with a
CR or fake one with a newline, and a token or password given to reach a server must never be printed.
Standard library only.
"""

from __future__ import annotations

import re
import unicodedata

REDACTED = "<redacted>"
_secrets: set[str] = set()
_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*):[^/@\s]*@")  # scheme://user:PASSWORD@
_AUTHORIZATION = re.compile(r"(?i)(?P<head>authorization['\"]?\s*[:=]\s*['\"]?(?:[A-Za-z-]+\s+)?)[^\s'\",}]+")
_BEARER = re.compile(r"\b(?P<head>Bearer\s+)[A-Za-z0-9._~+/=-]{4,}")  # a bearer token, wherever it is quoted
_C_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r"}


def register_secret(value: str | None) -> None:
    """value (a token, a password, an Authorization header's value) is never shown by redacted(), whole or by any
    of its lines."""
    if not value:
        return
    for part in (value, *value.splitlines()):
        part = part.strip()
        if len(part) >= 4:  # a shorter one would redact ordinary words; no credential is that short
            _secrets.add(part)


def redacted(text: str) -> str:
    """text without the secrets registered, a URL's password (scheme://user:PASSWORD@), an Authorization
    header's credentials or a bearer token."""
    if "@" in text:
        text = _PASSWORD.sub(rf"\1:{REDACTED}@", text)
    if "uthorization" in text or "UTHORIZATION" in text:
        text = _AUTHORIZATION.sub(lambda m: m["head"] + REDACTED, text)
    if "Bearer" in text:
        text = _BEARER.sub(lambda m: m["head"] + REDACTED, text)
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def _is_control(ch: str) -> bool:
    return unicodedata.category(ch) == "Cc"


def _c_escape(ch: str) -> str:
    return _C_ESCAPES.get(ch) or "".join(f"\\{b:03o}" for b in ch.encode("utf-8", "surrogateescape"))


def name_shown(name: str) -> str:
    """A name with control characters as GNU ls prints it on a terminal ('a'$'\\n''b'), so a crafted name cannot
    fake a row; other names as they are."""
    if not any(_is_control(ch) for ch in name):
        return name
    out, run, plain = [], "", True
    for ch in name:
        if _is_control(ch) != (not plain) and run:
            out.append(f"'{run}'" if plain else f"$'{run}'")
            run = ""
        plain = not _is_control(ch)
        run += ch.replace("'", "'\\''") if plain else _c_escape(ch)
    out.append(f"'{run}'" if plain else f"$'{run}'")
    return "".join(out)


def control_escaped(text: str) -> str:
    """text with its control characters written as C escapes (\\r, \\n, \\033): one line, drawing nothing."""
    if text.isprintable():
        return text
    return "".join(_c_escape(ch) if _is_control(ch) else ch for ch in text)


def line_shown(text: str) -> str:
    """One line of a message or a row as it may be printed: secrets redacted, control characters escaped."""
    return control_escaped(redacted(text))


def lines_shown(lines: list[str]) -> str:
    """Lines (each one line of a table, its fields from outside) joined for printing, each made safe alone: a
    newline inside a field is escaped, never a new row."""
    return "\n".join(line_shown(line) for line in lines)

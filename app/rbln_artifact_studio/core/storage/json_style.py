"""Rewriting a JSON file in the layout it was read in (indentation, separators, escapes, line ends)."""

from __future__ import annotations

import json
from typing import NamedTuple


class JsonStyle(NamedTuple):
    """How a JSON file was laid out, so a rewrite changes only the values that changed (a diff of one line)."""

    indent: int | str | None = 2
    key_separator: str = ": "
    ensure_ascii: bool = False
    trailing_newline: bool = True
    newline: str = "\n"  # "\r\n" for a file saved on Windows: kept, or every line of it would differ


def detect_style(data: bytes) -> JsonStyle:
    """The layout of a JSON document as json.dump writes it: indentation, separators, escapes, final newline."""
    text = data.decode("utf-8", errors="replace")
    body = text.rstrip("\r\n")
    indent: int | str | None = None
    first_break = body.find("\n")
    if first_break >= 0:
        rest = body[first_break + 1 :]
        run = rest[: len(rest) - len(rest.lstrip(" \t"))]
        indent = run if "\t" in run else (len(run) or None)
    key_separator = ": " if '": ' in text or '":' not in text else ":"
    newline = "\r\n" if "\r\n" in text else "\n"
    return JsonStyle(indent, key_separator, text.isascii(), text.endswith("\n"), newline)


def dumps_styled(raw: object, style: JsonStyle) -> bytes:
    """Serialize in a detected layout, keeping key order (json.dump's output for that layout, byte for byte)."""
    items = "," if style.indent is not None else ", "
    text = json.dumps(
        raw, indent=style.indent, separators=(items, style.key_separator), ensure_ascii=style.ensure_ascii
    )
    text += "\n" if style.trailing_newline else ""
    if style.newline != "\n":  # json.dumps escapes the newlines inside strings: these are all line ends
        text = text.replace("\n", style.newline)
    return text.encode("utf-8")

"""How the table's filter compares text: Unicode case folding, the same under every locale."""

from __future__ import annotations

import unicodedata

COMBINING_DOT_ABOVE = "\u0307"


def folded(text: str) -> str:
    """text for matching: str.casefold (ß is ss, Σ and ς are σ), then composed (NFC).

    The dot that folding leaves after a Turkish dotted capital (İ folds to i + U+0307) is dropped, so `İnstruct`
    finds `instruct` as `INSTRUCT` does, whatever LANG says; no other accent is touched.
    """
    return unicodedata.normalize("NFC", text.casefold()).replace(COMBINING_DOT_ABOVE, "")

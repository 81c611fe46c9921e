"""Colours for ok / warning / error text and for chart marks that stay legible on the palette in use, light or dark.

Text tones are at least 4.5:1 and marks (lines, markers, gauge fills) at least 3:1 against the window and the base
of their palette (WCAG 2.1 AA); tests/gui/test_gui_contrast.py measures them on the widgets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import Enum

from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QLabel, QWidget


class Tone(str, Enum):
    OK = "ok"
    WARNING = "warning"
    ERROR = "error"
    NEUTRAL = "neutral"  # a row still being checked


# Light palettes: dark text tones (at least 5:1 on Fusion's #efefef window); dark palettes: light ones.
LIGHT = {Tone.OK: "#2e6b30", Tone.WARNING: "#8a5100", Tone.ERROR: "#b71c1c", Tone.NEUTRAL: "#616161"}
DARK = {Tone.OK: "#81c784", Tone.WARNING: "#ffb74d", Tone.ERROR: "#ef9a9a", Tone.NEUTRAL: "#bdbdbd"}


class Mark(str, Enum):
    """A coloured mark that is not text: a chart's lines and markers, a gauge's fill."""

    BUDGET = "budget"  # the DRAM chart's budget line
    TIGHTEST = "tightest"  # the tightest NPU's outline and its "▲ tightest" (text: held to 4.5:1)
    PICK = "pick"  # the budget picked in the wizard's curve
    FLOOR = "floor"
    FULL = "full"
    CURVE = "curve"
    GOOD = "good"  # a gauge inside [floor, full]
    HIGH = "high"  # above the full pool
    LOW = "low"  # below the floor


LIGHT_MARKS = {
    Mark.BUDGET: "#d32f2f",
    Mark.TIGHTEST: "#bf360c",
    Mark.PICK: "#6d4c41",
    Mark.FLOOR: "#d32f2f",
    Mark.FULL: "#2e7d32",
    Mark.CURVE: "#1565c0",
    Mark.GOOD: "#2e7d32",
    Mark.HIGH: "#b26a00",
    Mark.LOW: "#c62828",
}
DARK_MARKS = {
    Mark.BUDGET: "#ff8a80",
    Mark.TIGHTEST: "#ffb74d",
    Mark.PICK: "#bcaaa4",
    Mark.FLOOR: "#e57373",
    Mark.FULL: "#81c784",
    Mark.CURVE: "#64b5f6",
    Mark.GOOD: "#81c784",
    Mark.HIGH: "#ffb74d",
    Mark.LOW: "#e57373",
}


def is_dark(palette: QPalette | None = None) -> bool:
    """A palette whose window is darker than its text."""
    p = palette or QGuiApplication.palette()
    return p.color(QPalette.ColorRole.Window).lightness() < p.color(QPalette.ColorRole.WindowText).lightness()


def tone(kind: Tone, palette: QPalette | None = None) -> str:
    """The colour (#rrggbb) for this kind of message on the palette (the application's by default)."""
    return (DARK if is_dark(palette) else LIGHT)[kind]


def style(kind: Tone) -> str:
    """A CSS color declaration for rich text: "color:#b71c1c"."""
    return f"color:{tone(kind)}"


def qcolor(kind: Tone) -> QColor:
    return QColor(tone(kind))


def mark(kind: Mark, palette: QPalette | None = None) -> QColor:
    """The colour of a chart mark on the palette (the application's by default)."""
    return QColor((DARK_MARKS if is_dark(palette) else LIGHT_MARKS)[kind])


def luminance(c: QColor) -> float:
    """WCAG 2.1's relative luminance."""

    def linear(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """WCAG 2.1's contrast ratio, 1 to 21."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def text_on(fill: QColor) -> QColor:
    """Black or white, whichever reads better on this fill (a gauge's count over its filled part)."""
    black, white = QColor("#000000"), QColor("#ffffff")
    return black if contrast(black, fill) >= contrast(white, fill) else white


def retone(widgets: Iterable[QWidget], dark: bool) -> None:
    """Rewrite the tones in labels' rich text and in style sheets for a palette just applied.

    A label's text carries the colour it was written with; without this, "[ok]" written on the light palette
    stays dark green on the dark one.
    """
    old, new = (LIGHT, DARK) if dark else (DARK, LIGHT)
    swap = {old[kind].lower(): new[kind] for kind in Tone}
    pattern = re.compile("|".join(re.escape(c) for c in swap), re.IGNORECASE)

    def swapped(text: str) -> str:
        return pattern.sub(lambda m: swap[m.group(0).lower()], text)

    for top in widgets:
        for widget in [top, *top.findChildren(QWidget)]:
            sheet = widget.styleSheet()
            if sheet and pattern.search(sheet):
                widget.setStyleSheet(swapped(sheet))
            if isinstance(widget, QLabel):
                text = widget.text()
                if text and pattern.search(text):
                    widget.setText(swapped(text))


_CODE = re.compile(r"`([^`<>]+)`")
_TO_ESCAPE = re.compile("[&<>\"']")


def escaped(text: str) -> str:
    """html.escape(text): html (~9 M instructions to import) is loaded only for a text with something to escape,
    which the window's texts at its first paint do not have (docs/performance.md, row 7)."""
    if _TO_ESCAPE.search(text) is None:
        return text
    # deferred: html (~9 M instructions) loads with the first text that needs escaping, after the first paint
    import html

    return html.escape(text)


def message_html(text: str) -> str:
    """A core message as rich text: escaped, its `names` (optimum-rbln's wording) set as code, not raw backticks."""
    return _CODE.sub(r"<code>\1</code>", escaped(text))

"""Colours for ok / warning / error text that stay legible on the palette in use, light or dark."""

from __future__ import annotations

from enum import Enum

from PySide6.QtGui import QColor, QGuiApplication, QPalette


class Tone(str, Enum):
    OK = "ok"
    WARNING = "warning"
    ERROR = "error"
    NEUTRAL = "neutral"  # a row still being checked


# Light palettes: dark text tones (at least 3.7:1 on Fusion's #efefef window); dark palettes: light ones.
LIGHT = {Tone.OK: "#2e7d32", Tone.WARNING: "#b26a00", Tone.ERROR: "#c62828", Tone.NEUTRAL: "#616161"}
DARK = {Tone.OK: "#81c784", Tone.WARNING: "#ffb74d", Tone.ERROR: "#ef9a9a", Tone.NEUTRAL: "#bdbdbd"}


def is_dark(palette: QPalette | None = None) -> bool:
    """A palette whose window is darker than its text."""
    p = palette or QGuiApplication.palette()
    return p.color(QPalette.ColorRole.Window).lightness() < p.color(QPalette.ColorRole.WindowText).lightness()


def tone(kind: Tone, palette: QPalette | None = None) -> str:
    """The colour (#rrggbb) for this kind of message on the palette (the application's by default)."""
    return (DARK if is_dark(palette) else LIGHT)[kind]


def style(kind: Tone) -> str:
    """A CSS color declaration for rich text: "color:#c62828"."""
    return f"color:{tone(kind)}"


def qcolor(kind: Tone) -> QColor:
    return QColor(tone(kind))

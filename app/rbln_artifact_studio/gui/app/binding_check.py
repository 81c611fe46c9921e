"""Refuse to start on a Qt binding known to corrupt Python's reference counts, with the fix in the message.

PySide6 6.12.0 on CPython 3.10/3.11 releases one reference to None more than it takes each time a Qt method
without a result returns (`widget.update()`, `signal.emit(...)`): after some thousand calls the interpreter aborts
("Fatal Python error: none_dealloc"), in the desktop app after about a hundred artifact selections. pyproject.toml
excludes that release; this check catches an environment where it was installed anyway.
"""

from __future__ import annotations

import sys

import PySide6
from PySide6.QtCore import QObject

PROBE_CALLS = 256


def binding_loses_none() -> bool:
    """True when calling a Qt method that returns nothing makes None's reference count fall."""
    if sys.version_info >= (3, 12):
        return False  # None is immortal there: its count cannot fall
    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(PROBE_CALLS):
        probe.setObjectName("probe")
    return before - sys.getrefcount(None) >= PROBE_CALLS // 2


def binding_problem() -> str | None:
    """The message to show instead of starting, or None when the binding is sound."""
    if not binding_loses_none():
        return None
    return (
        f"PySide6 {PySide6.__version__} on Python {sys.version_info.major}.{sys.version_info.minor} loses "
        "references to None on every Qt call and would crash the app after a few minutes of use. "
        "Install another release (python -m pip install 'PySide6-Essentials!=6.12.0') or use Python 3.12 or newer."
    )

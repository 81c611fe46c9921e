"""Keep the app alive on Qt bindings that drop references to None (and True and False) they never took.

PySide6 6.12.0 (abi3 wheels) on CPython 3.10/3.11 releases one reference to None more than it takes each time a
Qt method without a result returns to Python (`widget.update()`, `signal.emit(...)`, `QToolTip.showText(...)`), and
loses references to True and False on some paths too. On Python 3.12+ these objects are immortal and nothing
happens; on 3.10/3.11 their counts fall, and when one reaches zero the interpreter aborts ("Fatal Python error:
none_dealloc" or "bool_dealloc") — in the desktop app after about a hundred artifact selections, or when it quits
after a longer session. Where a probe at start-up sees the loss, references to these objects are added back on a
timer, in lists that are never freed (not even when the interpreter shuts down, which releases everything else):
the crash becomes a leak of eight bytes per lost reference. Elsewhere this module does nothing.
"""

from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QObject, QTimer, Slot

PROBE_CALLS = 256
RESERVE = 500_000  # references held from the start to each guarded object (4 MB each)
CHECK_MS = 250
GUARDED = (None, True, False)


def binding_loses_none() -> bool:
    """True when calling a Qt method that returns nothing makes None's reference count fall."""
    if sys.version_info >= (3, 12):
        return False  # None is immortal: its count cannot fall
    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(PROBE_CALLS):
        probe.setObjectName("probe")
    return before - sys.getrefcount(None) >= PROBE_CALLS // 2


def _hold_forever(refs: list[object]) -> None:
    """Give the list a reference nobody releases, so the references it holds are never given back."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(refs))


class NoneReserve(QObject):
    """Adds back, every CHECK_MS on the GUI thread, the references to None, True and False the binding dropped.

    A reserve held from the start covers what the timer cannot see: a loss hidden by references the app itself
    takes meanwhile, which come back when the interpreter shuts down.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        for obj in GUARDED:
            _hold_forever([obj] * RESERVE)
        self.floors = [sys.getrefcount(obj) for obj in GUARDED]
        self.added = 0
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_MS)
        self._timer.timeout.connect(self.top_up)
        self._timer.start()

    @Slot()
    def top_up(self) -> None:
        for obj, floor in zip(GUARDED, self.floors, strict=True):
            deficit = floor - sys.getrefcount(obj)
            if deficit > 0:
                _hold_forever([obj] * deficit)
                self.added += deficit


def install(parent: QObject) -> NoneReserve | None:
    """Start the reserve (owned by parent, e.g. the QApplication) when this binding needs it."""
    return NoneReserve(parent) if binding_loses_none() else None

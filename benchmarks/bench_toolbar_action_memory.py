"""Issue 28 item 5: glibc malloc grows each time an action shown in a QToolBar changes (Qt, not the app).

Found by bisecting bench_gui_memory.py --steps compare: what remains after the Compare dialog is ruled out is the
selection enabling and disabling the window's actions, and only those in the toolbar. This reproduces it without
the app: six QActions, enabled and disabled CYCLES times, added to a QToolBar, to a QMenu, or to nothing, and prints
malloc's bytes in use per cycle (least squares after a warm-up). A growth in "toolbar" alone, flat in the others,
is Qt's (or PySide's) to fix; the app can only change actions less often.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_toolbar_action_memory.py [--cycles 1200]
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from _common import malloc_in_use_kb, slope
from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMainWindow, QToolBar, QWidget

WARMUP = 200
REPORT = 50


def measure(where: str, cycles: int) -> float:
    """KB of malloc growth per cycle (six actions disabled then enabled) with the actions in `where`."""
    window = QMainWindow()
    window.setCentralWidget(QWidget())
    actions = [QAction(f"Action {i}…", window) for i in range(6)]
    if where == "toolbar":
        toolbar = QToolBar("Toolbar", window)
        window.addToolBar(toolbar)
        for action in actions:
            toolbar.addAction(action)
    elif where == "menu":
        menu = window.menuBar().addMenu("&Menu")
        for action in actions:
            menu.addAction(action)
    window.show()
    points = []
    for cycle in range(1, cycles + 1):
        for enabled in (False, True):
            for action in actions:
                action.setEnabled(enabled)
            QCoreApplication.sendPostedEvents(None, 0)
            QCoreApplication.processEvents()
        if cycle % REPORT == 0:
            gc.collect()
            ctypes.CDLL("libc.so.6").malloc_trim(0)
            if cycle > WARMUP:
                points.append((cycle, malloc_in_use_kb()))
    window.close()
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, 0)
    return slope(points)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=1200)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    for where in ("none", "menu", "toolbar"):
        print(f"actions in {where:8s} malloc {measure(where, args.cycles):6.3f} KB a cycle", flush=True)
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`rbln-studio --smoke-test`: once the main window has shown, check what a broken bundle would lack, print, exit."""

from __future__ import annotations

import sys

from PySide6.QtCore import QTimer, qVersion
from PySide6.QtWidgets import QApplication, QMainWindow

from rbln_artifact_studio import __version__
from rbln_artifact_studio.core.model.modelspec import preset_ids
from rbln_artifact_studio.core.resources import docs_dir


def problems(app: QApplication, window: QMainWindow) -> list[str]:
    found = []
    if not window.isVisible():
        found.append("the main window is not visible")
    if app.windowIcon().isNull():
        found.append("the application icon did not load (resources/icons)")
    try:
        if not preset_ids():
            found.append("no bundled model presets (resources/model-configs)")
    except Exception as exc:  # a broken bundle is exactly what this reports
        found.append(f"the model presets cannot be read: {exc}")
    if docs_dir() is None:
        found.append("the documentation is missing (docs/desktop.md): Help ▸ Documentation has nothing to open")
    return found


def report_and_exit(app: QApplication, window: QMainWindow) -> None:
    """After the event loop has run once (the window shown and painted): one line on stdout, exit 0, or 1 with why.

    The window is not closed, so nothing is written to the user's settings.
    """

    def report() -> None:
        app.processEvents()
        found = problems(app, window)
        if found:
            print(f"rbln-studio {__version__} smoke test failed: {'; '.join(found)}", file=sys.stderr, flush=True)
            app.exit(1)
            return
        print(
            f"rbln-studio {__version__} smoke test: main window shown on {app.platformName()} (Qt {qVersion()}), "
            f"icon and {len(preset_ids())} model presets loaded; style {app.style().name()}, "
            f"{'right to left' if app.isRightToLeft() else 'left to right'}, window {window.width()}x{window.height()}",
            flush=True,
        )
        app.exit(0)

    QTimer.singleShot(0, report)

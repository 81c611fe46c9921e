"""The QApplication: its names (window class, desktop entry), icon, and the excepthook."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

from rbln_artifact_studio import __version__
from rbln_artifact_studio.gui.app.app_paths import APP_DIR, DESKTOP_FILE, app_icon
from rbln_artifact_studio.gui.app.errors import install_excepthook

DISPLAY_NAME = "RBLN Artifact Studio"


def configure(app: QApplication) -> None:
    # No organization name: settings and data each live in one `rbln-studio` folder (see app_paths).
    app.setOrganizationName("")
    app.setApplicationName(APP_DIR)  # also the X11 window class the .desktop file's StartupWMClass names
    app.setApplicationDisplayName(DISPLAY_NAME)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(DESKTOP_FILE)
    app.setWindowIcon(app_icon())


def create_application(argv: list[str] | None = None) -> QApplication:
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(argv or sys.argv[:1])
    configure(app)
    install_excepthook()
    return app

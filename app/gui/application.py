"""The QApplication: names for QSettings and data folders, and the excepthook."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

from app import __version__
from app.gui.errors import install_excepthook

ORGANIZATION = "RBLN Artifact Studio"
APPLICATION = "rbln-studio"


def configure(app: QApplication) -> None:
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("RBLN Artifact Studio")
    app.setApplicationVersion(__version__)


def create_application(argv: list[str] | None = None) -> QApplication:
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(argv or sys.argv[:1])
    configure(app)
    install_excepthook()
    return app

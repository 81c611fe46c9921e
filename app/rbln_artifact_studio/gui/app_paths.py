"""Where the desktop app keeps its things: one `rbln-studio` folder each for settings and data, and its icon."""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings, QStandardPaths
from PySide6.QtGui import QIcon

from rbln_artifact_studio.core.resources import resource_dir

APP_DIR = "rbln-studio"
"""The folder name under ~/.config (settings) and ~/.local/share (data); also the scan cache's (rbln_artifact_studio.core.fleet.scan_cache)."""

DESKTOP_FILE = "io.github.rbln_artifact_studio.RblnStudio"
"""The .desktop entry and AppStream id (packaging/); Wayland and the X11 window class point back to it."""

DEMO_FOLDER = "demo-workspace"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)

# Version 0.1.0 set the organization name too, which put everything one folder deeper, under a name with spaces.
LEGACY_ORGANIZATION = "RBLN Artifact Studio"


def data_folder() -> str:
    """~/.local/share/rbln-studio (the platform's user data folder, then our one folder)."""
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    return os.path.join(base or os.path.expanduser("~/.local/share"), APP_DIR)


def demo_folder() -> str:
    """Where `rbln-studio --demo` keeps its workspace."""
    return os.path.join(data_folder(), DEMO_FOLDER)


def settings_store() -> QSettings:
    """The user's settings file: ~/.config/rbln-studio/rbln-studio.conf on Linux."""
    return QSettings(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, APP_DIR, APP_DIR)


def legacy_settings_store() -> QSettings:
    """Where 0.1.0 kept them: ~/.config/RBLN Artifact Studio/rbln-studio.conf."""
    return QSettings(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, LEGACY_ORGANIZATION, APP_DIR)


def app_icon() -> QIcon:
    """The application icon in every size shipped in resources/icons (PNG: no SVG plug-in needed)."""
    icon = QIcon()
    folder = resource_dir() / "icons"
    for size in ICON_SIZES:
        path = folder / f"rbln-studio-{size}.png"
        if path.is_file():
            icon.addFile(str(path))
    return icon

"""Where the desktop app keeps its things: one `rbln-studio` folder each for settings and data, and its icon."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtGui import QIcon

from rbln_artifact_studio.core import app_dirs
from rbln_artifact_studio.core.resources import resource_dir

APP_DIR = app_dirs.APP_DIR
"""The folder name under ~/.config (settings), ~/.local/share (data) and ~/.cache (scans): core/app_dirs.py."""

DESKTOP_FILE = "io.github.rbln_artifact_studio.RblnStudio"
"""The .desktop entry and AppStream id (packaging/); Wayland and the X11 window class point back to it."""

ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def data_folder() -> str:
    """~/.local/share/rbln-studio (the platform's user data folder, then our one folder)."""
    return str(app_dirs.data_dir())


def demo_folder() -> str:
    """Where `rbln-studio --demo` keeps its workspace."""
    return str(app_dirs.demo_dir())


def settings_store() -> QSettings:
    """The user's settings file: ~/.config/rbln-studio/rbln-studio.conf on Linux (INI, as Qt writes it there)."""
    return QSettings(str(app_dirs.settings_file()), QSettings.Format.IniFormat)


def legacy_settings_store() -> QSettings:
    """Where 0.1.0 kept them: ~/.config/RBLN Artifact Studio/rbln-studio.conf."""
    return QSettings(str(app_dirs.legacy_settings_file()), QSettings.Format.IniFormat)


def app_icon() -> QIcon:
    """The application icon in every size shipped in resources/icons (PNG: no SVG plug-in needed)."""
    icon = QIcon()
    folder = resource_dir() / "icons"
    for size in ICON_SIZES:
        path = folder / f"rbln-studio-{size}.png"
        if path.is_file():
            icon.addFile(str(path))
    return icon

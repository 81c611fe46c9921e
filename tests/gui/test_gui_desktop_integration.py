"""Desktop integration: one `rbln-studio` folder for settings and data, the app icon, the desktop file name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QSize, QStandardPaths
from PySide6.QtWidgets import QApplication

from rbln_artifact_studio.gui import app_paths
from rbln_artifact_studio.gui.application import configure
from rbln_artifact_studio.gui.main_window import MainWindow
from rbln_artifact_studio.gui.settings import Settings, migrate

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def configured_app(qapp: QApplication) -> Iterator[QApplication]:
    """The test QApplication configured as rbln-studio configures its own; names restored afterwards."""
    saved = (qapp.organizationName(), qapp.applicationName(), qapp.applicationDisplayName(), qapp.desktopFileName())
    configure(qapp)
    yield qapp
    qapp.setOrganizationName(saved[0])
    qapp.setApplicationName(saved[1])
    qapp.setApplicationDisplayName(saved[2])
    qapp.setDesktopFileName(saved[3])


def test_demo_workspace_lives_in_one_rbln_studio_data_folder(configured_app: QApplication) -> None:
    generic = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    assert app_paths.demo_folder() == str(Path(generic) / "rbln-studio" / "demo-workspace")
    # Qt's own notion of the app's data folder agrees (no organization folder above it).
    app_data = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppLocalDataLocation)
    assert app_data == app_paths.data_folder() == str(Path(generic) / "rbln-studio")
    assert "RBLN Artifact Studio" not in app_paths.demo_folder()


def test_settings_live_in_one_rbln_studio_config_folder() -> None:
    path = Path(app_paths.settings_store().fileName())
    assert path.parts[-2:] == ("rbln-studio", "rbln-studio.conf")
    assert "RBLN Artifact Studio" not in str(path)
    assert Path(app_paths.legacy_settings_store().fileName()).parts[-2:] == ("RBLN Artifact Studio", "rbln-studio.conf")


def test_old_settings_move_to_the_new_file_once(tmp_path: Path) -> None:
    legacy = QSettings(str(tmp_path / "old.ini"), QSettings.Format.IniFormat)
    legacy.setValue("recentFolders", ["/data/artifacts", "/srv/models"])
    legacy.sync()
    store = QSettings(str(tmp_path / "new.ini"), QSettings.Format.IniFormat)
    assert migrate(store, legacy)
    assert Settings(store).recent_folders() == ["/data/artifacts", "/srv/models"]
    legacy.setValue("recentFolders", ["/elsewhere"])
    assert not migrate(store, legacy)  # the new file has settings of its own now: never overwritten
    assert Settings(store).recent_folders() == ["/data/artifacts", "/srv/models"]


def test_application_names_match_the_desktop_entry(configured_app: QApplication) -> None:
    assert configured_app.desktopFileName() == app_paths.DESKTOP_FILE
    assert (REPO / "packaging" / f"{app_paths.DESKTOP_FILE}.desktop").is_file()
    desktop = (REPO / "packaging" / f"{app_paths.DESKTOP_FILE}.desktop").read_text()
    # X11 window class = the application name; the .desktop entry names it so docks group the window under it.
    assert f"StartupWMClass={configured_app.applicationName()}" in desktop.splitlines()
    assert configured_app.organizationName() == ""


def test_application_and_window_use_the_app_icon(configured_app: QApplication, window: MainWindow) -> None:
    for icon in (configured_app.windowIcon(), window.windowIcon()):
        assert not icon.isNull()
        sizes = {(s.width(), s.height()) for s in icon.availableSizes()}
        assert {(16, 16), (32, 32), (48, 48), (256, 256)} <= sizes
        assert icon.pixmap(QSize(64, 64)).width() == 64

"""Desktop integration: one `rbln-studio` folder for settings and data, the app icon, the desktop file name."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QSize
from PySide6.QtWidgets import QApplication

from rbln_artifact_studio.gui.app import app_paths
from rbln_artifact_studio.gui.app.application import configure
from rbln_artifact_studio.gui.app.settings import Settings, migrate
from rbln_artifact_studio.gui.window.main_window import MainWindow

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


def test_demo_workspace_lives_in_one_rbln_studio_data_folder(
    configured_app: QApplication, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("RBLN_STUDIO_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert app_paths.demo_folder() == str(tmp_path / "share" / "rbln-studio" / "demo-workspace")
    assert app_paths.data_folder() == str(tmp_path / "share" / "rbln-studio")
    assert "RBLN Artifact Studio" not in app_paths.demo_folder()


NATIVE_SETTINGS_FILE = """
from PySide6.QtCore import QSettings
print(QSettings(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, "rbln-studio", "rbln-studio").fileName())
"""


def test_settings_live_in_one_rbln_studio_config_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("RBLN_STUDIO_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = Path(app_paths.settings_store().fileName())
    assert path == tmp_path / "config" / "rbln-studio" / "rbln-studio.conf"
    assert "RBLN Artifact Studio" not in str(path)
    legacy = Path(app_paths.legacy_settings_store().fileName())
    assert legacy == tmp_path / "config" / "RBLN Artifact Studio" / "rbln-studio.conf"
    # The file Qt itself would use for these names (what 0.2 wrote) is the one we use: nothing is lost. Asked in a
    # fresh process: Qt settles its settings folders once per process, and this one runs in test mode.
    native = subprocess.run(
        [sys.executable, "-c", NATIVE_SETTINGS_FILE],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")},
        timeout=60,
        check=True,
    )
    assert Path(native.stdout.strip()) == path


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

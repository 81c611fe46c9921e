"""About box and Preferences: versions, locations, backends detected in a job, toolchain paths kept in QSettings."""

from __future__ import annotations

import os
import platform
import threading
from pathlib import Path

import PySide6
import pytest
from fakes.install import FakeToolchain
from PySide6.QtCore import QSettings, Qt, qVersion
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QMenu, QPlainTextEdit, QPushButton
from pytestqt.qtbot import QtBot

from rbln_artifact_studio import __version__
from rbln_artifact_studio.backends import registry
from rbln_artifact_studio.backends.settings import (
    ENV_CHECK_TIMEOUT,
    ENV_OPTIMUM_CLI,
    ENV_TOOLCHAIN_PYTHON,
    current_settings,
)
from rbln_artifact_studio.gui.app.app_paths import demo_folder
from rbln_artifact_studio.gui.app.settings import Settings, ToolchainPaths
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .widgets import child

pytest_plugins = ["fakes.plugin"]


@pytest.fixture
def detect_threads(monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    """Which threads ran detect_backends (the GUI thread never may: it runs subprocesses)."""
    threads: list[threading.Thread] = []
    original = registry.detect_backends

    def recording(refresh: bool = False, cancel=None, toolchain=None):
        threads.append(threading.current_thread())
        return original(refresh=refresh, cancel=cancel, toolchain=toolchain)

    monkeypatch.setattr(registry, "detect_backends", recording)
    return threads


def _dialog(window: MainWindow, name: str) -> QDialog:
    dialog = child(window, QDialog, name)
    assert dialog is not None and dialog.isVisible(), name
    return dialog


def _line(text: str, name: str) -> str:
    return next(line for line in text.splitlines() if line.strip().startswith(name + " "))


def test_about_box_fills_in_backends_from_a_job(
    qtbot: QtBot, window: MainWindow, no_toolchain: None, detect_threads: list[threading.Thread]
) -> None:
    child(window, type(window.action_about), "actionAbout").trigger()
    about = _dialog(window, "aboutDialog")
    text = child(about, QPlainTextEdit, "aboutText")
    first = text.toPlainText()
    assert "Backends:\n  detecting…" in first  # the dialog is up before detection has even started
    assert first.splitlines()[0] == f"RBLN Artifact Studio {__version__}"
    assert f"Qt {qVersion()} · PySide6 {PySide6.__version__} · Python {platform.python_version()}" in first
    assert f"Settings: {window.settings.file_name()}" in first
    assert f"Demo workspace: {demo_folder()}" in first and demo_folder().endswith("rbln-studio/demo-workspace")

    qtbot.waitUntil(lambda: "detecting…" not in text.toPlainText())
    done = text.toPlainText()
    assert _line(done, "sim").split()[:2] == ["sim", "available"]
    assert "optimum-rbln-cli not found on PATH" in _line(done, "optimum")
    assert _line(done, "optimum").split()[:3] == ["optimum", "not", "available"]
    assert detect_threads and threading.main_thread() not in detect_threads

    qtbot.mouseClick(child(about, QPushButton, "aboutCopyButton"), Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == done
    about.close()


def test_about_box_shows_optimum_when_it_is_installed(
    qtbot: QtBot, window: MainWindow, fake_optimum: FakeToolchain
) -> None:
    about = window.dialogs.show_about()
    text = child(about, QPlainTextEdit, "aboutText")
    qtbot.waitUntil(lambda: "detecting…" not in text.toPlainText(), timeout=20_000)
    optimum = _line(text.toPlainText(), "optimum")
    assert optimum.split()[:3] == ["optimum", "available", "0.12.0"] and str(fake_optimum.path_dir) in optimum
    assert _line(text.toPlainText(), "rebel").split()[:2] == ["rebel", "available"]
    about.close()


def _wait_detected(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: not window.backend_status.detecting, timeout=20_000)


def test_preferences_point_at_a_toolchain_and_keep_it(
    qtbot: QtBot,
    window: MainWindow,
    settings: Settings,
    no_toolchain: None,
    toolchain: FakeToolchain,
    detect_threads: list[threading.Thread],
) -> None:
    action = child(window, type(window.action_preferences), "actionPreferences")
    file_menu = window.menuBar().actions()[0].menu()
    assert isinstance(file_menu, QMenu)
    assert not action.shortcut().isEmpty() and action in file_menu.actions()
    action.trigger()
    prefs = _dialog(window, "preferencesDialog")
    status = child(prefs, QPlainTextEdit, "prefsBackends")
    _wait_detected(qtbot, window)
    assert "optimum  not available" in status.toPlainText()

    # A virtual environment that is not activated: naming its folder is enough (the CLI is found beside its Python).
    qtbot.keyClicks(child(prefs, QLineEdit, "prefsToolchainPython"), str(toolchain.root))
    detect = child(prefs, QPushButton, "prefsDetectButton")
    qtbot.mouseClick(detect, Qt.MouseButton.LeftButton)
    assert status.toPlainText() == "detecting…" and not detect.isEnabled()
    _wait_detected(qtbot, window)
    assert _line(status.toPlainText(), "optimum").split()[:3] == ["optimum", "available", "0.12.0"]
    assert "beside the configured Python" in status.toPlainText()
    assert _line(status.toPlainText(), "rebel").split()[:2] == ["rebel", "available"]
    assert threading.main_thread() not in detect_threads

    child(prefs, QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
    assert not prefs.isVisible()
    assert settings.toolchain() == ToolchainPaths(str(toolchain.root), "")
    assert window.backend_status.toolchain == settings.toolchain()  # what detection (and each job) is given
    assert current_settings().toolchain_python is None  # nothing was set for the whole process

    # Persisted in the settings file with the rest, and applied when the app starts again.
    window.save_state()
    again = MainWindow(Settings(QSettings(settings.file_name(), QSettings.Format.IniFormat)))
    qtbot.addWidget(again)
    assert again.settings.toolchain().toolchain_python == str(toolchain.root)
    assert again.backend_status.toolchain.settings().toolchain_python == str(toolchain.root)


def test_cancel_puts_the_saved_toolchain_back(
    qtbot: QtBot, window: MainWindow, settings: Settings, no_toolchain: None, toolchain: FakeToolchain
) -> None:
    prefs = window.dialogs.show_preferences()
    status = child(prefs, QPlainTextEdit, "prefsBackends")
    child(prefs, QLineEdit, "prefsOptimumCli").setText(str(toolchain.cli))
    prefs.detect_again()
    _wait_detected(qtbot, window)
    assert "optimum  available" in status.toPlainText()
    child(prefs, QDialogButtonBox).button(QDialogButtonBox.StandardButton.Cancel).click()
    assert window.backend_status.toolchain == settings.toolchain() == ToolchainPaths()
    assert window.backend_status.detecting  # detected again with the saved (empty) paths
    _wait_detected(qtbot, window)
    assert not window.backend_status.info("optimum").available  # type: ignore[union-attr]


def test_an_environment_variable_wins_and_preferences_say_so(
    qtbot: QtBot, window: MainWindow, no_toolchain: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENV_TOOLCHAIN_PYTHON, str(tmp_path / "env-python"))
    prefs = window.dialogs.show_preferences()
    note = child(prefs, QLabel, "prefsEnvNote").text()
    assert f"{ENV_TOOLCHAIN_PYTHON} is set ({tmp_path / 'env-python'}) and takes precedence" in note
    _wait_detected(qtbot, window)
    prefs.close()


# The thread method: closing waits in Qt's waitForDone, which no signal interrupts; a close that waited for the
# check's 600 s timeout (twice pytest-timeout's 300 s) ends the run with every thread's stack instead of hanging it.
@pytest.mark.timeout(method="thread")
def test_closing_the_window_stops_a_detection_that_hangs(
    qtbot: QtBot, window: MainWindow, no_toolchain: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started_marker = tmp_path / "started"
    cli = tmp_path / "optimum-rbln-cli"
    # Its process id, written whole before the name appears; then it sleeps in the same process (exec).
    cli.write_text(
        f'#!/bin/sh\necho $$ > "{started_marker}.new"\nmv "{started_marker}.new" "{started_marker}"\nexec sleep 600\n'
    )
    cli.chmod(0o755)
    monkeypatch.setenv(ENV_OPTIMUM_CLI, str(cli))
    monkeypatch.setenv(ENV_CHECK_TIMEOUT, "600")
    window.backend_status.detect(refresh=True)
    qtbot.waitUntil(started_marker.exists)  # the check is running
    window.close()
    with pytest.raises(ProcessLookupError):  # stopped and reaped by the close, not left to sleep on
        os.kill(int(started_marker.read_text()), 0)

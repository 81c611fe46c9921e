"""SIGTERM and SIGINT close the window as its close button does: the running copy is cancelled and its staging
folder removed, the settings and the window's state are saved, and the app exits with 128 + the signal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.backends.settings import ToolchainSettings
from rbln_artifact_studio.core.location import LocalFolder
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.storage import faults
from rbln_artifact_studio.core.storage.fsutil import PARTIAL_TAG
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.app.stop_signals import StopSignals
from rbln_artifact_studio.gui.models import operations
from rbln_artifact_studio.gui.window.main_window import MainWindow

SRC = Path(__file__).resolve().parents[2] / "app"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_copy_closes_the_window_and_leaves_nothing_behind(
    qtbot: QtBot, window: MainWindow, settings: Settings, cr13_artifact: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    out = tmp_path / "copy-kv12"
    stops = StopSignals(window, quit_app=False)

    def at_step(step: str) -> None:
        # The copy is staged: the signal arrives now, and the copy goes on (as a long one would) until cancelled.
        if step == "copy.copied":
            os.kill(os.getpid(), sig)
            deadline = time.monotonic() + 30
            while not copy.token.cancelled and time.monotonic() < deadline:
                time.sleep(0.005)

    previous = faults.install(at_step)
    try:
        copy = operations.resize(
            window.jobs, ResizeRequest(LocalFolder(cr13_artifact), 12, output=LocalFolder(out)), ToolchainSettings()
        )
        # The worker's report of how it ended is queued to the GUI thread, which the close held in jobs.wait().
        qtbot.waitUntil(lambda: not window.isVisible() and copy.state.ended, timeout=30_000)
    finally:
        faults.install(previous)
        stops.restore()
    assert copy.state.value == "cancelled"
    assert [p.name for p in tmp_path.iterdir() if PARTIAL_TAG in p.name] == [] and not out.exists()
    saved = Settings(QSettings(settings.file_name(), QSettings.Format.IniFormat))
    assert saved.state("geometry") is not None  # the window's state, saved as on close


def test_sigterm_ends_the_app_with_143_and_its_settings_saved(cr13_artifact: Path, tmp_path: Path) -> None:
    config = tmp_path / "config"
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "QT_QPA_PLATFORM": "offscreen",
        "RBLN_STUDIO_CONFIG_DIR": str(config),
        "RBLN_STUDIO_CACHE_DIR": str(tmp_path / "cache"),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "rbln_artifact_studio.gui.main", str(cr13_artifact.parent)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    settings_file = config / "rbln-studio.conf"
    try:
        # The opened folder reaches the recent list as soon as it is opened (no close needed): the app is up.
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if settings_file.is_file() and cr13_artifact.parent.name in settings_file.read_text():
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()[1]
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    saved = QSettings(str(settings_file), QSettings.Format.IniFormat)
    assert saved.value("recentFolders") in ([str(cr13_artifact.parent)], str(cr13_artifact.parent))
    assert saved.contains("state/geometry")  # written by the close the signal made

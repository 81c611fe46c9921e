"""The Qt binding keeps reference counts sound, and a long session ends cleanly; a broken binding is refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli_env

from rbln_artifact_studio.gui.app import binding_check


def test_the_installed_binding_keeps_none_alive(qapp: object) -> None:
    from PySide6.QtWidgets import QWidget

    widget = QWidget()
    before = sys.getrefcount(None)
    for _ in range(1000):
        widget.update()
    assert sys.getrefcount(None) >= before - 10  # 6.12.0 on Python 3.11 loses one per call
    assert binding_check.binding_problem() is None


def test_a_broken_binding_is_refused_with_the_fix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rbln_artifact_studio.gui.main import main

    monkeypatch.setattr(binding_check, "binding_loses_none", lambda: True)
    assert main([]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PySide6-Essentials!=6.12.0" in err


@pytest.mark.slow
def test_the_app_shows_a_thousand_artifacts_and_quits_cleanly(tmp_path: Path) -> None:
    """About a minute: 200 rounds over the five demo artifacts, then File > Quit; exit status 0."""
    overrides = ("RBLN_STUDIO_CONFIG_DIR", "RBLN_STUDIO_DATA_DIR")  # the folders as a user's XDG ones name them
    env = {k: v for k, v in cli_env().items() if k not in overrides} | {
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("long_session.py")), "200"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0 and "details shown: 1000" in done.stdout, done.stderr[-2000:]
    assert (tmp_path / "config" / "rbln-studio" / "rbln-studio.conf").is_file()  # settings written on quit

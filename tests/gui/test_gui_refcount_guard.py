"""The app survives a Qt binding that drops a reference to None per call (PySide6 6.12.0 on Python < 3.12)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli_env

from app.gui.refcount_guard import binding_loses_none

# A quarter of a million calls that return nothing, handing control to the event loop between batches of 5,000,
# as a GUI session does: far more than None's reference count at start-up (about 20,000).
SESSION = """
import sys
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication, QWidget
{setup}
widget = QWidget()
for _ in range(50):
    for _ in range(5_000):
        widget.update()
    loop = QEventLoop()
    QTimer.singleShot(30, loop.quit)
    loop.exec()
print("survived", flush=True)
"""


def _session(setup: str) -> subprocess.CompletedProcess[str]:
    code = SESSION.format(setup=setup)
    env = cli_env() | {"QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_the_probe_sees_what_a_call_does_to_none(qapp: object) -> None:
    from PySide6.QtWidgets import QWidget

    widget = QWidget()
    before = sys.getrefcount(None)
    for _ in range(100):
        widget.update()
    lost = before - sys.getrefcount(None)
    assert binding_loses_none() == (sys.version_info < (3, 12) and lost >= 50)


def test_a_long_session_survives_with_the_application_set_up_as_rbln_studio_does() -> None:
    setup = (
        "import app.gui.refcount_guard as guard\nguard.CHECK_MS = 20  # a check in each pass of the loop below\n"
        "from app.gui.application import create_application\napp = create_application()"
    )
    done = _session(setup)
    assert done.returncode == 0 and done.stdout.strip() == "survived", done.stderr[-2000:]


def test_without_the_reserve_such_a_session_aborts_on_this_binding() -> None:
    """The control: shows the reserve is what keeps the session above alive (skipped on a sound binding)."""
    check = _session(
        "app = QApplication([])\nfrom app.gui.refcount_guard import binding_loses_none as lost\n"
        "print('loses' if lost() else 'sound', flush=True)\nraise SystemExit(0)"
    )
    if "loses" not in check.stdout:
        pytest.skip("this Qt binding keeps None's reference count: there is nothing to guard against")
    done = _session("app = QApplication([])")
    assert done.returncode != 0 and "none_dealloc" in done.stderr


LONG_SESSION = Path(__file__).with_name("long_session.py")


def _long_session(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env() | {
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    return subprocess.run(
        [sys.executable, str(LONG_SESSION), *args], capture_output=True, text=True, env=env, timeout=300
    )


@pytest.mark.slow
def test_the_app_shows_a_thousand_artifacts_and_quits_cleanly(tmp_path: Path) -> None:
    """About a minute: 200 rounds over the five demo artifacts, then File > Quit; exit status 0."""
    done = _long_session(tmp_path, "200")
    assert done.returncode == 0 and "details shown: 1000" in done.stdout, done.stderr[-2000:]
    assert (tmp_path / "config" / "rbln-studio" / "rbln-studio.conf").is_file()  # settings written on quit


@pytest.mark.slow
def test_without_the_guard_the_same_session_aborts_on_this_binding(tmp_path: Path) -> None:
    if not binding_loses_none():
        pytest.skip("this Qt binding keeps None's reference count: there is nothing to guard against")
    done = _long_session(tmp_path, "200", "--no-guard")
    assert done.returncode != 0 and "_dealloc: deallocating" in done.stderr

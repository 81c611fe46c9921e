"""rbln-studio accepts Qt's own options (issue #23 item 2): they go to QApplication, argparse reads only ours."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import cli_env

from rbln_artifact_studio.gui.app.qt_options import split_qt_options


def test_qt_options_and_their_values_are_set_apart_from_ours() -> None:
    ours, qt = split_qt_options(["-style", "fusion", "-reverse", "FOLDER", "--theme", "dark", "-qwindowgeometry=1x1"])
    assert ours == ["FOLDER", "--theme", "dark"]
    assert qt == ["-style", "fusion", "-reverse", "-qwindowgeometry=1x1"]
    assert split_qt_options(["--platform", "offscreen", "--demo"]) == (["--demo"], ["--platform", "offscreen"])
    assert split_qt_options(["--", "-reverse"]) == (["--", "-reverse"], [])  # a folder named like an option


def _studio() -> str:
    return shutil.which("rbln-studio") or str(Path(sys.executable).parent / "rbln-studio")


def test_rbln_studio_starts_with_style_reverse_and_geometry(tmp_path: Path) -> None:
    """The command the issue names starts; Qt applied each option (the smoke line reports what Qt uses)."""
    env = {**cli_env(), "QT_QPA_PLATFORM": os.environ["QT_QPA_PLATFORM"]}
    out = subprocess.run(
        [_studio(), "-style", "fusion", "-reverse", "-qwindowgeometry", "1000x650", str(tmp_path), "--smoke-test"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "unrecognized arguments" not in out.stderr
    assert "style fusion, right to left, window 1000x650" in out.stdout


def test_our_own_mistakes_are_still_refused() -> None:
    out = subprocess.run([_studio(), "--no-such-option"], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert out.returncode == 2 and "unrecognized arguments: --no-such-option" in out.stderr

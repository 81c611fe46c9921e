"""`rbln-studio --smoke-test` opens the main window offscreen, reports, exits 0, and leaves no settings behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import cli_env


def test_smoke_test_shows_the_window_and_exits(tmp_path: Path) -> None:
    env = cli_env() | {
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    code = "import sys\nfrom rbln_artifact_studio.gui.main import main\nsys.exit(main(['--smoke-test']))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert line.startswith("rbln-studio ") and "smoke test: main window shown on offscreen" in line
    assert "icon and " in line and "model presets loaded" in line
    assert not (tmp_path / "config").exists() and not (tmp_path / "data").exists()  # the user's folders untouched

"""Start-up stays light: the main window's modules load without pydantic, the backends or the compiler."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

HEAVY = (
    "pydantic",
    "rbln_artifact_studio.backends.registry",
    "rbln_artifact_studio.backends.optimum",
    "rbln_artifact_studio.core.simulator.compiler",
    "rbln_artifact_studio.core.simulator.container",
    "rbln_artifact_studio.core.fleet.artifact",
)


def test_the_main_window_imports_nothing_heavy() -> None:
    """These load on first use (a scan, a detail view, a dialog), after the window has painted."""
    code = (
        "import sys; from rbln_artifact_studio.gui.main_window import MainWindow; "
        f"print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"

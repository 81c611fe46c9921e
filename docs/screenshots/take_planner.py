"""Take docs/screenshots/planner.png: the README's `plan` example in the planner window.

Run from the repository root under a real X server, e.g. `xvfb-run -s "-screen 0 1280x1024x24" python
docs/screenshots/take_planner.py`. It compiles the two artifacts with the simulator in a temporary folder.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact
from rbln_artifact_studio.gui.dialogs.planner_dialog import PlannerDialog
from rbln_artifact_studio.gui.models.jobs import JobManager

OUT = Path(__file__).resolve().parent / "planner.png"


def main() -> int:
    app = QApplication(sys.argv)
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # short relative paths in the window's command line
        shapes = {
            "qwen3-8b-chat": ("Qwen/Qwen3-8B", 40_960),
            "qwen2.5-14b": ("Qwen/Qwen2.5-14B-Instruct", 32_768),
        }
        for name, (model, seq) in shapes.items():
            request = CompileRequest(model, npu="RBLN-CR13", batch_size=8, max_seq_len=seq, kvcache_partition_len=8192)
            write_artifact(plan_compile(request), Path(name))
        jobs = JobManager()
        dialog = PlannerDialog(jobs, list(shapes), lambda *args: None)
        dialog.resize(1180, 940)
        dialog.show()

        def grab() -> None:
            dialog.grab().save(str(OUT))
            app.quit()

        dialog.planned.connect(lambda: QTimer.singleShot(500, grab))
        app.exec()
        jobs.wait()
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())

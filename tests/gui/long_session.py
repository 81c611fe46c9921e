"""A long desktop session, run as a program by test_gui_binding: open the demo workspace, select artifacts
ROUNDS times each (waiting for each one's details, no sleeps), quit through the window, print how many were shown.

`python long_session.py ROUNDS`.
"""

import functools
import sys
from collections.abc import Callable

from PySide6.QtCore import QEventLoop, QTimer

from rbln_artifact_studio.gui.app.application import create_application
from rbln_artifact_studio.gui.window.main_window import MainWindow


def run_until(condition: Callable[[], object], step_ms: int = 5) -> None:
    loop = QEventLoop()
    timer = QTimer()

    def check() -> None:
        if condition():
            loop.quit()

    timer.timeout.connect(check)
    timer.start(step_ms)
    loop.exec()
    timer.stop()


def _shows(window: MainWindow, path: str) -> bool:
    """Whether the details show the artifact at path."""
    return window.artifact is not None and str(window.artifact.path) == path


app = create_application()
window = MainWindow()
window.show()
window.open_demo()
run_until(lambda: window.model.rowCount() == 5 and not window.workspace.busy)
shown = 0
for _ in range(int(sys.argv[1])):
    for path in window.model.paths():
        window.browser.select_path(path)
        run_until(functools.partial(_shows, window, path))
        shown += 1
window.close()
print(f"details shown: {shown}", flush=True)

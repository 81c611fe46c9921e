"""Take docs/screenshots/connect.png: File ▸ Connect to Server…, filled in as the README's example.

Run from the repository root under a real X server, e.g. `xvfb-run -s "-screen 0 1280x1024x24" python
docs/screenshots/take_connect.py`. Nothing connects: the dialog is shown, filled in and grabbed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from rbln_artifact_studio.gui.app.settings import ServerEntry
from rbln_artifact_studio.gui.dialogs.connect_dialog import ConnectDialog

OUT = Path(__file__).resolve().parent / "connect.png"


def main() -> int:
    app = QApplication(sys.argv)
    remembered = [
        ServerEntry("npu1", ("/srv/artifacts", "~/models/compiled")),
        ServerEntry("ops@10.0.0.7:2222", ("/data",)),
    ]
    dialog = ConnectDialog(remembered)
    dialog.show()

    def grab() -> None:
        dialog.grab().save(str(OUT))
        app.quit()

    QTimer.singleShot(300, grab)
    app.exec()
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())

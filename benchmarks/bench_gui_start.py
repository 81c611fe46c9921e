"""Row 7: `rbln-studio FOLDER` from process start to its first painted window, with a 5,000-artifact folder,
against a bare PySide6 window (QApplication + QWidget, shown).

Both run on Qt's offscreen platform in a fresh process; each prints the wall-clock time of its top-level window's first Paint
event and exits there. Settings go to a throwaway XDG config folder. The scan cache is empty for each run
(the worst case: the scan starts reading at once and competes with the window for the interpreter).

Both start with compiled bytecode, as an installed app does (pip compiles a wheel's modules at install time):
Python writes it during the first, unrecorded round into a scratch PYTHONPYCACHEPREFIX, even where
PYTHONDONTWRITEBYTECODE is set (as on the machine of docs/performance.md, where every start otherwise compiled
our ~60 modules from source, ~60 ms that no installed copy pays). --source measures that case instead.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

from _common import build_fleet, cpu_seconds, env, machine, python, scratch

FIRST_PAINT = """
import os, sys, time
APP_FILTER = bool(os.environ.get("BENCH_APP_FILTER"))
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and isinstance(obj, QWidget):
            print(time.time(), flush=True)
            os._exit(0)
        return False

first_paint = FirstPaint()
"""

# Where the Paint filter goes: on the top-level window (the default), or on the whole application (--app-filter,
# how this row was measured before 2026-12-04 22:15 UTC). An application-wide Python filter is called for every
# event of every object (thousands before a main window's first paint, a handful for the bare window), and it makes
# PySide wrap each object it sees (loading the types and enums of classes no code of ours touches): ~90 M
# instructions of ours against ~4 M of the bare window's, a cost of the measurement, not of the app. The window
# paints itself first in the paint that draws its children, so both ways time the same paint.
OURS = (
    FIRST_PAINT
    + """
import rbln_artifact_studio.gui.app.application as application
create = application.create_application
def create_and_watch(*args, **kwargs):
    app = create(*args, **kwargs)
    if APP_FILTER:
        app.installEventFilter(first_paint)
    else:  # gui.main has imported the window's module by now; its window shows after this returns
        window_class = sys.modules["rbln_artifact_studio.gui.window.main_window"].MainWindow
        show = window_class.show
        def show_and_watch(self):
            self.installEventFilter(first_paint)
            show(self)
        window_class.show = show_and_watch
    return app
application.create_application = create_and_watch
from rbln_artifact_studio.gui.main import main
main([sys.argv[1]])
"""
)

BARE = (
    FIRST_PAINT
    + """
app = QApplication(sys.argv[:1])
window = QWidget()
(app if APP_FILTER else window).installEventFilter(first_paint)
window.resize(1200, 800)
window.show()
app.exec()
"""
)


def first_paint(argv: list[str], extra_env: dict[str, str]) -> tuple[float, float]:
    """Seconds from the start of the process to its first Paint event, and the CPU time it used (it exits there)."""
    cpu, start = cpu_seconds(), time.time()
    out = subprocess.run(argv, capture_output=True, text=True, env={**env(), **extra_env}, timeout=120)
    if out.returncode != 0 or not out.stdout.strip():
        sys.exit(f"{argv[:3]} failed: {out.stderr[-1500:]}")
    return float(out.stdout.split()[-1]) - start, cpu_seconds() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--source", action="store_true", help="no bytecode cache: compile every module each start")
    parser.add_argument(
        "--app-filter", action="store_true", help="watch for the first paint application-wide (the old harness)"
    )
    args = parser.parse_args()
    print(machine())
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with scratch("start") as root:
        build_fleet(root / "fleet", args.count)
        qt_env = {"QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(root / "config")}
        if args.app_filter:
            qt_env["BENCH_APP_FILTER"] = "1"
        if args.source:
            qt_env["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            qt_env |= {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": str(root / "bytecode")}
        ours_env = {**qt_env, "RBLN_STUDIO_CACHE_DIR": str(root / "cache")}
        ours_argv = [python(), "-c", OURS, str(root / "fleet")]
        bare_argv = [python(), "-c", BARE]
        ours: list[float] = []
        bare: list[float] = []
        ours_cpu: list[float] = []
        bare_cpu: list[float] = []
        for i in range(args.runs + 1):  # the first round warms the page cache and is not recorded
            shutil.rmtree(root / "cache", ignore_errors=True)
            pair = [(ours, ours_cpu, ours_argv, ours_env), (bare, bare_cpu, bare_argv, qt_env)]
            for series, cpu_series, argv, extra in pair if i % 2 else reversed(pair):
                t, used = first_paint(argv, extra)
                if i:
                    series.append(t)
                    cpu_series.append(used)
        m_ours, m_bare = statistics.median(ours), statistics.median(bare)
        pairs = sorted(o / b for o, b in zip(ours, bare, strict=True))
        print(f"first paint, {args.count}-artifact folder (row 7):")
        print(f"  ours      median {m_ours * 1000:7.1f} ms  (min {min(ours) * 1000:.1f}, max {max(ours) * 1000:.1f})")
        print(f"  bare      median {m_bare * 1000:7.1f} ms  (min {min(bare) * 1000:.1f}, max {max(bare) * 1000:.1f})")
        print(f"  per-round ratios {pairs[0]:.2f} .. {pairs[-1]:.2f} over {len(pairs)} interleaved rounds")
        c_ours, c_bare = statistics.median(ours_cpu), statistics.median(bare_cpu)
        print(f"  CPU time: ours {c_ours * 1000:.1f} ms, bare {c_bare * 1000:.1f} ms, ratio {c_ours / c_bare:.2f}")
        print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print("bytecode: " + ("none (compiled from source each start)" if args.source else "cached, as installed"))
        print(
            "first paint watched on: "
            + ("the application (every object's events)" if args.app_filter else "the window")
        )
        ratio = m_ours / m_bare
        print(f"ratio {ratio:.2f} (goal <= 2: {'holds' if ratio <= 2 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.exit(main())

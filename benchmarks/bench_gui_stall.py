"""Row 6: `rbln-studio FOLDER` started fresh on 5,000 artifacts; the GUI thread's longest stall (10 ms heartbeat)
from the first event-loop turn until the first artifact's details are shown.

Each run is a new process started the way the `rbln-studio` console script starts: it imports
`rbln_artifact_studio.gui.main` and calls `main([FOLDER])`; nothing of the app is imported beforehand, so every
import the app makes on the way (pydantic, the artifact reader, the backends) is paid where a user pays it. The only
addition is a hook on `create_application` (the module main imports itself before it creates the application) that
starts a 10 ms timer on the first event-loop turn. The scan cache and the settings are empty for every run (the
worst case: a first start). A run ends 300 ms after the detail panel shows the first artifact, so the paint that
follows is counted too. Qt's offscreen platform.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass

from _common import build_fleet, env, machine, python, scratch, write_bytecode

GOAL = 0.050

HARNESS = r"""
import json, os, resource, sys, time

import rbln_artifact_studio.gui.app.application as application

modules_before = set(sys.modules)
create = application.create_application


def create_and_watch(*args, **kwargs):
    app = create(*args, **kwargs)
    from PySide6.QtCore import QTimer

    until, expected = sys.argv[2], int(sys.argv[3])  # "details": the first artifact shown; "filled": every row in
    state = {"gaps": [], "last": None, "shown": None, "worst": (0.0, 0.0, 0), "start": None, "first_rows": None,
             "window_painted": None}
    timer = QTimer()
    timer.setInterval(10)

    def tick():
        now = time.monotonic()
        window = app.property("mainWindow")
        rows = window.model.rowCount() if window is not None else 0
        gap = now - state["last"]
        if gap > state["worst"][0]:
            state["worst"] = (gap, now - state["start"], rows)
        state["gaps"].append(gap)
        state["last"] = now
        if state["window_painted"] is None and window is not None:
            window.browser.painted.connect(lambda: painted(window))
            state["window_painted"] = 0.0
        if state["shown"] is None and window is not None:
            if until == "details" and window.detail.artifact is not None:
                state["shown"] = now
            if until == "filled" and not window.workspace.busy and rows == expected:
                state["shown"] = now
        tail = 0.3 if until == "details" else 0.0  # details: the paint that follows counts too
        if state["shown"] is not None and now - state["shown"] >= tail or now - state["start"] > 600:
            gaps = state["gaps"]
            print(json.dumps({
                "worst": state["worst"][0], "at": state["worst"][1], "rows": state["worst"][2],
                "shown": None if state["shown"] is None else state["shown"] - state["start"],
                "ticks": len(gaps), "p99": sorted(gaps)[int(len(gaps) * 0.99)],
                "first_rows": state["first_rows"], "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                "app_modules_before": sorted(m for m in modules_before if m.startswith("rbln_artifact_studio")),
            }), flush=True)
            os._exit(0)

    def painted(window):  # the table repainted: the first time with rows in it is when a user first sees rows
        if state["first_rows"] is None and window.model.rowCount() > 0:
            state["first_rows"] = time.monotonic() - state["start"]

    def first_turn():
        state["start"] = state["last"] = time.monotonic()
        timer.timeout.connect(tick)
        timer.start()

    QTimer.singleShot(0, first_turn)
    app._heartbeat = timer
    return app


application.create_application = create_and_watch
from rbln_artifact_studio.gui.main import main

main([sys.argv[1]])
"""


@dataclass(frozen=True)
class Run:
    """What the harness printed: the longest gap, when it ended (s) and the rows then, when details showed."""

    worst: float
    at: float
    rows: int
    shown: float | None
    ticks: int
    p99: float
    app_modules_before: list[str]
    first_rows: float | None
    peak_rss: int


IDLE = r"""
import sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QWidget

app = QApplication(sys.argv[:1])
window = QWidget()
window.show()
gaps, last = [], [None]

def tick():
    now = time.monotonic()
    if last[0] is not None:
        gaps.append(now - last[0])
    last[0] = now

timer = QTimer()
timer.timeout.connect(tick)
timer.start(10)
QTimer.singleShot(int(float(sys.argv[1]) * 1000), app.quit)
app.exec()
print(max(gaps))
"""


def noise_floor(seconds: float) -> float:
    """The longest gap of the same heartbeat in an idle bare window: what the machine's load alone costs."""
    out = subprocess.run(
        [python(), "-c", IDLE, str(seconds)],
        capture_output=True,
        text=True,
        env={**env(), "QT_QPA_PLATFORM": "offscreen"},
        timeout=seconds + 60,
        check=True,
    )
    return float(out.stdout.split()[-1])


def one_run(folder: str, root: str, until: str = "details", count: int = 0) -> Run:
    shutil.rmtree(os.path.join(root, "cache"), ignore_errors=True)
    shutil.rmtree(os.path.join(root, "config"), ignore_errors=True)
    extra = {
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_CONFIG_HOME": os.path.join(root, "config"),
        "RBLN_STUDIO_CACHE_DIR": os.path.join(root, "cache"),
    }
    out = subprocess.run(
        [python(), "-c", HARNESS, folder, until, str(count)],
        capture_output=True,
        text=True,
        env={**env(), **extra},
        timeout=900,
    )
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        sys.exit(f"the app failed: {out.stderr[-1500:]}")
    return Run(**json.loads(lines[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    print(f"load average {os.getloadavg()[0]:.2f}")
    with scratch("gui") as root:
        build_fleet(root / "fleet", args.count)
        worst: list[float] = []
        write_bytecode()  # an installed copy has it (_common.env)
        for run in range(args.runs):
            result = one_run(str(root / "fleet"), str(root))
            if result.shown is None:
                sys.exit(f"run {run + 1}: the first artifact's details were never shown")
            if run == 0:
                print(f"app modules imported before main(): {', '.join(result.app_modules_before)}")
            worst.append(result.worst)
            print(
                f"run {run + 1}: details shown {result.shown:.2f} s after the first event-loop turn, "
                f"{result.ticks} ticks, longest gap {result.worst * 1000:.0f} ms at {result.at:.2f} s "
                f"with {result.rows:,} rows, 99th percentile {result.p99 * 1000:.0f} ms"
            )
        med = statistics.median(worst)
        idle = noise_floor(3.0)
        print(
            f"noise floor: an idle bare window's longest gap over 3 s: {idle * 1000:.0f} ms (load {os.getloadavg()[0]:.1f})"
        )
        print(f"longest stall: median {med * 1000:.0f} ms, worst {max(worst) * 1000:.0f} ms over {args.runs} runs")
        print(f"ratio {med / GOAL:.2f} of the 50 ms goal ({'holds' if med <= GOAL else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Issue 28 item 5: the window's memory over a long session stays flat.

Drives the main window (offscreen, in this process) through the cycle a user repeats: select a row, open and
cancel Resize, select two rows, open and close Compare, Refresh; CYCLES times on 9 artifacts. Prints the resident
set size every REPORT cycles and the slope (KB a cycle) after the first WARMUP cycles, by least squares; with it,
Python's own view (tracemalloc's traced bytes, gc's tracked objects) and the Qt objects left alive, so a growth
can be told apart between Python objects, Qt objects and the allocator.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_gui_memory.py [--cycles 800] [--trim]
        [--steps select,resize,compare,refresh]

--steps runs only some steps of the cycle, to find by bisection which one grows.

Settings, cache and data go to a throwaway folder. A memory figure depends on the machine: there is no threshold
here or in the tests; the slopes are what to read: over every cycle after the warm-up, and over the last half
alone, which tells a steady leak (both alike) from a step that levels off (the second near zero). Figures
measured with it are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "app"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_THROWAWAY = tempfile.mkdtemp(prefix="rbln-studio-bench-memory-")
for _variable in ("CONFIG", "DATA", "CACHE"):
    os.environ[f"RBLN_STUDIO_{_variable}_DIR"] = os.path.join(_THROWAWAY, _variable.lower())

from _common import malloc_in_use_kb, slope  # noqa: E402
from PySide6.QtCore import (  # noqa: E402
    QCoreApplication,
    QEventLoop,
    QMessageLogContext,
    QObject,
    QSettings,
    QTimer,
    QtMsgType,
    qInstallMessageHandler,
)
from PySide6.QtWidgets import QApplication  # noqa: E402

from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact  # noqa: E402

if TYPE_CHECKING:
    from rbln_artifact_studio.gui.window.main_window import MainWindow

STEPS = ("select", "resize", "compare", "refresh")
WARMUP = 100
REPORT = 50
PAGE = os.sysconf("SC_PAGE_SIZE")


OFFSCREEN_NOTICE = "This plugin does not support propagateSizeHints()"  # once per window offscreen, as in the tests


def print_qt_message(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    if message != OFFSCREEN_NOTICE:
        print(f"Qt: {message}", file=sys.stderr)


def rss_kb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 1024


def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Run the event loop until condition holds (a benchmark may poll; the tests wait on signals)."""
    deadline = time.monotonic() + timeout
    loop = QEventLoop()
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not get there in time")
        QTimer.singleShot(5, loop.quit)
        loop.exec()


def settle() -> None:
    """Let deferred deletes and queued signals run (a dialog closed with WA_DeleteOnClose goes at the next turn)."""
    for _ in range(3):
        QCoreApplication.sendPostedEvents(None, 0)  # 0: every event type, DeferredDelete included
        QCoreApplication.processEvents()


def build_workspace(root: Path) -> None:
    shapes = [("Qwen/Qwen3-8B", "RBLN-CR13", 1, 0.3), ("Qwen/Qwen3-8B", "RBLN-CA25", 4, 0.5)]
    shapes += [("meta-llama/Llama-3.2-1B", "RBLN-CA25", 1, b) for b in (0.3, 0.5, 0.8)]
    shapes += [("Qwen/Qwen3-8B", "RBLN-CR13", 1, b) for b in (0.4, 0.5, 0.6, 0.7)]
    for i, (model, npu, devices, budget) in enumerate(shapes):
        request = CompileRequest(
            model, npu=npu, num_devices=devices, memory_budget=budget, batch_size=4, max_seq_len=8_192
        )
        write_artifact(plan_compile(request), root / f"artifact-{i}")


def showing(window: MainWindow, path: str) -> bool:
    return window.artifact is not None and str(window.artifact.path) == path


def scanned_again(window: MainWindow, finished: list[int], before: int) -> bool:
    return len(finished) > before and not window.jobs.active()


def pools_hold(window: MainWindow) -> int:
    """Python objects the job pools' wrappers keep (a runner kept for good after its job piled up here)."""
    return sum(len(gc.get_referents(pool)) for pool in (window.jobs.read_pool, window.jobs.write_pool))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=800)
    parser.add_argument("--detail", action="store_true", help="also count widgets by class and kept jobs by title")
    parser.add_argument("--tracemalloc", action="store_true", help="also trace Python allocations (slower)")
    parser.add_argument(
        "--trim",
        action="store_true",
        help="hand freed memory back to the system (glibc malloc_trim) before each reading: a growth that goes "
        "away with it is memory the allocator keeps for reuse, not a leak",
    )
    parser.add_argument(
        "--steps",
        default=",".join(STEPS),
        help=f"the steps of a cycle to run, comma-separated, to find which one grows (default: {','.join(STEPS)})",
    )
    args = parser.parse_args()
    steps = {step.strip() for step in args.steps.split(",") if step.strip()}
    if not steps <= set(STEPS):
        parser.error(f"--steps: unknown {', '.join(sorted(steps - set(STEPS)))}; known: {', '.join(STEPS)}")
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start()

    from rbln_artifact_studio.gui.app.application import create_application
    from rbln_artifact_studio.gui.app.settings import Settings
    from rbln_artifact_studio.gui.window.main_window import MainWindow

    root = Path(_THROWAWAY) / "fleet"
    build_workspace(root)
    qInstallMessageHandler(print_qt_message)
    app = create_application()
    window = MainWindow(Settings(QSettings(str(Path(_THROWAWAY) / "s.ini"), QSettings.Format.IniFormat)), 50)
    window.show()
    finished = []
    window.workspace.scanFinished.connect(lambda: finished.append(1))
    window.open_folder(root)
    wait_until(lambda: bool(finished) and not window.jobs.active())
    paths = sorted(window.model.paths())
    print(f"{len(paths)} artifacts; {args.cycles} cycles; RSS every {REPORT}")

    points: list[tuple[int, float]] = []
    for cycle in range(1, args.cycles + 1):
        first, other = paths[cycle % len(paths)], paths[(cycle + 1) % len(paths)]
        if "select" in steps:
            window.browser.select_path(first)
            wait_until(partial(showing, window, first))
        if "resize" in steps:
            window.browser.select_path(first)
            wait_until(partial(showing, window, first))
            dialog = window.dialogs.open_resize_dialog()
            settle()
            if dialog is not None:
                dialog.reject()
        if "compare" in steps:
            window.browser.view.selectAll()
            window.browser.select_path(first)
            window.browser.view.selectionModel().select(
                window.browser.proxy.mapFromSource(window.model.index(window.model.row_of(other) or 0, 0)),
                window.browser.view.selectionModel().SelectionFlag.Select
                | window.browser.view.selectionModel().SelectionFlag.Rows,
            )
            compare = window.artifact_actions.open_compare()
            wait_until(lambda: not window.jobs.active())
            if compare is not None:
                compare.close()
        if "refresh" in steps:
            before = len(finished)
            window.workspace.refresh()
            wait_until(partial(scanned_again, window, finished, before))
        settle()
        if cycle % REPORT == 0:
            gc.collect()
            if args.trim:
                ctypes.CDLL("libc.so.6").malloc_trim(0)
            rss = rss_kb()
            if cycle > WARMUP:
                points.append((cycle, rss))
            extra = ""
            if args.tracemalloc:
                import tracemalloc

                extra = f"  traced {tracemalloc.get_traced_memory()[0] / 1024:,.0f} KB"
            widgets = len(QApplication.allWidgets())
            if args.detail:
                import collections

                kinds = collections.Counter(type(w).__name__ for w in QApplication.allWidgets())
                titles = collections.Counter(j.title.split(" ")[0] for j in window.jobs.jobs)
                objects = collections.Counter(type(o).__name__ for o in window.findChildren(QObject))
                app_objects = collections.Counter(type(o).__name__ for o in app.findChildren(QObject))
                print(kinds.most_common(8), titles.most_common(5))
                print("  window's QObjects:", objects.most_common(8), " app's:", app_objects.most_common(5))
            print(
                f"cycle {cycle:5d}  RSS {rss / 1024:7.1f} MB  malloc {malloc_in_use_kb() / 1024:6.1f} MB  gc objects {len(gc.get_objects()):,}  "
                f"widgets {widgets:,}  QObjects {len(window.findChildren(QObject)):,}  "
                f"jobs kept {len(window.jobs.jobs):,}  pools hold {pools_hold(window):,}{extra}",
                flush=True,
            )
    if len(points) >= 2:
        print(f"RSS slope after cycle {WARMUP}: {slope(points):.2f} KB a cycle")
    last_half = points[len(points) // 2 :]
    if len(last_half) >= 2:
        print(f"RSS slope over the last half (from cycle {last_half[0][0]}): {slope(last_half):.2f} KB a cycle")
    window.close()
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())

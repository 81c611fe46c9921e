"""Render the app under a real X server and check its layout: run by test_gui_screenshots.py in a subprocess.

    python tests/gui/screenshot_run.py WORKSPACE OUT_DIR --theme light|dark [--scale 2] [--rtl]

The scale is applied through QT_SCALE_FACTOR, which Qt reads once at start-up: hence a process per variant. It
opens WORKSPACE (artifacts compiled by the test), selects the Rebel100 artifact, saves the main window as
OUT_DIR/main-window-<theme>[-<scale>x][-rtl].png, then opens every dialog and audits each (layout_audit.py).
Prints one JSON object: {"images": [...], "problems": [...]}.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the gui package beside this file

from PySide6.QtCore import QCoreApplication, QItemSelectionModel, QSettings, QStandardPaths, Qt
from PySide6.QtWidgets import QApplication, QLabel, QStyleFactory, QWidget, QWizard

from gui.layout_audit import audit
from gui.widgets import present


def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError("the window did not get there in time")
        QCoreApplication.processEvents()
        time.sleep(0.01)


def settle(seconds: float = 0.3) -> None:
    """Let layouts, paints and the scan's batches happen."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QCoreApplication.processEvents()
        time.sleep(0.01)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("workspace", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--theme", choices=["light", "dark"], default="light")
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--rtl", action="store_true")
    args = parser.parse_args()
    QStandardPaths.setTestModeEnabled(True)
    app = QApplication(sys.argv[:1])
    app.setStyle(QStyleFactory.create("Fusion"))  # the same look on every desktop, so the images compare
    if args.rtl:
        app.setLayoutDirection(Qt.LayoutDirection.RightToLeft)
    from rbln_artifact_studio.gui.app.application import configure
    from rbln_artifact_studio.gui.app.settings import Settings
    from rbln_artifact_studio.gui.app.theme import Theme
    from rbln_artifact_studio.gui.dialogs.compare_dialog import CompareDialog
    from rbln_artifact_studio.gui.dialogs.planner_dialog import PlannerDialog
    from rbln_artifact_studio.gui.window.main_window import MainWindow

    configure(app)
    screen = app.primaryScreen().availableGeometry()
    logical = (screen.width(), screen.height())
    problems: list[str] = []
    images: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(Settings(QSettings(str(Path(tmp) / "s.ini"), QSettings.Format.IniFormat)), 50)
        window.theme.choose(Theme(args.theme), remember=False)  # as `rbln-studio --theme dark` draws it
        window.show()  # at most the screen's available size, as for a user
        window.open_folder(args.workspace)
        paths = sorted(str(p) for p in args.workspace.iterdir() if (p / "rbln_config.json").is_file())
        wait_until(lambda: all(window.model.row_of(p) is not None for p in paths))
        cr13 = next(p for p in paths if "cr13" in p)
        wait_until(lambda: window.browser.select_path(cr13))
        wait_until(lambda: window.artifact is not None and str(window.artifact.path) == cr13)
        _jobs_to_show(window)
        settle(0.8)

        def check(name: str, widget: QWidget) -> None:
            settle()
            # A text that arrived at the end of the settling (a worker's answer, on a loaded machine) has its
            # layout pass still queued: run every layout now, so the audit sees what the next paint shows.
            for part in [widget, *widget.findChildren(QWidget)]:
                if (layout := part.layout()) is not None:
                    layout.activate()
            QCoreApplication.processEvents()
            problems.extend(f"[{name}] {p}" for p in audit(widget, logical))

        check("main window", window)
        small = "-1024x700" if logical == (1024, 700) else ""
        suffix = (
            f"-{args.theme}" + (f"-{args.scale}x" if args.scale != 1 else "") + ("-rtl" if args.rtl else "") + small
        )
        image = args.out / f"main-window{suffix}.png"
        args.out.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(image))
        images.append(str(image))

        resize = present(window.dialogs.open_resize_dialog(), "the resize dialog")
        check("resize dialog", resize)
        resize.reject()
        explorer = present(window.dialogs.open_explorer(), "the explorer")
        summary = explorer.findChild(QLabel, "explorerSummary")
        assert summary is not None
        wait_until(lambda: not summary.text().startswith("Computing"))  # the curve's answer is in
        check("explore budgets", explorer)
        explorer.close()
        for opener, name in ((window.dialogs.show_about, "about"), (window.dialogs.show_preferences, "preferences")):
            dialog = present(opener(), name)
            check(name, dialog)
            dialog.close()
        wizard = window.dialogs.open_compile_wizard()
        wait_until(lambda: wizard.button(QWizard.WizardButton.NextButton).isEnabled())
        for page in ("model", "target", "shape", "sizing", "output"):
            check(f"compile wizard, {page} page", wizard)
            if page != "output":
                wizard.next()
        wizard.reject()
        view = window.browser.view
        view.clearSelection()
        for p in (cr13, next(p for p in paths if p.endswith("ca25x4"))):
            index = window.browser.proxy.mapFromSource(window.model.index(present(window.model.row_of(p)), 0))
            view.selectionModel().select(
                index, QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
            )
        compare = window.artifact_actions.open_compare()
        assert isinstance(compare, CompareDialog)
        wait_until(lambda: compare.comparison is not None)
        check("compare", compare)
        if args.scale == 1 and not args.rtl:
            compare.grab().save(str(args.out / f"compare-{args.theme}.png"))
        compare.close()
        planner = window.dialogs.open_planner()
        assert isinstance(planner, PlannerDialog)
        planned: list[bool] = []
        planner.planned.connect(lambda: planned.append(True))
        wait_until(lambda: bool(planned))
        check("plan co-location", planner)
        planner.close()
        window.close()
        window.jobs.wait()
    print(json.dumps({"images": images, "problems": problems}))
    return 0


def _jobs_to_show(window: QWidget) -> None:
    """A finished copy (its bar says '100% of 305.84 KiB') and a cancelled one (its bar stays where it stopped)."""
    jobs = window.jobs  # type: ignore[attr-defined]
    total = 313_180

    def copy(ctx):
        ctx.progress(total, total, "copied")

    done = jobs.submit("Copy qwen3-8b-cr13 → qwen3-8b-cr13-kv12", copy, writes=True)
    release = threading.Event()

    def stuck(ctx):
        ctx.progress(total // 2, total, "copying")
        while not release.wait(0.02):
            ctx.checkpoint()

    cancelled = jobs.submit("Copy qwen3-8b-cr13 → qwen3-8b-cr13-kv30", stuck, writes=True)
    wait_until(lambda: done.state.ended and cancelled.done > 0)
    cancelled.cancel()
    wait_until(lambda: cancelled.state.ended)


if __name__ == "__main__":
    sys.exit(main())

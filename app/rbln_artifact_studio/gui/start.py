"""The desktop's start once gui/main.py's checks have passed: the application, the main window, and what the command
line asks it to show (a folder or a place elsewhere, the demo, or the folders shown last time).

gui/main.py loads this module only after PySide's import hook was told about our modules (pyside_feature.py): every
module of the window comes in with it, none before the checks.
"""

from __future__ import annotations

import argparse
import gc
import sys

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import parse_location
from rbln_artifact_studio.gui.app import application
from rbln_artifact_studio.gui.app.held_log import HeldLog
from rbln_artifact_studio.gui.app.stop_signals import StopSignals, stop_requested
from rbln_artifact_studio.gui.app.theme import Theme
from rbln_artifact_studio.gui.models.place_scan import open_place
from rbln_artifact_studio.gui.window.main_window import MainWindow
from rbln_artifact_studio.places import dispatch


def run(args: argparse.Namespace, qt_args: list[str]) -> int:
    """Show the window, open what was asked, run the event loop; the exit status (128 + N after signal N)."""
    log = HeldLog(args.verbose)  # the log file is set up after the first paint; what comes before waits for it
    app = application.create_application([sys.argv[0] if sys.argv else "rbln-studio", *qt_args])
    window = MainWindow()
    # Right after the first paint, each in its own event-loop turn before the detail panel's sections: the folder's
    # scan starts, the log file is set up (with what was logged before), the opened folder's recent entry is written.
    window.jobs.hold()
    window.after_first_paint.first([window.jobs.release, log.start, window.settings.hold_writes()])
    if args.theme:
        window.theme.choose(Theme(args.theme), remember=False)
    window.show()
    StopSignals(window)  # SIGTERM and SIGINT close the window as its close button does
    # Start-up objects (Qt wrappers, modules) live for the whole session: freezing them keeps the garbage
    # collector's full passes short, so they do not stall the GUI thread while scans fill the table. No full
    # collection first: start-up leaves a few dozen garbage objects (~10 ms to find them before the first paint).
    gc.freeze()
    gc.enable()
    if args.smoke_test:
        # deferred: --smoke-test only: it reads the bundled presets (pydantic), which no other start needs
        from rbln_artifact_studio.gui.app.smoke import report_and_exit

        report_and_exit(app, window)
    elif args.demo:
        window.open_demo()
        window.help.show_demo_tour()  # what to try on it
    elif args.folder:
        open_argument(window, args.folder)
    elif not window.folders.reopen_workspace():  # no arguments: the folders shown last time, else the next steps
        window.first_steps.offer()
    status = app.exec()
    log.start()  # a window closed before it painted (a stop signal): the log still gets what was held
    signum = stop_requested()
    return 128 + signum if signum else status  # as a shell reports a process a signal ended


def open_argument(window: MainWindow, text: str) -> None:
    """The command line's folder or place: a folder here or a server's opens as a folder (the server connected);
    any other place (a bucket) joins the table as such."""
    try:
        where = parse_location(text)
    except StudioError:
        where = None  # open_folder says what is wrong with it, in the window
    if where is not None and dispatch.path_here(where) is None and dispatch.server_folder(where) is None:
        open_place(window.jobs, window.model, where)  # its rows, in a job
    else:
        window.open_folder(text)

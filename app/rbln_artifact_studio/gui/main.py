"""rbln-studio entry point: parse arguments (no Qt needed for --help/--version), then open the main window."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence

from rbln_artifact_studio import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rbln-studio",
        description="RBLN Artifact Studio desktop app.",
        epilog="Qt's own options (-style fusion, -platform offscreen, -reverse, -qwindowgeometry 1024x700, …) "
        "are passed to Qt.",
    )
    parser.add_argument(
        "folder",
        nargs="?",
        help="a folder of compiled artifacts to open, or a bucket's URL (BUCKET/PREFIX after the s3 scheme)",
    )
    parser.add_argument("--demo", action="store_true", help="open the demo workspace (built on first use)")
    parser.add_argument(
        "--theme",
        choices=["system", "light", "dark"],
        help="light or dark for this run (default: as chosen in View ▸ Theme, which follows the desktop at first)",
    )
    parser.add_argument(
        "--smoke-test",
        action="store_true",
        help="open the main window, let it paint, print one line and exit (0 when it worked); for packaging checks",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="also say on stderr what the app does (jobs, scans, calls to servers), as the log file records it",
    )
    parser.add_argument("--version", action="version", version=f"rbln-studio {__version__}")
    return parser


def parse_arguments(ours: list[str]) -> argparse.Namespace:
    """Our arguments (Qt's set apart): the usual start, no option and at most a folder, without building argparse's
    parser (~2 ms and gettext's look-ups for its messages, before the window's first paint: docs/performance.md
    row 7); anything else through the parser, which knows every option, --help and the errors."""
    if len(ours) <= 1 and not any(a.startswith("-") for a in ours):
        return argparse.Namespace(
            folder=ours[0] if ours else None, demo=False, theme=None, smoke_test=False, verbose=False
        )
    return build_parser().parse_args(ours)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["--scan-process"]:  # folder_scan.SCAN_PROCESS_FLAG: the bundle's scan process, no Qt
        from rbln_artifact_studio.gui.models.folder_scan import main as scan_process

        return scan_process()
    # No garbage collection while start-up builds what lives for the whole session (modules, Qt wrappers): its
    # passes would walk them again and again (~10-20 ms) and find next to nothing; _run freezes them instead.
    gc.disable()
    try:
        from rbln_artifact_studio.gui.app.qt_options import split_qt_options

        ours, qt_args = split_qt_options(arguments)
        args = parse_arguments(ours)
        from rbln_artifact_studio.gui.app.platform_libraries import platform_problem

        # First, before any Qt import: without these libraries importing PySide6 fails, or Qt's X11 plugin aborts
        problem = platform_problem(qt_args)
        if not problem:
            from rbln_artifact_studio.gui.app.binding_check import binding_problem

            problem = binding_problem()
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 1
        from rbln_artifact_studio.gui.app.pyside_feature import skip_source_scan_of_ours

        skip_source_scan_of_ours()
        return _run(args, qt_args)
    finally:
        gc.enable()


def _run(args: argparse.Namespace, qt_args: list[str]) -> int:
    from rbln_artifact_studio.gui.app.held_log import HeldLog

    log = HeldLog(args.verbose)  # the log file is set up after the first paint; what comes before waits for it
    from rbln_artifact_studio.gui.app.application import create_application
    from rbln_artifact_studio.gui.app.stop_signals import StopSignals, stop_requested
    from rbln_artifact_studio.gui.window.main_window import MainWindow

    app = create_application([sys.argv[0] if sys.argv else "rbln-studio", *qt_args])
    window = MainWindow()
    # Right after the first paint, each in its own event-loop turn before the detail panel's sections: the folder's
    # scan starts, the log file is set up (with what was logged before), the opened folder's recent entry is written.
    window.jobs.hold()
    window.after_first_paint.first([window.jobs.release, log.start, window.settings.hold_writes()])
    if args.theme:
        from rbln_artifact_studio.gui.app.theme import Theme

        window.theme.choose(Theme(args.theme), remember=False)
    window.show()
    StopSignals(window)  # SIGTERM and SIGINT close the window as its close button does
    # Start-up objects (Qt wrappers, modules) live for the whole session: freezing them keeps the garbage
    # collector's full passes short, so they do not stall the GUI thread while scans fill the table. No full
    # collection first: start-up leaves a few dozen garbage objects (~10 ms to find them before the first paint).
    gc.freeze()
    gc.enable()
    if args.smoke_test:
        from rbln_artifact_studio.gui.app.smoke import report_and_exit

        report_and_exit(app, window)
    elif args.demo:
        window.open_demo()
        window.help.show_demo_tour()  # what to try on it
    elif args.folder:
        from rbln_artifact_studio.core.errors import StudioError
        from rbln_artifact_studio.core.location import parse_location
        from rbln_artifact_studio.places import dispatch

        try:
            where = parse_location(args.folder)
        except StudioError:
            where = None  # open_folder says what is wrong with it, in the window
        # A folder here or a server's opens as a folder (the server connected); any other place (a bucket) as such.
        if where is not None and dispatch.path_here(where) is None and dispatch.server_folder(where) is None:
            from rbln_artifact_studio.gui.models.place_scan import open_place

            open_place(window.jobs, window.model, where)  # its rows, in a job
        else:
            window.open_folder(args.folder)
    elif not window.folders.reopen_workspace():  # no arguments: the folders shown last time, else the next steps
        window.first_steps.offer()
    status = app.exec()
    log.start()  # a window closed before it painted (a stop signal): the log still gets what was held
    signum = stop_requested()
    return 128 + signum if signum else status  # as a shell reports a process a signal ended


if __name__ == "__main__":
    sys.exit(main())

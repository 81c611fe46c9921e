"""rbln-studio entry point: parse arguments (no Qt needed for --help/--version), check the system libraries and the Qt
binding before Qt loads, then start the window (gui/start.py)."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence

from rbln_artifact_studio import __version__
from rbln_artifact_studio.gui.app.platform_libraries import platform_problem
from rbln_artifact_studio.gui.app.pyside_feature import skip_source_scan_of_ours
from rbln_artifact_studio.gui.app.qt_options import split_qt_options


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
    if arguments[:1] == ["--scan-process"]:  # folder_scan.SCAN_PROCESS_FLAG
        # deferred: the bundle's scan process loads no Qt and nothing of the window
        from rbln_artifact_studio.gui.models.folder_scan import main as scan_process

        return scan_process()
    # No garbage collection while start-up builds what lives for the whole session (modules, Qt wrappers): its
    # passes would walk them again and again (~10-20 ms) and find next to nothing; start.run freezes them instead.
    gc.disable()
    try:
        ours, qt_args = split_qt_options(arguments)
        args = parse_arguments(ours)
        # First, before any Qt import: without these libraries importing PySide6 fails, or Qt's X11 plugin aborts
        problem = platform_problem(qt_args)
        if not problem:
            # deferred: Qt loads only once platform_problem has found the libraries it links to
            from rbln_artifact_studio.gui.app.binding_check import binding_problem

            problem = binding_problem()
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 1
        skip_source_scan_of_ours()
        return _run(args, qt_args)
    finally:
        gc.enable()


def _run(args: argparse.Namespace, qt_args: list[str]) -> int:
    """The application and its window (gui/start.py)."""
    # The window's modules load after the checks above, and after PySide's import hook was told about them
    # deferred: Qt and the window, only once the start-up checks have passed (skip_source_scan_of_ours first)
    from rbln_artifact_studio.gui.start import run

    return run(args, qt_args)


if __name__ == "__main__":
    sys.exit(main())

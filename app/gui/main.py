"""rbln-studio entry point: parse arguments, create the application, open the main window."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rbln-studio", description="RBLN Artifact Studio desktop app.")
    parser.add_argument("folder", nargs="?", help="a folder of compiled artifacts to open")
    parser.add_argument("--demo", action="store_true", help="open the demo workspace (built on first use)")
    parser.add_argument("--version", action="version", version=f"rbln-studio {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = QMainWindow()
    window.setWindowTitle("RBLN Artifact Studio")
    window.setCentralWidget(QLabel(f"RBLN Artifact Studio {__version__}: {args.folder or 'no folder'}"))
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())

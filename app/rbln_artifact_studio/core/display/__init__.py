"""Qt-free text and display data the CLI and the desktop app show: sizes, plans, reports, command lines."""

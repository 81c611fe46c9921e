"""Qt's own command-line options (-style, -platform, -reverse, …), set apart from ours before argparse reads argv.

argparse would refuse them ("unrecognized arguments: -style") or take an option's value for the folder;
QApplication reads them itself. Both `-name` and `--name` forms, and `-name=value`, are Qt's.
"""

from __future__ import annotations

from collections.abc import Sequence

# Options QGuiApplication/QApplication read that take a value, and those that do not (Qt 6 documentation of
# QGuiApplication and QApplication, X11 ones included).
WITH_VALUE = frozenset(
    {
        "style",
        "stylesheet",
        "platform",
        "platformpluginpath",
        "platformtheme",
        "plugin",
        "qwindowgeometry",
        "qwindowicon",
        "qwindowtitle",
        "session",
        "display",
        "geometry",
        "title",
        "name",
        "qmljsdebugger",
    }
)
FLAGS = frozenset({"reverse", "widgetcount", "nograb", "dograb", "sync"})


def split_qt_options(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(our arguments, Qt's arguments) from argv without the program name; the order within each is kept."""
    ours: list[str] = []
    qt: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        name = arg.lstrip("-").split("=", 1)[0]
        dashed = arg.startswith("-") and not arg.startswith("---") and arg != "--"
        if arg == "--":  # everything after it is ours (a folder named like an option)
            ours.extend(args[i:])
            break
        alone = (name in FLAGS and "=" not in arg) or (name in WITH_VALUE and "=" in arg)  # no value follows
        if dashed and alone:
            qt.append(arg)
        elif dashed and name in WITH_VALUE and i + 1 < len(args):
            qt.extend(args[i : i + 2])
            i += 1
        else:
            ours.append(arg)
        i += 1
    return ours, qt

"""Refuse to start where a system library Qt or (on X11) its xcb platform plugin needs is missing, naming those.

Without Qt's own (libEGL, fontconfig, GLib, ...) importing PySide6 fails with a traceback naming one of them; without
the xcb plugin's, Qt aborts with a message about another library (from Qt 6.5 it always names xcb-cursor), and a
minimal Debian or Ubuntu desktop lacks libxcb-icccm4 and libxcb-keysyms1. `bootstrap.sh` installs what is missing
where it may (`python -m rbln_artifact_studio.gui.app.platform_libraries` prints the packages); the app checks again
at each start, before Qt is loaded. No Qt here: the check runs before Qt could abort.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Mapping, Sequence

# What PySide6's QtCore, QtGui and QtWidgets (with the Qt libraries they load from the wheel) link to beyond the
# C/C++ runtime, each with the Debian/Ubuntu package that ships it; tests/test_platform_libraries.py reads the ELF
# NEEDED entries. A bare Debian has only zlib and zstd of these.
QT_LIBRARIES = {
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libz.so.1": "zlib1g",
    "libzstd.so.1": "libzstd1",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libX11.so.6": "libx11-6",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
}

# What PySide6's plugins/platforms/libqxcb.so links to beyond Qt and the C/C++ runtime (its ELF NEEDED entries;
# tests/test_platform_libraries.py compares them with ldd's), each with the Debian/Ubuntu package that ships it.
XCB_LIBRARIES = {
    "libGL.so.1": "libgl1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
}

Loads = Callable[[str], bool]


def loads(soname: str) -> bool:
    """Whether the dynamic loader finds this library (and what it needs) as Qt's plugin would."""
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def uses_xcb(qt_args: Sequence[str], environ: Mapping[str, str]) -> bool:
    """Qt will load its xcb plugin: on Linux, with an X display, no other platform asked for and no Wayland
    session (where Qt tries its Wayland plugin first)."""
    if not sys.platform.startswith("linux"):
        return False
    asked = next((qt_args[i + 1] for i, a in enumerate(qt_args[:-1]) if a in ("-platform", "--platform")), None)
    platform = (asked or environ.get("QT_QPA_PLATFORM", "")).split(":")[0].split(";")[0]
    if platform:
        return platform == "xcb"
    return bool(environ.get("DISPLAY")) and not environ.get("WAYLAND_DISPLAY")


PACKAGES = {**QT_LIBRARIES, **XCB_LIBRARIES}  # every library checked, Qt's first


def missing_libraries(found: Loads | None = None, xcb: bool = True) -> list[str]:
    """The sonames of Qt's libraries, and the xcb plugin's (xcb), that the loader does not find (found: loads)."""
    check = found or loads
    wanted = PACKAGES if xcb else QT_LIBRARIES
    return [soname for soname in wanted if not check(soname)]


def packages_of(sonames: Sequence[str]) -> list[str]:
    """The Debian/Ubuntu packages that ship these libraries, each once, in their order."""
    return list(dict.fromkeys(PACKAGES[soname] for soname in sonames))


def platform_problem(
    qt_args: Sequence[str], environ: Mapping[str, str] | None = None, found: Loads | None = None
) -> str | None:
    """What to say instead of starting where Qt, or its X11 plugin when used, cannot load; None where it can."""
    if not sys.platform.startswith("linux"):
        return None  # the wheels bring their own libraries elsewhere
    missing = missing_libraries(found, xcb=uses_xcb(qt_args, os.environ if environ is None else environ))
    if not missing:
        return None
    return (
        f"Qt needs libraries this system lacks: {', '.join(missing)}. "
        f"Install them, then start again (Debian/Ubuntu: sudo apt-get install {' '.join(packages_of(missing))})."
    )


def main() -> int:
    """Print the Debian/Ubuntu packages of the missing libraries (Qt's and its X11 plugin's), one line, for
    bootstrap.sh (empty: none)."""
    print(" ".join(packages_of(missing_libraries())))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Refuse to start on an X11 desktop that lacks a library Qt's xcb platform plugin needs, naming exactly those.

Without them Qt aborts with a message about another library (from Qt 6.5 it always names xcb-cursor), and a
minimal Debian or Ubuntu desktop lacks libxcb-icccm4 and libxcb-keysyms1. `bootstrap.sh` installs what is missing
where it may (`python -m rbln_artifact_studio.gui.app.platform_libraries` prints the packages); the app checks again
at each start, before Qt is loaded. No Qt here: the check runs before Qt could abort.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence

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
    import ctypes

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


def missing_libraries(found: Loads | None = None) -> list[str]:
    """The sonames of the xcb plugin's libraries the loader does not find (found: loads), in the plugin's order."""
    check = found or loads
    return [soname for soname in XCB_LIBRARIES if not check(soname)]


def platform_problem(
    qt_args: Sequence[str], environ: Mapping[str, str] | None = None, found: Loads | None = None
) -> str | None:
    """What to say instead of starting where Qt's X11 plugin cannot load; None where it can (or is not used)."""
    if not uses_xcb(qt_args, os.environ if environ is None else environ):
        return None
    missing = missing_libraries(found)
    if not missing:
        return None
    packages = " ".join(XCB_LIBRARIES[m] for m in missing)
    return (
        f"Qt's X11 support needs libraries this system lacks: {', '.join(missing)}. "
        f"Install them (Debian/Ubuntu: sudo apt-get install {packages}), or run bash bootstrap.sh as root."
    )


def main() -> int:
    """Print the Debian/Ubuntu packages of the missing libraries, one line, for bootstrap.sh (empty: none)."""
    print(" ".join(XCB_LIBRARIES[m] for m in missing_libraries()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

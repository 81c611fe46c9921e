"""Starts on any Linux desktop (issue 43 item 7): the start-up check names exactly the libraries Qt's xcb platform
plugin needs and this system lacks, before Qt can abort; the names are those the installed plugin links to."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rbln_artifact_studio.gui import main as gui_main
from rbln_artifact_studio.gui.app import platform_libraries
from rbln_artifact_studio.gui.app.platform_libraries import XCB_LIBRARIES, missing_libraries, platform_problem

RUNTIME = re.compile(r"^(libQt6|libstdc\+\+|libm\.|libgcc_s|libc\.|libicu|ld-linux|linux-vdso)")
X_SESSION = {"DISPLAY": ":0"}


def _plugin() -> Path:
    import PySide6

    plugin = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    if not plugin.is_file():
        pytest.skip(f"no xcb plugin in this PySide6 ({plugin})")
    return plugin


def test_the_libraries_named_are_those_the_xcb_plugin_links_to() -> None:
    if shutil.which("ldd") is None:
        pytest.skip("needs ldd")
    plugin = _plugin()
    listed = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, timeout=60, check=True).stdout
    linked = {line.split()[0] for line in listed.splitlines() if line.strip()}
    for soname in XCB_LIBRARIES:  # each one named is one the plugin loads
        assert soname in linked, soname
    if shutil.which("readelf") is not None:  # and every library it links to directly is named
        dynamic = subprocess.run(["readelf", "-d", str(plugin)], capture_output=True, text=True, timeout=60).stdout
        needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
        assert {n for n in needed if not RUNTIME.match(n)} == set(XCB_LIBRARIES)
    assert missing_libraries() == [s for s in XCB_LIBRARIES if "not found" in listed.split(s, 1)[1].split("\n")[0]]


def test_the_check_names_exactly_the_missing_libraries_and_their_packages() -> None:
    absent = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}  # what a plain X desktop lacked (issue 43)
    problem = platform_problem([], X_SESSION, found=lambda soname: soname not in absent)
    assert problem is not None
    assert "libxcb-icccm.so.4, libxcb-keysyms.so.1." in problem
    assert "sudo apt-get install libxcb-icccm4 libxcb-keysyms1)" in problem
    assert "cursor" not in problem  # not the library Qt's own message names
    assert platform_problem([], X_SESSION, found=lambda soname: True) is None


@pytest.mark.parametrize(
    ("qt_args", "environ", "checked"),
    [
        ([], {"DISPLAY": ":0"}, True),
        ([], {"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, False),
        (["-platform", "offscreen"], {"DISPLAY": ":0"}, False),
        (["-platform", "xcb"], {"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, True),
        ([], {"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, False),
        ([], {}, False),
    ],
)
def test_only_a_start_on_x11_is_checked(qt_args: list[str], environ: dict[str, str], checked: bool) -> None:
    problem = platform_problem(qt_args, environ, found=lambda soname: soname != "libxcb-icccm.so.4")
    assert (problem is not None) is checked


def test_the_app_says_so_and_stops_before_qt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr(platform_libraries, "loads", lambda soname: soname != "libxcb-keysyms.so.1")
    monkeypatch.setattr(gui_main, "_run", lambda *_: pytest.fail("Qt was started"))
    assert gui_main.main(["--smoke-test"]) == 1
    assert capsys.readouterr().err.startswith(
        "error: Qt's X11 support needs libraries this system lacks: libxcb-keysyms.so.1. Install them"
    )

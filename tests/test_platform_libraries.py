"""Starts on any Linux desktop (issue 43 item 7): the start-up check names exactly the libraries Qt and its xcb
platform plugin need and this system lacks, before Qt can abort; the names are those the installed Qt links to, and
bootstrap.sh installs (as root) or names (otherwise) the same packages."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rbln_artifact_studio.gui import main as gui_main
from rbln_artifact_studio.gui.app import platform_libraries
from rbln_artifact_studio.gui.app.platform_libraries import (
    QT_LIBRARIES,
    XCB_LIBRARIES,
    missing_libraries,
    packages_of,
    platform_problem,
)

RUNTIME = re.compile(
    r"^(libQt6|libstdc\+\+|libm\.|libgcc_s|libc\.|libdl\.|libpthread\.|librt\.|libicu|ld-linux|linux-vdso)"
)
X_SESSION = {"DISPLAY": ":0"}
OFFSCREEN = {"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}
REPOSITORY = Path(__file__).resolve().parents[1]


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


def _needed(library: Path) -> list[str]:
    dynamic = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True, timeout=60).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)


def test_the_libraries_named_are_those_qt_links_to() -> None:
    """Every system library PySide6's QtCore, QtGui and QtWidgets load, through the Qt libraries of the wheel."""
    if shutil.which("readelf") is None:
        pytest.skip("needs readelf")
    import PySide6
    import shiboken6

    wheel = [
        Path(PySide6.__file__).parent,
        Path(PySide6.__file__).parent / "Qt" / "lib",
        Path(shiboken6.__file__).parent,
    ]
    bundled = {f.name: f for folder in wheel for f in folder.iterdir() if ".so" in f.name}
    todo = [bundled[n] for n in bundled if re.match(r"Qt(Core|Gui|Widgets)\.", n)]
    assert len(todo) == 3, sorted(bundled)
    seen: set[Path] = set()
    system: set[str] = set()
    while todo:
        library = todo.pop()
        if library not in seen:
            seen.add(library)
            for name in _needed(library):
                if name in bundled:
                    todo.append(bundled[name])
                elif not RUNTIME.match(name):
                    system.add(name)
    assert system == set(QT_LIBRARIES)
    plugin = {n for n in _needed(_plugin()) if not RUNTIME.match(n)}
    assert plugin - set(QT_LIBRARIES) <= set(XCB_LIBRARIES)  # the plugin's own


def test_a_bare_system_is_told_every_library_and_each_package_once() -> None:
    """A minimal Debian has none of Qt's libraries: all of them are named, even where the X11 plugin is not used."""
    problem = platform_problem([], OFFSCREEN, found=lambda soname: soname in ("libz.so.1", "libzstd.so.1"))
    assert problem is not None
    assert "lacks: libglib-2.0.so.0, libgthread-2.0.so.0, libEGL.so.1, " in problem
    assert "xcb" not in problem  # offscreen: not the X11 plugin's
    packages = problem.split("sudo apt-get install ", 1)[1].rstrip(").").split()
    assert packages.count("libglib2.0-0") == 1
    assert set(packages) == {QT_LIBRARIES[s] for s in QT_LIBRARIES} - {"zlib1g", "libzstd1"}
    assert packages_of(["libGL.so.1", "libxcb.so.1", "libGL.so.1"]) == ["libgl1", "libxcb1"]


def test_the_check_names_exactly_the_missing_libraries_and_their_packages() -> None:
    absent = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}  # what a plain X desktop lacked (issue 43)
    problem = platform_problem([], X_SESSION, found=lambda soname: soname not in absent)
    assert problem is not None
    assert "lacks: libxcb-icccm.so.4, libxcb-keysyms.so.1." in problem
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
        "error: Qt needs libraries this system lacks: libxcb-keysyms.so.1. Install them"
    )


def test_without_qt_libraries_the_app_says_so_before_importing_qt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where PySide6 cannot load (no GLib), the one message, not the traceback of a Qt import."""
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    absent = {"libglib-2.0.so.0", "libgthread-2.0.so.0"}
    monkeypatch.setattr(platform_libraries, "loads", lambda soname: soname not in absent)
    for qt_module in ("PySide6.QtCore", "PySide6.QtGui", "PySide6.QtWidgets"):  # as the loader fails them
        monkeypatch.setitem(sys.modules, qt_module, None)
    monkeypatch.delitem(sys.modules, "rbln_artifact_studio.gui.app.binding_check", raising=False)
    monkeypatch.setattr(gui_main, "_run", lambda *_: pytest.fail("Qt was started"))
    assert gui_main.main(["--demo"]) == 1
    assert capsys.readouterr().err == (
        "error: Qt needs libraries this system lacks: libglib-2.0.so.0, libgthread-2.0.so.0. Install them, then"
        " start again (Debian/Ubuntu: sudo apt-get install libglib2.0-0).\n"
    )


FAKE_PYTHON = """#!/bin/bash
# The environment's python on a system without Qt's libraries: pip does nothing, PySide6 does not import, and the
# library check finds none of them.
case "$*" in
  "-m pip "*) exit 0 ;;
  "-m rbln_artifact_studio.gui.app.platform_libraries")
    exec {python} -c 'import sys; from rbln_artifact_studio.gui.app import platform_libraries as p
p.loads = lambda soname: soname in ("libz.so.1", "libzstd.so.1"); sys.exit(p.main())' ;;
  *) exit 1 ;;
esac
"""


@pytest.mark.parametrize("uid", ["0", "1000"])
def test_bootstrap_installs_or_names_each_missing_package_once(tmp_path: Path, uid: str) -> None:
    """As root (with apt-get) bootstrap.sh installs exactly the packages the app would name; otherwise it prints
    the one command that does."""
    venv, tools = tmp_path / "venv", tmp_path / "tools"
    (venv / "bin").mkdir(parents=True)
    tools.mkdir()
    calls = tmp_path / "apt-get.calls"
    scripts = {
        venv / "bin" / "python": FAKE_PYTHON.format(python=sys.executable),
        tools / "id": f"#!/bin/sh\necho {uid}\n",
        tools / "apt-get": f'#!/bin/sh\necho "$*" >> {calls}\n',
    }
    for path, text in scripts.items():
        path.write_text(text)
        path.chmod(0o755)
    environ = {**os.environ, "PATH": f"{tools}:{os.environ['PATH']}", "VENV": str(venv), "PYTHON": sys.executable}
    environ["PYTHONPATH"] = str(REPOSITORY / "app")
    run = subprocess.run(
        ["bash", str(REPOSITORY / "bootstrap.sh")], env=environ, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    packages = " ".join(
        packages_of([s for s in {**QT_LIBRARIES, **XCB_LIBRARIES} if s not in ("libz.so.1", "libzstd.so.1")])
    )
    assert len(packages.split()) == len(set(packages.split())) > 20
    if uid == "0":
        assert calls.read_text().splitlines() == ["update -q", f"install -y -q --no-install-recommends {packages}"]
    else:
        assert not calls.exists()
        assert run.stderr == (
            f"warning: Qt needs system libraries this system lacks; install them with:\n  sudo apt-get install -y {packages}\n"
        )

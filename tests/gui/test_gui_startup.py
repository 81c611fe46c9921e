"""Start-up stays light: the main window's modules load without pydantic, the backends, the compiler, the
estimator, humanfriendly or the ssh layer; they load in workers after the window shows (row 7 of
docs/performance.md), and never on the GUI thread (row 6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rbln_artifact_studio.gui.app.settings import Settings

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "app"

HEAVY = (
    "pydantic",
    "rbln_artifact_studio.backends.registry",
    "rbln_artifact_studio.backends.optimum",
    "rbln_artifact_studio.core.simulator.compiler",
    "rbln_artifact_studio.core.simulator.container",
    "rbln_artifact_studio.core.fleet.artifact",
    "rbln_artifact_studio.core.estimation.estimator",
    "humanfriendly",
    "rbln_artifact_studio.remote.registry",
    "rbln_artifact_studio.remote.transport",
)


def test_the_main_window_imports_nothing_heavy() -> None:
    """These load on first use (a scan, a detail view, a dialog), after the window has painted."""
    code = (
        "import sys; from rbln_artifact_studio.gui.window.main_window import MainWindow; "
        f"print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC), "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


SHOW_FIRST_ARTIFACT = """
import json, sys, threading

HEAVY = tuple(sys.argv[2:])
on_gui_thread = []


class ImportSpy:
    def find_spec(self, name, path=None, target=None):
        if threading.current_thread() is threading.main_thread() and name.startswith(HEAVY):
            on_gui_thread.append(name)
        return None


sys.meta_path.insert(0, ImportSpy())
from PySide6.QtCore import QTimer
from rbln_artifact_studio.gui.app.application import create_application
from rbln_artifact_studio.gui.window.main_window import MainWindow

app = create_application()
window = MainWindow()
window.show()
window.open_folder(sys.argv[1])


def check():
    if window.detail.artifact is not None:
        print(json.dumps(sorted(set(on_gui_thread))))
        window.close()
        app.quit()


poll = QTimer()
poll.timeout.connect(check)
poll.start(10)
QTimer.singleShot(60_000, lambda: (print("timeout"), app.quit()))
app.exec()
"""


def test_showing_the_first_artifact_imports_nothing_heavy_on_the_gui_thread(
    cr13_artifact: Path, tmp_path: Path
) -> None:
    """`rbln-studio FOLDER` from a fresh process: the scan and the detail reader load pydantic, the container reader
    and the backends in their worker threads; the GUI thread, which would stall ~70-250 ms on them, never does."""
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),  # this checkout, not the one the venv has installed
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "RBLN_STUDIO_CACHE_DIR": str(tmp_path / "cache"),
    }
    out = subprocess.run(
        [sys.executable, "-c", SHOW_FIRST_ARTIFACT, str(cr13_artifact.parent), *HEAVY],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def test_the_servers_python_from_the_environment_reaches_the_lazily_loaded_ssh_layer(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """remote/ loads with the first connection; the Python named by RBLN_STUDIO_REMOTE_PYTHON (as for the CLI), or
    the one given, and the ssh_config chosen in the preferences still reach the servers it makes."""
    from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
    from rbln_artifact_studio.gui.models.jobs import JobManager
    from rbln_artifact_studio.gui.models.servers import ServerSources
    from rbln_artifact_studio.remote import registry
    from rbln_artifact_studio.remote.transport import SshConnection

    monkeypatch.setenv("RBLN_STUDIO_REMOTE_PYTHON", "/opt/python3.12/bin/python3")
    config = tmp_path / "ssh_config"
    jobs = JobManager()
    try:
        server = ServerSources(jobs, ArtifactTableModel(), settings, config)._server("lazy-test-host")
        assert server.python == "/opt/python3.12/bin/python3"
        assert isinstance(server.transport, SshConnection)
        assert server.transport.options.config_file == config
        given = ServerSources(jobs, ArtifactTableModel(), settings, None, python="python3.11")
        assert given._server("lazy-test-host").python == "python3.11"
    finally:
        registry.configure()  # the process-wide registry back to its defaults for the other tests


def test_a_server_reached_before_any_connection_uses_the_chosen_ssh_config(settings: Settings, tmp_path: Path) -> None:
    """A resize to an ssh:// copy (or an artifact opened by its URL) before the user connected to anything reaches
    the server with the ssh_config chosen in the preferences, not ~/.ssh/config; remote/ still loads only then."""
    from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
    from rbln_artifact_studio.gui.models.jobs import JobManager
    from rbln_artifact_studio.gui.models.servers import ServerSources
    from rbln_artifact_studio.places import ssh
    from rbln_artifact_studio.remote.transport import SshConnection

    config = tmp_path / "ssh_config"
    ServerSources(JobManager(), ArtifactTableModel(), settings, config)
    server = ssh.server("npu-7")  # as places reaches it: no ServerSources in between
    assert isinstance(server.transport, SshConnection)
    assert server.transport.options.config_file == config


AFTER_FIRST_PAINT = """
import json, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from rbln_artifact_studio.gui.app.application import create_application
from rbln_artifact_studio.gui.window.main_window import MainWindow

LATER = ("rbln_artifact_studio.gui.widgets.dram_chart", "rbln_artifact_studio.gui.widgets.breakdown_table",
         "rbln_artifact_studio.core.display.presentation", "rbln_artifact_studio.core.model.kinds")
app = create_application()
window = MainWindow()
seen = {}


class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and not seen:
            seen["loaded at the first paint"] = sorted(m for m in sys.modules if m in LATER)
            seen["parts at the first paint"] = window.findChild(QObject, "dramChart") is not None
        return False


watcher = FirstPaint()
window.installEventFilter(watcher)
window.show()


def check():
    if seen and window.findChild(QObject, "dramChart") is not None:
        seen["loaded after"] = sorted(m for m in sys.modules if m in LATER)
        print(json.dumps(seen))
        app.quit()


poll = QTimer()
poll.timeout.connect(check)
poll.start(10)
QTimer.singleShot(60_000, lambda: (print("timeout"), app.quit()))
app.exec()
"""


def test_the_detail_sections_are_built_after_the_first_paint(tmp_path: Path) -> None:
    """The first paint shows one line of the detail panel: its charts, tables and their modules come after it."""
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "RBLN_STUDIO_CACHE_DIR": str(tmp_path / "cache"),
    }
    out = subprocess.run(
        [sys.executable, "-c", AFTER_FIRST_PAINT], capture_output=True, text=True, env=env, check=True, timeout=120
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["loaded at the first paint"] == [] and seen["parts at the first paint"] is False
    assert len(seen["loaded after"]) == 4


FIRST_PAINT_OF_THE_APP = """
import json, os, sys, threading
from PySide6.QtCore import QEvent, QObject, QTimer
import PySide6.QtWidgets
from rbln_artifact_studio.gui.window import main_window

LATER = ("logging.handlers", "socket", "html", "concurrent.futures")
seen = {}


class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and not seen:
            seen["modules"] = sorted(m for m in LATER if m in sys.modules)
            seen["threads"] = sorted(t.name for t in threading.enumerate())
            # viewport() would have made PySide build every QtWidgets class to find the widget's type
            seen["QWizard built"] = "QWizard" in vars(PySide6.QtWidgets)
            seen["scanning"] = watched.workspace.busy
        return False


first_paint = FirstPaint()
show = main_window.MainWindow.show


def show_and_watch(window):
    window.installEventFilter(first_paint)
    show(window)
    poll.timeout.connect(lambda: check(window))
    poll.start(10)


def check(window):
    log = os.path.join(os.environ["RBLN_STUDIO_LOG_DIR"], "rbln-studio.log")
    logged = open(log, encoding="utf-8").read() if os.path.exists(log) else ""
    if seen and window.model.rowCount() and "started (log:" in logged and "Scanning" in logged:
        window.settings.flush()
        written = open(window.settings.file_name(), encoding="utf-8").read()
        seen["after"] = {"rows": window.model.rowCount(), "recent written": sys.argv[1] in written}
        print(json.dumps(seen), flush=True)
        window.close()


poll = QTimer()
main_window.MainWindow.show = show_and_watch
QTimer.singleShot(60_000, lambda: (print("timeout"), os._exit(1)))
from rbln_artifact_studio.gui.main import main

sys.exit(main([sys.argv[1]]))
"""


def test_the_start_leaves_to_after_the_first_paint_what_that_paint_does_not_show(
    cr13_artifact: Path, tmp_path: Path
) -> None:
    """`rbln-studio FOLDER`: the log file, the folder's scan, the settings writer and the modules they need start
    right after the window's first paint (docs/performance.md row 7), and each still does its work: the log
    says the app started and the scan ran, the rows come in, the folder is remembered."""
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "RBLN_STUDIO_CACHE_DIR": str(tmp_path / "cache"),
        "RBLN_STUDIO_LOG_DIR": str(tmp_path / "log"),
    }
    out = subprocess.run(
        [sys.executable, "-c", FIRST_PAINT_OF_THE_APP, str(cr13_artifact.parent)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["modules"] == [] and seen["threads"] == ["MainThread"], seen
    assert seen["QWizard built"] is False and seen["scanning"] is True
    assert seen["after"] == {"rows": 1, "recent written": True}


PYSIDE_HOOK = """
import json, re, sys, typing
import PySide6.QtCore
import shibokensupport.feature as feature

scan = feature._mod_uses_pyside
from rbln_artifact_studio.gui.app.pyside_feature import skip_source_scan_of_ours

first, again = skip_source_scan_of_ours(), skip_source_scan_of_ours()
import rbln_artifact_studio.gui.window.main_window

gui = [sys.modules[name] for name in sorted(sys.modules) if name.startswith("rbln_artifact_studio.gui.")]
naming = [m for m in gui if scan(m)]  # those whose source has the word: the hook's "uses PySide"
stdlib = [json, re, typing]
print(json.dumps({
    "set once": [first, again],
    "scanned as using PySide": len(naming),
    "answered otherwise": [m.__name__ for m in naming + stdlib if feature._mod_uses_pyside(m) != scan(m)],
}))
"""


def test_pysides_import_hook_is_answered_as_its_source_scan_would() -> None:
    """The GUI's modules that use PySide and the standard library's get the answer PySide's hook would find by
    reading their source (which it no longer does for them, before the first paint); the few of ours without the
    word (package __init__ files) get "no feature" rather than "ignore", the same while no module selects one."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", PYSIDE_HOOK], capture_output=True, text=True, env=env, check=True)
    seen = json.loads(out.stdout)
    assert seen["set once"] == [True, False] and seen["scanned as using PySide"] > 30
    assert seen["answered otherwise"] == []

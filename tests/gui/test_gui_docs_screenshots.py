"""The images of README.md and docs/desktop.md, taken from a workspace with plain names (issue 33 item 6):

    RBLN_STUDIO_DOCS_SCREENSHOTS=1 QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest tests/gui/test_gui_docs_screenshots.py

writes docs/screenshots/{main-window-light,main-window-dark,first-start,help,workspace-places}.png. The artifacts
sit in /tmp/studio-docs (models: a local folder, fleet: the test sshd's folder as `npu-test`) and in a bucket
named `models` of the test SeaweedFS, so the window shows no pytest temporary path. Skipped unless asked for: it
rewrites files of the checkout.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from objectstore.conftest import BucketFixture, bucket, seaweed  # noqa: F401 (fixtures)
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot
from remote.conftest import (  # noqa: F401 (fixtures)
    HOST_ALIAS,
    SshServer,
    control_dir,
    server,
    ssh_server,
)

from rbln_artifact_studio.gui.app.settings import ServerEntry, Settings
from rbln_artifact_studio.gui.app.theme import Theme, system_palette
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import _stop_jobs, open_folder, select

pytestmark = pytest.mark.skipif(
    os.environ.get("RBLN_STUDIO_DOCS_SCREENSHOTS") != "1",
    reason="rewrites docs/screenshots: set RBLN_STUDIO_DOCS_SCREENSHOTS=1",
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
BASE = Path(tempfile.gettempdir()) / "studio-docs"


@pytest.fixture
def plain(cr13_artifact: Path, ca25_artifact: Path) -> Iterator[Path]:
    """/tmp/studio-docs/models (three artifacts) and /tmp/studio-docs/fleet (one), removed afterwards."""
    shutil.rmtree(BASE, ignore_errors=True)
    models, fleet = BASE / "models", BASE / "fleet"
    models.mkdir(parents=True)
    fleet.mkdir()
    shutil.copytree(cr13_artifact, models / "qwen3-8b-cr13")
    shutil.copytree(ca25_artifact, models / "qwen3-8b-ca25x4")
    shutil.copytree(ca25_artifact, fleet / "qwen3-8b-ca25x4-serving")
    yield BASE
    shutil.rmtree(BASE, ignore_errors=True)


def _window(qtbot: QtBot, folder: Path, name: str, ssh_config: Path | None = None) -> MainWindow:
    settings = Settings(QSettings(str(folder / f"{name}.ini"), QSettings.Format.IniFormat))
    if ssh_config is not None:
        settings.store.setValue("ssh/configFile", str(ssh_config))
    window = MainWindow(settings, debounce_ms=50)
    qtbot.addWidget(window, before_close_func=lambda w: _stop_jobs(qtbot, w))
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    return window


def _laid_out(chart: QWidget, table: QWidget) -> bool:
    """The breakdown table below the chart: the detail panel's layout has caught up with the new palette."""
    return table.geometry().top() >= chart.geometry().bottom()


def _save(widget: object, name: str) -> None:
    QApplication.processEvents()
    assert widget.grab().save(str(DOCS / name))  # type: ignore[attr-defined]


def test_take_the_docs_screenshots(
    qtbot: QtBot,
    plain: Path,
    tmp_path: Path,
    server: SshServer,  # noqa: F811
    control_dir: Path,  # noqa: F811
    bucket: BucketFixture,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    system_palette()
    models = plain / "models"
    for theme in (Theme.LIGHT, Theme.DARK):
        window = _window(qtbot, tmp_path, f"main-{theme.value}")
        window.theme.choose(theme, remember=False)
        open_folder(qtbot, window, models)
        select(qtbot, window, models / "qwen3-8b-cr13")
        chart, table = window.detail.chart, window.detail.breakdown_table
        qtbot.waitUntil(partial(_laid_out, chart, table))  # laid out in this palette
        _save(window, f"main-window-{theme.value}.png")
        window.hide()  # kept (pytest-qt closes it at the end): a window dropped mid-test is collected anywhere

    first = _window(qtbot, tmp_path, "first")
    first.theme.choose(Theme.LIGHT, remember=False)
    assert first.first_steps.offer() is not None
    _save(first, "first-start.png")
    page = first.help.show_getting_started()
    qtbot.waitExposed(page)
    _save(page, "help.png")
    page.hide()
    first.hide()

    # A folder, a server and a bucket side by side: the Host column tells them apart.
    config = tmp_path / "ssh_config"
    config.write_text(server.client_config.read_text())
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(control_dir))
    window = _window(qtbot, tmp_path, "places", config)
    open_folder(qtbot, window, models)
    sources = window.server_menu.servers
    with qtbot.waitSignal(sources.connected, timeout=60_000):
        sources.connect_server(ServerEntry(HOST_ALIAS, (str(plain / "fleet"),)))
    bucket.client.create_bucket(Bucket="models")
    bucket.name = "models"
    bucket.upload(models / "qwen3-8b-cr13", "fleet/qwen3-8b-cr13-batch8")
    window.dialogs.reopen_bucket({"bucket": "models", "prefix": "fleet"})  # the chain's store: AWS_ENDPOINT_URL
    url = "s3://models/fleet/qwen3-8b-cr13-batch8"
    qtbot.waitUntil(lambda: window.model.row_of(url) is not None, timeout=60_000)
    assert window.browser.select_path(url)
    qtbot.waitUntil(lambda: window.artifact is not None and str(window.artifact.where) == url, timeout=30_000)
    _save(window, "workspace-places.png")
    for key in [o for o in bucket.objects()]:
        bucket.client.delete_object(Bucket="models", Key=key)
    bucket.client.delete_bucket(Bucket="models")

"""Export: the table's shown rows (filter and order kept) saved as CSV, JSON or Markdown by a write job."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QMessageBox
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.models import export
from rbln_artifact_studio.gui.models.artifact_model import COLUMNS
from rbln_artifact_studio.gui.models.jobs import Job
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder
from .widgets import child, present


def choose(monkeypatch: pytest.MonkeyPatch, path: Path | str, chosen_filter: str = "CSV (*.csv)") -> list[str]:
    """Answer the save dialog as a user would; returns the folders it was opened in."""
    asked: list[str] = []

    def answer(parent, caption, start, filters):
        asked.append(start)
        assert chosen_filter in filters.split(";;")
        return str(path), chosen_filter

    monkeypatch.setattr(export.QFileDialog, "getSaveFileName", answer)
    return asked


def run_export(qtbot: QtBot, window: MainWindow) -> Job:
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        child(window, type(window.action_export), "actionExport").trigger()
    job: Job = added.args[0]
    assert job.writes  # the single-thread write pool, never the GUI thread
    with qtbot.waitSignal(job.finished, timeout=10_000):
        pass
    return job


def table_rows(window: MainWindow) -> list[list[str]]:
    """The rows as the table shows them, in its order (filter applied)."""
    proxy = window.browser.proxy
    return [[proxy.index(r, c).data() for c in range(len(COLUMNS))] for r in range(proxy.rowCount())]


def test_csv_has_the_filtered_rows_in_table_order(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "broken").mkdir()
    (workspace / "broken" / "rbln_config.json").write_text("{not json")
    open_folder(qtbot, window, workspace)
    assert window.model.rowCount() == 3
    qtbot.keyClicks(child(window, QLineEdit, "artifactFilter"), "qwen3")
    shown = table_rows(window)
    assert [row[0] for row in shown] == ["qwen3-8b-ca25x4", "qwen3-8b-cr13"]
    report = workspace / "reports" / "fleet.csv"
    report.parent.mkdir()
    asked = choose(monkeypatch, report)
    job = run_export(qtbot, window)
    assert job.state.value == "succeeded" and asked == [str(workspace / "fleet-report.csv")]
    with report.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["Name"] for r in rows] == [row[0] for row in shown]  # the filter and the order of the table
    titles = [window.model.headerData(c, Qt.Orientation.Horizontal) for c in range(len(COLUMNS))]
    assert list(rows[0])[: len(titles)] == titles  # the table's columns, titles and order (then Reason, Path)
    for row, cells in zip(rows, shown, strict=True):
        table = dict(zip(titles, cells, strict=True))
        for title in ("Status", "kvcache_num_blocks", "Floor", "Full pool", "NPU", "Devices", "Batch"):
            assert row[title] == table[title]
    cr13 = next(r for r in rows if r["Name"] == "qwen3-8b-cr13")
    assert (cr13["kvcache_num_blocks"], cr13["Floor"], cr13["Full pool"], cr13["Path"]) == (
        "21",
        "9",
        "40",
        str(cr13_artifact),
    )
    summary = window.model.summary(present(window.model.row_of(str(cr13_artifact))))
    assert int(cr13["KV cache / NPU"]) == summary.kv_bytes_per_npu  # exact bytes, not "23.62 GiB"
    assert f"Saved the report to {report}" == window.statusBar().currentMessage()


def test_json_and_markdown_by_suffix(
    qtbot: QtBot, window: MainWindow, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_folder(qtbot, window, workspace)
    names = [row[0] for row in table_rows(window)]
    choose(monkeypatch, workspace / "fleet", "JSON (*.json)")  # no suffix: the chosen filter's is added
    run_export(qtbot, window)
    data = json.loads((workspace / "fleet.json").read_text())
    assert [r["name"] for r in data] == names and data[0]["kvcache_num_blocks"] == 14
    choose(monkeypatch, workspace / "fleet.md", "CSV (*.csv)")  # a suffix the user typed wins over the filter
    run_export(qtbot, window)
    lines = (workspace / "fleet.md").read_text().splitlines()
    assert lines[0].startswith("| Name | Status | kvcache_num_blocks |") and len(lines) == 2 + len(names)


def test_cancel_writes_nothing_and_a_failure_is_shown(
    qtbot: QtBot, window: MainWindow, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_folder(qtbot, window, workspace)
    choose(monkeypatch, "")
    assert window.dialogs.export_report() is None
    choose(monkeypatch, workspace / "missing-folder" / "fleet.csv")
    job = run_export(qtbot, window)
    assert job.state.value == "failed" and job.failure is not None
    assert job.failure.reason == f"{workspace / 'missing-folder'} is not a folder; choose where to save the report."
    boxes = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == "errorDialog" and w.isVisible()
    ]
    assert len(boxes) == 1 and boxes[0].text() == job.failure.reason
    boxes[0].close()
    assert not (workspace / "missing-folder").exists()


def test_rows_of_two_local_folders_are_exported_with_the_host_the_table_shows(
    qtbot: QtBot,
    window: MainWindow,
    workspace: Path,
    cr13_artifact: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    open_folder(qtbot, window, workspace)
    outputs = tmp_path_factory.mktemp("outputs")
    copy = Path(shutil.copytree(cr13_artifact, outputs / "qwen3-8b-cr13-copy"))
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=30_000):
        window.workspace.add(outputs)
    host = COLUMNS.index(next(c for c in COLUMNS if c.title == "Host"))
    shown = {cells[0]: cells[host] for cells in table_rows(window)}
    assert shown["qwen3-8b-cr13-copy"] == f"local: {outputs.name}"
    assert shown["qwen3-8b-cr13"] == f"local: {workspace.name}"

    report = outputs / "fleet.csv"
    choose(monkeypatch, report)
    run_export(qtbot, window)
    with report.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["Name"]: r["Host"] for r in rows} == shown  # not "local" for both folders' rows
    assert next(r["Path"] for r in rows if r["Host"] == f"local: {outputs.name}") == str(copy)

    markdown = outputs / "fleet.md"
    choose(monkeypatch, markdown)
    run_export(qtbot, window)
    lines = markdown.read_text().splitlines()
    titles = [t.strip() for t in lines[0].strip("|").split("|")]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
    assert {row[0]: row[titles.index("Host")] for row in cells} == shown

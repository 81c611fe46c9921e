"""Issue 16 through the desktop app (pytest-qt): the table gives the CLI scan's rows for every layout, never
says ok before the full check, shows shared files before an in-place Apply, and lets no job failure vanish."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fleet.layouts import Fleet, build_fleet, tree_bytes
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QLabel, QPushButton, QRadioButton
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.models.artifact_model import STATUS_COLUMN, TableRow
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import make_real_like, open_folder, select
from .widgets import child, present


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    return build_fleet(tmp_path / "fleet-base")


def table_rows(window: MainWindow) -> dict[str, ArtifactSummary]:
    model = window.model
    return {model.summary(r).path: model.summary(r) for r in range(model.rowCount())}


def test_the_table_shows_the_cli_scan_rows_for_every_layout(
    qtbot: QtBot,
    window: MainWindow,
    fleet: Fleet,
    run_cli,
) -> None:
    shown: dict[str, set[str]] = {}  # every status each row ever showed while the scan ran

    def record(first: int, last: int) -> None:
        for row in range(first, last + 1):
            summary = window.model.summary(row)
            shown.setdefault(summary.path, set()).add(summary.status.value)

    window.model.rowsInserted.connect(lambda _parent, first, last: record(first, last))
    window.model.dataChanged.connect(lambda top, bottom, *_: record(top.row(), bottom.row()))
    open_folder(qtbot, window, fleet.root)
    cli = {r["path"]: r for r in json.loads(run_cli("scan", fleet.root, "--json", "--no-cache").stdout)}
    table = table_rows(window)
    assert sorted(table) == sorted(cli) == sorted(str(p) for p in fleet.layouts.values())
    for path, summary in table.items():
        assert summary.to_json() == cli[path], path
        row = present(window.model.row_of(path))
        texts = [window.model.index(row, c).data() for c in range(window.model.columnCount(QModelIndex()))]
        assert texts == list(TableRow.of(ArtifactSummary.from_json(cli[path])).texts)
    for path, statuses in shown.items():
        if cli[path]["status"] != "ok":
            assert "ok" not in statuses, f"{path} showed ok before its check said {cli[path]['status']}"
    assert table[str(fleet.hand_edit)].status.value == "invalid"
    assert (
        window.model.index(present(window.model.row_of(str(fleet.linked))), 0).data()
        == f"linked-out -> {fleet.outside}"
    )


def test_the_details_agree_with_the_table(qtbot: QtBot, window: MainWindow, fleet: Fleet) -> None:
    open_folder(qtbot, window, fleet.root)
    for path in (fleet.hand_edit, fleet.zero, fleet.art):
        select(qtbot, window, path)
        status = window.model.index(present(window.model.row_of(str(path))), STATUS_COLUMN).data()
        assert window.artifact is not None and window.artifact.status.value == status
        problems = child(window, QLabel, "detailProblems").text()
        for p in window.artifact.problems:
            assert p.message.split(":")[0] in problems
    select(qtbot, window, fleet.zero)
    assert "damaged: decoder_batch_2.rbln" in child(window, QLabel, "detailProblems").text()


def test_a_folder_beside_the_root_with_its_name_as_a_prefix_is_not_inside_it(
    qtbot: QtBot,
    window: MainWindow,
    fleet: Fleet,
) -> None:
    open_folder(qtbot, window, fleet.root)
    before = sorted(table_rows(window))
    window.workspace.rescan([str(fleet.sibling)])  # /…/fleet2 is not under /…/fleet
    assert not window.workspace.busy and sorted(table_rows(window)) == before


def test_the_resize_dialog_shows_shared_files_and_the_copy_bytes_before_apply(
    qtbot: QtBot,
    window: MainWindow,
    fleet: Fleet,
) -> None:
    backup = tree_bytes(fleet.backup)
    open_folder(qtbot, window, fleet.root)
    select(qtbot, window, fleet.art)
    child(window, type(window.action_resize), "actionResize").trigger()
    dialog = child(window, ResizeDialog, "resizeDialog")
    label = child(dialog, QLabel, "resizeSharedLabel")
    assert not label.isVisible()  # a copy never writes the source
    child(dialog, QRadioButton, "resizeModeInPlace").setChecked(True)
    assert label.isVisible()
    size = sum(os.path.getsize(fleet.art / n) for n in ("prefill.rbln", "decoder_batch_2.rbln"))
    assert "decoder_batch_2.rbln (a hard link shared by 2 names)" in label.text() and f"{size:,} bytes" in label.text()
    dialog.target_spin.setValue(3)
    apply = child(dialog, QPushButton, "resizeApplyButton")
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        qtbot.mouseClick(apply, Qt.MouseButton.LeftButton)
    job = added.args[0]
    with qtbot.waitSignal(job.finished, timeout=20_000):
        pass
    assert job.failure is None
    assert tree_bytes(fleet.backup) == backup
    assert json.loads((fleet.art / "rbln_config.json").read_text())["kvcache_num_blocks"] == 3
    qtbot.waitUntil(lambda: table_rows(window)[str(fleet.art)].kvcache_num_blocks == 3, timeout=10_000)
    assert table_rows(window)[str(fleet.backup)].status.value == "ok"


def test_a_hidden_job_that_fails_reaches_the_jobs_panel(qtbot: QtBot, window: MainWindow) -> None:
    def fail(_ctx: object) -> None:
        raise StudioError("the disk went away")

    with qtbot.waitSignal(window.jobs.jobFailed, timeout=10_000) as failed:
        job = window.jobs.submit("Background check", fail, visible=False)
    assert failed.args[0] is job and job.visible and job.surfaced
    assert window.jobs_panel.row_for(job) is not None  # listed, failed, where the user looks
    qtbot.waitUntil(lambda: "Background check failed: the disk went away" in window.statusBar().currentMessage())


def test_in_place_on_a_real_artifact_shows_the_staged_copy_room_before_apply(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rbln_artifact_studio.core.storage import swap

    real = make_real_like(cr13_artifact, tmp_path / "real" / "qwen3-8b-real")
    monkeypatch.setattr(swap, "free_bytes", lambda _folder: 1000)  # a nearly full disk
    open_folder(qtbot, window, tmp_path / "real")
    select(qtbot, window, real)
    child(window, type(window.action_resize), "actionResize").trigger()
    dialog = child(window, ResizeDialog, "resizeDialog")
    apply = child(dialog, QPushButton, "resizeApplyButton")
    dialog.target_spin.setValue(12)
    child(dialog, QRadioButton, "resizeModeInPlace").setChecked(True)
    message = child(dialog, QLabel, "resizeMessage")
    qtbot.waitUntil(lambda: "disk has 1,000 B" in message.text(), timeout=10_000)
    assert "writes the resized artifact beside it" in message.text() and not apply.isEnabled()
    child(dialog, QRadioButton, "resizeModeCopy").setChecked(True)  # the user's other choice
    qtbot.waitUntil(apply.isEnabled, timeout=10_000)


def test_the_planner_names_an_invalid_artifact_as_the_cli_does(
    qtbot: QtBot,
    window: MainWindow,
    fleet: Fleet,
    run_cli,
) -> None:
    from .test_gui_planner import open_planner, verdict

    cli = run_cli("plan", fleet.art, fleet.hand_edit)
    assert cli.returncode == 3 and f"{fleet.hand_edit} is invalid" in cli.stderr
    dialog = open_planner(qtbot, window, fleet.root, [fleet.art, fleet.hand_edit])
    assert "Cannot plan" in verdict(dialog) and f"{fleet.hand_edit} is invalid" in verdict(dialog)

"""Tens of thousands of artifacts: watches are capped with a visible fallback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

import rbln_artifact_studio.gui.models.disk_watcher as disk_watcher
from rbln_artifact_studio.gui.models.disk_watcher import DiskWatcher
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(disk_watcher, "MAX_ARTIFACT_WATCHES", 3)
    return 3


def test_artifact_watches_stop_at_the_cap_and_the_folders_above_are_always_watched(
    qtbot: QtBot, tmp_path: Path, small_cap: int
) -> None:
    artifacts = [str(tmp_path / "team" / f"a-{i}") for i in range(5)]
    for folder in artifacts:
        Path(folder).mkdir(parents=True)
    team = str(tmp_path / "team")
    watcher = DiskWatcher(debounce_ms=10)
    with qtbot.waitSignal(watcher.limited) as limited:
        watcher.watch([*artifacts, team], artifacts=set(artifacts))
    assert limited.args == [2] and watcher.left_out == 2
    assert watcher.watched == {*artifacts[:small_cap], team}
    watcher.watch(artifacts, artifacts=set(artifacts))  # the same folders again (a rescan): not counted twice
    assert watcher.left_out == 2
    with qtbot.waitSignal(watcher.limited) as limited:
        watcher.unwatch([artifacts[-1]])  # a left-out artifact went away
    assert limited.args == [1]
    with qtbot.waitSignal(watcher.limited) as limited:
        watcher.clear()
    assert limited.args == [0]


def test_the_window_says_which_changes_it_cannot_see_and_still_sees_new_artifacts(
    qtbot: QtBot, window: MainWindow, cr13_artifact: Path, tmp_path: Path, small_cap: int
) -> None:
    root = tmp_path / "fleet"
    for i in range(5):
        shutil.copytree(cr13_artifact, root / "team" / f"a-{i}")
    open_folder(qtbot, window, root)
    qtbot.waitUntil(lambda: not window.status_line.watch_label.isHidden())
    assert window.status_line.watch_label.text().startswith("Changes inside 2 artifact(s) show after ")
    assert f"Only {small_cap:,} artifact folders are watched" in window.status_line.watch_label.toolTip()
    shutil.copytree(cr13_artifact, root / "team" / "a-new")  # appears in a watched folder above the artifacts
    qtbot.waitUntil(lambda: window.model.row_of(str(root / "team" / "a-new")) is not None, timeout=10_000)
    (tmp_path / "elsewhere").mkdir()
    window.open_folder(tmp_path / "elsewhere")  # another folder: nothing left out any more
    qtbot.waitUntil(lambda: window.status_line.watch_label.isHidden())

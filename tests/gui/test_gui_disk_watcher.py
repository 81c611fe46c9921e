"""The disk watcher adds folders a slice per event-loop turn, reports changes, and forgets everything on clear."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

import rbln_artifact_studio.gui.models.disk_watcher as disk_watcher
from rbln_artifact_studio.gui.models.disk_watcher import WATCH_SLICE, DiskWatcher


@pytest.fixture
def folders(tmp_path: Path) -> list[Path]:
    out = [tmp_path / f"artifact-{i:03d}" for i in range(3 * WATCH_SLICE + 5)]
    for folder in out:
        folder.mkdir()
    return out


def test_folders_are_added_a_slice_per_turn_and_changes_reported(
    qtbot: QtBot, folders: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher = DiskWatcher(debounce_ms=10)
    sizes: list[int] = []
    real = disk_watcher.QFileSystemWatcher.addPaths

    def add_paths(self: disk_watcher.QFileSystemWatcher, paths: list[str]) -> object:
        sizes.append(len(paths))
        return real(self, paths)

    monkeypatch.setattr(disk_watcher.QFileSystemWatcher, "addPaths", add_paths)
    watcher.watch(str(f) for f in folders)
    assert sizes == []  # nothing happens inside the call that delivered a scan batch
    qtbot.waitUntil(lambda: sum(sizes) == len(folders))
    assert max(sizes) <= WATCH_SLICE and watcher.watched == {str(f) for f in folders}
    with qtbot.waitSignal(watcher.changed) as changed:
        (folders[-1] / "rbln_config.json").write_text("{}")
    assert changed.args == [[str(folders[-1])]]


def test_unwatch_and_clear_drop_queued_and_watched_folders(qtbot: QtBot, folders: list[Path]) -> None:
    watcher = DiskWatcher(debounce_ms=10)
    watcher.watch(str(f) for f in folders)
    watcher.unwatch([str(folders[-1])])  # still queued
    assert str(folders[-1]) not in watcher.watched
    qtbot.waitUntil(lambda: len(watcher.watched) == len(folders) - 1 and not watcher._queue)
    watcher.clear()
    assert watcher.watched == frozenset()
    reported: list[list[str]] = []
    watcher.changed.connect(reported.append)
    (folders[0] / "rbln_config.json").write_text("{}")
    watcher.watch([str(folders[1])])
    qtbot.waitUntil(lambda: not watcher._queue)
    with qtbot.waitSignal(watcher.changed):
        (folders[1] / "rbln_config.json").write_text("{}")
    assert reported == [[str(folders[1])]]  # the cleared folder is not reported

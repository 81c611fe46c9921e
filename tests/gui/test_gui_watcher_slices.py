"""The disk watcher never makes one long call: adds and drops go a slice per turn; re-watched folders stay watched."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

import rbln_artifact_studio.gui.models.disk_watcher as disk_watcher
from rbln_artifact_studio.gui.models.disk_watcher import DROP_SLICE, FIRST_SLICE, WATCH_SLICE, DiskWatcher


@pytest.fixture(autouse=True)
def quick_drops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(disk_watcher, "DROP_AFTER_MS", 50)


@pytest.fixture
def folders(tmp_path: Path) -> list[str]:
    out = [tmp_path / f"artifact-{i:03d}" for i in range(2 * DROP_SLICE + 7)]
    for folder in out:
        folder.mkdir()
    return [str(f) for f in out]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[int]]:
    """The size of every addPaths and removePaths call the watcher makes."""
    seen: dict[str, list[int]] = {"addPaths": [], "removePaths": []}
    for name, sizes in seen.items():
        real = getattr(disk_watcher.QFileSystemWatcher, name)
        monkeypatch.setattr(
            disk_watcher.QFileSystemWatcher,
            name,
            lambda self, paths, real=real, sizes=sizes: (sizes.append(len(paths)), real(self, paths))[1],
        )
    return seen


def _settled(watcher: DiskWatcher) -> bool:
    return not watcher._queue and not watcher._drop_queue


def test_clear_drops_watches_a_slice_per_turn_and_reports_none_of_them(
    qtbot: QtBot, folders: list[str], calls: dict[str, list[int]]
) -> None:
    watcher = DiskWatcher(debounce_ms=10)
    watcher.watch(folders)
    qtbot.waitUntil(lambda: _settled(watcher))
    assert max(calls["addPaths"]) <= WATCH_SLICE
    watcher.clear()
    assert calls["removePaths"] == []  # nothing happens inside clear() (it runs when a folder is opened)
    reported: list[list[str]] = []
    watcher.changed.connect(reported.append)
    Path(folders[0], "rbln_config.json").write_text("{}")
    qtbot.waitUntil(lambda: _settled(watcher))
    assert sum(calls["removePaths"]) == len(folders) and max(calls["removePaths"]) <= DROP_SLICE
    Path(folders[1], "rbln_config.json").write_text("{}")  # no longer watched at all
    watcher.watch([folders[2]])
    qtbot.waitUntil(lambda: _settled(watcher))
    with qtbot.waitSignal(watcher.changed) as changed:
        Path(folders[2], "rbln_config.json").write_text("{}")
    assert changed.args == [[folders[2]]] and reported == [[folders[2]]]


def test_a_folder_watched_again_before_its_drop_keeps_its_watch(
    qtbot: QtBot, folders: list[str], calls: dict[str, list[int]]
) -> None:
    watcher = DiskWatcher(debounce_ms=10)
    watcher.watch(folders)
    qtbot.waitUntil(lambda: _settled(watcher))
    added = sum(calls["addPaths"])
    watcher.clear()
    watcher.watch(folders[:10])  # the same folder opened again: its artifacts come back first
    qtbot.waitUntil(lambda: _settled(watcher))
    assert sum(calls["addPaths"]) == added  # kept, not added again
    assert sum(calls["removePaths"]) == len(folders) - 10
    assert watcher.watched == frozenset(folders[:10])
    with qtbot.waitSignal(watcher.changed) as changed:
        Path(folders[3], "rbln_config.json").write_text("{}")
    assert changed.args == [[folders[3]]]


@pytest.mark.parametrize(
    ("seconds", "first_four"),
    [
        (0.0, [FIRST_SLICE, FIRST_SLICE // 2, FIRST_SLICE // 4, FIRST_SLICE // 8]),  # every call counts as slow
        (10.0, [FIRST_SLICE, 2 * FIRST_SLICE, 4 * FIRST_SLICE, WATCH_SLICE]),  # every call counts as quick
    ],
    ids=["slow-calls-shrink", "quick-calls-grow"],
)
def test_slice_size_follows_how_long_calls_take(
    qtbot: QtBot,
    folders: list[str],
    monkeypatch: pytest.MonkeyPatch,
    calls: dict[str, list[int]],
    seconds: float,
    first_four: list[int],
) -> None:
    monkeypatch.setattr(disk_watcher, "SLICE_SECONDS", seconds)
    watcher = DiskWatcher(debounce_ms=10)
    watcher.watch(folders)
    qtbot.waitUntil(lambda: _settled(watcher))
    assert calls["addPaths"][:4] == first_four
    assert watcher.watched == frozenset(folders)


def test_old_watches_go_first_when_the_watch_limit_is_reached(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limit = 300  # stands in for fs.inotify.max_user_watches
    real = disk_watcher.QFileSystemWatcher.addPaths

    def limited(self: disk_watcher.QFileSystemWatcher, paths: list[str]) -> list[str]:
        room = max(0, limit - len(self.directories()))
        return [*real(self, paths[:room]), *paths[room:]]  # what does not fit is refused, as inotify refuses it

    monkeypatch.setattr(disk_watcher.QFileSystemWatcher, "addPaths", limited)
    old, new = ([tmp_path / f"{name}-{i:03d}" for i in range(250)] for name in ("old", "new"))
    for folder in [*old, *new]:
        folder.mkdir()
    watcher = DiskWatcher(debounce_ms=10)
    watcher.watch(str(f) for f in old)
    qtbot.waitUntil(lambda: _settled(watcher))
    watcher.clear()  # another folder opened
    watcher.watch(str(f) for f in new)
    qtbot.waitUntil(lambda: _settled(watcher))
    assert watcher.watched == frozenset(str(f) for f in new)
    with qtbot.waitSignal(watcher.changed) as changed:
        (new[-1] / "rbln_config.json").write_text("{}")
    assert changed.args == [[str(new[-1])]]


def test_drops_wait_until_folders_stop_coming(
    qtbot: QtBot, folders: list[str], tmp_path: Path, calls: dict[str, list[int]]
) -> None:
    watcher = DiskWatcher(debounce_ms=10)
    watcher.watch(folders)
    qtbot.waitUntil(lambda: _settled(watcher))
    watcher._drop_timer.setInterval(600_000)  # folders keep coming for longer than this test
    watcher.clear()
    new = [tmp_path / f"new-{i}" for i in range(3 * WATCH_SLICE)]
    for folder in new:
        folder.mkdir()
    for i in range(5):  # a scan delivering its batches: old folders again, and new ones
        watcher.watch([*folders[i * 10 : i * 10 + 10], *(str(f) for f in new[i::5])])
        qtbot.waitUntil(lambda: not watcher._queue)
    assert calls["removePaths"] == [] and watcher._drop_timer.isActive()
    watcher._drop_timer.setInterval(0)  # the folders stopped coming
    watcher._drop_timer.start()
    qtbot.waitUntil(lambda: _settled(watcher))
    assert sum(calls["removePaths"]) == len(folders) - 50
    assert watcher.watched == frozenset(folders[:50]) | {str(f) for f in new}

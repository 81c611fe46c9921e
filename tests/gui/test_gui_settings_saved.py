"""Settings are saved when a change is made and merged with what other windows saved; a file that cannot be
written is said once, with where; a file that cannot be ours (199 MB) is moved aside, kept, and not read."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.app.settings import MAX_SETTINGS_BYTES, ServerEntry, Settings, ToolchainPaths
from rbln_artifact_studio.gui.window.main_window import MainWindow


def on_disk(path: Path) -> Settings:
    """What a window started now would read."""
    return Settings(QSettings(str(path), QSettings.Format.IniFormat))


def test_a_change_is_on_disk_without_closing_the_window(qtbot: QtBot, tmp_path: Path) -> None:
    path = tmp_path / "rbln-studio.conf"
    a = on_disk(path)
    a.set_toolchain(ToolchainPaths("/opt/toolchain/bin/python", ""))
    a.add_recent_folder("/data/fleet")
    a.remember_server(ServerEntry("npu-1", ("/srv/models",)))
    a.mark_jobs_seen("npu-1", ["20261203-1"])
    qtbot.waitUntil(lambda: on_disk(path).seen_jobs("npu-1") == {"20261203-1"})
    later = on_disk(path)
    assert later.toolchain().toolchain_python == "/opt/toolchain/bin/python"
    assert later.recent_folders() == ["/data/fleet"]
    assert later.servers() == [ServerEntry("npu-1", ("/srv/models",))]


def test_windows_merge_what_they_saved_rather_than_the_last_one_winning(tmp_path: Path) -> None:
    """Issue 28: window A sets the toolchain Python, window B closes after it: the file had python= and B's folders."""
    path = tmp_path / "rbln-studio.conf"
    a, b = on_disk(path), on_disk(path)
    a.set_toolchain(ToolchainPaths("/opt/toolchain/bin/python", ""))
    a.add_recent_folder("/from/a")
    b.add_recent_folder("/from/b")
    b.remember_server(ServerEntry("npu-b", ()))
    a.remember_server(ServerEntry("npu-a", ()))
    a.save()
    b.save()  # B closes last
    merged = on_disk(path)
    assert merged.toolchain().toolchain_python == "/opt/toolchain/bin/python"
    assert sorted(merged.recent_folders()) == ["/from/a", "/from/b"]  # the two writers' order is theirs
    assert sorted(s.host for s in merged.servers()) == ["npu-a", "npu-b"]


def test_four_windows_closing_together_keep_all_four_folders(tmp_path: Path) -> None:
    path = tmp_path / "rbln-studio.conf"
    windows = [on_disk(path) for _ in range(4)]
    for i, w in enumerate(windows):
        w.add_recent_folder(f"/fleet/{i}")
    for w in windows:
        w.save()
    assert sorted(on_disk(path).recent_folders()) == [f"/fleet/{i}" for i in range(4)]


def _folder_is_a_file(config: Path) -> Path:
    config.write_text("not a folder")
    return config / "rbln-studio.conf"


def _file_is_a_folder(config: Path) -> Path:
    (config / "rbln-studio.conf").mkdir(parents=True)
    return config / "rbln-studio.conf"


def _read_only_file(config: Path) -> Path:
    config.mkdir(parents=True)
    (config / "rbln-studio.conf").write_text("[General]\n")
    (config / "rbln-studio.conf").chmod(0o444)
    return config / "rbln-studio.conf"


def _read_only_folder(config: Path) -> Path:
    config.mkdir(parents=True)
    config.chmod(0o555)
    return config / "rbln-studio.conf"


UNWRITABLE = {
    "its folder is a file": (_folder_is_a_file, "is a file"),
    "the file is a folder": (_file_is_a_folder, "is a folder"),
    "the file is read-only": (_read_only_file, "read-only"),
    "its folder is read-only": (_read_only_folder, "read-only"),
}


@pytest.mark.parametrize("case", UNWRITABLE)
def test_settings_that_cannot_be_written_are_said_once_with_where(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    make, words = UNWRITABLE[case]
    if "read-only" in case and os.geteuid() == 0:
        pytest.skip("root writes through permission bits")
    config = tmp_path / "config"
    path = make(config)
    monkeypatch.setenv("RBLN_STUDIO_CONFIG_DIR", str(config))
    try:
        window = MainWindow(Settings())
        qtbot.addWidget(window)
        notices: list[str] = []
        window.settings.notices.notice.connect(notices.append)
        window.settings.add_recent_folder("/data/one")
        window.settings.add_recent_folder("/data/two")
        window.settings.flush()
        qtbot.waitUntil(lambda: window.findChild(QMessageBox, "settingsNotice") is not None)
        assert len(notices) == 1  # once, not per change
        assert f"Settings cannot be saved: {path if 'folder is a file' not in case else config}" in notices[0]
        assert words in notices[0]
        box = window.findChild(QMessageBox, "settingsNotice")
        assert box is not None and box.text() == notices[0]
        box.close()
    finally:
        if config.is_dir():
            config.chmod(0o755)


def test_an_implausible_settings_file_is_moved_aside_and_kept(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 199 MB file took 23 s and 1.3 GB to start and close: never read, kept beside it, and said."""
    config = tmp_path / "config"
    config.mkdir()
    huge = config / "rbln-studio.conf"
    with huge.open("wb") as f:
        f.write(b"[General]\nrecentFolders=/somewhere\n")
        f.truncate(MAX_SETTINGS_BYTES + 1)
    monkeypatch.setenv("RBLN_STUDIO_CONFIG_DIR", str(config))
    window = MainWindow(Settings())
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "settingsNotice") is not None)
    box = window.findChild(QMessageBox, "settingsNotice")
    assert box is not None
    text = box.text()
    (kept,) = config.glob("rbln-studio.conf.refused-*")
    assert kept.stat().st_size == MAX_SETTINGS_BYTES + 1  # the user's file, whole
    assert str(huge) in text and str(kept) in text and "default settings" in text
    assert window.settings.recent_folders() == []
    window.settings.add_recent_folder("/data/new")
    window.settings.flush()
    assert on_disk(huge).recent_folders() == ["/data/new"]  # a fresh file of ours in its place


def _writers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("settings-writer")}


def test_a_closed_window_leaves_no_settings_writer_and_its_last_change_is_saved(qtbot: QtBot, tmp_path: Path) -> None:
    path = tmp_path / "rbln-studio.conf"
    before = _writers()  # other tests' settings objects may still hold theirs
    window = MainWindow(on_disk(path), debounce_ms=50)
    qtbot.addWidget(window)
    window.show()
    window.settings.add_recent_folder("/data/fleet")
    window.settings.choices.set("wizard", {"target": "RBLN-CR13"})  # the last change, made as the window closes
    assert _writers() - before, "a change is written by a thread of its own"
    window.close()
    assert _writers() - before == set(), "the window's settings writer ended with it"
    saved = on_disk(path)
    assert saved.recent_folders() == ["/data/fleet"] and saved.choices.get("wizard") == {"target": "RBLN-CR13"}
    assert saved.state("geometry") is not None  # the window's own states, written as it closed
    window.settings.add_recent_folder("/data/later")  # a change after the close still lands, by a new writer
    window.settings.close()
    assert on_disk(path).recent_folders() == ["/data/later", "/data/fleet"] and _writers() - before == set()

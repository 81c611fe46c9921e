"""File ▸ Open vLLM Cache… and a server's cache: the entries with a Status column, the lookup, the prune preview."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QPushButton, QTableWidget
from pytestqt.qtbot import QtBot
from remote.conftest import HOST_ALIAS, SshServer, control_dir, server, ssh_server, url  # noqa: F401 (fixtures)
from vllm_cache.cache_fixture import MEGA, MODEL, build_cache, holding, serve, tree

from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.gui.dialogs.vllm_cache_dialog import STATUS_COLUMN, PrunePreview, VllmCacheDialog
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .test_gui_servers import server_window  # noqa: F401 (a fixture: a window reaching the test server)


def _dialog() -> VllmCacheDialog:
    return next(d for d in QApplication.topLevelWidgets() if isinstance(d, VllmCacheDialog) and d.isVisible())


def _cell(table: QTableWidget, row: int, column: int) -> str:
    item = table.item(row, column)
    assert item is not None
    return item.text()


def _statuses(dialog: VllmCacheDialog) -> dict[str, str]:
    t = dialog.table
    return {_cell(t, r, 1): _cell(t, r, STATUS_COLUMN) for r in range(t.rowCount())}


def _expected(folders: dict[str, Path]) -> dict[str, str]:
    return {**{f"compiled_models/{f.name}": state for state, f in folders.items()}, MEGA: "ok"}


def test_open_a_local_cache_see_its_statuses_look_up_and_prune_with_a_preview(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vllm"
    folders = build_cache(root)
    monkeypatch.setenv("VLLM_CACHE_ROOT", str(root))
    with holding(folders["in-use"]):
        action = window.findChild(QAction, "actionOpenVllmCache")
        assert action is not None
        action.trigger()
        dialog = _dialog()
        qtbot.waitUntil(lambda: dialog.table.rowCount() == 5, timeout=30_000)
        header = dialog.table.horizontalHeaderItem(STATUS_COLUMN)
        assert header is not None and header.text() == "Status"
        assert _statuses(dialog) == _expected(folders)

        dialog.command_edit.setText(" ".join(serve(MODEL, 2)))
        with qtbot.waitSignal(dialog.lookedUp, timeout=30_000) as answer:
            dialog.lookup_button.click()
        assert answer.args[0].startswith(f"hit: {folders['incomplete'].name}")
        assert "warning: the entry is incomplete" in dialog.answer.text()

        before = tree(root)
        preview = dialog.open_prune()
        assert isinstance(preview, PrunePreview) and preview.isVisible()
        rows = {_cell(preview.table, r, 1): _cell(preview.table, r, 0) for r in range(preview.table.rowCount())}
        assert {k for k, v in rows.items() if v == "remove"} == {
            f"compiled_models/{folders[s].name}" for s in ("stale", "incomplete")
        }
        freed = sum(p.stat().st_size for s in ("stale", "incomplete") for p in folders[s].rglob("*") if p.is_file())
        assert f"{format_bytes(freed)} freed" in preview.total.text()
        assert tree(root) == before  # the preview removes nothing
        preview.incomplete.setChecked(False)
        assert "1 entries to remove" in preview.total.text()
        preview.incomplete.setChecked(True)
        with qtbot.waitSignal(dialog.pruned, timeout=30_000):
            preview.remove.click()
        qtbot.waitUntil(lambda: dialog.table.rowCount() == 3, timeout=30_000)
    assert sorted(p.name for p in (root / "compiled_models").iterdir()) == sorted(
        [folders["ok"].name, folders["in-use"].name]
    )
    assert "Freed" in dialog.message.text()

    # Compile as Its Entry: the folder the command will hit, with the count chosen, then listed
    dialog.command_edit.setText(" ".join(serve(MODEL, 8)))
    dialog.seed_blocks.setValue(9)
    with qtbot.waitSignal(dialog.seeded, timeout=60_000) as wrote:
        dialog.seed_button.click()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=30_000)
    entry = Path(wrote.args[0])
    assert (
        entry.parent == root / "compiled_models"
        and json.loads((entry / "rbln_config.json").read_text())["kvcache_num_blocks"] == 9
    )
    assert _statuses(dialog)[f"compiled_models/{entry.name}"] == "ok"


def test_open_a_server_s_cache(qtbot: QtBot, server_window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    root = tmp_path / "vllm"
    folders = build_cache(root)
    with holding(folders["in-use"]):
        dialog = server_window.server_menu.vllm_cache.open_on_server(HOST_ALIAS)
        assert dialog.root_edit.text() == f"ssh://{HOST_ALIAS}/~/.cache/vllm"
        qtbot.waitUntil(lambda: dialog.read_button.isEnabled(), timeout=30_000)  # the default root: none there
        dialog.root_edit.setText(url(root))
        with qtbot.waitSignal(dialog.listed, timeout=60_000):
            dialog.read_button.click()
        assert _statuses(dialog) == _expected(folders)
        assert dialog.message.text().startswith(url(root))


def test_resize_to_a_copy_as_the_entry_of_a_serve_command(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    from rbln_artifact_studio.core.fleet.artifact import open_artifact
    from rbln_artifact_studio.core.vllm_cache.command import parse_serve
    from rbln_artifact_studio.gui.widgets.vllm_entry import VllmEntryDialog

    root = tmp_path / "vllm"
    folders = build_cache(root)
    resize = window.dialogs.resize_dialog_for(open_artifact(folders["ok"]))
    button = resize.findChild(QPushButton, "vllmEntryButton")
    assert button is not None

    def entry_dialog() -> VllmEntryDialog:
        button.click()
        [found] = [d for d in resize.findChildren(VllmEntryDialog) if d.isVisible()]
        found.root_edit.setText(str(root))
        return found

    other = entry_dialog()  # a command of other settings: refused, the output left as it was
    before = resize.output_edit.text()
    other.command_edit.setText(" ".join(serve(MODEL, 4)))
    other.buttons.accepted.emit()
    qtbot.waitUntil(lambda: "max_num_seqs 1 (the command serves 4)" in other.problem.text(), timeout=30_000)
    assert resize.output_edit.text() == before
    other.reject()

    chosen = entry_dialog()
    chosen.command_edit.setText(" ".join(serve(MODEL, 1, budget="0.6")))
    with qtbot.waitSignal(chosen.chosen, timeout=30_000):
        chosen.buttons.accepted.emit()
    entry = root / "compiled_models" / parse_serve(serve(MODEL, 1, budget="0.6")).key.folder_name
    assert resize.output_edit.text() == str(entry)
    resize.target_spin.setValue(3)
    qtbot.waitUntil(resize.apply_button.isEnabled, timeout=30_000)
    resize.apply_button.click()
    qtbot.waitUntil(lambda: (entry / "rbln_config.json").is_file(), timeout=60_000)
    assert json.loads((entry / "rbln_config.json").read_text())["kvcache_num_blocks"] == 3


def test_the_prune_preview_by_age_and_count_survives_reading_the_cache_again(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vllm"
    folders = build_cache(root)
    ten_days_ago = time.time() - 10 * 86400
    for path in [folders["ok"], *folders["ok"].iterdir()]:
        os.utime(path, (ten_days_ago, ten_days_ago))
    monkeypatch.setenv("VLLM_CACHE_ROOT", str(root))
    action = window.findChild(QAction, "actionOpenVllmCache")
    assert action is not None
    action.trigger()
    dialog = next(
        d for d in window.findChildren(VllmCacheDialog) if d.isVisible()
    )  # this window's, not an earlier test's
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 5, timeout=30_000)
    with qtbot.waitSignal(dialog.listed, timeout=30_000):
        dialog.read()  # Read Again: the studio's own reading is no use of an entry
    before = tree(root)
    preview = dialog.open_prune()
    assert preview is not None
    preview.stale.setChecked(False)
    preview.incomplete.setChecked(False)
    preview.older.setValue(7)
    assert _removing(preview) == {f"compiled_models/{folders['ok'].name}"}
    preview.older.setValue(0)
    preview.keep_last.setValue(1)  # the four entries of one model, all but the most recently used
    assert len(_removing(preview)) == 3 and f"compiled_models/{folders['ok'].name}" in _removing(preview)
    assert tree(root) == before  # nothing removed before Remove
    preview.keep_last.setValue(0)
    preview.older.setValue(7)
    with qtbot.waitSignal(dialog.pruned, timeout=30_000):
        preview.remove.click()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=30_000)
    assert not folders["ok"].exists() and folders["stale"].exists()


def _removing(preview: PrunePreview) -> set[str]:
    rows = range(preview.table.rowCount())
    return {_cell(preview.table, r, 1) for r in rows if _cell(preview.table, r, 0) == "remove"}

"""A Kubernetes ConfigMap/Secret volume open in the window: its rows from the start, followed across swaps."""

from __future__ import annotations

from pathlib import Path

import pytest
from k8s_volume import DATA, with_blocks, write_volume
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder


def _blocks(window: MainWindow) -> dict[str, int | None]:
    rows = (window.model.summary(r) for r in range(window.model.rowCount()))
    return {row.name: row.kvcache_num_blocks for row in rows}


@pytest.mark.parametrize("opened", ["volume", DATA])
def test_the_window_follows_a_volume_across_swaps(
    qtbot: QtBot, window: MainWindow, cr13_artifact: Path, tmp_path: Path, opened: str
) -> None:
    def version(blocks: int) -> dict[str, Path]:
        return {n: with_blocks(cr13_artifact, blocks, tmp_path / f"v{blocks}" / n) for n in ("qwen-a", "qwen-b")}

    volume = tmp_path / "volume"
    write_volume(volume, version(16))
    root = volume if opened == "volume" else volume / DATA
    gone: list[str] = []
    window.state_notices.folderGone.connect(lambda _root, reason: gone.append(reason))
    open_folder(qtbot, window, root)
    assert _blocks(window) == {"qwen-a": 16, "qwen-b": 16}  # at once, not after the first update
    qtbot.waitUntil(lambda: str(root) in window.state_notices._opened)  # its identity is known

    for blocks in (17, 18):  # every update, not only the first
        write_volume(volume, version(blocks))
        expected: dict[str, int | None] = {"qwen-a": blocks, "qwen-b": blocks}

        def shown(want: dict[str, int | None] = expected) -> bool:
            return _blocks(window) == want

        qtbot.waitUntil(shown, timeout=20_000)
        qtbot.waitUntil(lambda: not window.state_notices._checking and not window.workspace.busy, timeout=20_000)
        assert gone == [] and window.workspace.root == str(root)

"""Model kinds in the app: one row each, the reason in words where there is no KV cache, VLM resize in step."""

from __future__ import annotations

import json
from pathlib import Path

from kind_fixtures import EXPECTED_KINDS, materialize, simulated_llava
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLabel, QPushButton, QRadioButton, QSpinBox
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.models.artifact_model import COLUMNS
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, row_values, select
from .widgets import child, present


def _fleet(tmp_path: Path) -> Path:
    root = tmp_path / "fleet"
    root.mkdir()
    for name in ("whisper", "stable_diffusion", "bert"):
        materialize(name, root / name)
    simulated_llava(root / "llava")
    return root


def test_each_kind_is_one_row_and_says_so_in_words(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    root = _fleet(tmp_path)
    open_folder(qtbot, window, root)
    assert sorted(Path(p).name for p in window.model.paths()) == ["bert", "llava", "stable_diffusion", "whisper"]
    whisper = row_values(window, root / "whisper")
    assert whisper["Kind"] == EXPECTED_KINDS["whisper"][0]
    assert whisper["kvcache_num_blocks"] == "no KV cache" and whisper["KV cache / NPU"] == "no KV cache"
    column = [c.title for c in COLUMNS].index("kvcache_num_blocks")
    tip = window.model.index(present(window.model.row_of(str(root / "whisper"))), column).data(
        Qt.ItemDataRole.ToolTipRole
    )
    assert "encoder-decoder" in tip and "cannot be resized" in tip
    assert row_values(window, root / "stable_diffusion")["Kind"] == "diffusers pipeline"
    llava = row_values(window, root / "llava")
    lm = json.loads((root / "llava" / "language_model" / "rbln_config.json").read_text())
    assert llava["Kind"] == "multimodal" and llava["kvcache_num_blocks"] == str(lm["kvcache_num_blocks"])


def test_a_model_without_a_kv_cache_is_described_and_not_offered_a_resize(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    root = _fleet(tmp_path)
    open_folder(qtbot, window, root)
    select(qtbot, window, root / "llava")  # a resizable one first: the actions are on
    assert window.action_resize.isEnabled()
    assert window.browser.select_path(str(root / "stable_diffusion"))
    label = child(window, QLabel, "kvBlocksLabel")
    qtbot.waitUntil(lambda: label.text() == "No resizable KV cache", timeout=10_000)
    assert "diffusers pipeline" in child(window, QLabel, "kvMeaningLabel").text()
    assert not window.action_resize.isEnabled() and not window.action_explore.isEnabled()
    assert not window.artifact_actions.resize_copy.isEnabled() and not window.artifact_actions.serving.isEnabled()
    assert "nothing to resize" in window.artifact_actions.resize_copy.toolTip()
    assert "not offered" in window.action_resize.toolTip() and "nothing to resize" in window.action_resize.toolTip()
    form = window.detail.settings_form
    widgets = [present(form.itemAt(i)).widget() for i in range(form.count())]
    texts = [w.text() for w in widgets if isinstance(w, QLabel)]
    assert any("unet/ RBLNUNet2DConditionModelConfig" in t and "batch 2" in t for t in texts)


def test_a_vlm_resized_in_the_app_keeps_both_configs_in_step(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    root = _fleet(tmp_path)
    vlm = root / "llava"
    open_folder(qtbot, window, root)
    select(qtbot, window, vlm)
    assert window.artifact is not None and window.artifact.kind.value == "multimodal"
    floor = window.artifact.config.num_min_blocks
    window.action_resize.trigger()
    dialog = child(window, ResizeDialog, "resizeDialog")
    radio = child(dialog, QRadioButton, "resizeModeInPlace")
    qtbot.mouseClick(radio, Qt.MouseButton.LeftButton, pos=QPoint(8, radio.height() // 2))
    spin = child(dialog, QSpinBox, "resizeTargetSpin")
    spin.lineEdit().selectAll()
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Backspace)
    qtbot.keyClicks(spin.lineEdit(), str(floor))
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        qtbot.mouseClick(child(dialog, QPushButton, "resizeApplyButton"), Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(added.args[0].succeeded, timeout=20_000):
        pass
    parent = json.loads((vlm / "rbln_config.json").read_text())
    lm = json.loads((vlm / "language_model" / "rbln_config.json").read_text())
    assert parent["language_model"]["kvcache_num_blocks"] == lm["kvcache_num_blocks"] == floor
    qtbot.waitUntil(lambda: row_values(window, vlm)["kvcache_num_blocks"] == str(floor), timeout=10_000)

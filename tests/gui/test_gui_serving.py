"""The detail panel's serving check: vLLM's settings from the artifact, the same as `serving --json`, and its warnings."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import compile_artifact
from PySide6.QtWidgets import QGroupBox, QLabel
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select
from .widgets import child


def serving(window: MainWindow) -> dict[str, str]:
    box = child(window, QGroupBox, "servingBox")
    assert box.isVisible()
    names = ("max_num_seqs", "max_model_len", "block_size", "num_gpu_blocks", "blocks_per_request")
    out = {name: child(box, QLabel, f"serving_{name}").text().split()[0] for name in names}
    out["headline"] = child(window, QLabel, "servingLabel").text()
    warning = child(window, QLabel, "servingWarning")
    out["warning"] = warning.text() if warning.isVisible() else ""
    return out


def test_blocks_below_one_sequence_per_slot_warn(
    qtbot: QtBot,
    window: MainWindow,
    workspace: Path,
    cr13_artifact: Path,
    run_cli,
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    cli = json.loads(run_cli("serving", cr13_artifact, "--json").stdout)
    shown = serving(window)
    assert (cli["max_num_seqs"], cli["max_model_len"], cli["block_size"], cli["num_gpu_blocks"]) == (
        8,
        40_960,
        8_192,
        21,
    )
    assert shown["max_num_seqs"] == str(cli["max_num_seqs"])
    assert shown["max_model_len"] == f"{cli['max_model_len']:,}"
    assert shown["block_size"] == f"{cli['block_size']:,}"
    assert shown["num_gpu_blocks"] == str(cli["num_gpu_blocks"])
    assert shown["blocks_per_request"] == str(cli["blocks_per_request"]) == "5"
    assert (
        shown["headline"]
        == f"Concurrency: {cli['concurrency']} of 8 requests at the full 40,960 tokens (5 blocks each)."
    )
    assert cli["concurrency"] == 4 and not cli["full_batch_fits"]
    assert "cannot hold one full-length request per batch slot" in shown["warning"]
    assert "runs at most 4 requests of 40,960 tokens at once" in shown["warning"]


def test_full_pool_serves_a_full_batch_without_warning(
    qtbot: QtBot,
    window: MainWindow,
    tmp_path: Path,
    run_cli,
) -> None:
    full = compile_artifact(tmp_path / "qwen3-8b-ca25x4-full", npu="RBLN-CA25", num_devices=4)
    open_folder(qtbot, window, tmp_path)
    select(qtbot, window, full)
    cli = json.loads(run_cli("serving", full, "--json").stdout)
    shown = serving(window)
    assert shown["num_gpu_blocks"] == str(cli["num_gpu_blocks"]) == "41"  # 40 blocks and vLLM's null block
    assert shown["headline"].startswith("Concurrency: 8 of 8 requests")
    assert shown["warning"] == "" and cli["warnings"] == []


def test_a_count_that_holds_no_request_is_an_error_and_follows_the_disk(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    config = cr13_artifact / "rbln_config.json"
    raw = json.loads(config.read_text())
    raw["kvcache_num_blocks"] = 5
    (cr13_artifact / "edited.json").write_text(json.dumps(raw))
    (cr13_artifact / "edited.json").replace(config)  # as an editor saves: the panel reads the artifact again
    qtbot.waitUntil(lambda: serving(window)["headline"].startswith("Concurrency: 0 of 8"), timeout=10_000)
    assert "cannot hold even one full-length request" in serving(window)["warning"]
    assert "vLLM will refuse to start" in serving(window)["warning"]

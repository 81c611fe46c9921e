"""The artifact table model and its sort/filter proxy, checked by pytest-qt's qtmodeltester."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QSortFilterProxyModel, Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.fleet.artifact import Status
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, scan
from rbln_artifact_studio.gui.models.artifact_model import (
    COLUMNS,
    PATH_ROLE,
    SORT_ROLE,
    STATUS_COLUMN,
    ArtifactTableModel,
)
from rbln_artifact_studio.gui.window.artifact_browser import ArtifactBrowser

from .widgets import present


def _column(title: str) -> int:
    return [c.title for c in COLUMNS].index(title)


def test_model_passes_the_model_tester_through_upserts_and_removals(
    qtmodeltester: ModelTester, workspace: Path
) -> None:
    model = ArtifactTableModel()
    qtmodeltester.check(model, force_py=True)
    rows = list(scan(workspace))
    model.upsert(rows)
    broken = ArtifactSummary(
        str(workspace / "broken"), "broken", Status.INVALID, ["rbln_config.json is not valid JSON."]
    )
    model.upsert([broken, replace(rows[0], kvcache_num_blocks=12)])
    assert model.rowCount() == 3
    assert model.index(present(model.row_of(rows[0].path)), _column("kvcache_num_blocks")).data() == "12"
    assert model.index(2, _column("KV cache / NPU")).data() == "?"
    model.remove_paths([rows[1].path, "/not/known"])
    assert model.paths() == [rows[0].path, broken.path]
    model.clear()
    assert model.rowCount() == 0
    model.upsert(rows)
    assert model.rowCount() == 2


def test_sorted_filtered_proxy_passes_the_model_tester(qtmodeltester: ModelTester, workspace: Path) -> None:
    model = ArtifactTableModel()
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    proxy.sort(_column("kvcache_num_blocks"))
    qtmodeltester.check(proxy, force_py=True)
    rows = list(scan(workspace))
    model.upsert(rows)
    model.upsert([replace(rows[1], kvcache_num_blocks=1)])
    proxy.setFilterFixedString("cr13")
    model.remove_paths([rows[0].path])
    proxy.setFilterFixedString("")
    assert proxy.rowCount() == 1


def test_cells_show_figures_and_status_tooltips(workspace: Path, cr13_artifact: Path) -> None:
    model = ArtifactTableModel()
    model.upsert(scan(workspace))
    row = model.row_of(str(cr13_artifact))
    assert row is not None
    values = {c.title: model.index(row, i).data() for i, c in enumerate(COLUMNS)}
    assert values["NPU"] == "RBLN-CR13" and values["Model"] == "Qwen/Qwen3-8B"
    assert (values["kvcache_num_blocks"], values["Floor"], values["Full pool"]) == ("21", "9", "40")
    assert values["max_seq_len"] == "40,960" and values["Attention"] == "flash_attn"
    assert values["KV cache / NPU"] == "23.62 GiB"  # 21 blocks x 1.125 GiB
    assert model.index(row, _column("KV cache / NPU")).data(Qt.ItemDataRole.ToolTipRole).startswith("25,367,150,592 B")
    assert values["Status"] == "ok"
    assert model.index(row, STATUS_COLUMN).data(Qt.ItemDataRole.ToolTipRole) == "No problems found."
    broken = ArtifactSummary("/x/broken", "broken", Status.INVALID, ["rbln_config.json is not valid JSON."])
    model.upsert([broken])
    assert model.index(present(model.row_of("/x/broken")), STATUS_COLUMN).data(Qt.ItemDataRole.ToolTipRole) == (
        "rbln_config.json is not valid JSON."
    )


def test_table_sorts_by_numbers_and_filters_by_text(qtbot: QtBot, workspace: Path) -> None:
    model = ArtifactTableModel()
    browser = ArtifactBrowser(model)
    qtbot.addWidget(browser)
    model.upsert(scan(workspace))
    proxy = browser.proxy
    browser.view.sortByColumn(_column("kvcache_num_blocks"), Qt.SortOrder.AscendingOrder)
    assert [proxy.index(r, _column("kvcache_num_blocks")).data(SORT_ROLE) for r in range(2)] == [14, 21]
    qtbot.keyClicks(browser.filter_edit, "cr13")
    assert proxy.rowCount() == 1
    assert proxy.index(0, 0).data(PATH_ROLE).endswith("qwen3-8b-cr13")
    browser.filter_edit.clear()
    qtbot.keyClicks(browser.filter_edit, "CA25")
    assert proxy.rowCount() == 1 and proxy.index(0, 0).data() == "qwen3-8b-ca25x4"


PAINT_A_BIG_TABLE = """
import sys
from dataclasses import replace
from pathlib import Path
from PySide6.QtWidgets import QApplication
from rbln_artifact_studio.core.fleet.scan import scan
from rbln_artifact_studio.gui.window.artifact_browser import ArtifactBrowser
from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel

app = QApplication([])
first = next(scan(Path(sys.argv[1])))
model = ArtifactTableModel()
model.upsert([replace(first, path=f"/fleet/a{i:04d}", name=f"a{i:04d}") for i in range(500)])
browser = ArtifactBrowser(model)
browser.resize(1400, 900)
browser.show()
app.processEvents()
before = sys.getrefcount(None)
for _ in range(50):
    browser.view.viewport().repaint()
print(sys.getrefcount(None) - before)
"""


def test_painting_the_table_does_not_leak_references_to_none(workspace: Path) -> None:
    """PySide6 6.12's QModelRoleData.setData/clearData drop a reference to None on each call: a multiData
    override killed the app ('Fatal Python error: none_dealloc') while it painted a 5,000-row table."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "app"), "QT_QPA_PLATFORM": "offscreen"}
    run = subprocess.run(
        [sys.executable, "-c", PAINT_A_BIG_TABLE, str(workspace)], capture_output=True, text=True, env=env, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert int(run.stdout.split()[-1]) > -1000  # with the override: tens of thousands of references lost

"""The detail panel's sections: the settings, the KV blocks, the per-NPU DRAM breakdown (with a what-if budget),
serving and the files of the artifact shown.

Built after the window's first paint (DetailPanel.prepare, once preparation_steps has loaded the modules below a
group a turn): the window's first paint shows only the panel's line of text (docs/performance.md, rows 6 and 7).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.core.display.kinds_report import description_rows
from rbln_artifact_studio.core.display.presentation import block_facts, breakdown_caption, file_rows, settings_rows
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.model.budget import BINARY_UNITS
from rbln_artifact_studio.core.model.kinds import ModelDescription
from rbln_artifact_studio.core.sizes import format_bytes, format_bytes_exact
from rbln_artifact_studio.gui.app.remedies import one_line
from rbln_artifact_studio.gui.app.tones import Tone, escaped, style, tone
from rbln_artifact_studio.gui.widgets.breakdown_table import BreakdownTable
from rbln_artifact_studio.gui.widgets.dram_chart import DramChart
from rbln_artifact_studio.gui.widgets.kv_gauge import KvGauge
from rbln_artifact_studio.gui.widgets.text_label import text_label
from rbln_artifact_studio.gui.window.serving_view import ServingView

if TYPE_CHECKING:  # types only: the estimator, pydantic and the container reader load in the worker that reads one
    from rbln_artifact_studio.core.estimation.estimator import Breakdown
    from rbln_artifact_studio.core.fleet.artifact import Artifact


class DetailSections(QObject):
    """The sections an artifact fills, inserted above the stretch of the panel's layout, hidden until one is shown."""

    def __init__(self, layout: QVBoxLayout, parent: QWidget) -> None:
        super().__init__(parent)
        self.artifact: Artifact | None = None  # the artifact whose breakdown the what-if budget redraws
        self.settings_box = QGroupBox("Settings")
        self.settings_form = QFormLayout(self.settings_box)
        # A long label (a multimodal part, an encoder-decoder's note) puts its value below it instead of widening the panel.
        self.settings_form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.serving = ServingView()
        sections = [self._build_kv_box(), self._build_dram_box(), self.serving, self.settings_box]
        sections.append(self._build_files_box())
        for section in sections:
            section.hide()
            layout.insertWidget(layout.count() - 1, section)  # above the stretch
        self.widgets: list[QWidget] = [self.settings_box, self.kv_box, self.dram_box, self.files_box, self.serving]

    # ---- construction, step by step ------------------------------------------------------------------

    def _build_kv_box(self) -> QGroupBox:
        kv_box = self.kv_box = QGroupBox("KV cache")
        kv_layout = QVBoxLayout(kv_box)
        self.kv_label = text_label("kvBlocksLabel")
        self.gauge = KvGauge()
        self.kv_meaning = text_label("kvMeaningLabel")
        kv_layout.addWidget(self.kv_label)
        kv_layout.addWidget(self.gauge)
        kv_layout.addWidget(self.kv_meaning)
        return kv_box

    def _build_dram_box(self) -> QGroupBox:
        """The what-if budget, the caption, the chart and the chiplet table."""
        dram_box = self.dram_box = QGroupBox("DRAM per NPU")
        dram_layout = QVBoxLayout(dram_box)
        self.dram_caption = text_label("dramCaption")
        self.what_if_edit = QLineEdit()
        self.what_if_edit.setObjectName("whatIfBudgetEdit")
        self.what_if_edit.setPlaceholderText("0.8, 80% or 10GB (= 10 GiB); empty = as compiled")
        self.what_if_edit.setClearButtonEnabled(True)
        self.what_if_edit.setToolTip(
            "Draw the breakdown and the kvcache_num_blocks a compile at this memory_budget would give (what "
            f"explore and inspect --what-if print); nothing is written.\n{BINARY_UNITS}"
        )
        self.what_if_result = text_label("whatIfResult")
        what_if_row = QHBoxLayout()
        what_if_label = QLabel("If compiled at memory_budget =")
        what_if_label.setBuddy(self.what_if_edit)
        what_if_row.addWidget(what_if_label)
        what_if_row.addWidget(self.what_if_edit, 1)
        dram_layout.addLayout(what_if_row)
        dram_layout.addWidget(self.what_if_result)
        self.what_if_edit.textChanged.connect(self._on_what_if)
        self.chart = DramChart()
        self.chart.setMinimumHeight(260)
        self.breakdown_table = BreakdownTable()
        row = QVBoxLayout()
        row.addWidget(self.chart, 3)
        row.addWidget(self.breakdown_table, 2)
        dram_layout.addWidget(self.dram_caption)
        dram_layout.addLayout(row)
        return dram_box

    def _build_files_box(self) -> QGroupBox:
        files_box = self.files_box = QGroupBox("Files")
        files_layout = QVBoxLayout(files_box)
        self.files = QTableWidget(0, 2)
        self.files.setObjectName("detailFiles")
        self.files.setHorizontalHeaderLabels(["File", "Size"])
        self.files.verticalHeader().setVisible(False)
        self.files.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.files.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.files.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        files_layout.addWidget(self.files)
        return files_box

    # ---- what they show ------------------------------------------------------------------------------

    def clear(self, message: str) -> None:
        """No artifact: every section hidden, the chart says why."""
        self.artifact = None
        for section in self.widgets:
            section.hide()
        self.chart.set_breakdown(None, message=message)

    def show_artifact(self, artifact: Artifact) -> None:
        self.artifact = artifact
        for section in self.widgets:
            section.show()
        self.gauge.show()
        self._fill_settings(settings_rows(artifact))
        facts = block_facts(artifact.config)
        self.kv_label.setText(facts.headline)
        self.kv_meaning.setText(facts.meaning)
        self.gauge.set_facts(facts)
        self._show_breakdown(artifact)
        self.serving.show_config(artifact.loaded, artifact.problems)
        self._show_files(artifact)

    def show_description(self, description: ModelDescription) -> None:
        """A model without a resizable KV cache: its settings and why it has no KV cache to resize."""
        self.artifact = None
        for section in self.widgets:
            section.hide()
        self._fill_settings(description_rows(description))
        self.kv_label.setText("No resizable KV cache")
        self.kv_meaning.setText(description.kv_note or "")
        self.gauge.hide()
        self.settings_box.show()
        self.kv_box.show()

    def _fill_settings(self, rows: list[tuple[str, str]]) -> None:
        while self.settings_form.rowCount():
            self.settings_form.removeRow(0)
        for name, value in rows:
            label = (
                text_label()
            )  # wrapped: a long value (a VLM's parts, an encoder-decoder's note) never scrolls sideways
            label.setText(value)
            self.settings_form.addRow(name, label)

    @Slot()
    def _on_what_if(self) -> None:
        if self.artifact is not None:
            self._show_breakdown(self.artifact)

    def _what_if(self, artifact: Artifact) -> Breakdown | None:
        """The breakdown under the what-if budget (None: none typed, or it cannot be used; the result says why)."""
        text = self.what_if_edit.text().strip()
        self.what_if_result.setVisible(bool(text))
        if not text:
            return None
        # deferred: the planner (pydantic) loads when a budget is first typed, never while the sections are built
        from rbln_artifact_studio.core.planning.explore import what_if

        try:
            result = what_if(artifact, text)
        except StudioError as exc:
            self.what_if_result.setText(f"<span style='{style(Tone.ERROR)}'>✖ {escaped(one_line(exc))}</span>")
            return None
        colour = tone(Tone.ERROR) if result.blocks < result.floor else tone(Tone.OK)
        self.what_if_result.setText(f"<span style='color:{colour}'>{escaped(result.summary())}</span>")
        return result.breakdown

    def _show_breakdown(self, artifact: Artifact) -> None:
        breakdown = artifact.breakdown()
        npu = artifact.npu
        self.what_if_edit.setEnabled(breakdown is not None)
        if breakdown is not None:
            breakdown = self._what_if(artifact) or breakdown
        if breakdown is None or npu is None:
            reason = artifact.unknown_reason or "The NPU named in rbln_config.json is unknown."
            message = f"Allocations unknown: {reason}"
            self.dram_caption.setText(message)
            self.chart.set_breakdown(None, message="Allocations unknown; nothing is drawn rather than a guess.")
            self.chart.hide()
            self.breakdown_table.set_breakdown(None)
            self.breakdown_table.hide()
            return
        self.dram_caption.setText(breakdown_caption(breakdown))
        self.chart.set_breakdown(breakdown, npu.chiplets)
        self.breakdown_table.set_breakdown(breakdown, npu.chiplets)
        self.chart.show()
        self.breakdown_table.show()

    def _show_files(self, artifact: Artifact) -> None:
        rows = file_rows(artifact)
        self.files.setRowCount(len(rows))
        for i, (name, size) in enumerate(rows):
            self.files.setItem(i, 0, QTableWidgetItem(name))
            size_item = QTableWidgetItem(format_bytes(size))
            size_item.setToolTip(format_bytes_exact(size))
            size_item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.files.setItem(i, 1, size_item)
        self.files.setMinimumHeight(min(len(rows), 8) * self.files.verticalHeader().defaultSectionSize() + 30)

"""The detail panel: the selected artifact's settings, KV blocks, per-NPU DRAM breakdown, files and problems."""

from __future__ import annotations

import importlib
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.columns import COLUMNS
from rbln_artifact_studio.core.sizes import format_bytes, format_bytes_exact
from rbln_artifact_studio.core.status import Problem, Status, worst
from rbln_artifact_studio.gui.app.remedies import one_line
from rbln_artifact_studio.gui.app.tones import Tone, escaped, style, tone
from rbln_artifact_studio.gui.models.artifact_model import STATUS_COLOURS

if TYPE_CHECKING:  # types only: the estimator, pydantic and the container reader load after the window shows
    from collections.abc import Callable

    # and the sections' Qt classes are imported where prepare() builds them (PySide builds a class and its enums
    # on its first import: docs/performance.md, row 7)
    from PySide6.QtWidgets import QGroupBox

    from rbln_artifact_studio.core.estimation.estimator import Breakdown
    from rbln_artifact_studio.core.fleet.artifact import Artifact
    from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
    from rbln_artifact_studio.core.model.kinds import ModelDescription


def _label(object_name: str = "", wrap: bool = True) -> QLabel:
    label = QLabel()
    if object_name:
        label.setObjectName(object_name)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


BY_TITLE = {c.title: c for c in COLUMNS}
SECTION_MODULES = (
    ("rbln_artifact_studio.gui.widgets.kv_gauge",),  # with core.display.presentation
    ("rbln_artifact_studio.gui.widgets.dram_chart",),
    ("rbln_artifact_studio.gui.widgets.breakdown_table", "rbln_artifact_studio.core.model.budget"),
    ("rbln_artifact_studio.gui.window.serving_view",),
)
"""The modules DetailPanel.prepare() imports, in the groups preparation_steps() loads them in."""


def preparation_steps(panel: DetailPanel) -> list[Callable[[], object]]:
    """panel.prepare() cut into event-loop turns: the sections' modules a group at a time, then their widgets.

    Run after the window's first paint (MainWindow.after_first_paint), one step a turn: as one step it was the
    longest stall of the start (~40 ms idle, twice that beside a scan starting; docs/performance.md row 6).
    """
    return [partial(_load, names) for names in SECTION_MODULES] + [panel.prepare]


def _load(names: tuple[str, ...]) -> None:
    for name in names:
        importlib.import_module(name)


_PREPARED_PARTS = frozenset(
    {"settings_box", "settings_form", "serving", "kv_box", "kv_label", "gauge", "kv_meaning", "dram_box"}
    | {"dram_caption", "what_if_edit", "what_if_result", "chart", "breakdown_table", "files_box", "files"}
)
"""What DetailPanel.prepare() builds."""


class DetailPanel(QScrollArea):
    """Lays out what rbln_artifact_studio.core computed for one artifact; computes nothing itself."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("detailPanel")
        self.setWidgetResizable(True)
        self.artifact: Artifact | None = None
        body = QWidget()
        self._layout = QVBoxLayout(body)
        self._build_header(self._layout)
        self._layout.addStretch(1)
        self.setWidget(body)
        self._sections: list[QWidget] = []  # built by prepare()
        self.show_message("Open a folder and select an artifact to see its KV cache and DRAM breakdown.")

    def prepare(self) -> None:
        """Build the sections an artifact fills (hidden until one is shown). The window's first paint shows only
        the header's line of text, so they are built after it (MainWindow.after_first_paint), or when first needed:
        their modules and widgets were ~8% of the start-up (docs/performance.md row 7)."""
        from PySide6.QtWidgets import QFormLayout, QGroupBox

        if self._sections:
            return
        self.settings_box = QGroupBox("Settings")
        self.settings_form = QFormLayout(self.settings_box)
        # A long label (a multimodal part, an encoder-decoder's note) puts its value below it instead of widening the panel.
        self.settings_form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        from rbln_artifact_studio.gui.window.serving_view import ServingView

        self.serving = ServingView()
        sections = [self._build_kv_box(), self._build_dram_box(), self.serving, self.settings_box]
        sections.append(self._build_files_box())
        for section in sections:
            section.hide()
            self._layout.insertWidget(self._layout.count() - 1, section)  # above the stretch
        self._sections = [self.settings_box, self.kv_box, self.dram_box, self.files_box, self.serving]

    def __getattr__(self, name: str) -> object:
        """A section's part asked for before prepare() ran (a test, an action): built now."""
        if name in _PREPARED_PARTS and not self.__dict__.get("_sections"):
            self.prepare()
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ---- construction, step by step ------------------------------------------------------------------

    def _build_header(self, layout: QVBoxLayout) -> None:
        """The name and status, the size on disk and when it changed, the problems."""
        self.title = _label("detailTitle")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.problems = _label("detailProblems")
        self.problems.setTextFormat(Qt.TextFormat.RichText)
        self.on_disk = _label("detailOnDisk")  # size on disk and when it was compiled or last changed
        layout.addWidget(self.title)
        layout.addWidget(self.on_disk)
        layout.addWidget(self.problems)

    def _build_kv_box(self) -> QGroupBox:
        from PySide6.QtWidgets import QGroupBox

        kv_box = self.kv_box = QGroupBox("KV cache")
        kv_layout = QVBoxLayout(kv_box)
        from rbln_artifact_studio.gui.widgets.kv_gauge import KvGauge

        self.kv_label = _label("kvBlocksLabel")
        self.gauge = KvGauge()
        self.kv_meaning = _label("kvMeaningLabel")
        kv_layout.addWidget(self.kv_label)
        kv_layout.addWidget(self.gauge)
        kv_layout.addWidget(self.kv_meaning)
        return kv_box

    def _build_dram_box(self) -> QGroupBox:
        """The what-if budget, the caption, the chart and the chiplet table."""
        from PySide6.QtWidgets import QGroupBox

        dram_box = self.dram_box = QGroupBox("DRAM per NPU")
        dram_layout = QVBoxLayout(dram_box)
        from rbln_artifact_studio.core.model.budget import BINARY_UNITS
        from rbln_artifact_studio.gui.widgets.breakdown_table import BreakdownTable
        from rbln_artifact_studio.gui.widgets.dram_chart import DramChart

        self.dram_caption = _label("dramCaption")
        self.what_if_edit = QLineEdit()
        self.what_if_edit.setObjectName("whatIfBudgetEdit")
        self.what_if_edit.setPlaceholderText("0.8, 80% or 10GB (= 10 GiB); empty = as compiled")
        self.what_if_edit.setClearButtonEnabled(True)
        self.what_if_edit.setToolTip(
            "Draw the breakdown and the kvcache_num_blocks a compile at this memory_budget would give (what "
            f"explore and inspect --what-if print); nothing is written.\n{BINARY_UNITS}"
        )
        self.what_if_result = _label("whatIfResult")
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
        from PySide6.QtWidgets import QGroupBox, QTableWidget

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

    # ---- states --------------------------------------------------------------------------------------

    def show_message(self, text: str) -> None:
        """No artifact: a line of text and nothing else."""
        self.artifact = None
        self.title.setText(escaped(text))
        self.problems.clear()
        self.problems.hide()
        self.on_disk.hide()
        for section in self._sections:
            section.hide()
        if self._sections:
            self.chart.set_breakdown(None, message=text)

    def show_loading(self, name: str) -> None:
        self.show_message(f"Reading {name}…")

    def show_error(self, name: str, reason: str) -> None:
        self.show_message(f"Cannot read {name}: {reason}")

    def show_artifact(self, artifact: Artifact) -> None:
        from rbln_artifact_studio.core.display.presentation import block_facts

        self.prepare()
        self.artifact = artifact
        for section in self._sections:
            section.show()
        status = artifact.status
        colour = STATUS_COLOURS[status]
        self.title.setText(
            f"<b>{escaped(artifact.name)}</b> "
            f"<span style='color:{colour}'>[{status.value}]</span><br><small>{escaped(str(artifact.where))}</small>"
        )
        self._show_problems(artifact.problems)
        self.gauge.show()
        self._show_settings(artifact)
        facts = block_facts(artifact.config)
        self.kv_label.setText(facts.headline)
        self.kv_meaning.setText(facts.meaning)
        self.gauge.set_facts(facts)
        self._show_breakdown(artifact)
        self.serving.show_config(artifact.loaded, artifact.problems)
        self._show_files(artifact)

    def show_description(self, description: ModelDescription) -> None:
        """A model without a resizable KV cache: its kind, class, target, batch and parts, and why in words."""
        from rbln_artifact_studio.core.display.kinds_report import description_rows

        self.prepare()
        self.artifact = None
        for section in self._sections:
            section.hide()
        status = worst(list(description.problems))
        self.title.setText(
            f"<b>{escaped(description.path.name)}</b> "
            f"<span style='color:{STATUS_COLOURS[status]}'>[{status.value}]</span>"
            f"<br><small>{escaped(str(description.path))}</small>"
        )
        self._show_problems(list(description.problems))
        self._fill_settings(description_rows(description))
        self.kv_label.setText("No resizable KV cache")
        self.kv_meaning.setText(description.kv_note or "")
        self.gauge.hide()
        self.settings_box.show()
        self.kv_box.show()

    def show_on_disk(self, row: ArtifactSummary) -> None:
        """Its size on disk and when it was compiled or last changed, as the table's columns word them."""
        size, modified = (BY_TITLE[t] for t in ("Size on disk", "Modified"))
        parts = [f"{size.text(row)} on disk"]
        if row.modified is not None:
            parts.append(f"compiled or changed {modified.text(row)}")
        self.on_disk.setText(" · ".join(parts))
        exact = [c.exact(v) for c in (size, modified) if c.exact and (v := c.value(row)) is not None]
        self.on_disk.setToolTip("\n".join(exact))
        self.on_disk.show()

    def _show_problems(self, problems: list[Problem]) -> None:
        if problems:
            items = "".join(
                f"<li><span style='color:{STATUS_COLOURS[p.severity]}'>{p.severity.value}</span>: {escaped(p.message)}</li>"
                for p in problems
            )
            self.problems.setText(f"<ul style='margin:0'>{items}</ul>")
        else:
            self.problems.setText(f"<span style='color:{STATUS_COLOURS[Status.OK]}'>No problems found.</span>")
        self.problems.show()

    def _show_settings(self, artifact: Artifact) -> None:
        from rbln_artifact_studio.core.display.presentation import settings_rows

        self._fill_settings(settings_rows(artifact))

    def _fill_settings(self, rows: list[tuple[str, str]]) -> None:
        while self.settings_form.rowCount():
            self.settings_form.removeRow(0)
        for name, value in rows:
            label = _label()  # wrapped: a long value (a VLM's parts, an encoder-decoder's note) never scrolls sideways
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
        from rbln_artifact_studio.core.display.presentation import breakdown_caption

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
        from PySide6.QtWidgets import QTableWidgetItem

        from rbln_artifact_studio.core.display.presentation import file_rows

        rows = file_rows(artifact)
        self.files.setRowCount(len(rows))
        for i, (name, size) in enumerate(rows):
            self.files.setItem(i, 0, QTableWidgetItem(name))
            size_item = QTableWidgetItem(format_bytes(size))
            size_item.setToolTip(format_bytes_exact(size))
            size_item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.files.setItem(i, 1, size_item)
        self.files.setMinimumHeight(min(len(rows), 8) * self.files.verticalHeader().defaultSectionSize() + 30)

"""Compile wizard, page 4: KV cache sizing (a budget or an explicit count, never both) with a live preview."""

from __future__ import annotations

import html
from typing import TypedDict

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QButtonGroup,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
)

from rbln_artifact_studio.core.display.presentation import breakdown_caption
from rbln_artifact_studio.core.model.budget import BINARY_UNITS
from rbln_artifact_studio.core.simulator.compile_preview import CompilePreview, explicit_count_problem, preview_compile
from rbln_artifact_studio.gui.app.tones import Tone, message_html, style
from rbln_artifact_studio.gui.dialogs.wizard_state import StatePage, WizardState
from rbln_artifact_studio.gui.widgets.budget_curve import BudgetCurve
from rbln_artifact_studio.gui.widgets.dram_chart import DramChart
from rbln_artifact_studio.gui.widgets.fix_buttons import FixButtons
from rbln_artifact_studio.gui.widgets.number_field import NumberField
from rbln_artifact_studio.gui.widgets.radio import legible_radio

MAX_BLOCKS = 1_000_000


class SizingOptions(TypedDict):
    """This page's part of the CompileRequest: a memory budget as typed, or an explicit count, never both."""

    memory_budget: str | None
    kvcache_num_blocks: int | None


class SizingPage(StatePage):
    """Auto (memory_budget) or explicit (kvcache_num_blocks): one radio enables one field, so they never mix."""

    def __init__(self, state: WizardState) -> None:
        super().__init__(state)
        self.setTitle("KV cache sizing")
        self.setSubTitle(
            "Let the compiler fit the KV cache into a memory budget per NPU (weights and workspace are charged "
            "first), or give kvcache_num_blocks yourself."
        )
        self.preview: CompilePreview | None = None
        self._build_fields()
        self._build_preview()
        self._build_layout()
        self.auto_radio.toggled.connect(self._on_mode)
        self.budget_edit.textChanged.connect(self.update_preview)
        self.blocks_spin.edited.connect(self.update_preview)

    # ---- construction, step by step ------------------------------------------------------------------

    def _build_fields(self) -> None:
        """Two radios, each enabling its own field: the budget (automatic) or the count (explicit)."""
        self.auto_radio = legible_radio("Automatic, within a memory budget", "wizardAutoRadio")
        self.explicit_radio = legible_radio("Explicit kvcache_num_blocks", "wizardExplicitRadio")
        group = QButtonGroup(self)
        group.addButton(self.auto_radio)
        group.addButton(self.explicit_radio)
        self.auto_radio.setChecked(True)
        self.budget_edit = QLineEdit()
        self.budget_edit.setObjectName("wizardBudgetEdit")
        self.budget_edit.setPlaceholderText("empty = the whole NPU; 0.8, 80% or 10GB (= 10 GiB)")
        self.budget_edit.setToolTip(f"A fraction of the NPU's DRAM, a percentage or bytes.\n{BINARY_UNITS}")
        self.blocks_spin = NumberField("wizardBlocksSpin", 0, MAX_BLOCKS)
        self.blocks_spin.setValue(1)
        self.blocks_spin.setEnabled(False)

    def _build_preview(self) -> None:
        """What the fields resolve to: the text, the fixes offered, the breakdown and the budget curve."""
        self.preview_label = QLabel()
        self.preview_label.setObjectName("wizardPreviewLabel")
        self.preview_label.setWordWrap(True)
        self.preview_label.setTextFormat(Qt.TextFormat.RichText)
        self.fixes = FixButtons("wizardSizingFixes")
        self.chart = DramChart(object_name="wizardDramChart")
        self.curve = BudgetCurve()

    def _build_layout(self) -> None:
        layout = QGridLayout(self)
        layout.addWidget(self.auto_radio, 0, 0)
        layout.addWidget(self.budget_edit, 0, 1)
        layout.addWidget(self.explicit_radio, 1, 0)
        layout.addWidget(self.blocks_spin, 1, 1)
        layout.addWidget(self.preview_label, 2, 0, 1, 2)
        layout.addWidget(self.fixes, 3, 0, 1, 2)
        charts = QHBoxLayout()
        charts.addWidget(self.chart, 1)
        charts.addWidget(self.curve, 1)
        layout.addLayout(charts, 4, 0, 1, 2)
        layout.setRowStretch(4, 1)

    # ---- the preview ---------------------------------------------------------------------------------

    def options(self) -> SizingOptions:
        if self.auto_radio.isChecked():
            return {"memory_budget": self.budget_edit.text().strip() or None, "kvcache_num_blocks": None}
        return {"memory_budget": None, "kvcache_num_blocks": self.blocks_spin.typed_value()}

    def initializePage(self) -> None:
        self.update_preview()

    def isComplete(self) -> bool:
        return self.preview is not None and self.preview.ok

    @Slot()
    def _on_mode(self) -> None:
        auto = self.auto_radio.isChecked()
        self.budget_edit.setEnabled(auto)
        self.blocks_spin.setEnabled(not auto)
        if not auto and self.preview is not None and self.preview.plan is not None:
            self.blocks_spin.setValue(self.preview.plan.num_blocks)  # start from what the budget resolved
        self.update_preview()

    @Slot()
    def update_preview(self) -> None:
        """Plan with the current fields (pure computation) and show blocks, breakdown and curve."""
        wizard = self.state()
        request = wizard.request() if wizard is not None else None
        model = wizard.model if wizard is not None else None
        if request is None or model is None:
            return
        assert wizard is not None
        problem = wizard.input_problem()
        if problem is None and not self.auto_radio.isChecked():
            problem = explicit_count_problem(self.blocks_spin.typed_value())
        if problem is not None:  # what the fields show cannot be compiled: no preview of other numbers
            self.preview = None
            self.preview_label.setText(f"<span style='{style(Tone.ERROR)}'>✖ {message_html(problem)}</span>")
            self.fixes.set_fixes(())
            self.chart.set_breakdown(None, message="No preview: fix the error above.")
            self.curve.set_curve([], 1, 0, 0, None, None, "No curve: fix the error above.")
            self.completeChanged.emit()
            return
        preview = self.preview = preview_compile(request, model)
        plan = preview.plan
        self.fixes.set_fixes(preview.fixes)
        if plan is None:
            self.preview_label.setText(
                f"<span style='{style(Tone.ERROR)}'>✖ {message_html(preview.error or '')}</span>"
            )
            self.chart.set_breakdown(None, message="No preview: fix the error above.")
        else:
            lines = [
                f"<b>kvcache_num_blocks {plan.num_blocks}</b> (floor {plan.floor}, full pool {plan.full}); "
                f"budget {html.escape(plan.budget.describe())} = {plan.budget_per_npu:,} B per NPU."
            ]
            lines += [f"<span style='{style(Tone.WARNING)}'>⚠ {message_html(w)}</span>" for w in plan.warnings]
            lines.append(html.escape(breakdown_caption(plan.breakdown)))
            self.preview_label.setText("<br>".join(lines))
            self.chart.set_breakdown(plan.breakdown, plan.shape.npu.chiplets)
        if preview.npu is not None:
            self.curve.set_curve(
                preview.curve,
                preview.npu.available_per_npu,
                preview.floor or 0,
                preview.full or 0,
                preview.budget_per_npu if self.auto_radio.isChecked() else None,
                plan.num_blocks if plan else None,
            )
        self.completeChanged.emit()

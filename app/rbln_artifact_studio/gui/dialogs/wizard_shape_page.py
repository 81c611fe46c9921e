"""Compile wizard, page 3: batch, max_seq_len, attention, partition length and prefill chunk, checked as typed."""

from __future__ import annotations

from dataclasses import replace
from typing import TypedDict

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel

from rbln_artifact_studio.core.errors import Fix, StudioError
from rbln_artifact_studio.core.estimation.estimator import SequenceShape
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, resolve_shape
from rbln_artifact_studio.gui.app.remedies import one_line
from rbln_artifact_studio.gui.app.tones import Tone, message_html, tone
from rbln_artifact_studio.gui.dialogs.wizard_state import StatePage, WizardState
from rbln_artifact_studio.gui.widgets.fix_buttons import FixButtons
from rbln_artifact_studio.gui.widgets.number_field import NumberField

MAX_BATCH = 4096
MAX_SEQ_LEN = 1 << 24


class ShapeOptions(TypedDict):
    """This page's part of the CompileRequest."""

    batch_size: int
    max_seq_len: int
    attn_impl: str | None  # None: automatic
    kvcache_partition_len: int | None
    prefill_chunk_size: int | None


class ShapePage(StatePage):
    """Each change asks rbln_artifact_studio.core.simulator.compiler.resolve_shape; its ShapeError is shown as is,
    with the fixes it lists as buttons."""

    def __init__(self, state: WizardState) -> None:
        super().__init__(state)
        self.setTitle("Shape")
        self.setSubTitle("What one compiled graph serves: batch slots, sequence length and attention.")
        self.batch_spin = NumberField("wizardBatchSpin", 0, MAX_BATCH)
        self.batch_spin.setValue(1)
        self.seq_spin = NumberField("wizardMaxSeqLenSpin", 0, MAX_SEQ_LEN)
        self.attn_combo = QComboBox()
        self.attn_combo.setObjectName("wizardAttnCombo")
        self.attn_combo.addItem("automatic", None)
        self.attn_combo.addItem("flash_attn", "flash_attn")
        self.attn_combo.addItem("eager", "eager")
        self.partition_spin = NumberField("wizardPartitionSpin", 0, MAX_SEQ_LEN, "default")
        self.chunk_spin = NumberField("wizardChunkSpin", 0, MAX_SEQ_LEN, "default")
        self.message = QLabel()
        self.message.setObjectName("wizardShapeMessage")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.fixes = FixButtons("wizardShapeFixes")
        layout = QFormLayout(self)
        layout.addRow("batch_size", self.batch_spin)
        layout.addRow("max_seq_len", self.seq_spin)
        layout.addRow("attn_impl", self.attn_combo)
        layout.addRow("kvcache_partition_len", self.partition_spin)
        layout.addRow("prefill_chunk_size", self.chunk_spin)
        layout.addRow(self.message)
        layout.addRow(self.fixes)
        self._ok = False
        for spin in self.fields():
            spin.edited.connect(self.validate)
        self.attn_combo.currentIndexChanged.connect(self.validate)

    def fields(self) -> dict[NumberField, str]:
        return {
            self.batch_spin: "batch_size",
            self.seq_spin: "max_seq_len",
            self.partition_spin: "kvcache_partition_len",
            self.chunk_spin: "prefill_chunk_size",
        }

    def options(self) -> ShapeOptions:
        return {
            "batch_size": self.batch_spin.typed_value() or 0,
            "max_seq_len": self.seq_spin.typed_value() or 0,
            "attn_impl": self.attn_combo.currentData(),
            "kvcache_partition_len": self.partition_spin.typed_value() or None,
            "prefill_chunk_size": self.chunk_spin.typed_value() or None,
        }

    def initializePage(self) -> None:
        self.validate()

    def isComplete(self) -> bool:
        return self._ok

    def _show(self, ok: bool, text: str, fixes: tuple[Fix, ...] = ()) -> None:
        self._ok = ok
        colour, mark = (tone(Tone.OK), "✓") if ok else (tone(Tone.ERROR), "✖")
        self.message.setText(f"<span style='color:{colour}'>{mark} {message_html(text)}</span>")
        self.fixes.set_fixes(fixes)
        self.completeChanged.emit()

    @Slot()
    def validate(self) -> None:
        wizard = self.state()
        request: CompileRequest | None = wizard.request() if wizard is not None else None
        model = wizard.model if wizard is not None else None
        if wizard is None or request is None or model is None:
            return
        problem = wizard.input_problem()
        if problem is not None:
            self._show(False, problem)
            return
        try:
            shape = resolve_shape(replace(request, memory_budget=None, kvcache_num_blocks=None), model)
        except StudioError as exc:
            self._show(False, one_line(exc), exc.fixes)
            return
        seq = SequenceShape(shape.batch_size, shape.max_seq_len, shape.block_size, shape.attn)
        self._show(
            True,
            f"{shape.attn.value}, KV block size {shape.block_size:,}, prefill chunk {shape.prefill_chunk_size}: "
            f"floor {seq.floor} blocks, full pool {seq.full} blocks.",
        )

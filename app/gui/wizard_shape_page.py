"""Compile wizard, page 3: batch, max_seq_len, attention, partition length and prefill chunk, checked as typed."""

from __future__ import annotations

import html
from dataclasses import replace
from typing import TYPE_CHECKING, TypedDict, cast

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QSpinBox, QWizardPage
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.estimation.estimator import SequenceShape
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, resolve_shape

if TYPE_CHECKING:
    from rbln_artifact_studio.gui.compile_wizard import CompileWizard

MAX_BATCH = 4096
MAX_SEQ_LEN = 1 << 24


def _spin(name: str, low: int, high: int, default_text: str = "") -> QSpinBox:
    spin = QSpinBox()
    spin.setObjectName(name)
    spin.setRange(low, high)
    if default_text:
        spin.setSpecialValueText(default_text)  # shown at the minimum (0): the NPU family's default
    return spin


class ShapeOptions(TypedDict):
    """This page's part of the CompileRequest."""

    batch_size: int
    max_seq_len: int
    attn_impl: str | None  # None: automatic
    kvcache_partition_len: int | None
    prefill_chunk_size: int | None


class ShapePage(QWizardPage):
    """Each change asks rbln_artifact_studio.core.simulator.compiler.resolve_shape; its ShapeError is shown as is."""

    def __init__(self) -> None:
        super().__init__()
        self.setTitle("Shape")
        self.setSubTitle("What one compiled graph serves: batch slots, sequence length and attention.")
        self.batch_spin = _spin("wizardBatchSpin", 1, MAX_BATCH)
        self.seq_spin = _spin("wizardMaxSeqLenSpin", 1, MAX_SEQ_LEN)
        self.attn_combo = QComboBox()
        self.attn_combo.setObjectName("wizardAttnCombo")
        self.attn_combo.addItem("automatic", None)
        self.attn_combo.addItem("flash_attn", "flash_attn")
        self.attn_combo.addItem("eager", "eager")
        self.partition_spin = _spin("wizardPartitionSpin", 0, MAX_SEQ_LEN, "default")
        self.chunk_spin = _spin("wizardChunkSpin", 0, MAX_SEQ_LEN, "default")
        self.message = QLabel()
        self.message.setObjectName("wizardShapeMessage")
        self.message.setWordWrap(True)
        layout = QFormLayout(self)
        layout.addRow("batch_size", self.batch_spin)
        layout.addRow("max_seq_len", self.seq_spin)
        layout.addRow("attn_impl", self.attn_combo)
        layout.addRow("kvcache_partition_len", self.partition_spin)
        layout.addRow("prefill_chunk_size", self.chunk_spin)
        layout.addRow(self.message)
        self._seq_for: str | None = None
        self._ok = False
        for spin in (self.batch_spin, self.seq_spin, self.partition_spin, self.chunk_spin):
            spin.valueChanged.connect(self.validate)
        self.attn_combo.currentIndexChanged.connect(self.validate)

    def options(self) -> ShapeOptions:
        return {
            "batch_size": self.batch_spin.value(),
            "max_seq_len": self.seq_spin.value(),
            "attn_impl": self.attn_combo.currentData(),
            "kvcache_partition_len": self.partition_spin.value() or None,
            "prefill_chunk_size": self.chunk_spin.value() or None,
        }

    def initializePage(self) -> None:
        wizard = cast("CompileWizard | None", self.wizard())
        model = wizard.model if wizard is not None else None
        if model is not None and self._seq_for != model.model_id:
            self._seq_for = model.model_id  # a new model: start from its own maximum length
            self.seq_spin.setValue(model.spec.max_position_embeddings)
        self.validate()

    def isComplete(self) -> bool:
        return self._ok

    @Slot()
    def validate(self) -> None:
        wizard = cast("CompileWizard | None", self.wizard())
        request: CompileRequest | None = wizard.request() if wizard is not None else None
        model = wizard.model if wizard is not None else None
        if request is None or model is None:
            return
        try:
            shape = resolve_shape(replace(request, memory_budget=None, kvcache_num_blocks=None), model)
        except StudioError as exc:
            self._ok = False
            self.message.setText(f"<span style='color:#c62828'>✖ {html.escape(exc.one_line())}</span>")
        else:
            self._ok = True
            seq = SequenceShape(shape.batch_size, shape.max_seq_len, shape.block_size, shape.attn)
            self.message.setText(
                f"<span style='color:#2e7d32'>✓ {shape.attn.value}, KV block size {shape.block_size:,}, prefill chunk "
                f"{shape.prefill_chunk_size}: floor {seq.floor} blocks, full pool {seq.full} blocks.</span>"
            )
        self.completeChanged.emit()

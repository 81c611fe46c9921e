"""Compile wizard, page 2: the NPU SKU and how many devices (tensor parallel) the model spans."""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QSpinBox, QWizardPage

from app.core.npu import DEFAULT_NPU, SKUS, get_npu
from app.core.sizes import format_bytes

MAX_DEVICES = 64


class TargetPage(QWizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("Target")
        self.setSubTitle("The NPU the artifact runs on; num_devices > 1 places the model on that many NPUs of the SKU.")
        self.npu_combo = QComboBox()
        self.npu_combo.setObjectName("wizardNpuCombo")
        for name in SKUS:
            self.npu_combo.addItem(get_npu(name).label, name)
        self.npu_combo.setCurrentIndex(self.npu_combo.findData(DEFAULT_NPU))
        self.devices_spin = QSpinBox()
        self.devices_spin.setObjectName("wizardDevicesSpin")
        self.devices_spin.setRange(1, MAX_DEVICES)
        self.info = QLabel()
        self.info.setObjectName("wizardTargetInfo")
        self.info.setWordWrap(True)
        layout = QFormLayout(self)
        layout.addRow("NPU", self.npu_combo)
        layout.addRow("num_devices", self.devices_spin)
        layout.addRow(self.info)
        self.npu_combo.currentIndexChanged.connect(self._show_info)
        self.devices_spin.valueChanged.connect(self._show_info)
        self._show_info()

    def npu(self) -> str:
        return str(self.npu_combo.currentData())

    def options(self) -> dict[str, object]:
        return {"npu": self.npu(), "num_devices": self.devices_spin.value()}

    def set_npu(self, name: str) -> None:
        self.npu_combo.setCurrentIndex(self.npu_combo.findData(name))

    @Slot()
    def _show_info(self) -> None:
        npu = get_npu(self.npu())
        family = npu.family
        self.info.setText(
            f"{family.name}: {format_bytes(family.dram_bytes)} DRAM in {family.chiplets} chiplet(s), "
            f"{format_bytes(npu.available_per_npu)} available per NPU after the system reserve; "
            f"{self.devices_spin.value()} device(s)."
        )

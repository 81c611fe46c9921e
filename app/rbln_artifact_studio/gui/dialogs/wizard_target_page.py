"""Compile wizard, page 2: the NPU SKU, how many devices (tensor parallel) the model spans, and which backend compiles."""

from __future__ import annotations

import html
from typing import TypedDict

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.core.model.npu import DEFAULT_NPU, SKUS, get_npu
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.gui.app.tones import Tone, message_html, style
from rbln_artifact_studio.gui.dialogs.wizard_state import StatePage, WizardState
from rbln_artifact_studio.gui.models.backend_status import BackendStatus
from rbln_artifact_studio.gui.widgets.fix_buttons import FixButtons
from rbln_artifact_studio.gui.widgets.number_field import NumberField

MAX_DEVICES = 64
WHERE = {BackendChoice.SIM: "the built-in simulator", BackendChoice.OPTIMUM: "optimum-rbln-cli"}


class TargetOptions(TypedDict):
    """This page's part of the CompileRequest."""

    npu: str
    num_devices: int


class TargetPage(StatePage):
    def __init__(self, state: WizardState, backends: BackendStatus) -> None:
        super().__init__(state)
        self.setTitle("Target")
        self.setSubTitle("The NPU the artifact runs on; num_devices > 1 places the model on that many NPUs of the SKU.")
        self.backends = backends
        self._preferred: BackendChoice | None = None  # the last compile's backend (prefer_backend)
        self._build_target()
        self._build_backend()
        self._build_layout()
        self._connect()
        self._show_info()
        self._show_backends()
        backends.detect()

    # ---- construction, step by step ------------------------------------------------------------------

    def _build_target(self) -> None:
        """The SKU and num_devices, what the SKU offers, and what the devices come to (with fixes offered)."""
        self.npu_combo = QComboBox()
        self.npu_combo.setObjectName("wizardNpuCombo")
        for name in SKUS:
            self.npu_combo.addItem(get_npu(name).label, name)
        self.npu_combo.setCurrentIndex(self.npu_combo.findData(DEFAULT_NPU))
        self.devices_spin = NumberField("wizardDevicesSpin", 0, MAX_DEVICES)
        self.devices_spin.setValue(1)
        self.info = QLabel()
        self.info.setObjectName("wizardTargetInfo")
        self.info.setWordWrap(True)
        self.sizing = QLabel()
        self.sizing.setObjectName("wizardDevicesInfo")
        self.sizing.setWordWrap(True)
        self.sizing.setTextFormat(Qt.TextFormat.RichText)
        self.fixes = FixButtons("wizardTargetFixes")

    def _build_backend(self) -> None:
        """The backend to compile with, and what detection found of it."""
        self.backend_combo = QComboBox()
        self.backend_combo.setObjectName("wizardBackendCombo")
        for choice in BackendChoice:
            self.backend_combo.addItem(choice.label, choice.value)
        self.backend_info = QLabel()
        self.backend_info.setObjectName("wizardBackendInfo")
        self.backend_info.setWordWrap(True)

    def _build_layout(self) -> None:
        layout = QFormLayout(self)
        layout.addRow("NPU", self.npu_combo)
        layout.addRow("num_devices", self.devices_spin)
        layout.addRow(self.info)
        layout.addRow(self.sizing)
        layout.addRow(self.fixes)
        layout.addRow("Backend", self.backend_combo)
        layout.addRow(self.backend_info)

    def _connect(self) -> None:
        self.npu_combo.currentIndexChanged.connect(self._show_info)
        self.devices_spin.edited.connect(self._show_info)
        self.backend_combo.currentIndexChanged.connect(self._show_backends)
        self.backend_combo.activated.connect(self._forget_preferred)
        self.backends.changed.connect(self._show_backends)

    # ---- the choices ---------------------------------------------------------------------------------

    def npu(self) -> str:
        return str(self.npu_combo.currentData())

    def options(self) -> TargetOptions:
        return {"npu": self.npu(), "num_devices": self.devices_spin.typed_value() or 0}

    def isComplete(self) -> bool:
        devices = self.devices_spin.typed_value()
        return devices is not None and devices > 0

    def set_npu(self, name: str) -> None:
        self.npu_combo.setCurrentIndex(self.npu_combo.findData(name))

    def backend(self) -> BackendChoice:
        """What the compile job and the command line get."""
        return BackendChoice(self.backend_combo.currentData())

    def set_backend(self, choice: BackendChoice) -> None:
        self.backend_combo.setCurrentIndex(self.backend_combo.findData(choice.value))

    def prefer_backend(self, choice: BackendChoice) -> None:
        """Start from this backend (the last compile's): optimum-rbln-cli once detection finds it, unless the user
        chose another meanwhile."""
        self._preferred = choice
        self.set_backend(choice)

    def optimum_available(self) -> bool:
        info = self.backends.info(BackendChoice.OPTIMUM.value)
        return not self.backends.detecting and info is not None and info.available

    def effective_backend(self) -> BackendChoice:
        """What `auto` comes to with the tools detected here (it is decided again when the job runs)."""
        backend = self.backend()
        if backend == BackendChoice.AUTO:
            return BackendChoice.OPTIMUM if self.optimum_available() else BackendChoice.SIM
        return backend

    def refresh(self) -> None:
        self._show_info()

    @Slot()
    def _forget_preferred(self) -> None:
        self._preferred = None  # the user chose: detection no longer changes the backend

    @Slot()
    def _show_info(self) -> None:
        npu = get_npu(self.npu())
        family = npu.family
        self.info.setText(
            f"{npu.label}, an NPU of the {family.name} family: {format_bytes(family.dram_bytes)} DRAM in "
            f"{'one chiplet' if family.chiplets == 1 else f'{family.chiplets} chiplets'}, "
            f"{format_bytes(npu.available_per_npu)} available per NPU after the "
            "system reserve."
        )
        devices = self.devices_spin.typed_value()
        wizard = self.state()
        if devices is None or devices < 1:
            problem = self.devices_spin.problem("num_devices") or f"num_devices must be at least 1, got {devices}."
            self.sizing.setText(f"<span style='{style(Tone.ERROR)}'>✖ {message_html(problem)}</span>")
            self.fixes.set_fixes(())
        elif wizard is not None:
            text, fixes = wizard.device_sizing()
            self.sizing.setText(html.escape(text))
            self.fixes.set_fixes(fixes)
        self.completeChanged.emit()

    @Slot()
    def _show_backends(self) -> None:
        status = self.backends
        optimum = status.info(BackendChoice.OPTIMUM.value)
        available = self.optimum_available()
        row = self.backend_combo.findData(BackendChoice.OPTIMUM.value)
        item = self.backend_combo.model()
        assert isinstance(item, QStandardItemModel)
        version = f" {optimum.version}" if available and optimum is not None and optimum.version else ""
        label = BackendChoice.OPTIMUM.label + (version if available else " (not available)")
        self.backend_combo.setItemText(row, label)
        item.item(row).setEnabled(available)
        if not available and self.backend() == BackendChoice.OPTIMUM:
            self.set_backend(BackendChoice.AUTO)  # it went away (detected again after a preferences change)
        elif available and self._preferred == BackendChoice.OPTIMUM and self.backend() != BackendChoice.OPTIMUM:
            self.set_backend(BackendChoice.OPTIMUM)  # the last compile's, found once detection answered
        if status.detecting:
            text = "Detecting the backends… The built-in simulator is always available."
        elif status.error is not None:
            text = f"Backend detection failed: {status.error} The built-in simulator is always available."
        elif optimum is None:
            text = "The built-in simulator is always available."
        elif available:
            text = f"optimum-rbln-cli{version}: {optimum.detail}."
        else:
            text = f"optimum-rbln-cli is not available: {optimum.detail}"
        where = WHERE[self.effective_backend()]
        self.backend_info.setText(f"{html.escape(text)}<br>This compile runs with <b>{where}</b>.")

"""Compile wizard, page 1: the model, from a bundled preset or a local folder holding config.json."""

from __future__ import annotations

import html

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWizardPage,
)

from rbln_artifact_studio.core.model.modelspec import ResolvedModel, preset_ids, resolve_model
from rbln_artifact_studio.gui.app.tones import Tone, style
from rbln_artifact_studio.gui.models.jobs import JobFailure, JobManager
from rbln_artifact_studio.gui.widgets.radio import legible_radio

DEFAULT_PRESET = "Qwen/Qwen3-8B"


class ModelPage(QWizardPage):
    """The model config is read once per choice in a worker; the page is complete when it has been read."""

    def __init__(self, jobs: JobManager) -> None:
        super().__init__()
        self.jobs = jobs
        self.setTitle("Model")
        self.setSubTitle("A bundled preset (no download), or a local folder with the model's config.json.")
        self.model: ResolvedModel | None = None
        self._wanted = ""
        self._preferred = DEFAULT_PRESET  # the preset chosen once they are listed (prefer: the last compile's)
        self._build_choice()
        self._build_layout(self._build_browse())
        self._connect()
        job = jobs.submit("List model presets", lambda ctx: preset_ids(), visible=False)
        job.succeeded.connect(self._on_presets)
        job.failed.connect(self._on_presets_failed)

    # ---- construction, step by step ------------------------------------------------------------------

    def _build_choice(self) -> None:
        """A preset (the combo fills once the presets are listed) or a folder; the status says what was read."""
        self.preset_radio = legible_radio("Bundled preset", "wizardPresetRadio")
        self.local_radio = legible_radio("Local folder", "wizardLocalRadio")
        group = QButtonGroup(self)
        group.addButton(self.preset_radio)
        group.addButton(self.local_radio)
        self.preset_radio.setChecked(True)
        self.preset_combo = QComboBox()
        self.preset_combo.setObjectName("wizardPresetCombo")
        self.folder_edit = QLineEdit()
        self.folder_edit.setObjectName("wizardModelEdit")
        self.folder_edit.setPlaceholderText("/path/to/model (a folder with config.json)")
        self.status = QLabel("Reading the bundled presets…")
        self.status.setObjectName("wizardModelStatus")
        self.status.setWordWrap(True)

    def _build_browse(self) -> QHBoxLayout:
        """The folder field with its Browse… button."""
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.folder_edit, 1)
        row.addWidget(browse)
        return row

    def _build_layout(self, folder_row: QHBoxLayout) -> None:
        layout = QGridLayout(self)
        layout.addWidget(self.preset_radio, 0, 0)
        layout.addWidget(self.preset_combo, 0, 1)
        layout.addWidget(self.local_radio, 1, 0)
        layout.addLayout(folder_row, 1, 1)
        layout.addWidget(self.status, 2, 0, 1, 2)
        layout.setRowStretch(3, 1)

    def _connect(self) -> None:
        """A choice is read once the user pauses (the debounce), not at every key."""
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(250)
        self._debounce.timeout.connect(self._resolve)
        self.preset_combo.currentIndexChanged.connect(self._on_choice)
        self.preset_radio.toggled.connect(self._on_choice)
        self.folder_edit.textChanged.connect(self._on_folder_typed)

    # ---- the choice and its reading ------------------------------------------------------------------

    def prefer(self, model_id: str) -> None:
        """Start from this model: a bundled preset once they are listed, else a model folder (read, or said why
        not, as if typed)."""
        self._preferred = model_id
        if self.preset_combo.count() and self.preset_combo.findText(model_id) >= 0:
            self.preset_radio.setChecked(True)
            self.preset_combo.setCurrentText(model_id)
        elif not self.looks_like_preset(model_id):
            self.folder_edit.setText(model_id)  # -> the local radio, read after the debounce

    @staticmethod
    def looks_like_preset(model_id: str) -> bool:
        """A Hub-style name (org/model), not a folder path: a preset the combo offers once listed."""
        return not model_id.startswith(("/", "~", ".")) and model_id.count("/") == 1

    def model_id(self) -> str:
        if self.preset_radio.isChecked():
            return self.preset_combo.currentText()
        return self.folder_edit.text().strip()

    def isComplete(self) -> bool:
        return self.model is not None and self.model.model_id == self.model_id() != ""

    @Slot(object)
    def _on_presets(self, ids: list[str]) -> None:
        self.preset_combo.blockSignals(True)
        self.preset_combo.addItems(ids)
        preferred = next((i for i in (self._preferred, DEFAULT_PRESET) if i in ids), None)
        if preferred is not None:
            self.preset_combo.setCurrentText(preferred)
        self.preset_combo.blockSignals(False)
        self._on_choice()

    @Slot()
    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Model folder (with config.json)")
        if folder:
            self.folder_edit.setText(folder)

    @Slot()
    def _on_folder_typed(self) -> None:
        if not self.local_radio.isChecked():
            self.local_radio.setChecked(True)  # toggled -> _on_choice
        else:
            self._on_choice()

    @Slot()
    def _on_choice(self) -> None:
        self.model = None
        self.completeChanged.emit()
        if not self.model_id():
            self.status.setText("Choose a preset or type a model folder.")
            return
        self.status.setText(f"Reading {self.model_id()}…")
        self._debounce.start()

    @Slot()
    def _resolve(self) -> None:
        model_id = self._wanted = self.model_id()
        if not model_id:
            return
        job = self.jobs.submit(f"Read {model_id}", lambda ctx: resolve_model(model_id), visible=False)
        job.succeeded.connect(self._on_resolved)
        job.failed.connect(self._on_failed)

    @Slot(object)
    def _on_resolved(self, model: ResolvedModel) -> None:
        if model.model_id != self.model_id():
            return  # the user chose something else meanwhile
        self.model = model
        spec = model.spec
        where = "bundled preset" if model.source_dir is None else str(model.source_dir)
        self.status.setText(
            f"{spec.architecture}: {spec.num_hidden_layers} layers, {spec.kv_heads} KV heads, head_dim "
            f"{spec.dim_per_head}, {spec.dtype_name}, max_position_embeddings {spec.max_position_embeddings:,} ({where})."
        )
        self.completeChanged.emit()

    @Slot(object)
    def _on_presets_failed(self, failure: JobFailure) -> None:
        self.status.setText(
            f"<span style='{style(Tone.ERROR)}'>✖ The bundled presets could not be listed: {html.escape(failure.reason)}. "
            "Choose a model folder instead.</span>"
        )

    @Slot(object)
    def _on_failed(self, failure: JobFailure) -> None:
        if self._wanted == self.model_id():
            self.status.setText(f"<span style='{style(Tone.ERROR)}'>✖ {html.escape(failure.reason)}</span>")

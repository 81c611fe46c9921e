"""Preferences: where the real toolchain is (the Python of optimum-rbln, or optimum-rbln-cli itself), with detection;
and the ssh config the servers are reached through."""

from __future__ import annotations

import html
import os

from PySide6.QtCore import Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.backends import settings as toolchain_settings
from rbln_artifact_studio.gui.app.settings import Settings, ToolchainPaths
from rbln_artifact_studio.gui.models.backend_status import BackendStatus
from rbln_artifact_studio.gui.widgets.screen_fit import resize_to_fit
from rbln_artifact_studio.remote.ssh_config import ENV_SSH_CONFIG


def _path_row(edit: QLineEdit, browse: QPushButton) -> QHBoxLayout:
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(browse)
    return row


class PreferencesDialog(QDialog):
    """OK keeps the paths (written with the other settings when the window closes) and detects again.

    "Detect again" tries the paths as typed; Cancel puts the saved ones back.
    """

    def __init__(self, settings: Settings, backends: BackendStatus, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("preferencesDialog")
        self.setWindowTitle("Preferences")
        self.settings = settings
        self.backends = backends
        self._tried = False
        layout = QVBoxLayout(self)
        layout.addWidget(self._build_toolchain(settings.toolchain()))
        layout.addWidget(self._build_ssh(settings.ssh_config()))
        layout.addWidget(self._build_found(), 1)
        layout.addWidget(self._build_buttons())
        resize_to_fit(self, 760, 420)
        self._show_env_overrides()
        backends.changed.connect(self._show_status)
        self._show_status()
        backends.detect()

    # ---- construction, step by step ------------------------------------------------------------------

    def _build_toolchain(self, saved: ToolchainPaths) -> QGroupBox:
        """The two paths, each with Browse…, and a note on the environment variables that win over them."""
        self.python_edit = QLineEdit(saved.toolchain_python)
        self.python_edit.setObjectName("prefsToolchainPython")
        self.python_edit.setPlaceholderText(
            "found from optimum-rbln-cli (e.g. /opt/rbln-venv or /opt/rbln-venv/bin/python)"
        )
        self.cli_edit = QLineEdit(saved.optimum_cli)
        self.cli_edit.setObjectName("prefsOptimumCli")
        self.cli_edit.setPlaceholderText("found on PATH, or beside the Python above")
        python_browse = QPushButton("Browse…")
        python_browse.clicked.connect(self._browse_python)
        cli_browse = QPushButton("Browse…")
        cli_browse.clicked.connect(self._browse_cli)
        self.env_note = QLabel()
        self.env_note.setObjectName("prefsEnvNote")
        self.env_note.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Toolchain Python or environment", _path_row(self.python_edit, python_browse))
        form.addRow("optimum-rbln-cli", _path_row(self.cli_edit, cli_browse))
        form.addRow(self.env_note)
        toolchain = QGroupBox("Real toolchain (optimum-rbln, rebel-compiler)")
        toolchain.setLayout(form)
        return toolchain

    def _build_ssh(self, saved: str) -> QGroupBox:
        """The ssh config file (ssh -F), with Browse…, and a note when RBLN_STUDIO_SSH_CONFIG wins over it."""
        self.ssh_config_edit = QLineEdit(saved)
        self.ssh_config_edit.setObjectName("prefsSshConfig")
        self.ssh_config_edit.setPlaceholderText("~/.ssh/config (ssh's own)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_ssh_config)
        env = os.environ.get(ENV_SSH_CONFIG, "").strip()
        note = QLabel(
            f"{ENV_SSH_CONFIG} is set ({html.escape(env)}) and takes precedence over the field above."
            if env
            else "The servers' aliases, ProxyJump and keys come from this file; leave it empty for ~/.ssh/config."
        )
        note.setObjectName("prefsSshNote")
        note.setWordWrap(True)
        self.http_config_edit = QLineEdit(self.settings.session.prometheus_http_config())
        self.http_config_edit.setObjectName("prefsPrometheusHttpConfig")
        self.http_config_edit.setPlaceholderText("none: Prometheus answers without credentials")
        self.http_config_edit.setToolTip(
            "promtool's --http.config.file (basic_auth, authorization, tls_config) for the console's Prometheus URLs"
        )
        http_browse = QPushButton("Browse…")
        http_browse.clicked.connect(self._browse_http_config)
        form = QFormLayout()
        form.addRow("ssh config file", _path_row(self.ssh_config_edit, browse))
        form.addRow(note)
        form.addRow("Prometheus HTTP config", _path_row(self.http_config_edit, http_browse))
        box = QGroupBox("Servers (SSH) and Prometheus")
        box.setLayout(form)
        return box

    @Slot()
    def _browse_ssh_config(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "An ssh config file", self.ssh_config_edit.text())
        if path:
            self.ssh_config_edit.setText(path)

    @Slot()
    def _browse_http_config(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Prometheus HTTP config (YAML)", self.http_config_edit.text())
        if path:
            self.http_config_edit.setText(path)

    def _build_found(self) -> QGroupBox:
        """What detection found, and Detect Again."""
        self.status = QPlainTextEdit()
        self.status.setObjectName("prefsBackends")
        self.status.setReadOnly(True)
        # Columns line up in a fixed-pitch font; a long detail wraps instead of running off the right edge.
        self.status.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.status.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.detect_button = QPushButton("Detect Again")
        self.detect_button.setObjectName("prefsDetectButton")
        self.detect_button.clicked.connect(self.detect_again)
        found = QGroupBox("Backends found")
        found_layout = QVBoxLayout(found)
        found_layout.addWidget(self.status)
        found_layout.addWidget(self.detect_button)
        return found

    def _build_buttons(self) -> QDialogButtonBox:
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        return buttons

    # ---- the paths and their detection --------------------------------------------------------------

    def paths(self) -> ToolchainPaths:
        return ToolchainPaths(self.python_edit.text().strip(), self.cli_edit.text().strip())

    def _show_env_overrides(self) -> None:
        notes = [
            f"{name} is set ({html.escape(value)}) and takes precedence over the field above."
            for name in (toolchain_settings.ENV_TOOLCHAIN_PYTHON, toolchain_settings.ENV_OPTIMUM_CLI)
            if (value := os.environ.get(name, "").strip())
        ]
        self.env_note.setText("<br>".join(notes) or "Leave both empty to use the optimum-rbln-cli found on PATH.")

    @Slot()
    def _show_status(self) -> None:
        self.status.setPlainText("\n".join(self.backends.lines()))
        self.detect_button.setEnabled(not self.backends.detecting)

    @Slot()
    def detect_again(self) -> None:
        """Try the paths as typed (not saved yet)."""
        self._tried = True
        self.backends.detect(refresh=True, toolchain=self.paths())

    @Slot()
    def _browse_python(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "The Python that has optimum-rbln", self.python_edit.text())
        if path:
            self.python_edit.setText(path)

    @Slot()
    def _browse_cli(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "optimum-rbln-cli", self.cli_edit.text())
        if path:
            self.cli_edit.setText(path)

    def accept(self) -> None:
        self.settings.set_ssh_config(self.ssh_config_edit.text())
        self.settings.session.set_prometheus_http_config(self.http_config_edit.text())
        changed = self.paths() != self.settings.toolchain()
        self.settings.set_toolchain(self.paths())
        if changed or self._tried:
            self.backends.detect(refresh=True, toolchain=self.settings.toolchain())
        super().accept()

    def reject(self) -> None:
        if self._tried:
            self.backends.detect(refresh=True, toolchain=self.settings.toolchain())
        super().reject()

"""File ▸ Connect to Server…: a host (ssh alias or user@host[:port]) and the folders on it to show; the remembered
servers and the hosts of the ssh config are offered, completed as they are typed."""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import check_host
from rbln_artifact_studio.gui.app.settings import ServerEntry
from rbln_artifact_studio.gui.widgets.screen_fit import resize_to_fit

HELP = (
    "The studio uses your OpenSSH client and ~/.ssh/config (aliases, ProxyJump, IdentityFile, the agent); "
    "it never asks for or stores a password. Nothing is installed on the server."
)


class ConnectDialog(QDialog):
    """Edits one ServerEntry; OK is enabled when the host is a host and at least one folder is given."""

    def __init__(self, remembered: list[ServerEntry], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("connectDialog")
        self.setWindowTitle("Connect to Server")
        self.remembered = {e.host: e for e in remembered}
        self.host_combo = QComboBox()
        self.host_combo.setObjectName("connectHost")
        self.host_combo.setEditable(True)
        self.host_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.host_combo.addItems(list(self.remembered))
        completer = QCompleter(self.host_combo.model(), self.host_combo)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)  # "rack" finds gpu-rack1-npu3
        self.host_combo.setCompleter(completer)
        line = self.host_combo.lineEdit()
        assert line is not None
        line.setPlaceholderText("npu1, or ops@10.0.0.5:2222")
        self.folders_edit = QPlainTextEdit()
        self.folders_edit.setObjectName("connectFolders")
        self.folders_edit.setPlaceholderText("/srv/artifacts\n~/models/compiled")
        self.folders_edit.setTabChangesFocus(True)
        self.problem = QLabel()
        self.problem.setObjectName("connectProblem")
        self.problem.setWordWrap(True)
        help_label = QLabel(HELP)
        help_label.setWordWrap(True)
        form = QFormLayout()
        form.addRow("&Server:", self.host_combo)
        form.addRow("&Folders (one per line):", self.folders_edit)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(help_label)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self.host_combo.currentTextChanged.connect(self._on_host)
        self.folders_edit.textChanged.connect(self._validate)
        resize_to_fit(self, 560, 320)
        self._on_host(self.host_combo.currentText())

    def offer_hosts(self, hosts: list[str]) -> None:
        """Offer these hosts too (the ssh config's), after the remembered ones; what is typed stays."""
        known = {self.host_combo.itemText(i) for i in range(self.host_combo.count())}
        text = self.host_combo.currentText()
        with QSignalBlocker(self.host_combo):
            self.host_combo.addItems([h for h in dict.fromkeys(hosts) if h not in known])
            self.host_combo.setEditText(text)

    def hosts(self) -> list[str]:
        return [self.host_combo.itemText(i) for i in range(self.host_combo.count())]

    @Slot(str)
    def _on_host(self, host: str) -> None:
        entry = self.remembered.get(host.strip())
        if entry is not None:
            self.folders_edit.setPlainText("\n".join(entry.folders))
        self._validate()

    def folders(self) -> tuple[str, ...]:
        return tuple(f.strip() for f in self.folders_edit.toPlainText().splitlines() if f.strip())

    def entry(self) -> ServerEntry | None:
        """The server and folders to connect to, or None while they are not valid."""
        try:
            host = check_host(self.host_combo.currentText().strip())
        except StudioError:
            return None
        folders = self.folders()
        if not folders or any(not (f.startswith("/") or f.startswith("~/")) for f in folders):
            return None
        return ServerEntry(host, folders)

    @Slot()
    def _validate(self) -> None:
        host = self.host_combo.currentText().strip()
        folders = self.folders()
        problem = ""
        if host:
            try:
                check_host(host)
            except StudioError as exc:
                problem = exc.message
        if not problem and folders and any(not (f.startswith("/") or f.startswith("~/")) for f in folders):
            problem = "Give each folder as an absolute path on the server (/srv/artifacts) or from its home (~/models)."
        self.problem.setText(problem)
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(self.entry() is not None)

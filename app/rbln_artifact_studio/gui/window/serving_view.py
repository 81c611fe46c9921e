"""The detail panel's serving section: what vllm-rbln derives from the artifact, and its warning when blocks are short."""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QVBoxLayout, QWidget

from rbln_artifact_studio.core.display.serving_display import serving_headline, serving_rows
from rbln_artifact_studio.core.planning.serving import ServingCheck, check_artifact_serving
from rbln_artifact_studio.core.status import Problem
from rbln_artifact_studio.gui.app.tones import Tone, style

if TYPE_CHECKING:
    from rbln_artifact_studio.core.model.rbln_config import LoadedConfig


def _selectable(object_name: str, text: str = "") -> QLabel:
    label = QLabel(text)
    label.setObjectName(object_name)
    label.setWordWrap(True)  # the panel is narrow on a small screen: wrap, never scroll sideways
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class ServingView(QGroupBox):
    """Shows rbln_artifact_studio.core.planning.serving's check of one rbln_config.json; computes nothing itself."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Serving with vllm-rbln", parent)
        self.setObjectName("servingBox")
        self.check: ServingCheck | None = None
        self._names: list[str] = []  # the rows the form holds
        self.headline = _selectable("servingLabel")
        self.headline.setWordWrap(True)
        self.form = QFormLayout()
        self.warning = _selectable("servingWarning")
        self.warning.setWordWrap(True)
        self.warning.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addLayout(self.form)
        layout.addWidget(self.warning)

    def show_config(self, loaded: LoadedConfig, problems: Iterable[Problem] = ()) -> None:
        """The serving check of this config, agreeing with the artifact's verdict (its problems)."""
        check = self.check = check_artifact_serving(loaded, problems)
        self.headline.setText(serving_headline(check))
        rows = serving_rows(check)
        if [name for name, _, _ in rows] != self._names:  # new rows; the same ones are refilled (new labels cost)
            while self.form.rowCount():
                self.form.removeRow(0)
            self._names = [name for name, _, _ in rows]
            for name in self._names:
                self.form.addRow(name, _selectable(f"serving_{name.replace(' ', '_')}"))
        for i, (_, value, source) in enumerate(rows):
            item = self.form.itemAt(i, QFormLayout.ItemRole.FieldRole)
            label = item.widget() if item is not None else None
            if isinstance(label, QLabel):
                label.setText(f"{value}   ({source})")
        lines = [f"<span style='{style(Tone.ERROR)}'>✖ {html.escape(e)}</span>" for e in check.errors]
        lines += [f"<span style='{style(Tone.WARNING)}'>⚠ {html.escape(w)}</span>" for w in check.warnings]
        self.warning.setText("<br>".join(lines))
        self.warning.setVisible(bool(lines))

"""The detail panel: the selected artifact's settings, KV blocks, per-NPU DRAM breakdown, files and problems."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QScrollArea, QVBoxLayout, QWidget

from rbln_artifact_studio.core.fleet.columns import COLUMNS
from rbln_artifact_studio.core.fleet.summary import ArtifactSummary
from rbln_artifact_studio.core.status import Problem, Status, worst
from rbln_artifact_studio.gui.app.tones import escaped
from rbln_artifact_studio.gui.models.artifact_model import STATUS_COLOURS
from rbln_artifact_studio.gui.widgets.text_label import text_label

if TYPE_CHECKING:  # types only: the sections' modules (and the model's) load after the window's first paint
    from rbln_artifact_studio.core.fleet.artifact import Artifact
    from rbln_artifact_studio.core.model.kinds import ModelDescription
    from rbln_artifact_studio.gui.window.detail_sections import DetailSections

BY_TITLE = {c.title: c for c in COLUMNS}
SECTION_MODULES = (
    ("rbln_artifact_studio.gui.widgets.kv_gauge",),  # with core.display.presentation
    ("rbln_artifact_studio.gui.widgets.dram_chart",),
    ("rbln_artifact_studio.gui.widgets.breakdown_table", "rbln_artifact_studio.core.model.budget"),
    ("rbln_artifact_studio.gui.window.serving_view", "rbln_artifact_studio.gui.window.detail_sections"),
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
"""What DetailPanel.prepare() builds (its DetailSections' parts)."""


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
        self.sections: DetailSections | None = None  # built by prepare()
        self.show_message("Open a folder and select an artifact to see its KV cache and DRAM breakdown.")

    def prepare(self) -> DetailSections:
        """Build the sections an artifact fills (hidden until one is shown). The window's first paint shows only
        the header's line of text, so they are built after it (MainWindow.after_first_paint), or when first needed:
        their modules and widgets were ~8% of the start-up (docs/performance.md row 7)."""
        if self.sections is None:
            # deferred: the sections' charts and tables, and the model's modules, load after the first paint
            from rbln_artifact_studio.gui.window.detail_sections import DetailSections

            self.sections = DetailSections(self._layout, self)
        return self.sections

    def __getattr__(self, name: str) -> Any:
        """A section's part (the chart, the what-if field ...), its sections built now if they were not yet."""
        if name in _PREPARED_PARTS and "sections" in self.__dict__:
            return getattr(self.prepare(), name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _build_header(self, layout: QVBoxLayout) -> None:
        """The name and status, the size on disk and when it changed, the problems."""
        self.title = text_label("detailTitle")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.problems = text_label("detailProblems")
        self.problems.setTextFormat(Qt.TextFormat.RichText)
        self.on_disk = text_label("detailOnDisk")  # size on disk and when it was compiled or last changed
        layout.addWidget(self.title)
        layout.addWidget(self.on_disk)
        layout.addWidget(self.problems)

    # ---- states --------------------------------------------------------------------------------------

    def show_message(self, text: str) -> None:
        """No artifact: a line of text and nothing else."""
        self.artifact = None
        self.title.setText(escaped(text))
        self.problems.clear()
        self.problems.hide()
        self.on_disk.hide()
        if self.sections is not None:
            self.sections.clear(text)

    def show_loading(self, name: str) -> None:
        self.show_message(f"Reading {name}…")

    def show_error(self, name: str, reason: str) -> None:
        self.show_message(f"Cannot read {name}: {reason}")

    def show_artifact(self, artifact: Artifact) -> None:
        sections = self.prepare()
        self.artifact = artifact
        status = artifact.status
        colour = STATUS_COLOURS[status]
        self.title.setText(
            f"<b>{escaped(artifact.name)}</b> "
            f"<span style='color:{colour}'>[{status.value}]</span><br><small>{escaped(str(artifact.where))}</small>"
        )
        self._show_problems(artifact.problems)
        sections.show_artifact(artifact)

    def show_description(self, description: ModelDescription) -> None:
        """A model without a resizable KV cache: its kind, class, target, batch and parts, and why in words."""
        sections = self.prepare()
        self.artifact = None
        status = worst(list(description.problems))
        self.title.setText(
            f"<b>{escaped(description.path.name)}</b> "
            f"<span style='color:{STATUS_COLOURS[status]}'>[{status.value}]</span>"
            f"<br><small>{escaped(str(description.path))}</small>"
        )
        self._show_problems(list(description.problems))
        sections.show_description(description)

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

"""The resize dialog: a target count or 'fit to budget', validated as it changes, previewed before and after."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.backends.toolchain import CLI_NAME
from rbln_artifact_studio.core.display.commandline import resize_argv
from rbln_artifact_studio.core.display.naming import resized_copy_dir
from rbln_artifact_studio.core.display.presentation import block_facts, breakdown_caption
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.fleet.targets import check_target, target_for_budget
from rbln_artifact_studio.core.location import Location, ServerFolder, host_of, parse_beside, server_url
from rbln_artifact_studio.core.model.budget import parse_budget
from rbln_artifact_studio.core.storage.output_check import folder_problem, path_problem
from rbln_artifact_studio.core.storage.sharing import copy_on_write_note
from rbln_artifact_studio.core.storage.swap import staging_room_problem
from rbln_artifact_studio.gui.command_line import CommandLine
from rbln_artifact_studio.gui.dram_chart import DramChart
from rbln_artifact_studio.gui.jobs import JobFailure, JobManager
from rbln_artifact_studio.gui.tones import Tone, style

MAX_BLOCKS = 1_000_000
OUTPUT_CHECK_DELAY_MS = 150  # the folder is checked on disk once typing pauses, not once per key


def _output_problem(text: str, source: Path) -> str | None:
    """folder_problem in a worker; a check that fails blocks Apply with its reason instead of vanishing."""
    try:
        return folder_problem(text, source)
    except Exception as exc:  # any failure must reach the user: here, as the reason Apply is off
        return f"Cannot check {text}: {exc}"


_UNASKED, _ASKED = object(), object()


@dataclass(frozen=True)
class ResizeChoice:
    """What Apply runs: a count or a budget text, in place (output None) or into a copy."""

    artifact_dir: Location
    target: int | None
    budget_text: str | None
    output_dir: Location | None
    resolved_target: int

    @property
    def argv(self) -> list[str]:
        output = None if self.output_dir is None else str(self.output_dir)
        return resize_argv(str(self.artifact_dir), self.target, self.budget_text, output)


class ResizeDialog(QDialog):
    """Edits one resize; Apply is enabled only when the core accepts the target and the copy's folder.

    With a JobManager, the copy's folder is checked on disk in a worker as the user types (outputChecked
    reports each answer); the typed path alone is checked at once. A target count or a budget text may be
    given to start from (the planner's fix, a point picked in the budget explorer).
    """

    outputChecked = Signal(str)  # the folder checked on disk; its problem is in output_problem

    def __init__(
        self,
        artifact: Artifact,
        parent: QWidget | None = None,
        jobs: JobManager | None = None,
        target: int | None = None,
        budget_text: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("resizeDialog")
        self.setWindowTitle(f"Resize KV cache: {artifact.name}")
        self.artifact = artifact
        self.host = host_of(artifact.where)  # on a server: the copy is written there, its folder checked there
        config = artifact.config
        self._output_edited = False
        self.choice: ResizeChoice | None = None
        self.jobs = jobs
        self.output_problem: str | None = None  # what the disk check said about _checked_output
        self._checked_output: str | None = None
        self._output_timer = QTimer(self)
        self._output_timer.setSingleShot(True)
        self._output_timer.setInterval(OUTPUT_CHECK_DELAY_MS)
        self._output_timer.timeout.connect(self._check_output)
        self._staging_problem: object = _UNASKED  # the in-place staging check of a real artifact (see below)

        facts = block_facts(config)
        current = QLabel(
            f"Current kvcache_num_blocks <b>{facts.num_blocks}</b> · floor <b>{facts.floor}</b> · "
            f"full pool <b>{facts.full}</b>"
        )
        current.setObjectName("resizeCurrentLabel")

        self.by_count = QRadioButton("Block count")
        self.by_count.setObjectName("resizeByCount")
        self.by_budget = QRadioButton("Fit to budget")
        self.by_budget.setObjectName("resizeByBudget")
        self.target_spin = QSpinBox()
        self.target_spin.setObjectName("resizeTargetSpin")
        self.target_spin.setRange(0, MAX_BLOCKS)
        self.target_spin.setValue(max(config.kvcache_num_blocks, 0))
        self.budget_edit = QLineEdit()
        self.budget_edit.setObjectName("resizeBudgetEdit")
        self.budget_edit.setPlaceholderText("0.8, 80%, 10GB")
        self.budget_edit.setToolTip("A fraction of the NPU's available DRAM (0.8), a percentage (80%) or bytes (10GB).")
        sizing = QButtonGroup(self)
        sizing.addButton(self.by_count)
        sizing.addButton(self.by_budget)
        self.by_count.setChecked(True)
        target_box = QGroupBox("New size")
        grid = QGridLayout(target_box)
        grid.addWidget(self.by_count, 0, 0)
        grid.addWidget(self.target_spin, 0, 1)
        grid.addWidget(self.by_budget, 1, 0)
        grid.addWidget(self.budget_edit, 1, 1)

        self.message = QLabel()
        self.message.setObjectName("resizeMessage")
        self.message.setWordWrap(True)

        preview = QGroupBox("DRAM per NPU, before and after")
        preview_layout = QGridLayout(preview)
        self.before_chart = DramChart(object_name="resizeBeforeChart")
        self.after_chart = DramChart(object_name="resizeAfterChart")
        self.before_caption = QLabel()
        self.after_caption = QLabel()
        for label in (self.before_caption, self.after_caption):
            label.setWordWrap(True)
        preview_layout.addWidget(QLabel("<b>Before</b>"), 0, 0)
        preview_layout.addWidget(QLabel("<b>After</b>"), 0, 1)
        preview_layout.addWidget(self.before_chart, 1, 0)
        preview_layout.addWidget(self.after_chart, 1, 1)
        preview_layout.addWidget(self.before_caption, 2, 0)
        preview_layout.addWidget(self.after_caption, 2, 1)

        self.mode_copy = QRadioButton("To a copy")
        self.mode_copy.setObjectName("resizeModeCopy")
        self.mode_in_place = QRadioButton("In place")
        self.mode_in_place.setObjectName("resizeModeInPlace")
        modes = QButtonGroup(self)
        modes.addButton(self.mode_copy)
        modes.addButton(self.mode_in_place)
        self.mode_copy.setChecked(True)
        self.output_edit = QLineEdit()
        self.output_edit.setObjectName("resizeOutputEdit")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        browse.setEnabled(not self.host)
        output_box = QGroupBox("Where")
        output_layout = QGridLayout(output_box)
        output_layout.addWidget(self.mode_copy, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.output_edit, 1)
        row.addWidget(browse)
        output_layout.addLayout(row, 0, 1)
        output_layout.addWidget(self.mode_in_place, 1, 0, 1, 2)
        self.shared_label = QLabel(copy_on_write_note(artifact.shared) or "")
        self.shared_label.setObjectName("resizeSharedLabel")
        self.shared_label.setWordWrap(True)
        self.shared_label.setStyleSheet(style(Tone.WARNING))
        self.shared_label.setVisible(False)
        output_layout.addWidget(self.shared_label, 2, 0, 1, 2)

        self.command = CommandLine("resizeCommand")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.apply_button = self.buttons.addButton("Apply", QDialogButtonBox.ButtonRole.AcceptRole)
        self.apply_button.setObjectName("resizeApplyButton")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(current)
        layout.addWidget(target_box)
        layout.addWidget(self.message)
        layout.addWidget(preview, 1)
        layout.addWidget(output_box)
        layout.addWidget(QLabel("Command line:"))
        layout.addWidget(self.command)
        layout.addWidget(self.buttons)

        before = artifact.breakdown()
        chiplets = artifact.npu.chiplets if artifact.npu else 1
        unknown = f"Allocations unknown: {artifact.unknown_reason or 'the NPU is unknown'}"
        self.before_chart.set_breakdown(before, chiplets, unknown)
        self.before_caption.setText(breakdown_caption(before) if before else unknown)

        self.target_spin.valueChanged.connect(self._on_count_edited)
        self.budget_edit.textEdited.connect(self._on_budget_edited)
        self.by_count.toggled.connect(self.validate)
        self.mode_copy.toggled.connect(self.validate)
        self.output_edit.textEdited.connect(self._on_output_edited)
        self.resize(900, 720)
        if target is not None or budget_text is not None:
            self.prefill(target, budget_text)
        self.validate()

    def prefill(self, target: int | None = None, budget_text: str | None = None) -> None:
        """Start from a count (block count mode) or a budget text ('fit to budget' mode), validated at once."""
        if budget_text is not None:
            self.budget_edit.setText(budget_text)
            self.by_budget.setChecked(True)
        elif target is not None:
            self.by_count.setChecked(True)
            self.target_spin.setValue(target)
        self.validate()

    # ---- reactions -----------------------------------------------------------------------------------

    @Slot()
    def _on_count_edited(self) -> None:
        if not self.by_count.isChecked():
            self.by_count.setChecked(True)  # toggled -> validate
        else:
            self.validate()

    @Slot()
    def _on_budget_edited(self) -> None:
        if not self.by_budget.isChecked():
            self.by_budget.setChecked(True)
        else:
            self.validate()

    @Slot()
    def _on_output_edited(self) -> None:
        self._output_edited = True
        self.validate()

    @Slot()
    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Parent folder of the copy", str(self.artifact.path.parent))
        if folder:
            name = Path(self.output_edit.text()).name or self.artifact.name
            self.output_edit.setText(str(Path(folder) / name))
            self._on_output_edited()

    # ---- validation ----------------------------------------------------------------------------------

    def _target(self) -> tuple[int | None, list[str], str | None]:
        """(target, budget warnings, error) from the selected sizing field."""
        if self.by_count.isChecked():
            return self.target_spin.value(), [], None
        text = self.budget_edit.text().strip()
        if not text:
            return None, [], "Type a memory budget: a fraction like 0.8, a percentage like 80%, or bytes like 10GB."
        try:
            budget = parse_budget(text)
            target = target_for_budget(self.artifact, budget)
        except StudioError as exc:
            return None, [], exc.one_line()
        self.target_spin.blockSignals(True)
        self.target_spin.setValue(target)
        self.target_spin.blockSignals(False)
        return target, budget.warnings(), None

    @Slot()
    def validate(self) -> None:
        """Ask the core about the current choice; show its error or warnings, the preview and the command."""
        config = self.artifact.config
        target, warnings, error = self._target()
        copy = self.mode_copy.isChecked()
        if target is not None and error is None:
            check = check_target(config, target, self.artifact, in_place=not copy)
            error = check.error
            warnings = [*warnings, *check.warnings]
        self.output_edit.setEnabled(copy)
        self.shared_label.setVisible(not copy and bool(self.artifact.shared))
        if copy and target is not None and not self._output_edited:
            self.output_edit.setText(
                str(parse_beside(resized_copy_dir(self.artifact.path, target), self.artifact.where))
            )
        output = self.output_edit.text().strip()
        if error is None and copy:
            error = self._output_error(output)
        if error is None and not copy and self.artifact.is_real:
            error = self._staging_error()
        self._show_message(target, warnings, error)
        self._show_after(target)
        ok = error is None and target is not None
        self.apply_button.setEnabled(ok)
        if ok:
            assert target is not None
            by_budget = self.by_budget.isChecked()
            self.choice = ResizeChoice(
                self.artifact.where,
                None if by_budget else target,
                self.budget_edit.text().strip() if by_budget else None,
                self._output_path(output) if copy else None,
                target,
            )
            self.command.set_argv(self.choice.argv)
        else:
            self.choice = None
            self.command.set_argv(None)

    def _output_path(self, text: str) -> Location:
        return parse_beside(text, self.artifact.where)  # a plain path: beside the artifact (on its server)

    def _remote_output_error(self, output: str) -> str | None:
        """A copy on a server: a new folder on the same server (the server checks it is new when the job starts)."""
        try:
            target = parse_beside(output, self.artifact.where)
        except StudioError as exc:
            return exc.one_line()
        if not isinstance(target, ServerFolder) or target.host != self.host or not target.path.startswith("/"):
            return f"Give the copy's folder on {self.host}: {server_url(self.host)}/PATH or an absolute /PATH there."
        if target.path.rstrip("/") == self.artifact.path.as_posix().rstrip("/"):
            return "The copy needs a folder of its own, not the artifact's."
        return None

    def _output_error(self, output: str) -> str | None:
        """The typed path's problem now; the disk's answer once the check of this very text is back."""
        if self.host:
            return self._remote_output_error(output)
        problem = path_problem(output, self.artifact.path)
        if problem is not None:
            return problem
        if output == self._checked_output:
            return self.output_problem
        if self.jobs is not None:
            self._output_timer.start()  # (re)started by each key: one check once typing pauses
        return None

    def _staging_error(self) -> str | None:
        """A real artifact is resized in place through a staged copy beside it: is there room? (asked once, in
        a worker; Apply waits for the answer)."""
        if self.jobs is None:
            return None  # no worker to ask: the engine checks before it writes anything
        if self._staging_problem is _UNASKED:
            self._staging_problem = _ASKED
            folder = self.artifact.path
            job = self.jobs.submit(
                f"Check room beside {folder.name}", lambda ctx: staging_room_problem(folder, CLI_NAME), visible=False
            )
            job.succeeded.connect(self._on_staging_checked)
            job.failed.connect(self._on_staging_check_failed)
        if self._staging_problem is _ASKED:
            return "Checking the disk has room for the staged copy an in-place resize writes…"
        return self._staging_problem if isinstance(self._staging_problem, str) else None

    @Slot(object)
    def _on_staging_checked(self, problem: str | None) -> None:
        self._staging_problem = problem
        self.validate()

    @Slot(object)
    def _on_staging_check_failed(self, failure: JobFailure) -> None:
        self._staging_problem = f"Cannot check the room for the staged copy: {failure.reason}"
        self.validate()

    @Slot()
    def _check_output(self) -> None:
        """Ask a worker about the folder typed now (a few stat calls); an answer for older text is dropped."""
        root: QWidget = self
        while (parent := root.parentWidget()) is not None:
            root = parent
        if self.jobs is None or not root.isVisible() or not self.mode_copy.isChecked() or self.host:
            return  # the window is closing (its jobs are being stopped), or no copy is asked for
        output, source = self.output_edit.text().strip(), self.artifact.path
        job = self.jobs.submit(f"Check {output}", lambda ctx: (output, _output_problem(output, source)), visible=False)
        job.succeeded.connect(self._on_output_checked)

    @Slot(object)
    def _on_output_checked(self, result: tuple[str, str | None]) -> None:
        text, problem = result
        if text != self.output_edit.text().strip():
            return  # typed on meanwhile: a newer check is on its way
        self._checked_output, self.output_problem = text, problem
        self.validate()
        self.outputChecked.emit(text)

    def _show_message(self, target: int | None, warnings: list[str], error: str | None) -> None:
        if error is not None:
            self.message.setText(f"<span style='{style(Tone.ERROR)}'>✖ {html.escape(error)}</span>")
            return
        assert target is not None
        lines = [f"<span style='{style(Tone.WARNING)}'>⚠ {html.escape(w)}</span>" for w in warnings]
        facts = block_facts(self.artifact.config, target)
        lines.append(f"<span style='{style(Tone.OK)}'>✓ {target} blocks: {html.escape(facts.meaning)}</span>")
        self.message.setText("<br>".join(lines))

    def _show_after(self, target: int | None) -> None:
        artifact = self.artifact
        chiplets = artifact.npu.chiplets if artifact.npu else 1
        after = artifact.breakdown(num_blocks=target) if target and target > 0 else None
        message = "No valid target." if target is None or target <= 0 else "Allocations unknown."
        self.after_chart.set_breakdown(after, chiplets, message)
        self.after_caption.setText(breakdown_caption(after) if after else message)

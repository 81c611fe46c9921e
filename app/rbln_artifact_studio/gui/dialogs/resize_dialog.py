"""The resize dialog: a target count or 'fit to budget', validated as it changes, previewed before and after."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Signal, Slot
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
    QStyle,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.core.display.commandline import resize_argv
from rbln_artifact_studio.core.display.naming import resized_copy_dir
from rbln_artifact_studio.core.display.presentation import block_facts, breakdown_caption
from rbln_artifact_studio.core.errors import Fix, StudioError
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.fleet.targets import check_target, target_for_budget
from rbln_artifact_studio.core.location import LocalFolder, Location, parse_beside
from rbln_artifact_studio.core.model.budget import BINARY_UNITS, parse_budget
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.storage.sharing import copy_on_write_note
from rbln_artifact_studio.gui.app.remedies import one_line
from rbln_artifact_studio.gui.app.tones import Tone, message_html, style
from rbln_artifact_studio.gui.dialogs.copy_folder_check import CopyFolderCheck
from rbln_artifact_studio.gui.dialogs.staging_check import StagingCheck
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.gui.widgets.command_line import CommandLine
from rbln_artifact_studio.gui.widgets.dram_chart import DramChart
from rbln_artifact_studio.gui.widgets.fix_buttons import FixButtons
from rbln_artifact_studio.gui.widgets.number_field import NumberField
from rbln_artifact_studio.gui.widgets.radio import legible_radio
from rbln_artifact_studio.gui.widgets.screen_fit import resize_to_fit, scrolling_body
from rbln_artifact_studio.gui.widgets.vllm_entry import vllm_entry_button  # issue 41: seed a vLLM cache
from rbln_artifact_studio.places.dispatch import (
    capabilities,
    copy_route,
    crossing_note,
    in_place_refusal,
    path_here,
)

MAX_BLOCKS = 1_000_000


def _argv_of(request: ResizeRequest | None) -> list[str] | None:
    """The command line that does what Apply runs (None while nothing may be applied)."""
    if request is None:
        return None
    output = None if request.output is None else str(request.output)
    return resize_argv(str(request.source), request.target, request.budget_text, output)


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
        copy_folder: str = "",
        chosen_folder: str = "",
    ) -> None:
        super().__init__(parent)
        self.setObjectName("resizeDialog")
        self.setWindowTitle(f"Resize KV cache: {artifact.where}")
        self.artifact = artifact
        self.capabilities = capabilities(artifact.where)  # where its copy may go, asked of its kind of place
        self.in_place_refusal = in_place_refusal(artifact.where)  # a kind that cannot resize where it is: why
        self._copy_folder = copy_folder  # the folder last chosen for copies (settings), proposed where it stays near
        self._chosen_folder = chosen_folder  # the one chosen last for copies from this artifact's place: first
        self.jobs = jobs
        self._init_checks()
        body = QVBoxLayout()
        body.addWidget(self._build_current())
        body.addWidget(self._build_sizing())
        body.addWidget(self.message)
        body.addWidget(self._build_preview(), 1)
        body.addWidget(self._build_output())
        body.addWidget(QLabel("Command line:"))
        body.addWidget(self.command)
        scrolling_body(self, body, self._build_buttons())  # on a small screen the body scrolls, Apply stays
        self._show_before()
        self._connect_fields()
        resize_to_fit(self, 900, 720)
        if target is not None or budget_text is not None:
            self.prefill(target, budget_text)
        self.validate()

    # ---- construction, step by step ------------------------------------------------------------------

    def _init_checks(self) -> None:
        """What Apply would run, and the state of the checks on disk that may still be on their way."""
        self._output_edited = False
        self._fixes: tuple[Fix, ...] = ()  # the remedies the current error offers
        self.request: ResizeRequest | None = None  # what Apply runs, built here once and handed on as it is
        self.argv: list[str] | None = None
        self.blocks: int | None = None  # the count the request comes to (a budget's, as previewed)
        self._copy_check = CopyFolderCheck(
            self.artifact,
            self.jobs,
            lambda: self.output_edit.text().strip(),
            lambda: self.mode_copy.isChecked(),
            self,
            self._copy_folder,
            self._chosen_folder,
        )
        self._copy_check.checked.connect(self.validate)
        self._copy_check.checked.connect(self.outputChecked)
        self._staging = StagingCheck(self.jobs, self.artifact.path, self)  # a real artifact resized in place
        self._staging.answered.connect(self.validate)

    def _build_current(self) -> QLabel:
        facts = block_facts(self.artifact.config)
        current = QLabel(
            f"Current kvcache_num_blocks <b>{facts.num_blocks}</b> · floor <b>{facts.floor}</b> · "
            f"full pool <b>{facts.full}</b>"
        )
        current.setObjectName("resizeCurrentLabel")
        return current

    def _build_sizing(self) -> QGroupBox:
        """A block count or a budget to fit, and the message that says what the core makes of it."""
        self.by_count = legible_radio("Block count", "resizeByCount")
        self.by_budget = legible_radio("Fit to budget", "resizeByBudget")
        self.target_spin = NumberField("resizeTargetSpin", 0, MAX_BLOCKS)  # the count shown is the count used
        self.target_spin.setValue(max(self.artifact.config.kvcache_num_blocks, 0))
        self.budget_edit = QLineEdit()
        self.budget_edit.setObjectName("resizeBudgetEdit")
        self.budget_edit.setPlaceholderText("0.8, 80% or 10GB (= 10 GiB)")
        self.budget_edit.setToolTip(
            f"A fraction of the NPU's available DRAM (0.8), a percentage (80%) or bytes (10GB).\n{BINARY_UNITS}"
        )
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
        self.fixes = FixButtons("resizeFixes")  # an error's remedies, each one click
        self.fixes.fixChosen.connect(self.apply_fix)
        grid.addWidget(self.fixes, 2, 0, 1, 2)
        return target_box

    def _build_preview(self) -> QGroupBox:
        preview = QGroupBox("DRAM per NPU, before and after")
        preview_layout = QGridLayout(preview)
        self.before_chart = DramChart(object_name="resizeBeforeChart")
        self.after_chart = DramChart(object_name="resizeAfterChart")
        self.before_caption = QLabel()
        self.after_caption = QLabel()
        self.after_caption.setObjectName("resizeAfterCaption")
        for label in (self.before_caption, self.after_caption):
            label.setWordWrap(True)
        preview_layout.addWidget(QLabel("<b>Before</b>"), 0, 0)
        preview_layout.addWidget(QLabel("<b>After</b>"), 0, 1)
        preview_layout.addWidget(self.before_chart, 1, 0)
        preview_layout.addWidget(self.after_chart, 1, 1)
        preview_layout.addWidget(self.before_caption, 2, 0)
        preview_layout.addWidget(self.after_caption, 2, 1)
        return preview

    def _build_output(self) -> QGroupBox:
        """To a copy (where) or in place, and the command line that does the same."""
        self.mode_copy = legible_radio("To a copy", "resizeModeCopy")
        # The destructive choice looks it: in the error tone, a warning sign, and said in words.
        self.mode_in_place = legible_radio("In place: overwrites this artifact", "resizeModeInPlace", Tone.ERROR)
        self.mode_in_place.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning))
        modes = QButtonGroup(self)
        modes.addButton(self.mode_copy)
        modes.addButton(self.mode_in_place)
        self.mode_copy.setChecked(True)
        self.output_edit = QLineEdit()
        self.output_edit.setObjectName("resizeOutputEdit")
        browse = self.browse_button = QPushButton("Browse…")
        browse.setObjectName("resizeBrowseButton")
        browse.clicked.connect(self._browse)
        browse.setEnabled(LocalFolder in self.capabilities.copies_to)  # a folder here is a place it may go
        output_box = QGroupBox("Where")
        output_layout = QGridLayout(output_box)
        output_layout.addWidget(self.mode_copy, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.output_edit, 1)
        row.addWidget(browse)
        row.addWidget(vllm_entry_button(self.output_edit, lambda: self.artifact.loaded.raw))
        output_layout.addLayout(row, 0, 1)
        output_layout.addWidget(self.mode_in_place, 1, 0, 1, 2)
        # Refused by the kind of place, before any work: the choice is off and the reason is shown under it.
        self.in_place_label = QLabel(self.in_place_refusal or "")
        self.in_place_label.setObjectName("resizeInPlaceRefusal")
        self.in_place_label.setWordWrap(True)
        self.in_place_label.setVisible(self.in_place_refusal is not None)
        self.mode_in_place.setEnabled(self.in_place_refusal is None)
        self.mode_in_place.setToolTip(self.in_place_refusal or "")
        output_layout.addWidget(self.in_place_label, 3, 0, 1, 2)
        self.shared_label = QLabel(copy_on_write_note(self.artifact.shared) or "")
        self.shared_label.setObjectName("resizeSharedLabel")
        self.shared_label.setWordWrap(True)
        self.shared_label.setStyleSheet(style(Tone.WARNING))
        self.shared_label.setVisible(False)
        output_layout.addWidget(self.shared_label, 2, 0, 1, 2)
        self.route_label = QLabel()  # how a copy of an artifact elsewhere is made (server-side, or through here)
        self.route_label.setObjectName("resizeCopyRoute")
        self.route_label.setWordWrap(True)
        self.route_label.setVisible(False)
        output_layout.addWidget(self.route_label, 4, 0, 1, 2)
        self.command = CommandLine("resizeCommand")
        return output_box

    def _build_buttons(self) -> QWidget:
        """Apply and Cancel, with a note beside them when the copy goes to another machine or store."""
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.apply_button = self.buttons.addButton("Apply", QDialogButtonBox.ButtonRole.AcceptRole)
        self.apply_button.setObjectName("resizeApplyButton")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.crossing_label = QLabel()
        self.crossing_label.setObjectName("resizeCrossingNote")
        self.crossing_label.setWordWrap(True)
        self.crossing_label.setStyleSheet(style(Tone.WARNING))
        self.crossing_label.setVisible(False)
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.crossing_label, 1)
        layout.addWidget(self.buttons)
        return row

    def _show_before(self) -> None:
        artifact = self.artifact
        before = artifact.breakdown()
        chiplets = artifact.npu.chiplets if artifact.npu else 1
        unknown = f"Allocations unknown: {artifact.unknown_reason or 'the NPU is unknown'}"
        self.before_chart.set_breakdown(before, chiplets, unknown)
        self.before_caption.setText(breakdown_caption(before) if before else unknown)

    def _connect_fields(self) -> None:
        self.target_spin.edited.connect(lambda: self._on_sizing_edited(self.by_count))
        self.budget_edit.textEdited.connect(lambda: self._on_sizing_edited(self.by_budget))
        self.by_count.toggled.connect(self.validate)
        self.mode_copy.toggled.connect(self.validate)
        self.output_edit.textEdited.connect(self._on_output_edited)

    def prefill(self, target: int | None = None, budget_text: str | None = None) -> None:
        """Start from a count (block count mode) or a budget text ('fit to budget' mode), validated at once."""
        if budget_text is not None:
            self.budget_edit.setText(budget_text)
            self.by_budget.setChecked(True)
        elif target is not None:
            self.by_count.setChecked(True)
            self.target_spin.setValue(target)
        self.validate()

    @Slot(object)
    def apply_fix(self, fix: Fix) -> None:
        """A remedy the error offered: a budget that fits, or a count (the floor)."""
        for name, value in fix.changes:
            if name == "memory_budget":
                self.prefill(budget_text=str(value))
            elif name == "kvcache_num_blocks" and isinstance(value, int):
                self.prefill(target=value)

    # ---- reactions -----------------------------------------------------------------------------------

    def _on_sizing_edited(self, mode: QRadioButton) -> None:
        """A count or a budget typed: its mode is chosen (toggled validates), or the choice validated again."""
        if not mode.isChecked():
            mode.setChecked(True)
        else:
            self.validate()

    @Slot()
    def _on_output_edited(self) -> None:
        self._output_edited = True
        self.validate()

    @Slot()
    def _browse(self) -> None:
        target = self._copy_check.target(self.output_edit.text().strip())
        here = path_here(target) if target is not None else None
        start = here.parent if here is not None else Path.home()
        folder = QFileDialog.getExistingDirectory(self, "Parent folder of the copy", str(start))
        if folder:
            name = (target.name if target is not None else "") or self.artifact.name
            self.output_edit.setText(str(Path(folder) / name))
            self._on_output_edited()

    # ---- validation ----------------------------------------------------------------------------------

    def _target(self) -> tuple[int | None, list[str], str | None]:
        """(target, budget warnings, error) from the selected sizing field; the error's fixes in self._fixes."""
        self._fixes = ()
        if self.by_count.isChecked():
            typed = self.target_spin.typed_value()
            return typed, [], self.target_spin.problem("kvcache_num_blocks")  # empty: says so, never "0 is below"
        text = self.budget_edit.text().strip()
        if not text:
            return None, [], "Type a memory budget: a fraction like 0.8, a percentage like 80%, or bytes like 10GB."
        try:
            budget = parse_budget(text)
            target = target_for_budget(self.artifact, budget)
        except StudioError as exc:
            # A resize keeps the shape: of the remedies, only a budget applies here.
            self._fixes = tuple(f for f in exc.fixes if all(name == "memory_budget" for name, _ in f.changes))
            return None, [], one_line(exc)
        for signals in (self.target_spin, self.target_spin.lineEdit()):  # the count follows, not typed by the user
            signals.blockSignals(True)
        self.target_spin.setValue(target)
        for signals in (self.target_spin, self.target_spin.lineEdit()):
            signals.blockSignals(False)
        return target, budget.warnings(), None

    @Slot()
    def validate(self) -> None:
        """Ask the core about the current choice; show its error or warnings, the preview and the command."""
        config = self.artifact.config
        target, warnings, error = self._target()
        copy = self.mode_copy.isChecked()
        if error is None and not copy:
            error = self.in_place_refusal  # the place's answer first: no count changes it
        if target is not None and error is None:
            check = check_target(config, target, self.artifact, in_place=not copy)
            error = check.error
            warnings = [*warnings, *check.warnings]
            if error is not None and target < check.floor:
                self._fixes = (
                    Fix(f"kvcache_num_blocks {check.floor} (the floor)", (("kvcache_num_blocks", check.floor),)),
                )
        self.fixes.set_fixes(self._fixes)
        self._show_after(target, error)  # a refused count is not previewed as if it fitted
        self.output_edit.setEnabled(copy)
        self.shared_label.setVisible(not copy and bool(self.artifact.shared))
        if copy and target is not None and not self._output_edited:
            name = resized_copy_dir(self.artifact.name, target).name
            self.output_edit.setText(str(self._copy_check.proposal(name)))
        output = self.output_edit.text().strip()
        if error is None and copy:
            error = self._copy_check.problem(output)
        if error is None and not copy and self.artifact.is_real:
            error = self._staging.problem()  # Apply waits for the answer
        self._show_message(target, warnings, error)
        ok = error is None and target is not None
        self.apply_button.setEnabled(ok)
        if ok:
            assert target is not None
            by_budget = self.by_budget.isChecked()
            self.request = ResizeRequest(
                self.artifact.where,
                None if by_budget else target,
                self.budget_edit.text().strip() if by_budget else None,
                self._output_path(output) if copy else None,
            )
            self.blocks = target
        else:
            self.request = self.blocks = None
        output_at = self._copy_check.target(output) if copy and output else None  # said as soon as it is typed
        note = crossing_note(self.artifact.where, output_at) if output_at is not None else None
        route = copy_route(self.artifact.where, output_at) if output_at is not None else None
        self.route_label.setText(route or "")
        self.route_label.setVisible(route is not None)
        self.crossing_label.setText(note or "")
        self.crossing_label.setVisible(note is not None)
        self.argv = _argv_of(self.request)  # the command line that does what Apply runs
        self.command.set_argv(self.argv)

    @property
    def output_problem(self) -> str | None:
        """What the last check on disk said about the copy's folder (outputChecked says when it is back)."""
        return self._copy_check.answer

    def _output_path(self, text: str) -> Location:
        return parse_beside(text, self.artifact.where)  # a plain path: beside the artifact (on its server)

    def _show_message(self, target: int | None, warnings: list[str], error: str | None) -> None:
        if error is not None:
            self.message.setText(f"<span style='{style(Tone.ERROR)}'>✖ {message_html(error)}</span>")
            return
        assert target is not None
        lines = [f"<span style='{style(Tone.WARNING)}'>⚠ {message_html(w)}</span>" for w in warnings]
        facts = block_facts(self.artifact.config, target)
        lines.append(f"<span style='{style(Tone.OK)}'>✓ {target} blocks: {html.escape(facts.meaning)}</span>")
        self.message.setText("<br>".join(lines))

    def _show_after(self, target: int | None, refused: str | None = None) -> None:
        artifact = self.artifact
        chiplets = artifact.npu.chiplets if artifact.npu else 1
        valid = target is not None and target > 0 and refused is None
        after = artifact.breakdown(num_blocks=target) if valid else None
        # The reason is in the message above the preview: said once, not again under the chart.
        if refused is not None and target is not None:
            message = f"Not previewed: {target} blocks cannot be applied."
        else:
            message = "Not previewed: no valid target." if target is None or target <= 0 else "Allocations unknown."
        self.after_chart.set_breakdown(after, chiplets, "")  # nothing drawn: the caption below says why
        self.after_caption.setText(breakdown_caption(after) if after else message)

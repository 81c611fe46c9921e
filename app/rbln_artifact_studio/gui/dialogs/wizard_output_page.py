"""Compile wizard, page 5: where the artifact goes, a summary of the plan, and the equivalent command line."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QFileDialog, QGridLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.core.display.commandline import compile_argv
from rbln_artifact_studio.core.display.naming import compiled_dir
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import Location, parse_location
from rbln_artifact_studio.core.simulator.compiler import CompilePlan, rbln_config_for
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.gui.app.remedies import one_line
from rbln_artifact_studio.gui.dialogs.wizard_state import StatePage, WizardState
from rbln_artifact_studio.gui.widgets.command_line import CommandLine
from rbln_artifact_studio.gui.widgets.vllm_entry import vllm_entry_button  # issue 41: seed a vLLM cache
from rbln_artifact_studio.places.dispatch import compile_refusal, path_here


class OutputPage(StatePage):
    """Nothing is written before Finish; the folder is checked by the compile job, which writes atomically."""

    def __init__(self, state: WizardState, default_parent: str) -> None:
        super().__init__(state)
        self.setTitle("Output")
        self.setSubTitle("A new folder for the artifact. Finish compiles it in the background.")
        self.default_parent = default_parent
        self.output_edit = QLineEdit()
        self.output_edit.setObjectName("wizardOutputEdit")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        self.problem = QLabel()
        self.problem.setObjectName("wizardOutputProblem")
        self.problem.setWordWrap(True)
        self.problem.setVisible(False)
        self.summary = QLabel()
        self.summary.setObjectName("wizardSummary")
        self.summary.setWordWrap(True)
        self.command = CommandLine("wizardCommand")
        layout = QGridLayout(self)
        row = QHBoxLayout()
        row.addWidget(self.output_edit, 1)
        row.addWidget(browse)
        row.addWidget(vllm_entry_button(self.output_edit, self._would_write))
        layout.addWidget(QLabel("Output folder"), 0, 0)
        layout.addLayout(row, 0, 1)
        layout.addWidget(self.problem, 1, 0, 1, 2)
        layout.addWidget(self.summary, 2, 0, 1, 2)
        layout.addWidget(QLabel("Command line:"), 3, 0, 1, 2)
        layout.addWidget(self.command, 4, 0, 1, 2)
        layout.setRowStretch(5, 1)
        self._edited = False
        self.output_edit.textEdited.connect(self._on_edited)
        self.output_edit.textChanged.connect(self._refresh)

    def plan(self) -> CompilePlan | None:
        state = self.state()
        return state.plan() if state is not None else None

    def output_dir(self) -> str:
        return self.output_edit.text().strip()

    def output_location(self) -> Location | None:
        """The output as typed, parsed once (a folder here, a server's folder, a bucket's prefix); None when it is
        empty, malformed, or a place a compile made here cannot be delivered to (output_problem says why)."""
        text = self.output_dir()
        if not text:
            return None
        try:
            output = parse_location(text)
        except StudioError:
            return None
        here = path_here(output)
        if here is not None:
            output = parse_location(here.expanduser())  # ~ as a shell would read it
        return output if compile_refusal(output) is None else None

    def output_problem(self) -> str | None:
        """Why the typed output cannot take the compile, from its kind's capabilities (None: it can)."""
        text = self.output_dir()
        if not text:
            return None
        try:
            return compile_refusal(parse_location(text))
        except StudioError as exc:
            return one_line(exc)

    def _would_write(self) -> dict[str, object] | None:
        """The rbln_config.json this compile writes: a vLLM cache entry's settings must be its command's."""
        plan = self.plan()
        return None if plan is None else rbln_config_for(plan)

    def initializePage(self) -> None:
        plan = self.plan()
        if plan is not None and not self._edited:
            r = plan.request
            name = compiled_dir("", r.model_id, r.npu, r.num_devices, plan.num_blocks).name
            self.output_edit.setText(self.proposed(name))
        self._refresh()

    def proposed(self, name: str) -> str:
        """The artifact's folder name in the default parent: a folder here, a server's folder or a bucket prefix
        (the last compile's output folder, else the workspace's)."""
        try:
            return str(parse_location(self.default_parent).child(name))
        except StudioError:
            return str(Path(self.default_parent) / name)

    def isComplete(self) -> bool:
        return self.output_location() is not None and self.plan() is not None

    @Slot()
    def _on_edited(self) -> None:
        self._edited = True

    @Slot()
    def _browse(self) -> None:
        typed = self.output_location()  # a folder here starts the dialog there; a place elsewhere gives its name
        here = path_here(typed) if typed is not None else None
        start = str(here.parent) if here is not None else self.default_parent
        folder = QFileDialog.getExistingDirectory(self, "Parent folder", start)
        if folder:
            name = (typed.name if typed is not None else "") or "artifact"
            self.output_edit.setText(str(Path(folder) / name))
            self._edited = True

    @Slot()
    def _refresh(self) -> None:
        state = self.state()
        plan = state.plan() if state is not None else None
        if state is None or plan is None:
            self.summary.setText("")
            self.command.set_argv(None)
            self.completeChanged.emit()
            return
        s = plan.shape
        kv = plan.layout.kv_bytes_per_npu(plan.num_blocks)[0]
        by = (
            "optimum-rbln-cli, which resolves kvcache_num_blocks itself (the figures above are the simulator's "
            "estimate)"
            if state.effective_backend() == BackendChoice.OPTIMUM
            else "the built-in simulator"
        )
        self.summary.setText(
            f"<b>{html.escape(plan.model.model_id)}</b> on {html.escape(s.npu.label)} x{s.num_devices}: batch "
            f"{s.batch_size}, max_seq_len {s.max_seq_len:,}, {s.attn.value}, block {s.block_size:,}, prefill chunk "
            f"{s.prefill_chunk_size}.<br>kvcache_num_blocks <b>{plan.num_blocks}</b> (floor {plan.floor}, full pool "
            f"{plan.full}); {format_bytes(kv)} of KV cache on NPU 0; budget {html.escape(plan.budget.describe())}."
            f"<br>Compiled by {by}."
        )
        problem = self.output_problem()
        self.problem.setText(problem or "")
        self.problem.setVisible(problem is not None)
        output = self.output_dir() if problem is None else ""
        argv = [*compile_argv(plan.request, output), "--backend", state.backend().value] if output else None
        self.command.set_argv(argv)
        self.completeChanged.emit()

"""The compile wizard: model -> target and backend -> shape -> KV sizing -> output; Finish hands it to a compile job."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget, QWizard
from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.core.model.modelspec import ResolvedModel
from rbln_artifact_studio.core.simulator.compiler import CompilePlan, CompileRequest
from rbln_artifact_studio.gui.backend_status import BackendStatus
from rbln_artifact_studio.gui.jobs import JobManager
from rbln_artifact_studio.gui.settings import ToolchainPaths
from rbln_artifact_studio.gui.wizard_model_page import ModelPage
from rbln_artifact_studio.gui.wizard_output_page import OutputPage
from rbln_artifact_studio.gui.wizard_shape_page import ShapePage
from rbln_artifact_studio.gui.wizard_sizing_page import SizingPage
from rbln_artifact_studio.gui.wizard_target_page import TargetPage


class CompileWizard(QWizard):
    """Each page validates its own part through rbln_artifact_studio.core; the wizard commits once, on Finish."""

    compileRequested = Signal(object, str, object)  # CompileRequest, output folder, BackendChoice

    def __init__(
        self,
        jobs: JobManager,
        default_parent: str,
        parent: QWidget | None = None,
        backends: BackendStatus | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("compileWizard")
        self.setWindowTitle("Compile a model")
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOption(QWizard.WizardOption.HaveHelpButton, False)
        self.model_page = ModelPage(jobs)
        self.target_page = TargetPage(backends or BackendStatus(jobs, ToolchainPaths(), self))
        self.shape_page = ShapePage()
        self.sizing_page = SizingPage()
        self.output_page = OutputPage(default_parent)
        for page in (self.model_page, self.target_page, self.shape_page, self.sizing_page, self.output_page):
            self.addPage(page)
        self.resize(980, 720)

    @property
    def model(self) -> ResolvedModel | None:
        return self.model_page.model

    def request(self) -> CompileRequest | None:
        """The request the pages describe right now, or None before the model is read."""
        model = self.model
        if model is None:
            return None
        return CompileRequest(
            model_id=model.model_id,
            **self.target_page.options(),
            **self.shape_page.options(),
            **self.sizing_page.options(),
        )

    def backend(self) -> BackendChoice:
        return self.target_page.backend()

    def plan(self) -> CompilePlan | None:
        preview = self.sizing_page.preview
        return preview.plan if preview is not None else None

    def accept(self) -> None:
        plan = self.plan()
        output = self.output_page.output_dir()
        if plan is None or not output:
            return
        self.compileRequested.emit(plan.request, str(Path(output).expanduser()), self.backend())
        super().accept()

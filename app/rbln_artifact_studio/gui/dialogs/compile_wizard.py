"""The compile wizard: model -> target and backend -> shape -> KV sizing -> output; Finish hands it to a compile job."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QWidget, QWizard

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.core.errors import Fix, StudioError
from rbln_artifact_studio.core.location import Location
from rbln_artifact_studio.core.model.modelspec import ResolvedModel
from rbln_artifact_studio.core.simulator.compile_defaults import compile_defaults
from rbln_artifact_studio.core.simulator.compiler import CompilePlan, CompileRequest, resolve_shape
from rbln_artifact_studio.core.simulator.devices import device_fit, sizing_text
from rbln_artifact_studio.gui.app.settings import ToolchainPaths
from rbln_artifact_studio.gui.dialogs.wizard_model_page import ModelPage
from rbln_artifact_studio.gui.dialogs.wizard_output_page import OutputPage
from rbln_artifact_studio.gui.dialogs.wizard_shape_page import ShapePage
from rbln_artifact_studio.gui.dialogs.wizard_sizing_page import SizingPage
from rbln_artifact_studio.gui.dialogs.wizard_target_page import TargetPage
from rbln_artifact_studio.gui.models.backend_status import BackendStatus
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.gui.widgets.number_field import NumberField
from rbln_artifact_studio.gui.widgets.screen_fit import resize_to_fit


class CompileWizard(QWizard):
    """Each page validates its own part through rbln_artifact_studio.core; the wizard commits once, on Finish.

    Defaults follow the model and the target (rbln_artifact_studio.core.simulator.compile_defaults): the model's
    max_seq_len, a partition length that divides it, the fewest devices that hold the model. A field the user
    typed into keeps what was typed.
    """

    compileRequested = Signal(object, object, object)  # CompileRequest, output Location, BackendChoice

    def __init__(
        self,
        jobs: JobManager,
        default_parent: str,
        parent: QWidget | None = None,
        backends: BackendStatus | None = None,
        last: dict[str, object] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("compileWizard")
        self.setWindowTitle("Compile a model")
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOption(QWizard.WizardOption.HaveHelpButton, False)
        self.model_page = ModelPage(jobs)
        self.target_page = TargetPage(self, backends or BackendStatus(jobs, ToolchainPaths(), self))
        self.shape_page = ShapePage(self)
        self.sizing_page = SizingPage(self)
        self.output_page = OutputPage(self, default_parent)
        for page in (self.model_page, self.target_page, self.shape_page, self.sizing_page, self.output_page):
            self.addPage(page)
        self._defaults_for: str | None = None
        self.model_page.completeChanged.connect(self._on_model)
        self.target_page.npu_combo.currentIndexChanged.connect(self.apply_defaults)
        self.shape_page.batch_spin.edited.connect(self.apply_defaults)
        self.shape_page.seq_spin.edited.connect(self.apply_defaults)
        self.shape_page.attn_combo.currentIndexChanged.connect(self.apply_defaults)
        self.shape_page.fixes.fixChosen.connect(self.apply_fix)
        self.sizing_page.fixes.fixChosen.connect(self.apply_fix)
        self.target_page.fixes.fixChosen.connect(self.apply_fix)
        self.last = last or {}  # the last compile's choices (remember_of): its target, shape and budget
        self._restore_target()
        resize_to_fit(self, 980, 720)

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

    def input_problem(self) -> str | None:
        """The first number field whose text is not a number in range: nothing is computed from a stale value."""
        fields = {self.target_page.devices_spin: "num_devices", **self.shape_page.fields()}
        if not self.sizing_page.auto_radio.isChecked():
            fields[self.sizing_page.blocks_spin] = "kvcache_num_blocks"
        return next((p for f, name in fields.items() if (p := f.problem(name)) is not None), None)

    # ---- the last compile's choices -----------------------------------------------------------------

    def _restore_target(self) -> None:
        """The last model, target, backend, budget and output folder, at once; the shape once its model is read
        (see _on_model)."""
        last = self.last
        if isinstance(last.get("model_id"), str) and last["model_id"]:
            self.model_page.prefer(str(last["model_id"]))
        backend = last.get("backend")
        if backend in {c.value for c in BackendChoice}:
            self.target_page.prefer_backend(BackendChoice(backend))
        parent = last.get("output_parent")
        if isinstance(parent, str) and parent:
            self.output_page.default_parent = parent
        if isinstance(last.get("npu"), str) and self.target_page.npu_combo.findData(last["npu"]) >= 0:
            self.target_page.set_npu(str(last["npu"]))
        devices = last.get("num_devices")
        if isinstance(devices, int) and devices > 0:
            self.target_page.devices_spin.user_edited = True  # kept: defaults do not replace it
            self.target_page.devices_spin.setValue(devices)
        budget = last.get("memory_budget")
        if isinstance(budget, str) and budget:
            self.sizing_page.auto_radio.setChecked(True)
            self.sizing_page.budget_edit.setText(budget)

    def _restore_shape(self, model: ResolvedModel) -> None:
        """The last shape, when the model is the last one's (another model has its own lengths)."""
        if self.last.get("model_id") != model.model_id:
            return
        shape = self.shape_page
        fields = {
            "batch_size": shape.batch_spin,
            "max_seq_len": shape.seq_spin,
            "kvcache_partition_len": shape.partition_spin,
            "prefill_chunk_size": shape.chunk_spin,
        }
        for name, field in fields.items():
            value = self.last.get(name)
            if isinstance(value, int) and value > 0:
                field.user_edited = True
                field.setValue(value)
        attn = self.last.get("attn_impl")
        if isinstance(attn, str) and shape.attn_combo.findData(attn) >= 0:
            shape.attn_combo.setCurrentIndex(shape.attn_combo.findData(attn))

    # ---- defaults and fixes --------------------------------------------------------------------------

    @Slot()
    def _on_model(self) -> None:
        model = self.model
        if model is None or model.model_id == self._defaults_for:
            return
        first = self._defaults_for is None
        self._defaults_for = model.model_id  # a new model: start from its own maximum length
        self.shape_page.seq_spin.setValue(model.spec.max_position_embeddings)
        if first:
            self._restore_shape(model)
        self.apply_defaults()

    @Slot()
    def apply_defaults(self) -> None:
        """Partition length and device count for the model, NPU and shape now, where the user typed none."""
        model = self.model
        shape = self.shape_page
        batch, seq = shape.batch_spin.typed_value(), shape.seq_spin.typed_value()
        if model is None or not batch or not seq:
            return
        defaults = compile_defaults(model, self.target_page.npu(), batch, seq, shape.attn_combo.currentData())
        shape.partition_spin.set_default(defaults.request.kvcache_partition_len or 0)
        if defaults.fewest is not None and defaults.fewest.fits:
            self.target_page.devices_spin.set_default(defaults.fewest.num_devices)
        self.target_page.refresh()
        shape.validate()  # its summary was written before these defaults moved (it hears the same edit first)

    def device_sizing(self) -> tuple[str, tuple[Fix, ...]]:
        """What the Target page says about the device count (the numbers, and the fewest that hold the model), and
        the count to offer when the chosen one does not hold it."""
        model, request = self.model, self.request()
        if model is None or request is None:
            return "The device count that holds the model is worked out once the model is read.", ()
        defaults = compile_defaults(
            model, request.npu, request.batch_size or 1, request.max_seq_len or None, request.attn_impl
        )
        try:
            shape = resolve_shape(replace(request, memory_budget=None, kvcache_num_blocks=None), model)
        except StudioError:
            shape = None
        if defaults.fewest is None or shape is None:
            return "Fix the shape (next page) to see how many devices hold the model.", ()
        fewest = defaults.fewest
        below = (
            device_fit(model.spec, replace(shape, num_devices=fewest.num_devices - 1))
            if fewest.num_devices > 1
            else None
        )
        chosen = device_fit(model.spec, shape)
        fixes: tuple[Fix, ...] = ()
        if fewest.fits and not chosen.fits:
            fixes = (Fix(f"num_devices {fewest.num_devices}", (("num_devices", fewest.num_devices),)),)
        return sizing_text(model.model_id, chosen, fewest, below), fixes

    @Slot(object)
    def apply_fix(self, fix: Fix) -> None:
        """Put a fix's values in the fields they belong to (each then counts as typed by the user)."""
        fields: dict[str, NumberField] = {
            "num_devices": self.target_page.devices_spin,
            "batch_size": self.shape_page.batch_spin,
            "max_seq_len": self.shape_page.seq_spin,
            "kvcache_partition_len": self.shape_page.partition_spin,
            "prefill_chunk_size": self.shape_page.chunk_spin,
        }
        for name, value in fix.changes:
            if name in fields:
                fields[name].user_edited = True
                fields[name].setValue(int(str(value)))  # a Fix's value for a number field is an int
            elif name == "attn_impl":
                self.shape_page.attn_combo.setCurrentIndex(self.shape_page.attn_combo.findData(value))
            elif name == "memory_budget":
                self.sizing_page.auto_radio.setChecked(True)
                self.sizing_page.budget_edit.setText(str(value))
        self.target_page.refresh()
        self.shape_page.validate()
        self.sizing_page.update_preview()

    # ---- the end -------------------------------------------------------------------------------------

    def backend(self) -> BackendChoice:
        return self.target_page.backend()

    def effective_backend(self) -> BackendChoice:
        return self.target_page.effective_backend()

    def plan(self) -> CompilePlan | None:
        preview = self.sizing_page.preview
        return preview.plan if preview is not None else None

    def accept(self) -> None:
        plan = self.plan()
        output = self.output_page.output_location()
        if plan is None or output is None:
            return
        self.compileRequested.emit(plan.request, output, self.backend())
        super().accept()


def remember_of(request: CompileRequest, output: Location, backend: BackendChoice) -> dict[str, object]:
    """What the next wizard starts from: this compile's model, target, backend, shape, budget (not an explicit
    count) and the folder its output went into."""
    keys = ("model_id", "npu", "num_devices", "batch_size", "max_seq_len", "attn_impl", "kvcache_partition_len")
    last: dict[str, object] = {key: getattr(request, key) for key in (*keys, "prefill_chunk_size")}
    budget = request.memory_budget
    last["memory_budget"] = budget if isinstance(budget, str) else None
    last["backend"] = backend.value
    last["output_parent"] = str(output.parent)
    return last

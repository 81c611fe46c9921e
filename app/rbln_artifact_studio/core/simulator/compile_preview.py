"""What the compile wizard previews while the user types: the plan or its error, and the blocks-vs-budget curve."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from rbln_artifact_studio.core.errors import Fix, StudioError
from rbln_artifact_studio.core.estimation.estimator import CurvePoint, MemoryLayout, SequenceShape, budget_curve
from rbln_artifact_studio.core.model.budget import parse_budget
from rbln_artifact_studio.core.model.modelspec import ResolvedModel
from rbln_artifact_studio.core.model.npu import Npu
from rbln_artifact_studio.core.simulator.compiler import CompilePlan, CompileRequest, plan_compile, resolve_shape
from rbln_artifact_studio.core.simulator.memory_model import resizable_names, simulate_graphs


@dataclass(frozen=True)
class CompilePreview:
    """A plan when the request is valid, else the core's message; the curve whenever the shape is valid."""

    request: CompileRequest
    plan: CompilePlan | None = None
    error: str | None = None
    npu: Npu | None = None
    floor: int | None = None
    full: int | None = None
    budget_per_npu: int | None = None
    curve: list[CurvePoint] = field(default_factory=list)
    fixes: tuple[Fix, ...] = ()  # what the error lists as remedies, to offer as one-click choices

    @property
    def ok(self) -> bool:
        return self.plan is not None


def preview_compile(request: CompileRequest, model: ResolvedModel) -> CompilePreview:
    """Pure computation (the model config is already resolved): never raises for bad input."""
    try:
        shape = resolve_shape(request, model)
    except StudioError as exc:
        return CompilePreview(request, error=exc.one_line(), fixes=exc.fixes)
    sequence = SequenceShape(shape.batch_size, shape.max_seq_len, shape.block_size, shape.attn)
    layout = MemoryLayout.from_graphs(simulate_graphs(model.spec, shape), resizable_names(model.spec), 1)
    curve = budget_curve(layout, shape.npu, sequence.full)
    try:
        budget_per_npu: int | None = parse_budget(request.memory_budget).bytes_per_npu(shape.npu)
    except StudioError:
        budget_per_npu = None
    base = CompilePreview(request, None, None, shape.npu, sequence.floor, sequence.full, budget_per_npu, curve)
    try:
        plan = plan_compile(request, model)
    except StudioError as exc:
        return replace(base, error=exc.one_line(), fixes=exc.fixes)
    return replace(base, plan=plan)


def explicit_count_problem(count: int | None) -> str | None:
    """An explicit kvcache_num_blocks as typed: 0 is not 'unset' here (the field would then lie about it)."""
    if count is None or count > 0:
        return None
    return (
        f"kvcache_num_blocks must be a positive integer, got {count}. "
        "Choose 'Automatic, within a memory budget' to let the compiler size the KV cache."
    )

"""The built-in compiler: plan a compile (validate, simulate, resolve blocks) and write the artifact atomically."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from rbln_artifact_studio.core.errors import (
    ConfigError,
    Fix,
    InsufficientMemoryError,
    Remedy,
    ResizeError,
    ShapeError,
    StudioError,
)
from rbln_artifact_studio.core.estimation.estimator import (
    Breakdown,
    MemoryLayout,
    SequenceShape,
    breakdown,
    resolve_blocks,
)
from rbln_artifact_studio.core.estimation.fit import does_not_fit
from rbln_artifact_studio.core.model.budget import MemoryBudget, check_exclusive, parse_budget, with_budget_warnings
from rbln_artifact_studio.core.model.config_fields import MAX_BLOCKS
from rbln_artifact_studio.core.model.kv_split import kv_heads_per_npu, uneven_split
from rbln_artifact_studio.core.model.modelspec import ResolvedModel, resolve_model
from rbln_artifact_studio.core.model.npu import DEFAULT_NPU, AttnImpl, default_attn_impl, get_npu, validate_shape
from rbln_artifact_studio.core.model.rbln_config import CONFIG_NAME, dumps_config, parse_config
from rbln_artifact_studio.core.progress import Progress
from rbln_artifact_studio.core.simulator.container import GraphHeader, write_container
from rbln_artifact_studio.core.simulator.devices import fewest_devices
from rbln_artifact_studio.core.simulator.memory_model import (
    CompileShape,
    cache_metas,
    kv_tensor_names,
    resizable_names,
    simulate_graphs,
    total_weight_bytes,
)
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.core.storage import faults
from rbln_artifact_studio.core.storage.fsutil import StagingDir, check_new_output_dir, describe_os_error, write_synced

OPTIMUM_LAYOUT_VERSION = "0.12.0"
MAX_DEVICES = 1 << 16  # what an rbln_config.json may record (RblnConfig.num_devices)
MODEL_FILES = ("config.json", "generation_config.json")


def below_floor_message(target: int, floor: int) -> str:
    return (
        f"kvcache_num_blocks={target} is below the minimum required for the full sequence length "
        f"(num_min_blocks={floor})."
    )


def too_many_blocks_message(target: int, full: int) -> str:
    return (
        f"kvcache_num_blocks={target} is far too large: an rbln_config.json records at most {MAX_BLOCKS:,} "
        f"blocks (the full pool is {full})."
    )


def above_full_warning(target: int, full: int) -> str:
    return f"kvcache_num_blocks={target} is above the full pool (num_full_blocks={full}); the excess blocks are never used."


@dataclass(frozen=True)
class CompileRequest:
    """Compile options as the user gives them (optimum-rbln-cli spellings); None means the default."""

    model_id: str
    npu: str = DEFAULT_NPU
    num_devices: int = 1
    batch_size: int = 1
    max_seq_len: int | None = None
    attn_impl: str | None = None
    kvcache_partition_len: int | None = None
    prefill_chunk_size: int | None = None
    memory_budget: object = None
    kvcache_num_blocks: int | None = None
    materialize_weights: bool = False


@dataclass(frozen=True)
class CompilePlan:
    """Everything a compile decides, before anything is written: the wizard previews exactly this."""

    request: CompileRequest
    model: ResolvedModel
    shape: CompileShape
    budget: MemoryBudget
    budget_per_npu: int
    layout: MemoryLayout
    num_blocks: int
    sequence: SequenceShape
    warnings: list[str] = field(default_factory=list)

    @property
    def breakdown(self) -> Breakdown:
        return breakdown(self.layout, self.shape.npu, self.budget_per_npu, self.num_blocks, self.budget.is_set)

    @property
    def floor(self) -> int:
        return self.sequence.floor

    @property
    def full(self) -> int:
        return self.sequence.full


def resolve_shape(request: CompileRequest, model: ResolvedModel) -> CompileShape:
    """Apply defaults and the NPU family's limits; raise ShapeError naming the limit that fails."""
    npu = get_npu(request.npu)
    family = npu.family
    for name in ("max_seq_len", "kvcache_partition_len", "prefill_chunk_size"):
        value = getattr(request, name)
        if value is not None and value <= 0:  # 0 must not silently mean "the default"
            raise ShapeError(f"{name} must be a positive integer, got {value}; leave it out for the default.")
    if request.num_devices > MAX_DEVICES:  # the simulator's tables grow with it: refuse before they fill memory
        raise ShapeError(f"num_devices must be at most {MAX_DEVICES:,}, got {request.num_devices:,}.")
    max_seq_len = request.max_seq_len or model.spec.max_position_embeddings
    if request.attn_impl is None:
        attn = default_attn_impl(family, max_seq_len, request.kvcache_partition_len)
    else:
        try:
            attn = AttnImpl(request.attn_impl)
        except ValueError:
            raise ShapeError(f"attn_impl must be 'eager' or 'flash_attn', got {request.attn_impl!r}.") from None
    partition = request.kvcache_partition_len
    if attn is AttnImpl.FLASH and partition is None:
        partition = family.partition_default
    if attn is AttnImpl.EAGER and partition is not None:
        raise ShapeError(
            "kvcache_partition_len applies to flash attention only; drop it or use attn_impl flash_attn.",
            fixes=(
                Fix("drop kvcache_partition_len", (("kvcache_partition_len", 0),)),
                Fix("attn_impl flash_attn", (("attn_impl", AttnImpl.FLASH.value),)),
            ),
        )
    chunk = request.prefill_chunk_size or family.prefill_chunk_default
    validate_shape(
        family,
        batch_size=request.batch_size,
        max_seq_len=max_seq_len,
        attn_impl=attn,
        partition_len=partition,
        prefill_chunk_size=chunk,
        num_devices=request.num_devices,
    )
    return CompileShape(npu, request.num_devices, request.batch_size, max_seq_len, attn, partition, chunk)


def _devices_fix(model: ResolvedModel, shape: CompileShape, budget_per_npu: int | None = None) -> Fix | None:
    """num_devices set to the fewest that hold weights, workspace and the floor, within budget_per_npu when given
    (None when none does or no change)."""
    fewest = fewest_devices(model.spec, shape, budget_per_npu=budget_per_npu)
    limit = shape.npu.available_per_npu if budget_per_npu is None else budget_per_npu
    if fewest.needed_per_npu > limit or fewest.num_devices <= shape.num_devices:
        return None
    return Fix(f"num_devices {fewest.num_devices}", (("num_devices", fewest.num_devices),))


def plan_compile(request: CompileRequest, model: ResolvedModel | None = None) -> CompilePlan:
    """Validate and size a compile without writing anything; raises StudioError with the reason."""
    explicit = request.kvcache_num_blocks or None
    if explicit is not None and explicit < 0:
        raise ResizeError(f"kvcache_num_blocks must be positive, got {explicit}.")
    budget = parse_budget(request.memory_budget)
    check_exclusive(budget, explicit)  # first, as optimum-rbln's config class raises it before anything else
    model = model or resolve_model(request.model_id)
    shape = resolve_shape(request, model)
    budget_per_npu = budget.bytes_per_npu(shape.npu)
    warnings = list(budget.warnings())
    if uneven_split(model.spec.kv_heads, shape.num_devices):
        per_npu = kv_heads_per_npu(model.spec.kv_heads, shape.num_devices, shape.npu.chiplets)
        warnings.append(
            f"num_devices={shape.num_devices} does not divide the model's {model.spec.kv_heads} KV heads: each NPU "
            f"holds the KV cache of {per_npu} heads, more than an even split; a divisor or multiple of "
            f"{model.spec.kv_heads} uses the NPUs' DRAM better."
        )
    sequence = SequenceShape(shape.batch_size, shape.max_seq_len, shape.block_size, shape.attn)
    layout = MemoryLayout.from_graphs(simulate_graphs(model.spec, shape), resizable_names(model.spec), 1)
    npu = shape.npu
    if layout.required_per_chiplet(0) > npu.available_per_chiplet:
        need = layout.required_per_chiplet(0)
        fix = _devices_fix(model, shape)
        raise StudioError(
            f"{model.model_id} does not fit {npu.name} x{shape.num_devices}: weights and workspace need "
            f"{format_bytes(need)} per chiplet, but a chiplet offers {format_bytes(npu.available_per_chiplet)}. "
            + (f"Use more devices: {fix.label} hold(s) it." if fix else ""),
            fixes=(fix,) if fix else (),
            remedy=None if fix else Remedy("Use more devices ({option}).", "num_devices"),
        )
    if explicit is not None:
        num_blocks = explicit
        if explicit > MAX_BLOCKS:
            raise ResizeError(too_many_blocks_message(explicit, sequence.full))
        if explicit < sequence.floor:
            raise ResizeError(below_floor_message(explicit, sequence.floor))
        if explicit > sequence.full:
            warnings.append(above_full_warning(explicit, sequence.full))
    elif shape.attn is AttnImpl.EAGER:
        num_blocks = sequence.full
        if budget.is_set:
            warnings.append("Under eager attention the block count is always the full pool; memory_budget is not used.")
    else:
        try:
            num_blocks = resolve_blocks(layout, npu, budget_per_npu // npu.chiplets, sequence, budget_per_npu)
        except InsufficientMemoryError as exc:
            # More devices hold less each: offer the fewest that fit this very budget (or, when the budget is
            # the whole NPU already, the fewest that fit at all), beside a larger budget.
            fix = _devices_fix(model, shape, budget_per_npu if budget.is_set else None)
            if fix is not None:
                exc.fixes = (*exc.fixes, fix)
                more = f"use more devices: {fix.label} would hold it."
                exc.hint = f"{exc.hint} Or {more}" if exc.hint else more.capitalize()
            raise with_budget_warnings(exc, budget) from None
    if explicit is not None or shape.attn is AttnImpl.EAGER:
        refusal = does_not_fit(layout, npu, num_blocks, sequence.floor)  # it would not load: never write it
        if refusal is not None:
            raise ResizeError(refusal, unchanged=True)
    plan = CompilePlan(request, model, shape, budget, budget_per_npu, layout, num_blocks, sequence, warnings)
    try:  # never write a file this tool would refuse to open
        parse_config(rbln_config_for(plan), Path(CONFIG_NAME))
    except ConfigError as exc:
        raise ShapeError(f"This compile would write an rbln_config.json that cannot be read back: {exc}") from None
    return plan


def _input_info(plan: CompilePlan, graph: str) -> list[list[object]]:
    shape, spec = plan.shape, plan.model.spec
    batch, tokens = (1, shape.prefill_chunk_size) if graph == "prefill" else (shape.batch_size, 1)
    blocks_per_seq = shape.max_seq_len // shape.block_size
    tables = [blocks_per_seq] if graph == "prefill" else [batch, blocks_per_seq]
    info: list[list[object]] = [
        ["input_ids", [batch, tokens], "int64"],
        ["cache_position", [batch, tokens], "int32"],
        ["block_tables", tables, "int16"],
    ]
    if graph == "prefill":
        info.append(["query_position", [], "int16"])
    for meta in cache_metas(spec, shape):
        dims = list(meta["shape"])
        if meta["is_auto"]:
            dims[0] = 1  # compiled with one block; the buffers are multiplied afterwards
        info.append([meta["name"], dims, spec.dtype_name])
    return info


def rbln_config_for(plan: CompilePlan) -> dict[str, object]:
    """rbln_config.json content in the optimum-rbln 0.12 layout."""
    shape, spec = plan.shape, plan.model.spec
    compile_cfgs = [
        {
            "compiled_model_name": graph,
            "input_info": _input_info(plan, graph),
            "npu": shape.npu.name,
            "num_devices": shape.num_devices,
        }
        for graph in shape.graph_names
    ]
    sliding = [layer for _, layer in kv_tensor_names(spec) if spec.layer_type(layer) != "full_attention"]
    return {
        "cls_name": f"RBLN{spec.architecture}Config",
        "dtype": spec.dtype_name,
        "optimum_rbln_version": OPTIMUM_LAYOUT_VERSION,
        "_compile_cfgs": compile_cfgs,
        "batch_size": shape.batch_size,
        "max_seq_len": shape.max_seq_len,
        "use_inputs_embeds": False,
        "use_position_ids": False,
        "use_attention_mask": False,
        "quantization": {},
        "attn_impl": shape.attn.value,
        "kvcache_partition_len": shape.partition_len,
        "kvcache_block_size": shape.block_size,
        "prefill_chunk_size": shape.prefill_chunk_size,
        "kvcache_num_blocks": plan.num_blocks,
        "cache_impl": "hybrid" if sliding else "static",
        "sliding_window": spec.sliding_window if sliding else None,
        "sliding_window_layers": sorted(set(sliding)),
        "phases": ["prefill", "decode"],
        "logits_to_keep": 1,
        "output_hidden_states": False,
        "decoder_batch_sizes": [shape.batch_size],
        "cache_metas": cache_metas(spec, shape),
        "npu": shape.npu.name,
        "num_devices": shape.num_devices,
    }


def graph_headers(plan: CompilePlan) -> dict[str, GraphHeader]:
    """Container headers of every graph with the KV buffers at the resolved block count."""
    shape, spec = plan.shape, plan.model.spec
    graphs = simulate_graphs(spec, shape, plan.num_blocks)
    weights = total_weight_bytes(spec, shape)
    return {
        name: GraphHeader(
            graph=name,
            npu=shape.npu.name,
            num_devices=shape.num_devices,
            chiplets=shape.npu.chiplets,
            kvcache_num_blocks=plan.num_blocks,
            compiled_kvcache_num_blocks=plan.num_blocks,
            weights_bytes=weights if name == "prefill" else 0,
            resizable=sorted(resizable_names(spec)),
            alloc_per_chiplet_by_key=g.alloc_per_chiplet_by_key,
            dram_tensor_sizes=g.dram_tensor_sizes,
        )
        for name, g in graphs.items()
    }


def _model_files(plan: CompilePlan, folder: Path) -> None:
    raw = dict(plan.model.raw)
    raw.setdefault("_name_or_path", plan.model.model_id)
    write_synced(folder / "config.json", (json.dumps(raw, indent=2) + "\n").encode())
    source = plan.model.source_dir
    if source is not None:
        for name in MODEL_FILES[1:]:
            if (source / name).is_file():
                write_synced(folder / name, (source / name).read_bytes())


def write_artifact(plan: CompilePlan, output_dir: Path, progress: Progress | None = None) -> Path:
    """Write the planned artifact into a staging folder and publish it by rename; nothing partial remains."""
    progress = progress or Progress()
    output = check_new_output_dir(output_dir, plan.model.source_dir)
    headers = graph_headers(plan)
    payload = headers["prefill"].weights_bytes if plan.request.materialize_weights else 0
    progress.start(payload, f"Writing {output.name}")
    try:
        with StagingDir(output, what="compile") as staging:
            for name, header in headers.items():
                write_container(
                    staging.path / f"{name}.rbln",
                    header,
                    payload if name == "prefill" else 0,
                    on_bytes=progress.advance,
                )
                faults.checkpoint(f"compile.graph_written.{name}")
            _model_files(plan, staging.path)
            write_synced(staging.path / CONFIG_NAME, dumps_config(rbln_config_for(plan)))
            faults.checkpoint("compile.config_written")
            progress.check()
            staging.publish()
    except OSError as exc:
        raise StudioError(describe_os_error(exc, f"writing {output}"), unchanged=True) from None  # staged: nothing kept
    progress.say(f"Compiled {output.name}: kvcache_num_blocks={plan.num_blocks}")
    return output

"""Plain data and text views of an artifact for the CLI's inspect command and for reports."""

from __future__ import annotations

from typing import Any

from rbln_artifact_studio.core.display.kinds_report import kind_rows, part_dict
from rbln_artifact_studio.core.estimation.estimator import Breakdown, ChipletUsage
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.model.blocks import full_sequences, usable_tokens
from rbln_artifact_studio.core.model.budget import UNSET, MemoryBudget
from rbln_artifact_studio.core.sizes import format_bytes, pluralize


def usage_dict(u: ChipletUsage) -> dict[str, Any]:
    return {
        "node": u.node,
        "chiplet": u.chiplet,
        "system_reserve": u.reserve,
        "weights": u.weights,
        "workspace_and_other": u.workspace,
        "kv_cache": u.kv,
        "free_in_budget": u.free_in_budget,
        "outside_budget": u.outside_budget,
        "budget": u.budget,
        "total_dram": u.total,
        "by_key": u.by_key,
    }


def breakdown_dict(b: Breakdown) -> dict[str, Any]:
    return {
        "num_blocks": b.num_blocks,
        "budget_per_npu": b.budget_per_npu,
        "budget_set": b.budget_set,
        "fits": b.fits,
        "tightest": {"node": b.tightest.node, "chiplet": b.tightest.chiplet},
        "chiplets": [usage_dict(u) for u in b.usages],
    }


def inspect_dict(artifact: Artifact, budget: MemoryBudget = UNSET) -> dict[str, Any]:
    """The inspect --json object (documented in docs/cli.md)."""
    c = artifact.config
    fit = artifact.breakdown(budget)
    graphs = None
    if artifact.allocations is not None:
        graphs = {
            name: {"alloc_per_chiplet_by_key": g.alloc_per_chiplet_by_key, "dram_tensor_sizes": g.dram_tensor_sizes}
            for name, g in artifact.allocations.items()
        }
    return {
        "path": str(artifact.where),
        "status": artifact.status.value,
        "problems": [{"severity": p.severity.value, "message": p.message} for p in artifact.problems],
        "config": artifact.loaded.raw,
        "kvcache_num_blocks": c.kvcache_num_blocks,
        "num_min_blocks": c.num_min_blocks,
        "num_full_blocks": c.num_full_blocks,
        "compiled_kvcache_num_blocks": artifact.compiled_blocks,
        "npu": c.npu,
        "num_devices": c.num_devices,
        "batch_size": c.batch_size,
        "max_seq_len": c.max_seq_len,
        "kvcache_block_size": c.block_size,
        "attn_impl": c.attn.value,
        "kv_bytes_per_block": c.kv_bytes_per_block if c.resizable_names else None,  # nothing scales with blocks
        "kv_fixed_bytes": c.kv_fixed_bytes,
        "kv_fixed_reason": c.kv_fixed_reason,
        "kv_bytes_per_npu": artifact.kv_bytes_per_npu,
        "kv_unknown_reason": c.kv_unknown_reason,
        "kind": artifact.kind.value,
        "resizable": True,
        "kv_section": artifact.location.section if artifact.location else None,
        "parts": [part_dict(p) for p in artifact.location.description.parts]
        if artifact.location and artifact.location.description
        else [],
        "simulated": artifact.is_simulated,
        "graphs": graphs,
        "allocations_unknown_reason": artifact.unknown_reason,
        "breakdown": breakdown_dict(fit) if fit is not None else None,
        "colocated_graphs": sorted(artifact.colocated.graphs),  # other parts' graphs stacked in the breakdown
        "colocated_unknown": list(artifact.colocated.unknown),  # parts on the same NPUs whose sizes are unknown
        "files": [{"name": f"{g.name}.rbln", "size": g.size} for g in artifact.graph_files]
        + [{"name": name, "size": size} for name, size in artifact.other_files],
    }


def _usage_line(u: ChipletUsage, tightest: bool) -> str:
    parts = [
        f"reserve {format_bytes(u.reserve)}",
        f"weights {format_bytes(u.weights)}",
        f"workspace {format_bytes(u.workspace)}",
        f"KV {format_bytes(u.kv)}",
        f"free {format_bytes(u.free_in_budget)}",
    ]
    if u.outside_budget:
        parts.append(f"outside budget {format_bytes(u.outside_budget)}")
    mark = "  <- tightest" if tightest else ""
    return f"  {u.label}: " + " | ".join(parts) + mark


def inspect_text(artifact: Artifact, budget: MemoryBudget = UNSET) -> str:
    """Human-readable inspect output."""
    c = artifact.config
    lines = [f"{artifact.where}  [{artifact.status.value}]"]
    lines += [f"  {label.lower():12} {value}" for label, value in kind_rows(artifact)]
    lines.append(f"  class        {c.cls_name or 'unknown'}")
    npu = artifact.npu
    target = npu.label if npu else (c.npu or "unknown NPU")
    lines.append(f"  target       {target} x{c.num_devices}")
    chunk = f", prefill chunk {c.prefill_chunk_size}" if c.prefill_chunk_size else ""
    lines.append(
        f"  shape        batch {c.batch_size}, max_seq_len {c.max_seq_len:,}, {c.attn.value}, "
        f"block {c.block_size:,}{chunk}"
    )
    n = c.kvcache_num_blocks
    tokens = usable_tokens(n, c.max_seq_len, c.block_size, c.batch_size)
    seqs = full_sequences(max(n, 0), c.max_seq_len, c.block_size, c.batch_size)
    lines.append(
        f"  KV cache     kvcache_num_blocks {n} (floor {c.num_min_blocks}, full pool {c.num_full_blocks}): "
        f"{tokens:,} tokens, {pluralize(seqs, 'full-length sequence')}"
    )
    if c.kv_bytes_per_block is not None:
        per_npu = format_bytes(artifact.kv_bytes_per_npu or 0)
        fixed = format_bytes(c.kv_fixed_bytes)
        if not c.resizable_names:
            lines.append(
                f"               fixed size, not resizable: {fixed} ({c.kv_fixed_reason}); kvcache_num_blocks "
                f"does not change it; {per_npu} per NPU"
            )
        elif c.kv_fixed_reason:
            lines.append(
                f"               {format_bytes(c.kv_bytes_per_block)} per block, plus {fixed} that does not resize "
                f"({c.kv_fixed_reason}); {per_npu} per NPU"
            )
        else:
            lines.append(f"               {format_bytes(c.kv_bytes_per_block)} per block, {per_npu} per NPU")
    else:
        lines.append(f"               KV bytes unknown: {c.kv_unknown_reason}")
    fit = artifact.breakdown(budget)
    if fit is None:
        lines.append(f"  DRAM         unknown: {artifact.unknown_reason or 'the NPU is unknown'}")
    else:
        lines.append(f"  DRAM per chiplet (budget {budget.describe()}):")
        tightest = fit.tightest
        lines += [_usage_line(u, u is tightest) for u in fit.usages]
        if artifact.colocated.stacked:
            parts = ", ".join(artifact.colocated.stacked)
            lines.append(f"  (with the model's other parts on the same NPUs stacked in: {parts})")
    note = artifact.colocated.unknown_note()
    if note is not None:
        lines.append(f"  also there   {note}")
    for p in artifact.problems:
        lines.append(f"  {p.severity.value}: {p.message}")
    return "\n".join(lines)

"""Which cache entry a `vllm serve` command will use: a hit, a near miss (the same model, some fields differ) or a
miss, and for a miss what vllm-rbln's compile would give, from the same estimator as the studio's compile."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.model.npu import DEFAULT_NPU
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, graph_headers, plan_compile
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.core.vllm_cache.command import ServeCommand
from rbln_artifact_studio.core.vllm_cache.entries import OK, CacheEntry, recovered_key
from rbln_artifact_studio.core.vllm_cache.key import COMPILED_MODELS, KEY_NAMES, sanitized

DISK_WRITE_RATE = 300 * 1024 * 1024  # bytes a second a local disk takes a compile's output at: an order, not a promise


@dataclass
class Lookup:
    """What `vllm-cache lookup` answers."""

    result: str  # hit, near-miss or miss
    key: str  # the folder name the command hits
    entry: CacheEntry | None = None
    differences: list[dict[str, Any]] = field(default_factory=list)
    would_compile: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    assumed: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "key": self.key,
            "entry": self.entry.to_json() if self.entry else None,
            "differences": self.differences,
            "would_compile": self.would_compile,
            "warnings": self.warnings,
            "assumed": self.assumed,
        }


def _differences(command: ServeCommand, entry: CacheEntry) -> dict[str, Any]:
    """The fields of entry that differ from the command's key, with what each side has ({} when none shows)."""
    key = command.key.config_dict()
    shown = dict(entry.fields)
    found = recovered_key(entry.name, shown, command.key.rbln_config, command.key.model_name)
    theirs = found.config_dict() if found else {}
    if not found:
        theirs = {
            "batch_size": shown.get("batch_size"),
            "max_model_len": shown.get("max_model_len"),
            "block_size": shown.get("block_size"),
            "num_devices": shown.get("num_devices"),
            "dtype": shown.get("dtype"),
        }
    out: dict[str, Any] = {}
    for name, value in theirs.items():
        if value is not None and key.get(name) != value:
            out[KEY_NAMES.get(name, name)] = {"command": key.get(name), "entry": value}
    if not found and not out:
        out["gpu_memory_utilization or additional config"] = {
            "command": key.get("memory_budget"),
            "entry": "not recorded in the artifact",
        }
    return out


def compile_request(command: ServeCommand, npu: str | None = None) -> CompileRequest:
    """What vllm-rbln asks optimum-rbln to compile on a miss of this command: its settings, the optimum overrides'
    npu, attn_impl and kvcache_num_blocks, and --gpu-memory-utilization as the memory budget."""
    key, overrides = command.key, command.overrides
    eager = key.block_size is None or key.block_size >= key.max_model_len
    explicit = overrides.get("kvcache_num_blocks")
    return CompileRequest(
        model_id=key.model_name,
        npu=str(overrides.get("npu") or npu or DEFAULT_NPU),
        num_devices=key.num_devices,
        batch_size=key.batch_size,
        max_seq_len=key.max_model_len,
        attn_impl=str(overrides.get("attn_impl") or ("eager" if eager else "flash_attn")),
        kvcache_partition_len=None if eager else key.block_size,
        prefill_chunk_size=key.max_num_batched_tokens or overrides.get("prefill_chunk_size"),
        memory_budget=None if explicit else key.memory_budget,
        kvcache_num_blocks=explicit,
    )


def would_compile(command: ServeCommand, npu: str | None) -> dict[str, Any]:
    """What a compile on a miss gives at the command's gpu_memory_utilization: the studio's own plan of it."""
    request = compile_request(command, npu)
    chosen_npu, key = request.npu, command.key
    try:
        plan = plan_compile(request)
    except StudioError as exc:
        return {"error": exc.one_line(), "npu": chosen_npu}
    disk = graph_headers(plan)["prefill"].weights_bytes
    b = plan.breakdown
    return {
        "npu": chosen_npu,
        "kvcache_num_blocks": plan.num_blocks,
        "num_min_blocks": plan.floor,
        "num_full_blocks": plan.full,
        "memory_budget": key.memory_budget,
        "budget_per_npu": plan.budget_per_npu,
        "dram": [
            {
                "node": u.node,
                "chiplet": u.chiplet,
                "weights": u.weights,
                "workspace": u.workspace,
                "kv": u.kv,
                "free_in_budget": u.free_in_budget,
                "budget": u.budget,
            }
            for u in b.usages
        ],
        "disk_bytes": disk,
        "write_seconds": round(disk / DISK_WRITE_RATE, 1),
        "warnings": plan.warnings,
    }


def lookup(command: ServeCommand, entries: list[CacheEntry], npu: str | None = None) -> Lookup:
    """The entry the command hits among entries (a cache's listing), or the nearest ones and what a compile gives."""
    name = command.key.folder_name
    out = Lookup("miss", name, assumed=list(command.assumed), warnings=list(command.warnings))
    compiled = [e for e in entries if e.area == COMPILED_MODELS]
    hit = next((e for e in compiled if e.name == name), None)
    if hit is not None:
        out.result, out.entry = "hit", hit
        if hit.status != OK:
            out.warnings += [f"the entry is {hit.status}: {reason}" for reason in hit.reasons]
        if not hit.has_config:
            out.result = "miss"  # no rbln_config.json: vllm-rbln compiles again into it
        return out
    model = sanitized(command.key.model_name)
    for entry in compiled:
        if (entry.model or "") != command.key.model_name and entry.name.rpartition("_")[0] != model:
            continue
        if not entry.fields:  # nothing of its settings is known (no rbln_config.json, a link): no telling what differs
            continue
        diff = _differences(command, entry)
        out.differences.append({"entry": entry.name, "status": entry.status, "fields": diff})
    if out.differences:
        out.result = "near-miss"
    out.would_compile = would_compile(command, npu)
    return out


def difference_line(item: dict[str, Any]) -> str:
    """'NAME: only gpu_memory_utilization differs: 0.92 against the entry's 0.9' for one near miss."""
    fields = item["fields"]
    parts = [f"{v['command']} against the entry's {v['entry']}" for v in fields.values()]
    if len(parts) == 1:
        return f"{item['entry']}: only {next(iter(fields))} differs: {parts[0]}"
    listed = "; ".join(f"{name} {part}" for name, part in zip(fields, parts, strict=True))
    return f"{item['entry']}: {', '.join(fields)} differ: {listed}"


def would_compile_lines(would: dict[str, Any]) -> list[str]:
    """What a compile on a miss would give, as the CLI and the desktop say it: the blocks, then the DRAM of each
    (node, chiplet) at that budget, then the copy's size and time."""
    if "error" in would:
        return [f"A compile would fail: {would['error']}"]
    lines = [
        f"A compile on {would['npu']} at gpu_memory_utilization {would['memory_budget']} would give "
        f"kvcache_num_blocks {would['kvcache_num_blocks']} (floor {would['num_min_blocks']}, full pool "
        f"{would['num_full_blocks']}):"
    ]
    for u in would["dram"]:
        lines.append(
            f"  node {u['node']} chiplet {u['chiplet']}: weights {format_bytes(u['weights'])} | workspace "
            f"{format_bytes(u['workspace'])} | KV {format_bytes(u['kv'])} | free {format_bytes(u['free_in_budget'])}"
            f" of its {format_bytes(u['budget'])} budget"
        )
    lines.append(f"about {format_bytes(would['disk_bytes'])} on disk, ~{would['write_seconds']} s to write")
    return lines

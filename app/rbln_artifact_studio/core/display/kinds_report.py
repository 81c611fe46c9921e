"""Words and plain data for a model's kind and compiled parts (inspect, details, reports)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rbln_artifact_studio.core.model.kinds import ModelDescription, ModelKind, Part
from rbln_artifact_studio.core.status import worst

if TYPE_CHECKING:
    from rbln_artifact_studio.core.fleet.artifact import Artifact


def part_line(part: Part) -> str:
    """'unet: RBLNUNet2DConditionModelConfig, RBLN-CA25 x1, batch 2, graphs compiled_model'."""
    where = f"{part.name}/" if part.name else "(top level)"
    target = f"{part.npu or 'NPU ?'} x{part.num_devices or 1}"
    batch = f"batch {part.batch_size}" if part.batch_size is not None else "batch ?"
    graphs = ", ".join(f"{g}.rbln" for g in part.graphs) or "no graphs"
    return f"{where} {part.cls_name or 'unknown class'}, {target}, {batch}, {graphs}"


def description_rows(description: ModelDescription) -> list[tuple[str, str]]:
    """(label, value) rows for a model without a resizable KV cache: kind, class, target, batch, parts, why."""
    rows = [
        ("Kind", description.kind.value),
        ("Model class", description.cls_name or "unknown"),
        ("NPU", f"{description.npu or 'unknown'} x{description.num_devices or 1}"),
        ("Batch size", str(description.batch_size) if description.batch_size is not None else "—"),
        ("KV cache", description.kv_note or "—"),
    ]
    rows += [("Part", part_line(p)) for p in description.parts if p.graphs or p.name]
    return rows


def description_text(description: ModelDescription) -> str:
    status = _status(description)
    lines = [f"{description.path}  [{status}]"]
    lines += [f"  {label.lower():12} {value}" for label, value in description_rows(description)]
    lines += [f"  {p.severity.value}: {p.message}" for p in description.problems]
    return "\n".join(lines)


def _status(description: ModelDescription) -> str:
    return worst(list(description.problems)).value


def part_dict(part: Part) -> dict[str, Any]:
    return {
        "name": part.name,
        "cls_name": part.cls_name,
        "npu": part.npu,
        "num_devices": part.num_devices,
        "batch_size": part.batch_size,
        "graphs": list(part.graphs),
    }


def description_dict(description: ModelDescription) -> dict[str, Any]:
    """inspect --json for a model without a resizable KV cache (docs/cli.md)."""
    return {
        "path": str(description.path),
        "status": _status(description),
        "problems": [{"severity": p.severity.value, "message": p.message} for p in description.problems],
        "kind": description.kind.value,
        "cls_name": description.cls_name,
        "npu": description.npu,
        "num_devices": description.num_devices,
        "batch_size": description.batch_size,
        "resizable": False,
        "kv_note": description.kv_note,
        "parts": [part_dict(p) for p in description.parts],
    }


def kind_rows(artifact: Artifact) -> list[tuple[str, str]]:
    """Kind rows of an artifact with a KV cache; a multimodal model also names where its KV cache lives."""
    location = artifact.location
    described = location.description if location else None
    if described is None or location is None:
        return [("Kind", ModelKind.DECODER.value)]
    if described.kind is not ModelKind.MULTIMODAL:
        # A language model at the top level with compiled parts beside it (Qwen2-VL's visual/): name them, as
        # --json does, since they load on the same NPUs and must be there for the artifact to be whole.
        return [("Kind", ModelKind.DECODER.value), *[("Part", part_line(p)) for p in described.parts if p.name]]
    return [
        ("Kind", f"{described.kind.value} ({described.cls_name or 'unknown class'})"),
        ("KV cache of", f"{location.section}/ ({artifact.config.cls_name or 'unknown class'})"),
        *[("Part", part_line(p)) for p in described.parts if p.name != location.section],
    ]

"""A multimodal model's other compiled parts on its language model's NPUs (DESIGN section 11).

The vision tower, projector and language model load on the same NPU unless their `device` lists say otherwise,
so every part's allocations count against that NPU's DRAM. As optimum-rbln's own estimator does: a part's
allocations on a node, DramTensor included, are charged to the language model's node with the same device id;
unset devices overlap node by node; disjoint devices reserve nothing. Where a part's allocations cannot be read
here (real-compiler files without rebel), the part is named as of unknown size instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.estimation.estimator import KV_KEY, GraphAllocations
from rbln_artifact_studio.core.fleet.deferred import DeferredInspector, chosen
from rbln_artifact_studio.core.model.kinds import KvLocation, Part
from rbln_artifact_studio.core.simulator.container import ContainerInfo, probe_container

Inspector = Callable[[Path, list[Path]], dict[str, GraphAllocations]]
GRAPH_SUFFIX = ".rbln"


@dataclass
class Colocated:
    """The other parts' allocations on the language model's nodes, and the parts whose sizes are unknown."""

    graphs: dict[str, GraphAllocations] = field(default_factory=dict)  # "vision_tower/ graph" -> on the LM's nodes
    stacked: list[str] = field(default_factory=list)  # the parts in graphs ("vision_tower/", "(top level)")
    unknown: list[str] = field(default_factory=list)  # "vision_tower/", "(top level)"

    def unknown_note(self) -> str | None:
        """What the free DRAM leaves out, when some part's size is unknown."""
        if not self.unknown:
            return None
        parts = ", ".join(self.unknown)
        return (
            f"{parts} also load on these NPUs, and their allocations are unknown here (real-compiler files: reading "
            "them needs rebel), so the free DRAM shown does not count them: the NPU holds less than that."
        )


def part_label(part: Part) -> str:
    return f"{part.name}/" if part.name else "(top level)"


def _devices(raw: object) -> list[int] | None:
    """A part's `device` setting as a list of device ids, None when unset."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return [raw]
    if isinstance(raw, list) and raw and all(isinstance(d, int) and not isinstance(d, bool) for d in raw):
        return list(raw)
    return None


def _section(root_raw: dict[str, Any], name: str) -> dict[str, Any]:
    section = root_raw.get(name) if name else root_raw
    return section if isinstance(section, dict) else {}


def _on_lm_nodes(
    graph: GraphAllocations, part: str, node_map: dict[int, int], shape: list[int]
) -> GraphAllocations | None:
    """The part's allocations as extra keys of the LM's nodes ("DramTensor (vision_tower/)" counts as fixed)."""
    moved: dict[str, list[list[int]]] = {}
    for key, grid in graph.alloc_per_chiplet_by_key.items():
        target = [[0] * chiplets for chiplets in shape]
        for node, row in enumerate(grid):
            if node not in node_map:
                continue
            lm_node = node_map[node]
            for chiplet, value in enumerate(row):
                target[lm_node][min(chiplet, shape[lm_node] - 1)] += value
        name = f"{key} ({part})" if key != KV_KEY else f"{KV_KEY} of {part}"
        moved[name] = target
    return GraphAllocations(moved, {}) if moved else None


def colocated_parts(
    location: KvLocation | None,
    root_raw: dict[str, Any] | None,
    lm_shape: list[int],
    inspector: Inspector | DeferredInspector | None,
    probe: Callable[[Path], ContainerInfo | None] = probe_container,
) -> Colocated:
    """What the model's other parts put on the language model's nodes (lm_shape: chiplets per LM node); probe reads
    a graph's container where the artifact lives (this computer's, or what a server or a bucket gave of it)."""
    out = Colocated()
    if location is None or location.description is None or root_raw is None:
        return out
    root = location.vlm_root or location.model_dir
    lm_name = location.section if location.vlm_root is not None else ""
    lm_devices = _devices(_section(root_raw, lm_name or "").get("device")) if lm_name else None
    for part in location.description.parts:
        if part.name == (lm_name or "") or not part.graphs:
            continue
        label = part_label(part)
        devices = _devices(_section(root_raw, part.name).get("device"))
        if devices is not None and lm_devices is not None:
            node_map = {j: lm_devices.index(d) for j, d in enumerate(devices) if d in lm_devices}
        else:
            node_map = {j: j for j in range(len(lm_shape))}  # unset: they overlap node by node
        if not node_map:
            continue  # disjoint devices: nothing on the language model's NPUs
        folder = root / part.name if part.name else root
        paths = [folder / f"{g}{GRAPH_SUFFIX}" for g in part.graphs]
        graphs = _read(paths, folder, inspector, probe)
        if graphs is None:
            out.unknown.append(label)
            continue
        out.stacked.append(label)
        for name, graph in graphs.items():
            moved = _on_lm_nodes(graph, label, node_map, lm_shape)
            if moved is not None:
                out.graphs[f"{label} {name}"] = moved
    return out


def _read(
    paths: list[Path],
    folder: Path,
    inspector: Inspector | DeferredInspector | None,
    probe: Callable[[Path], ContainerInfo | None],
) -> dict[str, GraphAllocations] | None:
    """The parts' graphs' allocations: simulator containers read here, real ones through rebel; None if unknown."""
    found: dict[str, GraphAllocations] = {}
    real: list[Path] = []
    for path in paths:
        try:
            info = probe(path)
        except (StudioError, OSError):
            return None
        if info is None:
            real.append(path)
        else:
            found[path.stem] = info.current().header.allocations
    if real:
        reader = chosen(inspector)
        if reader is None:
            return None
        try:
            found.update(reader(folder, real))
        except StudioError:
            return None
    return found


def loads_json(data: bytes | None) -> dict[str, Any] | None:
    try:
        raw = json.loads(data or b"")
    except ValueError:
        return None
    return raw if isinstance(raw, dict) else None

"""A GraphInspector for real .rbln files: runs rebel_probe.py in the toolchain's Python, with a time limit."""

from __future__ import annotations

from pathlib import Path

from rbln_artifact_studio.backends.toolchain import run_probe
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.estimation.estimator import GraphAllocations, Grid
from rbln_artifact_studio.core.progress import CancelToken

_TABLES = ("alloc_per_chiplet_by_key", "dram_tensor_sizes")


def _grid(value: object, what: str) -> Grid:
    if not isinstance(value, list) or not all(isinstance(row, list) for row in value):
        raise StudioError(f"The rebel helper reported {what} as {type(value).__name__}, not per-node lists.")
    for row in value:
        for v in row:
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise StudioError(f"The rebel helper reported {what} with {v!r}, not a byte count.")
    return value


def _tables(value: object, what: str) -> dict[str, Grid]:
    if not isinstance(value, dict):
        raise StudioError(f"The rebel helper reported {what} as {type(value).__name__}, not an object.")
    return {str(key): _grid(grid, f"{what}[{key}]") for key, grid in value.items()}


def allocations_from_json(data: dict[str, object]) -> dict[str, GraphAllocations]:
    """The helper's JSON result as the estimator's per-graph tables; StudioError when it is not usable."""
    if "error" in data:
        raise StudioError(str(data["error"]))
    graphs = data.get("graphs")
    if not isinstance(graphs, dict) or not graphs:
        raise StudioError("The rebel helper reported no graphs.")
    result = {}
    for name, tables in graphs.items():
        if not isinstance(tables, dict):
            raise StudioError(f"The rebel helper reported graph {name} as {type(tables).__name__}.")
        alloc, sizes = (_tables(tables.get(key), f"{name}.{key}") for key in _TABLES)
        result[str(name)] = GraphAllocations(alloc, sizes)
    return result


class RebelInspector:
    """Reads an artifact's real .rbln files with rebel.RBLNCompiledModel in the toolchain's Python."""

    def __init__(self, python: Path, timeout: float, cancel: CancelToken | None = None) -> None:
        self.python = python
        self.timeout = timeout
        self.cancel = cancel  # ends the helper early (the job reading the artifact was cancelled)

    def __call__(self, artifact_dir: Path, graph_paths: list[Path]) -> dict[str, GraphAllocations]:
        if not graph_paths:
            raise StudioError(f"{artifact_dir} has no .rbln files to inspect.")
        _, data = run_probe(self.python, [str(p) for p in graph_paths], self.timeout, self.cancel)
        return allocations_from_json(data)

"""Helper run in the toolchain's Python: read real .rbln files with rebel and write their allocations as JSON.

Standalone on purpose (standard library and rebel only), because it runs in the Python where
rebel-compiler is installed, not in the studio's. Usage:

    python rebel_probe.py --check --out RESULT.json
    python rebel_probe.py --out RESULT.json GRAPH.rbln [GRAPH.rbln ...]

The result file holds {"rebel_version": ...} for --check, or
{"graphs": {stem: {"alloc_per_chiplet_by_key": {key: [[bytes per chiplet] per node]},
"dram_tensor_sizes": {tensor: [[bytes per chiplet] per node]}}}}, or {"error": message} with exit 3
(rebel does not import) or 4 (a file could not be read).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

EXIT_NO_REBEL = 3
EXIT_READ_FAILED = 4


def _write(path: str, data: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def _grid(value: Any, what: str) -> list:  # Any: whatever rebel returned
    try:
        return [[int(v) for v in row] for row in value]
    except (TypeError, ValueError):
        raise ValueError(f"{what} is not a per-node list of per-chiplet byte counts: {value!r}") from None


def _tables(method: Callable[[], Any], what: str) -> dict:
    result = method()
    return {str(key): _grid(grid, f"{what}[{key!r}]") for key, grid in dict(result).items()}


def read_graph(rebel: Any, path: str) -> dict:  # Any: the rebel module, which has no type information
    """One compiled graph's allocation tables at the block count its buffers currently hold."""
    model = rebel.RBLNCompiledModel(path)
    alloc = getattr(model, "get_alloc_per_chiplet_by_key", None)
    sizes = getattr(model, "exp_get_dram_tensor_sizes", None)
    if alloc is None or sizes is None:
        version = getattr(rebel, "__version__", "?")
        raise RuntimeError(
            f"rebel {version} has no get_alloc_per_chiplet_by_key()/exp_get_dram_tensor_sizes(); "
            "a newer rebel-compiler is needed to inspect allocations"
        )
    name = os.path.basename(path)
    return {
        "alloc_per_chiplet_by_key": _tables(alloc, f"{name} get_alloc_per_chiplet_by_key()"),
        "dram_tensor_sizes": _tables(sizes, f"{name} exp_get_dram_tensor_sizes()"),
    }


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description="Report .rbln allocations through rebel as JSON.")
    parser.add_argument("--out", required=True, help="where to write the JSON result")
    parser.add_argument("--check", action="store_true", help="only check that rebel imports")
    parser.add_argument("graphs", nargs="*", help=".rbln files")
    args = parser.parse_args(argv)
    try:
        # deferred: rebel (the real compiler), optional and perhaps broken: its failure is this helper's answer
        import rebel
    except Exception as exc:  # ImportError, or a broken native library raising anything
        message = f"import rebel failed in {sys.executable}: {type(exc).__name__}: {exc}"
        print(message, file=sys.stderr)
        _write(args.out, {"error": message})
        return EXIT_NO_REBEL
    if args.check:
        _write(args.out, {"rebel_version": str(getattr(rebel, "__version__", "unknown")), "python": sys.executable})
        return 0
    graphs = {}
    for path in args.graphs:
        stem = os.path.basename(path)[: -len(".rbln")] if path.endswith(".rbln") else os.path.basename(path)
        print(f"reading {path}", file=sys.stderr, flush=True)
        try:
            graphs[stem] = read_graph(rebel, path)
        except Exception as exc:
            message = f"{os.path.basename(path)}: {type(exc).__name__}: {exc}"
            print(message, file=sys.stderr)
            _write(args.out, {"error": message})
            return EXIT_READ_FAILED
    _write(args.out, {"graphs": graphs})
    return 0


if __name__ == "__main__":
    sys.exit(main())

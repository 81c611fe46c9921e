"""KV block estimation per (node, chiplet), and the what-if questions built on it (DESIGN section 5)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from rbln_artifact_studio.core.errors import Fix, InsufficientMemoryError, StudioError
from rbln_artifact_studio.core.model.blocks import num_full_blocks, num_min_blocks
from rbln_artifact_studio.core.model.npu import AttnImpl, Npu, place_label
from rbln_artifact_studio.core.sizes import align_2mib, format_bytes

KV_KEY = "DramTensor"

Grid = list[list[int]]
"""Bytes per node (outer list) per chiplet (inner list), as the compiler API reports them."""


@dataclass(frozen=True)
class GraphAllocations:
    """What one compiled graph reports: allocations by key and KV tensor sizes, both per node and chiplet.

    Every value is a non-negative int, checked where the tables are read (the simulator's GraphHeader, the rebel
    helper's answer in backends/rebel_inspect.py), so estimation only checks their shapes.
    """

    alloc_per_chiplet_by_key: dict[str, Grid]
    dram_tensor_sizes: dict[str, Grid]


@dataclass(frozen=True)
class _Bucket:
    """One (node, chiplet): its non-KV bytes and the shape of its KV cache, reduced for fast evaluation."""

    non_kv: int
    fixed_kv: int
    per_block_counts: tuple[tuple[int, int], ...]  # (per-block bytes of one tensor, how many such tensors)

    def kv_bytes(self, num_blocks: int) -> int:
        # Alignment applies to each tensor after scaling, so KV bytes are not linear in the block count.
        return self.fixed_kv + sum(count * align_2mib(pb * num_blocks) for pb, count in self.per_block_counts)


def _grid_shape(grid: Grid) -> tuple[int, ...]:
    """How many chiplets each node of a table has."""
    return tuple(map(len, grid))


@dataclass(frozen=True)
class MemoryLayout:
    """Everything estimation needs: non-KV bytes per key and KV tensors per (node, chiplet)."""

    nodes: int
    chiplets: int
    non_kv_by_key: dict[str, Grid]
    kv_sizes: dict[str, Grid]
    resizable: frozenset[str]
    current_blocks: int

    @classmethod
    def from_graphs(
        cls,
        graphs: Mapping[str, GraphAllocations],
        resizable: frozenset[str],
        current_blocks: int,
        kv_graph: str = "prefill",
    ) -> MemoryLayout:
        """Sum non-KV allocations over all graphs; take KV tensor sizes from the prefill graph."""
        if not graphs:
            raise StudioError("No compiled graphs to estimate from.")
        if current_blocks <= 0:
            raise StudioError(f"The buffers' current block count must be positive, got {current_blocks}.")
        shape: tuple[int, ...] | None = None
        non_kv: dict[str, Grid] = {}
        for name, graph in graphs.items():
            for key, grid in graph.alloc_per_chiplet_by_key.items():
                grid_shape = _grid_shape(grid)
                shape = grid_shape if shape is None else shape  # an empty table's () is a shape too, not "unset"
                if grid_shape != shape:
                    raise StudioError(f"Graph {name} reports {key} on a different set of nodes and chiplets.")
                if key == KV_KEY:
                    continue
                acc = non_kv.setdefault(key, [[0] * len(row) for row in grid])
                for r, row in enumerate(grid):
                    for c, value in enumerate(row):
                        acc[r][c] += value
        source = graphs.get(kv_graph) or next(iter(graphs.values()))
        for tensor, grid in source.dram_tensor_sizes.items():
            grid_shape = _grid_shape(grid)
            shape = grid_shape if shape is None else shape
            if grid_shape != shape:
                raise StudioError(f"KV tensor {tensor} is reported on a different set of nodes and chiplets.")
        if shape is None or not shape or len(set(shape)) != 1 or shape[0] == 0:
            raise StudioError("Allocation tables must have the same number of chiplets on every node.")
        return cls(
            nodes=len(shape),
            chiplets=shape[0],
            non_kv_by_key=non_kv,
            kv_sizes=dict(source.dram_tensor_sizes),
            resizable=frozenset(resizable),
            current_blocks=current_blocks,
        )

    @property
    def positions(self) -> list[tuple[int, int]]:
        return [(n, c) for n in range(self.nodes) for c in range(self.chiplets)]

    def non_kv(self, node: int, chiplet: int) -> int:
        return sum(grid[node][chiplet] for grid in self.non_kv_by_key.values())

    @cached_property
    def _buckets(self) -> dict[tuple[int, int], _Bucket]:
        """Each (node, chiplet)'s bucket, from one pass over the KV tensors (a model has dozens, read per scan row)."""
        # Tensors of one model mostly have the same size on every chiplet: each distinct table is reduced once.
        tables: Counter[tuple[bool, tuple[tuple[int, ...], ...]]] = Counter(
            (name in self.resizable, tuple(map(tuple, grid))) for name, grid in self.kv_sizes.items()
        )
        buckets = {}
        for node, chiplet in self.positions:
            fixed = 0
            per_block: Counter[int] = Counter()
            for (resizable, table), count in tables.items():
                size = table[node][chiplet]
                if resizable:
                    per_block[size // self.current_blocks] += count
                else:
                    fixed += count * align_2mib(size)
            buckets[(node, chiplet)] = _Bucket(self.non_kv(node, chiplet), fixed, tuple(sorted(per_block.items())))
        return buckets

    @cached_property
    def _distinct(self) -> tuple[_Bucket, ...]:
        # Tensor-parallel shards are usually identical; evaluating each distinct one once keeps searches cheap.
        return tuple(set(self._buckets.values()))

    def kv_bytes(self, node: int, chiplet: int, num_blocks: int) -> int:
        """Aligned KV bytes of one (node, chiplet) at a block count."""
        return self._buckets[(node, chiplet)].kv_bytes(num_blocks)

    def required_per_chiplet(self, num_blocks: int) -> int:
        """The per-chiplet budget the tightest (node, chiplet) needs to hold num_blocks."""
        return max(b.non_kv + b.kv_bytes(num_blocks) for b in self._distinct)

    def fits(self, num_blocks: int, budget_per_chiplet: int) -> bool:
        return all(b.kv_bytes(num_blocks) <= budget_per_chiplet - b.non_kv for b in self._distinct)

    def weights_per_npu(self) -> int:
        """Weight bytes on the NPU that holds the most (all its chiplets)."""
        weights = [grid for key, grid in self.non_kv_by_key.items() if is_weight_key(key)]
        return max(sum(sum(grid[n]) for grid in weights) for n in range(self.nodes))

    def non_kv_per_npu(self) -> int:
        """Weights, workspace and every other non-KV allocation on the NPU that holds the most."""
        return max(sum(self.non_kv(n, c) for c in range(self.chiplets)) for n in range(self.nodes))

    def kv_bytes_per_npu(self, num_blocks: int) -> list[int]:
        """Aligned KV bytes on each NPU (node)."""
        return [sum(self.kv_bytes(n, c, num_blocks) for c in range(self.chiplets)) for n in range(self.nodes)]


def largest_fitting(fits: Callable[[int], bool], low: int, high: int, otherwise: int) -> int:
    """The largest count n in [low, high] with fits(n), for a fits that holds up to some count and not above it;
    `otherwise` when none does. The one binary search over block counts (compile, fit-to-budget, the planner)."""
    best = otherwise
    while low <= high:
        mid = (low + high) // 2
        if fits(mid):
            best, low = mid, mid + 1
        else:
            high = mid - 1
    return best


def estimate_blocks(layout: MemoryLayout, budget_per_chiplet: int, full_blocks: int) -> int:
    """The full pool if it fits, else the largest fitting count in [1, full - 1], else 1."""
    if full_blocks <= 1 or layout.fits(full_blocks, budget_per_chiplet):
        return max(full_blocks, 1)
    return largest_fitting(lambda n: layout.fits(n, budget_per_chiplet), 1, full_blocks - 1, otherwise=1)


def insufficient_memory_message(fit: int, floor: int, batch_size: int) -> str:
    return (
        f"Insufficient memory for the required KV cache: only {fit} blocks can be allocated, "
        f"but at least {floor} blocks are required. Consider reducing `max_seq_len` or `batch_size` "
        f"(currently {batch_size}) to lower the memory requirement."
    )


@dataclass(frozen=True)
class SequenceShape:
    """The parts of a compile shape that the floor and full pool depend on."""

    batch_size: int
    max_seq_len: int
    block_size: int
    attn: AttnImpl

    @property
    def full(self) -> int:
        return num_full_blocks(self.max_seq_len, self.block_size, self.batch_size)

    @property
    def floor(self) -> int:
        return num_min_blocks(self.max_seq_len, self.block_size, self.batch_size, self.attn)


def min_budget_per_npu(layout: MemoryLayout, npu: Npu, num_blocks: int) -> int:
    """The smallest byte budget per NPU under which num_blocks fit (may exceed the NPU's DRAM)."""
    return layout.required_per_chiplet(num_blocks) * npu.chiplets


def fraction_for_bytes(npu: Npu, budget_bytes: int) -> float:
    """The smallest fraction that resolves to at least budget_bytes on this NPU (rounded up to 4 digits)."""
    available = npu.available_per_npu
    fraction = math.ceil(budget_bytes / available * 10_000) / 10_000
    while int(available * fraction) < budget_bytes and fraction < 1:
        fraction = round(fraction + 0.0001, 4)
    return fraction


@dataclass(frozen=True)
class Explanation:
    """Why a budget fails, with the numbers that would make it pass (weights and workspace held fixed)."""

    fits: int
    floor: int
    full: int
    budget_for_floor: int | None
    fraction_for_floor: float | None
    max_seq_len_that_fits: int | None
    batch_size_that_fits: int | None

    def hint(self) -> str:
        options = []
        if self.max_seq_len_that_fits:
            options.append(f"max_seq_len {self.max_seq_len_that_fits:,}")
        if self.batch_size_that_fits:
            options.append(f"batch_size {self.batch_size_that_fits}")
        if self.budget_for_floor is not None:
            options.append(
                f"a memory_budget of at least {self.fraction_for_floor:g} ({format_bytes(self.budget_for_floor)})"
            )
        if not options:
            return "Nothing below the NPU's DRAM fits the floor; use more devices (num_devices)."
        return f"{self.fits} blocks fit, the floor is {self.floor} and the full pool {self.full}: " + (
            " or ".join(options) + " would fit."
        )

    def fixes(self) -> tuple[Fix, ...]:
        """The hint's options as compile changes (the GUI offers each as one click)."""
        fixes = []
        if self.max_seq_len_that_fits:
            fixes.append(
                Fix(f"max_seq_len {self.max_seq_len_that_fits:,}", (("max_seq_len", self.max_seq_len_that_fits),))
            )
        if self.batch_size_that_fits:
            fixes.append(Fix(f"batch_size {self.batch_size_that_fits}", (("batch_size", self.batch_size_that_fits),)))
        if self.fraction_for_floor is not None:
            fixes.append(
                Fix(f"memory_budget {self.fraction_for_floor:g}", (("memory_budget", f"{self.fraction_for_floor:g}"),))
            )
        return tuple(fixes)


def explain_shortfall(layout: MemoryLayout, npu: Npu, shape: SequenceShape, fits: int) -> Explanation:
    """Numbers for a failed budget: the budget that reaches the floor, and shapes whose floor fits."""
    budget = min_budget_per_npu(layout, npu, shape.floor)
    in_reach = budget <= npu.available_per_npu
    seq_len = None
    if shape.attn is AttnImpl.FLASH:
        # A shorter max_seq_len lowers the floor; keep at least two partitions.
        for blocks_per_seq in range(shape.max_seq_len // shape.block_size - 1, 1, -1):
            candidate = SequenceShape(shape.batch_size, blocks_per_seq * shape.block_size, shape.block_size, shape.attn)
            if candidate.floor <= fits:
                seq_len = candidate.max_seq_len
                break
    batch = None
    for b in range(shape.batch_size - 1, 0, -1):
        candidate = SequenceShape(b, shape.max_seq_len, shape.block_size, shape.attn)
        if candidate.floor <= fits:
            batch = b
            break
    return Explanation(
        fits=fits,
        floor=shape.floor,
        full=shape.full,
        budget_for_floor=budget if in_reach else None,
        fraction_for_floor=fraction_for_bytes(npu, budget) if in_reach else None,
        max_seq_len_that_fits=seq_len,
        batch_size_that_fits=batch,
    )


def _both(nbytes: int) -> str:
    """'15.27 GiB (16,391,340,032 B)'; small counts once: '1 B'."""
    return format_bytes(nbytes) if nbytes < 1024 else f"{format_bytes(nbytes)} ({nbytes:,} B)"


def weights_exceed_budget_message(
    layout: MemoryLayout, budget_per_npu: int, budget_per_chiplet: int, floor: int
) -> str | None:
    """What to say when the budget cannot even hold what is loaded before the KV cache (None when it can)."""
    if all(b.non_kv <= budget_per_chiplet for b in layout._distinct):
        return None
    weights, non_kv = layout.weights_per_npu(), layout.non_kv_per_npu()
    budget = f"the memory_budget of {_both(budget_per_npu)} per NPU"
    if weights > budget_per_npu:
        what = f"the weights alone, {_both(weights)} per NPU, exceed {budget}"
    else:
        what = f"the weights and workspace, {_both(non_kv)} per NPU ({format_bytes(weights)} weights), exceed {budget}"
    return (
        f"Insufficient memory for the required KV cache: {what}, so no KV cache block can be allocated; "
        f"at least {floor} blocks are required."
    )


def resolve_blocks(
    layout: MemoryLayout, npu: Npu, budget_per_chiplet: int, shape: SequenceShape, budget_per_npu: int | None = None
) -> int:
    """Estimate and enforce the floor; the error carries an explanation with numbers and the fixes it lists.

    budget_per_npu is the budget as given (before the split per chiplet), for the message.
    """
    fits = estimate_blocks(layout, budget_per_chiplet, shape.full)
    if fits < shape.floor:
        npu_budget = budget_per_npu if budget_per_npu is not None else budget_per_chiplet * npu.chiplets
        message = weights_exceed_budget_message(layout, npu_budget, budget_per_chiplet, shape.floor)
        # estimate_blocks answers 1 when nothing fits; with the weights over budget not even that one does.
        explanation = explain_shortfall(layout, npu, shape, 0 if message else fits)
        raise InsufficientMemoryError(
            message or insufficient_memory_message(fits, shape.floor, shape.batch_size),
            hint=explanation.hint(),
            fixes=explanation.fixes(),
        )
    return fits


@dataclass(frozen=True)
class ChipletUsage:
    """One chiplet's DRAM split: reserve | weights | workspace and other keys | KV | free | outside budget."""

    node: int
    chiplet: int
    reserve: int
    weights: int
    workspace: int
    kv: int
    budget: int
    available: int
    by_key: dict[str, int] = field(default_factory=dict)
    chiplets: int = 1  # per NPU: one (ATOM) is named by its NPU alone

    @property
    def used(self) -> int:
        return self.weights + self.workspace + self.kv

    @property
    def free_in_budget(self) -> int:
        """Bytes left inside the budget; negative when the chiplet is over budget."""
        return self.budget - self.used

    @property
    def outside_budget(self) -> int:
        return self.available - self.budget

    @property
    def total(self) -> int:
        return self.reserve + self.available

    @property
    def label(self) -> str:
        return place_label(self.node, self.chiplet, self.chiplets)


@dataclass(frozen=True)
class Breakdown:
    """Per-(node, chiplet) DRAM usage of an artifact at a block count under a budget."""

    num_blocks: int
    budget_per_npu: int
    usages: list[ChipletUsage]
    budget_set: bool = True  # False: no memory_budget (a compiled artifact records none), the whole NPU

    @property
    def tightest(self) -> ChipletUsage:
        return min(self.usages, key=lambda u: (u.free_in_budget, u.node, u.chiplet))

    @property
    def fits(self) -> bool:
        return all(u.free_in_budget >= 0 for u in self.usages)


def is_weight_key(key: str) -> bool:
    return key.lower().startswith("weight")


def breakdown(
    layout: MemoryLayout, npu: Npu, budget_per_npu: int, num_blocks: int, budget_set: bool = True
) -> Breakdown:
    """Split each (node, chiplet) of an artifact's DRAM for display and reports."""
    per_chiplet_budget = budget_per_npu // npu.chiplets
    usages = []
    for node, chiplet in layout.positions:
        by_key = {key: grid[node][chiplet] for key, grid in layout.non_kv_by_key.items()}
        weights = sum(v for k, v in by_key.items() if is_weight_key(k))
        usages.append(
            ChipletUsage(
                node=node,
                chiplet=chiplet,
                reserve=npu.family.reserve_per_chiplet,
                weights=weights,
                workspace=sum(by_key.values()) - weights,
                kv=layout.kv_bytes(node, chiplet, num_blocks),
                budget=per_chiplet_budget,
                available=npu.available_per_chiplet,
                by_key=by_key,
                chiplets=npu.chiplets,
            )
        )
    return Breakdown(num_blocks, budget_per_npu, usages, budget_set)


@dataclass(frozen=True)
class CurvePoint:
    """The smallest budget per NPU at which estimation resolves to `blocks`."""

    budget_bytes: int
    fraction: float
    blocks: int


def budget_curve(layout: MemoryLayout, npu: Npu, full_blocks: int, max_points: int = 20_000) -> list[CurvePoint]:
    """Breakpoints of resolved blocks against budget, from one block up to the full pool or the NPU's DRAM."""
    available = npu.available_per_npu
    step = max(1, full_blocks // max_points)
    counts = list(range(1, full_blocks + 1, step))
    if counts[-1:] != [full_blocks] and full_blocks >= 1:
        counts.append(full_blocks)
    points = []
    for n in counts:
        needed = min_budget_per_npu(layout, npu, n)
        if needed > available:
            break
        points.append(CurvePoint(needed, needed / available, n))
    return points


def rescale_allocations(
    graph: GraphAllocations, resizable: frozenset[str], current: int, target: int
) -> GraphAllocations:
    """KV buffers resized from current to target blocks (exactly per_block x target); DramTensor follows."""
    sizes = {
        name: [[(v // current) * target if name in resizable else v for v in row] for row in grid]
        for name, grid in graph.dram_tensor_sizes.items()
    }
    alloc = dict(graph.alloc_per_chiplet_by_key)
    if KV_KEY in alloc and sizes:
        grids = list(sizes.values())
        alloc[KV_KEY] = [
            [sum(align_2mib(g[n][c]) for g in grids) for c in range(len(grids[0][n]))] for n in range(len(grids[0]))
        ]
    return GraphAllocations(alloc, sizes)

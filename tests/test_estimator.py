"""Estimation per (node, chiplet): alignment, fast path, binary search, scaling, what-if questions."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from rbln_artifact_studio.core.estimation.estimator import (
    KV_KEY,
    GraphAllocations,
    MemoryLayout,
    breakdown,
    budget_curve,
    estimate_blocks,
    min_budget_per_npu,
    rescale_allocations,
)
from rbln_artifact_studio.core.model.npu import get_npu
from rbln_artifact_studio.core.sizes import MIB

CR13 = get_npu("RBLN-CR13")


def layout(non_kv: list[list[int]], per_block: list[list[int]], tensors: int = 2, current: int = 1, fixed: int = 0):
    graphs = {
        "prefill": GraphAllocations(
            {"Weight": non_kv, KV_KEY: [[999 * MIB] * len(r) for r in non_kv]},
            {f"t{i}": [[v * current for v in row] for row in per_block] for i in range(tensors)}
            | ({"sliding": [[fixed] * len(r) for r in non_kv]} if fixed else {}),
        ),
        "decoder_batch_1": GraphAllocations({"Intermediate": [[MIB] * len(r) for r in non_kv]}, {}),
    }
    resizable = frozenset(f"t{i}" for i in range(tensors))
    return MemoryLayout.from_graphs(graphs, resizable, current)


def test_dram_tensor_key_is_not_counted_as_non_kv() -> None:
    lay = layout([[100 * MIB]], [[3 * MIB]])
    assert lay.non_kv(0, 0) == 101 * MIB


def test_alignment_is_per_tensor_after_scaling() -> None:
    lay = layout([[0]], [[3 * MIB]], tensors=2)
    assert lay.kv_bytes(0, 0, 1) == 2 * 4 * MIB  # 3 MiB -> 4 MiB per tensor
    assert lay.kv_bytes(0, 0, 2) == 2 * 6 * MIB  # 6 MiB is aligned already: not 2 x 4


def test_fixed_tensors_do_not_scale() -> None:
    lay = layout([[0]], [[2 * MIB]], tensors=1, fixed=3 * MIB)
    assert lay.kv_bytes(0, 0, 1) == 2 * MIB + 4 * MIB
    assert lay.kv_bytes(0, 0, 10) == 20 * MIB + 4 * MIB


def test_full_pool_fast_path_and_binary_search() -> None:
    lay = layout([[10 * MIB]], [[2 * MIB]], tensors=1)  # non-KV: 10 MiB weights + 1 MiB decoder workspace
    assert estimate_blocks(lay, 11 * MIB + 80 * MIB, 40) == 40
    assert estimate_blocks(lay, 11 * MIB + 79 * MIB, 40) == 39  # 39 blocks x 2 MiB = 78 MiB fits
    assert estimate_blocks(lay, 11 * MIB + 21 * MIB, 40) == 10
    assert estimate_blocks(lay, 0, 40) == 1  # nothing fits: 1


def test_tightest_chiplet_decides() -> None:
    lay = layout([[10 * MIB, 30 * MIB]], [[2 * MIB, 2 * MIB]], tensors=1)
    assert estimate_blocks(lay, 51 * MIB, 100) == 10  # (51 - 30 - 1) / 2


def test_current_count_scaling_matches_a_fresh_layout() -> None:
    fresh = layout([[10 * MIB]], [[3 * MIB]], current=1)
    resized = layout([[10 * MIB]], [[3 * MIB]], current=7)
    for n in (1, 2, 5, 13):
        assert fresh.kv_bytes(0, 0, n) == resized.kv_bytes(0, 0, n)
    assert estimate_blocks(fresh, 200 * MIB, 100) == estimate_blocks(resized, 200 * MIB, 100)


def test_rescale_is_exact_and_updates_dram_tensor() -> None:
    graph = GraphAllocations({KV_KEY: [[8 * MIB]]}, {"t0": [[3 * MIB * 4]], "fixed": [[MIB]]})
    out = rescale_allocations(graph, frozenset({"t0"}), 4, 7)
    assert out.dram_tensor_sizes == {"t0": [[3 * MIB * 7]], "fixed": [[MIB]]}
    assert out.alloc_per_chiplet_by_key[KV_KEY] == [[22 * MIB + 2 * MIB]]


def test_min_budget_is_the_smallest_that_fits() -> None:
    lay = layout([[10 * MIB] * 4], [[3 * MIB] * 4], tensors=3)
    for n in (1, 5, 9):
        need = min_budget_per_npu(lay, CR13, n)
        assert lay.fits(n, need // 4) and estimate_blocks(lay, need // 4, 100) >= n
        assert not lay.fits(n, (need - 4) // 4)


def test_breakdown_adds_up_and_names_the_tightest() -> None:
    lay = layout([[10 * MIB, 30 * MIB, 10 * MIB, 10 * MIB]], [[2 * MIB] * 4], tensors=1)
    b = breakdown(lay, CR13, 4 * 1024 * MIB, 5)
    assert b.tightest.chiplet == 1
    for u in b.usages:
        assert u.reserve + u.weights + u.workspace + u.kv + u.free_in_budget + u.outside_budget == u.total
        assert u.total == 36 * 1024 * MIB
    assert b.fits


def test_curve_is_monotonic_and_ends_at_the_full_pool() -> None:
    lay = layout([[1024 * MIB] * 4], [[288 * MIB // 72] * 4], tensors=72)
    points = budget_curve(lay, CR13, 40)
    assert [p.blocks for p in points] == list(range(1, 41))
    assert all(a.budget_bytes < b.budget_bytes for a, b in itertools.pairwise(points))


@settings(max_examples=150, deadline=None)
@given(
    non_kv=st.lists(st.integers(0, 4096), min_size=1, max_size=4),
    per_block=st.integers(1, 64),
    tensors=st.integers(1, 8),
    current=st.integers(1, 50),
    full=st.integers(1, 300),
    budgets=st.lists(st.integers(0, 1 << 14), min_size=2, max_size=2),
)
def test_estimation_is_monotonic_in_the_budget(non_kv, per_block, tensors, current, full, budgets) -> None:
    lay = layout([[v * MIB // 16 for v in non_kv]], [[per_block * MIB // 3] * len(non_kv)], tensors, current)
    low, high = sorted(b * MIB // 4 for b in budgets)
    n_low, n_high = estimate_blocks(lay, low, full), estimate_blocks(lay, high, full)
    assert 1 <= n_low <= n_high <= full
    if n_high < full:
        assert not lay.fits(n_high + 1, high)
    assert lay.fits(n_high, high) or n_high == 1


def test_an_empty_allocation_table_is_refused_not_indexed() -> None:
    """A table with no nodes at all ([]) has a shape of its own: beside one-node tables it is a mismatch the reader
    reports (the artifact is invalid), where it was taken for "no shape yet" and estimation then indexed into it
    (an IndexError through inspect and scan; found by tests/crash/test_fuzz_container.py)."""
    import pytest

    from rbln_artifact_studio.core.errors import StudioError

    graphs = {"prefill": GraphAllocations({"Kernel": [], "Weight": [[MIB]]}, {"t0": [[MIB]]})}
    with pytest.raises(StudioError, match="different set of nodes"):
        MemoryLayout.from_graphs(graphs, frozenset({"t0"}), 1)

"""The Fleet Console's rows as the window keeps them (columns of plain tuples), their sort in short steps, how a
worker's arrangement relates them to the rows shown before, and each NPU's last hour as snapshots made one from
another (core/display/fleet_console.py)."""

from __future__ import annotations

import gc
import itertools
import random
import threading
import weakref

import pytest

from rbln_artifact_studio.core.display.fleet_console import (
    LET_GO_SLICE,
    MAX_POINTS,
    NODE_ROW,
    SORT_SLICE,
    Column,
    Columns,
    ConsoleRow,
    HistoryKeeper,
    MemoryHistory,
    Npu,
    Query,
    Rows,
    arrange,
    arrangement,
    full_collections_held,
    let_go_columns,
    node_row,
    npu_row,
    sorted_in_steps,
)

GIB = 1 << 30
HOUR = 3600.0


def _rows(nodes: int, used: int = 10, source: str = "http://prom:9090") -> list[ConsoleRow]:
    rows = [
        npu_row(source, f"node-{n:03d}", Npu(i, f"rbln{i}", "RBLN-CR13", (used + (n * 7 + i) % 5) * GIB, 140 * GIB))
        for n in range(nodes)
        for i in range(2)
    ]
    rows.append(node_row(source, "node-down", "did not answer"))
    return rows


def test_rows_give_back_every_row_as_it_was_made_and_leave_the_cycle_collector_nothing_to_walk() -> None:
    made = _rows(20)
    rows = Rows(made)
    assert len(rows) == len(made) and list(rows) == made and rows[3] == made[3]
    assert rows.free(0) == made[0].free and rows.free(len(made) - 1) is None  # the node's own row: unknown
    assert len(Rows()) == 0 and list(Rows()) == []
    for _ in range(3):  # a pass leaves a plain tuple of strings, numbers and such tuples out of the next ones
        gc.collect()
    assert not any(gc.is_tracked(column) for column in rows.columns())
    assert not gc.is_tracked(rows.texts[0]) and not gc.is_tracked(rows.keys[0])


@pytest.mark.parametrize("size", [0, 1, SORT_SLICE - 1, SORT_SLICE, 3 * SORT_SLICE + 17])
@pytest.mark.parametrize("reverse", [False, True])
def test_the_sort_in_steps_gives_sorted_s_order_ties_included(size: int, reverse: bool) -> None:
    keys = [random.randrange(50) for _ in range(size)]  # many ties: the order among them must be sorted()'s too
    items = list(range(size))
    random.shuffle(items)
    assert sorted_in_steps(items, keys.__getitem__, reverse) == sorted(items, key=keys.__getitem__, reverse=reverse)


@pytest.mark.parametrize("column", [Column.NODE, Column.FREE, Column.DRIFT])
@pytest.mark.parametrize("descending", [False, True])
def test_arrange_sorts_on_the_column_with_unknown_values_last_and_filters(column: Column, descending: bool) -> None:
    made = _rows(30)
    random.shuffle(made)
    rows = Rows(made)
    shown = arrange(rows, Query(), column, descending)
    known = sorted(
        (i for i, r in enumerate(made) if r.keys[column] is not None),
        key=lambda i: made[i].keys[column],  # type: ignore[arg-type,return-value]  # one column's keys share a type
        reverse=descending,
    )
    unknown = sorted((i for i, r in enumerate(made) if r.keys[column] is None), key=lambda i: made[i].keys[Column.NODE])  # type: ignore[arg-type,return-value]  # (str, int)
    assert shown == known + unknown
    little = arrange(rows, Query.parse("node-00 free>127GiB"), column, descending)
    assert little and all(made[i].node.startswith("node-00") and (made[i].free or 0) > 127 * GIB for i in little)


def test_an_arrangement_says_whether_the_rows_stayed_moved_or_changed() -> None:
    before = Rows(_rows(10))
    shown = arrange(before, Query(), Column.NODE, False)
    again = Rows(_rows(10, used=20))  # the same NPUs, other figures: the same place each
    same = arrangement(again, Query(), Column.NODE, False, before, shown)
    assert same.same and not same.reordered and same.moved == list(range(len(shown)))
    flipped = arrangement(again, Query(), Column.NODE, True, before, shown)  # sorted the other way
    assert flipped.reordered and not flipped.same
    assert flipped.moved is not None and [again.node[flipped.shown[m]] for m in flipped.moved] == [
        before.node[i] for i in shown
    ]  # each row shown before, found where it shows now
    fewer = Rows([r for r in _rows(10) if r.node != "node-003"])  # a node gone
    changed = arrangement(fewer, Query(), Column.NODE, False, before, shown)
    assert not changed.same and not changed.reordered and changed.moved is not None
    gone = [n for n, at in enumerate(changed.moved) if at < 0]
    assert [before.node[shown[n]] for n in gone] == ["node-003", "node-003"]
    twice = Rows([*_rows(2), *_rows(2)])  # two rows that cannot be told apart: no selection can follow them
    assert arrangement(twice, Query(), Column.NODE, False, before, shown).moved is None


def test_the_history_samples_each_npu_within_the_hour_and_a_range_query_replaces_it() -> None:
    rows = _rows(2)
    keys = [r.key for r in rows]
    first = MemoryHistory()
    history = first
    for n in range(MAX_POINTS + 5):
        history = history.sampled(rows, keys, at=1000.0 + n)
    npu = rows[0].key
    assert len(history.points(npu)) == MAX_POINTS and history.points(npu)[-1] == (1000.0 + MAX_POINTS + 4, rows[0].used)
    assert history.points(rows[-1].key) == ()  # a node's own row has no memory to sample
    assert history.sampled(rows, keys, at=1000.0).points(npu) == history.points(npu)  # not older than the last one
    later = history.sampled(rows, keys, at=1000.0 + MAX_POINTS + 5 + HOUR)
    assert len(later.points(npu)) == 1  # the older points went out of the hour
    assert first.points(npu) == () and history.serial == MAX_POINTS + 5  # a snapshot never changes once made
    forgot = history.sampled(rows[2:], keys[2:], at=5000.0)
    assert forgot.points(npu) == () and forgot.points(rows[2].key)
    series = {npu: [(10.0, 3), (5.0, 1), (9.0 - HOUR, 9), (8.0, 2)]}
    replaced = history.with_series(series)
    assert replaced.points(npu) == ((5.0, 1), (8.0, 2), (10.0, 3)) and replaced.peak(npu) == 3  # sorted, the hour
    assert replaced.points(rows[1].key) == history.points(rows[1].key)  # the others as they were
    assert history.with_series({npu: []}).points(npu) == ()


def test_the_keeper_makes_each_snapshot_from_the_newest_whatever_the_thread() -> None:
    rows = _rows(3)
    keys = [r.key for r in rows]
    keeper = HistoryKeeper()
    made: list[MemoryHistory] = []

    def sample(at: float) -> None:
        made.append(keeper.next(lambda h: h.sampled(rows, keys, at=at)))

    threads = [threading.Thread(target=sample, args=(100.0 + n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    by_serial = sorted(made, key=lambda h: h.serial)
    assert [h.serial for h in by_serial] == list(range(1, 9))  # one at a time, each from the newest
    for before, after in itertools.pairwise(by_serial):  # nothing a sample added is lost after
        assert after.points(rows[0].key)[: len(before.points(rows[0].key))] == before.points(rows[0].key)
    newest = by_serial[-1]
    series = keeper.next(lambda h: h.with_series({rows[0].key: [(150.0, 1)]}))
    assert series.serial == 9 and series.points(rows[0].key) == ((150.0, 1),)
    assert series.points(rows[1].key) == newest.points(rows[1].key)  # the samples made before are kept


def test_a_node_row_sorts_before_its_node_s_npus() -> None:
    rows = [npu_row("s", "a", Npu(0, "rbln0", "RBLN-CR13", GIB, 16 * GIB)), node_row("s", "a", "refused")]
    assert rows[1].npu == NODE_ROW and arrange(Rows(rows), Query()) == [1, 0]


def test_workers_hold_off_full_collections_together_and_the_last_one_gives_them_back() -> None:
    own = gc.get_threshold()
    first, second = full_collections_held(), full_collections_held()
    first.__enter__()
    second.__enter__()  # a second worker reading meanwhile
    young, middle, oldest = gc.get_threshold()
    assert (young, middle) == own[:2] and oldest > 1_000_000  # the young generations still collected
    first.__exit__(None, None, None)
    assert gc.get_threshold()[2] > 1_000_000  # the other one still reads
    second.__exit__(None, None, None)
    assert gc.get_threshold() == own
    with pytest.raises(RuntimeError), full_collections_held():
        raise RuntimeError("a read that failed")
    assert gc.get_threshold() == own


class _Held:
    """Something a column holds, to see it let go of."""


def test_what_showed_before_is_let_go_of_a_slice_at_a_time_and_all_of_it() -> None:
    held = [_Held() for _ in range(3 * LET_GO_SLICE + 5)]
    seen = [weakref.ref(h) for h in held]
    spent: list[Columns] = [[tuple(held), tuple(held[:7])], Rows(_rows(3)).columns()]
    del held
    let_go_columns(spent)
    assert spent == [] and all(ref() is None for ref in seen)

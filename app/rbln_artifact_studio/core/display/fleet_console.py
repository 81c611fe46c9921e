"""The fleet console's rows: one per NPU of every source (an SSH server, a group, a Prometheus URL), or one per node
that could not be read, with their texts and sort keys prepared; their filter and sort, and each NPU's last hour.

Qt-free: the console filters and sorts in a worker (`arrangement`), so 40,000 rows never hold the window up. What
the window keeps is plain tuples of strings and numbers (`Rows`, `MemoryHistory`): the cycle collector leaves them
out of its passes, which otherwise walk every row again and again, holding the interpreter (the window's too).
"""

from __future__ import annotations

import contextlib
import gc
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, NamedTuple

from rbln_artifact_studio.core.shown import control_escaped, line_shown
from rbln_artifact_studio.core.sizes import format_bytes, parse_bytes

HOUR = 3600.0
MAX_POINTS = 240  # per NPU: an hour at a 15 s period; older points drop out first
NODE_ROW = -1  # the npu of a node's own row: the node could not be read, its reason is the row
NpuKey = tuple[str, str]  # (node, device): one NPU across readings


class Column(IntEnum):
    """The console's columns, in the order shown: the node, then what decides a placement (free memory) first."""

    NODE = 0
    NPU = 1
    PRODUCT = 2
    FREE = 3
    MEMORY = 4  # a bar: used of total
    HISTORY = 5  # the last hour's used memory, a small chart
    UTIL = 6
    TEMPERATURE = 7
    USED = 8
    TOTAL = 9
    HOLDERS = 10  # the pods or processes holding the NPU; a node's error
    ARTIFACT = 11
    DRIFT = 12
    SOURCE = 13


COLUMNS = tuple(Column)  # iterating the enum itself is slow, 40,000 rows' worth: twice a row
HEADERS = {
    Column.NODE: "Node",
    Column.NPU: "NPU",
    Column.PRODUCT: "Product",
    Column.FREE: "Free",
    Column.MEMORY: "Memory",
    Column.HISTORY: "Last hour",
    Column.UTIL: "Util",
    Column.TEMPERATURE: "Temp",
    Column.USED: "Used",
    Column.TOTAL: "Total",
    Column.HOLDERS: "Pod / process",
    Column.ARTIFACT: "Artifact",
    Column.DRIFT: "Drift",
    Column.SOURCE: "Source",
}
NUMERIC = frozenset({Column.FREE, Column.MEMORY, Column.UTIL, Column.TEMPERATURE, Column.USED, Column.TOTAL})


class ConsoleRow(NamedTuple):
    """One NPU (or one node that could not be read) with its cell texts, sort keys and search text worked out once."""

    source: str  # what the user added: npu1, @rack1, http://prometheus:9090
    node: str
    npu: int  # NODE_ROW for a node's own row
    used: int | None
    total: int | None
    error: str
    flagged: bool  # a context past its drift threshold
    texts: tuple[str, ...]
    keys: tuple[object, ...]  # None: unknown, sorted last in either direction
    search: str

    @property
    def free(self) -> int | None:
        return None if self.used is None or self.total is None else self.total - self.used

    @property
    def key(self) -> NpuKey:
        """The NPU across refreshes (its history's key): the node and the device (rbln0) as every source names it."""
        return (self.node, self.texts[Column.NPU])


def _number(text: str) -> float | None:
    """'98.7', '38C', '43.9 %' -> the number; None for an empty or unreadable cell."""
    found = re.search(r"-?\d+(?:\.\d+)?", text or "")
    return float(found.group()) if found else None


@dataclass(frozen=True)
class Npu:
    """What a source says of one NPU, before it becomes a row."""

    index: int
    device: str
    product: str
    used: int
    total: int
    util: float | str | None = None
    temperature: float | str | None = None
    holders: tuple[str, ...] = ()  # pods (namespace/pod) or processes (pid 4242 vllm)
    artifact: str = ""
    drift: float | None = None  # percent of the context furthest from its prediction
    drift_text: str = ""
    flagged: bool = False


def npu_row(source: str, node: str, npu: Npu) -> ConsoleRow:
    util = npu.util if isinstance(npu.util, float | int) or npu.util is None else _number(npu.util)
    temp = (
        npu.temperature
        if isinstance(npu.temperature, float | int) or npu.temperature is None
        else _number(npu.temperature)
    )
    free = npu.total - npu.used
    used, total = format_bytes(npu.used), format_bytes(npu.total)  # each once: 40,000 rows' worth of formatting
    texts = {
        Column.NODE: node,
        Column.NPU: npu.device or f"NPU {npu.index}",
        Column.PRODUCT: npu.product,
        Column.FREE: format_bytes(free),
        Column.MEMORY: f"{used} of {total}",
        Column.HISTORY: "",
        Column.UTIL: "" if util is None else f"{util:.0f}%",
        Column.TEMPERATURE: "" if temp is None else f"{temp:.0f} °C",
        Column.USED: used,
        Column.TOTAL: total,
        Column.HOLDERS: ", ".join(npu.holders),
        Column.ARTIFACT: npu.artifact,
        Column.DRIFT: npu.drift_text,
        Column.SOURCE: source,
    }
    keys = {
        Column.NODE: (node.casefold(), npu.index),
        Column.NPU: (npu.index, node.casefold()),
        Column.PRODUCT: npu.product.casefold(),
        Column.FREE: free,
        Column.MEMORY: npu.used / npu.total if npu.total else 0.0,
        Column.HISTORY: npu.used,
        Column.UTIL: util,
        Column.TEMPERATURE: temp,
        Column.USED: npu.used,
        Column.TOTAL: npu.total,
        Column.HOLDERS: ", ".join(npu.holders).casefold() or None,
        Column.ARTIFACT: npu.artifact.casefold() or None,
        Column.DRIFT: npu.drift,
        Column.SOURCE: source.casefold(),
    }
    search = " ".join((source, node, npu.device, npu.product, *npu.holders, npu.artifact)).casefold()
    return ConsoleRow(
        source,
        node,
        npu.index,
        npu.used,
        npu.total,
        "",
        npu.flagged,
        tuple(control_escaped(texts[c]) for c in COLUMNS),  # labels from outside: a CR or newline drawn as \r, \n
        tuple(keys[c] for c in COLUMNS),
        search,
    )


def node_row(source: str, node: str, error: str) -> ConsoleRow:
    """A node that could not be read: its reason in the Pod / process column, nothing else known."""
    texts = dict.fromkeys(Column, "")
    texts.update({Column.NODE: control_escaped(node), Column.HOLDERS: line_shown(error), Column.SOURCE: source})
    keys: dict[Column, object] = dict.fromkeys(Column)
    keys.update(
        {
            Column.NODE: (node.casefold(), NODE_ROW),
            Column.NPU: (NODE_ROW, node.casefold()),
            Column.HOLDERS: error.casefold(),
            Column.SOURCE: source.casefold(),
        }
    )
    search = " ".join((source, node, error)).casefold()
    return ConsoleRow(
        source,
        node,
        NODE_ROW,
        None,
        None,
        error,
        False,
        tuple(texts[c] for c in COLUMNS),
        tuple(keys[c] for c in COLUMNS),
        search,
    )


# ---- the workers' hold on the cycle collector ------------------------------------------------------------------

_held_lock = threading.Lock()
_held = 0  # jobs holding off the full collections
_thresholds = gc.get_threshold()  # the collector's own, while none does


@contextlib.contextmanager
def full_collections_held() -> Iterator[None]:
    """No full pass of the cycle collector while a console's worker reads the fleet or arranges its rows. Reading
    40,000 NPUs builds ~100,000 objects that live until their rows are made, and a full pass walks every one (20-120
    ms, in which no other thread runs Python: the GUI thread neither). The young generations are still collected:
    a cycle made meanwhile goes as ever, and the rows' plain tuples are left out of the passes as they are made.
    The CLI pauses the collector altogether while it reads (cli/commands/fleet.py). Workers holding it at once share the
    hold: the last one ends it."""
    global _held, _thresholds
    with _held_lock:
        if not _held:
            _thresholds = gc.get_threshold()
            gc.set_threshold(_thresholds[0], _thresholds[1], 1 << 30)  # the oldest generation: not until released
        _held += 1
    try:
        yield
    finally:
        with _held_lock:
            _held -= 1
            if not _held:
                gc.set_threshold(*_thresholds)


# ---- the filter: words anywhere, and free memory compared -----------------------------------------------------

_FREE = re.compile(r"^free\s*(?P<op><=|>=|<|>|=)\s*(?P<size>\d+(?:\.\d+)?\s*[a-z]*)$", re.IGNORECASE)
_OPS: dict[str, Callable[[int, int], bool]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "=": lambda a, b: a == b,
}


@dataclass(frozen=True)
class Query:
    """What the filter field says: words each found in the row (node, product, pod, device, source, artifact, an
    error), and comparisons of free memory (`free<8GiB`, `free>=20G`; a bare number is GiB)."""

    words: tuple[str, ...] = ()
    free: tuple[tuple[str, int], ...] = ()

    @classmethod
    def parse(cls, text: str) -> Query:
        words: list[str] = []
        free: list[tuple[str, int]] = []
        # "free < 8 GiB" typed with spaces is one comparison
        text = re.sub(r"(?i)\bfree\s*(<=|>=|<|>|=)\s*(\d+(?:\.\d+)?)\s*([a-z]*)", r"free\1\2\3", text)
        for token in text.split():
            found = _FREE.match(token)
            if found:
                size = found["size"].strip()
                try:
                    nbytes = parse_bytes(size if not size.replace(".", "").isdigit() else f"{size} GiB")
                except ValueError:
                    words.append(token.casefold())
                    continue
                free.append((found["op"], nbytes))
            else:
                words.append(token.casefold())
        return cls(tuple(words), tuple(free))

    def keeps(self, search: str, free: int | None) -> bool:
        """Whether a row with this search text and free memory (None: unknown) is shown."""
        if any(w not in search for w in self.words):
            return False
        if self.free:
            return free is not None and all(_OPS[op](free, n) for op, n in self.free)
        return True


# ---- the rows as the window keeps them ----------------------------------------------------------------------------


LET_GO_SLICE = 512  # rows (or node readings) made into columns, or freed, at a time


class Rows:
    """Rows kept as columns: a plain tuple per field of ConsoleRow. The cycle collector leaves plain tuples of
    strings and numbers out of its passes, where 40,000 ConsoleRows (a tuple subclass: never left out) took part in
    every one. `rows[i]` makes row i again."""

    __slots__ = ("__weakref__", *ConsoleRow._fields)
    source: tuple[str, ...]
    node: tuple[str, ...]
    npu: tuple[int, ...]
    used: tuple[int | None, ...]
    total: tuple[int | None, ...]
    error: tuple[str, ...]
    flagged: tuple[bool, ...]
    texts: tuple[tuple[str, ...], ...]
    keys: tuple[tuple[object, ...], ...]
    search: tuple[str, ...]

    def __init__(self, rows: Iterable[ConsoleRow] = ()) -> None:
        made = rows if isinstance(rows, list) else list(rows)
        columns: list[list[Any]] = [[] for _ in ConsoleRow._fields]
        for start in range(0, len(made), LET_GO_SLICE):  # in steps: one zip of 40,000 rows holds the interpreter
            for column, values in zip(columns, zip(*made[start : start + LET_GO_SLICE], strict=True), strict=True):
                column.extend(values)
        for name, column in zip(ConsoleRow._fields, columns, strict=True):
            setattr(self, name, tuple(column))

    def __len__(self) -> int:
        return len(self.node)

    def __getitem__(self, i: int) -> ConsoleRow:
        return ConsoleRow._make(getattr(self, name)[i] for name in ConsoleRow._fields)

    def __iter__(self) -> Iterator[ConsoleRow]:
        return (self[i] for i in range(len(self)))

    def columns(self) -> Columns:
        return [getattr(self, name) for name in ConsoleRow._fields]

    def free(self, i: int) -> int | None:
        used, total = self.used[i], self.total[i]
        return None if used is None or total is None else total - used

    def identity(self, i: int) -> tuple[str, str, int, str]:
        """Row i across refreshes and filters (a selection follows it): its sources, node and NPU."""
        return (self.source[i], self.node[i], self.npu[i], self.texts[i][Column.NPU])


SORT_SLICE = 4096  # keys sorted at a time


def let_go(items: list[Any]) -> None:
    """Empty items a slice at a time (in a worker): freeing 40,000 rows at once holds the interpreter, so every
    other thread too, for tens of ms; between two slices another thread takes its turn."""
    while items:
        del items[-LET_GO_SLICE:]


Columns = list[tuple[object, ...]]  # what a Rows or a MemoryHistory holds (their columns()), to let go of


def let_go_columns(spent: list[Columns]) -> None:
    """Empty spent (what showed before), a slice of a column at a time, as let_go."""
    while spent:
        columns = spent.pop()
        while columns:
            items = list(columns.pop())  # the column goes; what it held stays in items, freed a slice at a time
            let_go(items)


def sorted_in_steps(items: list[int], key: Callable[[int], Any], reverse: bool = False) -> list[int]:
    """sorted(items, key=key, reverse=reverse), in short steps: slices sorted, then neighbours merged two by two.
    One sort of 40,000 keys compares them in C for tens of ms without letting another thread take the interpreter
    (the GUI thread waits that long); each step here compares a few thousand. The same order: merging stably
    sorted neighbours stably is a stable sort."""
    runs = [sorted(items[i : i + SORT_SLICE], key=key, reverse=reverse) for i in range(0, len(items), SORT_SLICE)]
    while len(runs) > 1:
        pairs = [runs[i : i + 2] for i in range(0, len(runs), 2)]
        runs = [sorted(pair[0] + pair[1], key=key, reverse=reverse) if len(pair) == 2 else pair[0] for pair in pairs]
    return runs[0] if runs else []


def arrange(
    rows: Rows,
    query: Query,
    column: Column = Column.NODE,
    descending: bool = False,
    checkpoint: Callable[[], None] | None = None,
) -> list[int]:
    """The indices of the rows the query keeps, sorted on column (unknown values last either way).

    checkpoint is called every few thousand rows (a worker's cancel point)."""
    kept: list[int] = []
    unknown: list[int] = []
    keys = rows.keys
    for i, search in enumerate(rows.search):
        if checkpoint is not None and not i % 2048:
            checkpoint()
        if query.keeps(search, rows.free(i)):
            (unknown if keys[i][column] is None else kept).append(i)
    return sorted_in_steps(kept, lambda i: keys[i][column], descending) + sorted_in_steps(
        unknown, lambda i: keys[i][Column.NODE]
    )


@dataclass(frozen=True)
class Arrangement:
    """What shows, worked out in a worker for the model to take as it is: the rows in the order shown, and where
    each row shown before went (so the view updates in place and a selection follows its rows)."""

    shown: list[int]  # indices into the rows, in the order shown
    moved: list[int] | None  # per row shown before: its place now, -1 if gone; None: two rows share an identity
    same: bool = False  # the same rows in the same places: only their figures changed
    reordered: bool = False  # the same rows in another order


def arrangement(
    rows: Rows,
    query: Query,
    column: Column,
    descending: bool,
    before: Rows,
    before_shown: Sequence[int],
    checkpoint: Callable[[], None] | None = None,
) -> Arrangement:
    """`arrange`'s answer, and where each row shown before (before_shown, indices into before) shows now."""
    shown = arrange(rows, query, column, descending, checkpoint)
    place: dict[tuple[str, str, int, str], int] = {}
    for n, i in enumerate(shown):
        place.setdefault(rows.identity(i), n)
    if len(place) < len(shown):
        return Arrangement(shown, None)
    moved = [place.get(before.identity(i), -1) for i in before_shown]
    if len(moved) != len(shown) or len(set(moved)) != len(moved) or -1 in moved:
        return Arrangement(shown, moved)
    same = all(n == at for n, at in enumerate(moved))
    return Arrangement(shown, moved, same, not same)


# ---- each NPU's last hour ---------------------------------------------------------------------------------------


Point = tuple[float, int]  # (unix time, bytes used)
Series = tuple[Point, ...]  # oldest first


class MemoryHistory:
    """Each NPU's used memory over the last hour: sampled at each reading of an SSH server while the console is
    open, or a Prometheus range query's series.

    A snapshot, never changed once made: a worker makes the next one from the newest (`HistoryKeeper`), the GUI
    thread only swaps it in, so it does no work per NPU and the painter reads it without a lock. Its series are plain
    tuples of numbers, which the cycle collector leaves out of its passes."""

    def __init__(self, series: dict[NpuKey, Series] | None = None, window: float = HOUR, serial: int = 0) -> None:
        self.window = window
        self.serial = serial  # how many snapshots came before: a higher one was made from this one or a later one
        self._series: dict[NpuKey, Series] = {} if series is None else series

    def points(self, key: NpuKey) -> Series:
        return self._series.get(key, ())

    def peak(self, key: NpuKey) -> int | None:
        points = self._series.get(key)
        return max(u for _, u in points) if points else None

    def sampled(self, rows: Iterable[ConsoleRow], keep: Iterable[NpuKey], at: float | None = None) -> MemoryHistory:
        """The next snapshot: one sample of each NPU row's used memory (a node's own row has none), and
        only the NPUs of keep (those read now: a removed source's are dropped)."""
        now = time.time() if at is None else at
        kept = set(keep)
        series = {key: points for key, points in self._series.items() if key in kept}
        for row in rows:
            if row.used is None:
                continue
            key = row.key
            points = series.get(key, ())
            if points and points[-1][0] >= now:
                continue
            series[key] = self._trimmed((*points[1 - MAX_POINTS :], (now, row.used)), now)
        return MemoryHistory(series, self.window, self.serial + 1)

    def with_series(self, series: Mapping[NpuKey, Iterable[Point]]) -> MemoryHistory:
        """The next snapshot: these whole series (a range query's) in place of what was sampled."""
        out = dict(self._series)
        for key, points in series.items():
            ordered = tuple(sorted(points)[-MAX_POINTS:])
            out[key] = self._trimmed(ordered, ordered[-1][0]) if ordered else ordered
        return MemoryHistory(out, self.window, self.serial + 1)

    def columns(self) -> Columns:
        """What it holds, as tuples (for a worker to let go of a slice at a time)."""
        return [tuple(self._series), tuple(self._series.values())]

    def _trimmed(self, points: Series, now: float) -> Series:
        """Without the points older than the window."""
        first = 0
        while first < len(points) and points[first][0] < now - self.window:
            first += 1
        return points[first:]


class HistoryKeeper:
    """Makes each next MemoryHistory from the newest one, one at a time, in the workers: a reading's samples and a
    range query's series build on each other, whatever worker makes them and whenever the window shows them. Only
    workers wait for its lock; the GUI thread shows the snapshot with the highest serial it was handed."""

    def __init__(self, window: float = HOUR) -> None:
        self._lock = threading.Lock()
        self._newest = MemoryHistory(window=window)

    def next(self, change: Callable[[MemoryHistory], MemoryHistory]) -> MemoryHistory:
        """The next snapshot, made by change from the newest (its `sampled` or `with_series`)."""
        with self._lock:
            self._newest = change(self._newest)
            return self._newest

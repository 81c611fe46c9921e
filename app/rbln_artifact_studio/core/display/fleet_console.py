"""The fleet console's rows: one per NPU of every source (an SSH server, a group, a Prometheus URL), or one per node
that could not be read, with their texts and sort keys prepared; their filter and sort, and each NPU's last hour.

Qt-free: the console filters and sorts in a worker (`arrange`), so 8,000 rows never hold the window up.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

from rbln_artifact_studio.core.shown import control_escaped, line_shown
from rbln_artifact_studio.core.sizes import format_bytes

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


def _size(n: int | None) -> str:
    return "" if n is None else format_bytes(n)


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
    texts = {
        Column.NODE: node,
        Column.NPU: npu.device or f"NPU {npu.index}",
        Column.PRODUCT: npu.product,
        Column.FREE: format_bytes(free),
        Column.MEMORY: f"{format_bytes(npu.used)} of {format_bytes(npu.total)}",
        Column.HISTORY: "",
        Column.UTIL: "" if util is None else f"{util:.0f}%",
        Column.TEMPERATURE: "" if temp is None else f"{temp:.0f} °C",
        Column.USED: format_bytes(npu.used),
        Column.TOTAL: format_bytes(npu.total),
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
        tuple(control_escaped(texts[c]) for c in Column),  # labels from outside: a CR or newline drawn as \r, \n
        tuple(keys[c] for c in Column),
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
        tuple(texts[c] for c in Column),
        tuple(keys[c] for c in Column),
        search,
    )


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
        from rbln_artifact_studio.core.sizes import parse_bytes

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

    def matches(self, row: ConsoleRow) -> bool:
        if any(w not in row.search for w in self.words):
            return False
        if self.free:
            free = row.free
            return free is not None and all(_OPS[op](free, n) for op, n in self.free)
        return True


def arrange(
    rows: Sequence[ConsoleRow],
    query: Query,
    column: Column = Column.NODE,
    descending: bool = False,
    checkpoint: Callable[[], None] | None = None,
) -> list[int]:
    """The indices of the rows the query keeps, sorted on column (unknown values last either way).

    checkpoint is called every few thousand rows (a worker's cancel point)."""
    kept: list[int] = []
    unknown: list[int] = []
    for i, row in enumerate(rows):
        if checkpoint is not None and not i % 2048:
            checkpoint()
        if query.matches(row):
            (unknown if row.keys[column] is None else kept).append(i)
    kept.sort(key=lambda i: rows[i].keys[column], reverse=descending)  # type: ignore[arg-type,return-value]  # one column's keys share a type
    unknown.sort(key=lambda i: rows[i].keys[Column.NODE])  # type: ignore[arg-type,return-value]  # (str, int) tuples
    return kept + unknown


# ---- each NPU's last hour ---------------------------------------------------------------------------------------


Point = tuple[float, int]  # (unix time, bytes used)


class MemoryHistory:
    """Each NPU's used memory over the last hour: sampled at each reading of an SSH server while the console is
    open, or a Prometheus range query's series. Plain data, read by the painter and written on the GUI thread."""

    def __init__(self, window: float = HOUR) -> None:
        self.window = window
        self._points: dict[NpuKey, deque[Point]] = {}

    def record(self, rows: Iterable[ConsoleRow], at: float | None = None) -> None:
        """One sample of each NPU row's used memory (a node's own row has none)."""
        now = time.time() if at is None else at
        for row in rows:
            if row.used is None:
                continue
            points = self._points.setdefault(row.key, deque(maxlen=MAX_POINTS))
            if points and points[-1][0] >= now:
                continue
            points.append((now, row.used))
            self._trim(points, now)

    def replace(self, key: NpuKey, points: Sequence[Point]) -> None:
        """A whole series (a range query's), replacing what was sampled."""
        series = deque(sorted(points)[-MAX_POINTS:], maxlen=MAX_POINTS)
        if series:
            self._trim(series, series[-1][0])
        self._points[key] = series

    def _trim(self, points: deque[Point], now: float) -> None:
        while points and points[0][0] < now - self.window:
            points.popleft()

    def points(self, key: NpuKey) -> list[Point]:
        return list(self._points.get(key, ()))

    def peak(self, key: NpuKey) -> int | None:
        points = self._points.get(key)
        return max(u for _, u in points) if points else None

    def forget_except(self, keys: Iterable[NpuKey]) -> None:
        """Drop the NPUs no longer shown (a removed source)."""
        keep = set(keys)
        for key in [k for k in self._points if k not in keep]:
            del self._points[key]

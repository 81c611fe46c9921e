"""The artifact table's item model: a thin adapter over rbln_artifact_studio.core.fleet.scan's ArtifactSummary rows."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from rbln_artifact_studio.core.display.sizes import format_bytes, format_bytes_exact
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
from rbln_artifact_studio.core.fleet.status import Status

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
PATH_ROLE = Qt.ItemDataRole.UserRole + 2
SEARCH_ROLE = Qt.ItemDataRole.UserRole + 3

STATUS_COLOURS = {Status.OK: "#2e7d32", Status.WARNING: "#b26a00", Status.INVALID: "#c62828"}

Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class Column:
    title: str
    value: Callable[[ArtifactSummary], object]
    text: Callable[[object], str] = lambda v: "?" if v is None else str(v)
    numeric: bool = False
    exact: Callable[[object], str] | None = None
    width: int = 80  # least default width in pixels; wider when the title needs it (see ArtifactBrowser)


def _bytes_text(value: object) -> str:
    return "?" if value is None else format_bytes(int(value))  # type: ignore[call-overload]


def _bytes_exact(value: object) -> str:
    return "unknown" if value is None else format_bytes_exact(int(value))  # type: ignore[call-overload]


def _count(value: object) -> str:
    return "?" if value is None else f"{value:,}"


# What an ops engineer reads first comes first: status and the KV cache figures fit in the table's part of a
# 1280-pixel window; the long model id and the size on disk come last.
COLUMNS: tuple[Column, ...] = (
    Column("Name", lambda s: s.name, width=185),
    Column("Status", lambda s: s.status.value, width=70),
    Column("kvcache_num_blocks", lambda s: s.kvcache_num_blocks, numeric=True, width=130),
    Column("Floor", lambda s: s.num_min_blocks, numeric=True, width=50),
    Column("Full pool", lambda s: s.num_full_blocks, numeric=True, width=70),
    Column("KV cache / NPU", lambda s: s.kv_bytes_per_npu, _bytes_text, numeric=True, exact=_bytes_exact, width=105),
    Column("NPU", lambda s: s.npu, width=90),
    Column("Devices", lambda s: s.num_devices, numeric=True, width=60),
    Column("Batch", lambda s: s.batch_size, numeric=True, width=50),
    Column("max_seq_len", lambda s: s.max_seq_len, _count, numeric=True, width=90),
    Column("Block size", lambda s: s.block_size, _count, numeric=True),
    Column("Attention", lambda s: s.attn_impl),
    Column("Kind", lambda s: s.kind or DECODER_KIND, width=110),
    Column("Model", lambda s: s.model, width=170),
    Column("Size on disk", lambda s: s.size_on_disk, _bytes_text, numeric=True, exact=_bytes_exact, width=90),
)
COLUMNS_VERSION = 3  # bump when COLUMNS change order, so a saved header layout is not applied to other columns
TITLES = tuple(c.title for c in COLUMNS)
NAME_COLUMN = TITLES.index("Name")
STATUS_COLUMN = TITLES.index("Status")
KV_COLUMNS = (TITLES.index("kvcache_num_blocks"), TITLES.index("KV cache / NPU"))
DECODER_KIND = "decoder-only"
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_STATUS_BRUSHES = {status: QBrush(QColor(colour)) for status, colour in STATUS_COLOURS.items()}


def _kv_text(s: ArtifactSummary, column: int) -> str | None:
    """The KV cells of a row whose figures are missing for a reason: say so in words rather than '?'."""
    if column not in KV_COLUMNS or not s.kv_note:
        return None
    if column == KV_COLUMNS[0] and s.kvcache_num_blocks is not None:
        return None
    return "unknown" if s.kind in (None, DECODER_KIND, "multimodal") else "no KV cache"


class TableRow:
    """One summary with its cell texts and sort keys worked out once (in the scan worker), so data() is a lookup."""

    __slots__ = ("keys", "search", "summary", "texts")

    def __init__(self, summary: ArtifactSummary, texts: tuple[str, ...], keys: tuple[object, ...], search: str):
        self.summary, self.texts, self.keys, self.search = summary, texts, keys, search

    @classmethod
    def of(cls, s: ArtifactSummary) -> TableRow:
        values = [c.value(s) for c in COLUMNS]
        texts = tuple(_kv_text(s, i) or c.text(v) for i, (c, v) in enumerate(zip(COLUMNS, values, strict=True)))
        keys = tuple(
            (-1 if c.numeric else "") if v is None else (v if c.numeric else str(v).lower())
            for c, v in zip(COLUMNS, values, strict=True)
        )
        search = " ".join(str(v) for v in (s.name, s.model, s.npu, s.attn_impl, s.status.value, s.kind) if v)
        return cls(s, texts, keys, search)


class ArtifactTableModel(QAbstractTableModel):
    """Rows keyed by artifact path; upserts and removals arrive in batches from scan jobs.

    The model sorts itself (sort()), keeping rows in order as batches arrive: a sorting proxy would call
    data() from C++ for every comparison, which stalls the GUI thread on tables of thousands of rows.
    """

    def __init__(self, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._rows: list[TableRow] = []
        self._index: dict[str, int] = {}
        self._sort_column = -1
        self._sort_order = Qt.SortOrder.AscendingOrder

    # ---- Qt interface --------------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            if role == Qt.ItemDataRole.DisplayRole:
                return COLUMNS[section].title
            if role == Qt.ItemDataRole.ToolTipRole and section == STATUS_COLUMN:
                return "ok / warning / invalid; hover a row's status for the reason"
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        r, c = index.row(), index.column()
        if not index.isValid() or not (0 <= r < len(self._rows)) or not 0 <= c < len(COLUMNS):
            return None
        return self._value(self._rows[r], c, role)

    def _value(self, row: TableRow, c: int, role: int) -> object:
        if role == Qt.ItemDataRole.DisplayRole:
            return row.texts[c]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if COLUMNS[c].numeric else None
        if role == Qt.ItemDataRole.ForegroundRole:
            return _STATUS_BRUSHES[row.summary.status] if c == STATUS_COLUMN else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row.summary, c)
        if role == SORT_ROLE:
            return row.keys[c]
        if role == PATH_ROLE:
            return row.summary.path
        if role == SEARCH_ROLE:
            return row.search
        return None

    def _tooltip(self, row: ArtifactSummary, column: int) -> str:
        if column == STATUS_COLUMN:
            return "\n".join(row.problems) if row.problems else "No problems found."
        if column == NAME_COLUMN:
            return row.path
        if column in KV_COLUMNS and row.kv_note:
            return row.kv_note
        exact = COLUMNS[column].exact
        return exact(COLUMNS[column].value(row)) if exact else ""

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sort_column, self._sort_order = column, order
        self._resort()

    def _key(self, row: TableRow) -> tuple[object, object]:
        return (row.keys[self._sort_column], row.keys[NAME_COLUMN])

    def _sorting(self) -> bool:
        return 0 <= self._sort_column < len(COLUMNS)

    def _ordered(self, rows: list[TableRow]) -> list[TableRow]:
        if not self._sorting():
            return rows
        return sorted(rows, key=self._key, reverse=self._sort_order == Qt.SortOrder.DescendingOrder)

    def _in_order(self, before: TableRow, after: TableRow) -> bool:
        """True when a stable sort keeps `before` ahead of `after` (ties keep their order)."""
        if not self._sorting():
            return True
        if self._sort_order == Qt.SortOrder.DescendingOrder:
            return not self._key(before) < self._key(after)  # type: ignore[operator]
        return not self._key(after) < self._key(before)  # type: ignore[operator]

    def _resort(self) -> None:
        ordered = self._ordered(self._rows)
        if all(a is b for a, b in zip(ordered, self._rows, strict=True)):
            return
        self.layoutAboutToBeChanged.emit()
        new_row = {id(r): i for i, r in enumerate(ordered)}
        old = self.persistentIndexList()
        new = [self.index(new_row[id(self._rows[i.row()])], i.column()) for i in old]
        self._rows = ordered
        self._index = {r.summary.path: i for i, r in enumerate(ordered)}
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    # ---- updates from scans --------------------------------------------------------------------------

    def summary(self, row: int) -> ArtifactSummary:
        return self._rows[row].summary

    def table_row(self, row: int) -> TableRow | None:
        """The row's prepared texts (None for a row the model does not have)."""
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_of(self, path: str) -> int | None:
        return self._index.get(path)

    def paths(self) -> list[str]:
        return [r.summary.path for r in self._rows]

    def upsert(self, summaries: Iterable[ArtifactSummary | TableRow]) -> None:
        """Replace rows whose path is known, add the others in one insert, and keep the sort order.

        New rows are sorted among themselves; when they all sort after the last row (a scan in path order under
        the default sort by name) they are appended and nothing else moves, so the view only lays out what is
        new. Otherwise the whole table is put back in order with one layoutChanged.
        """
        new: dict[str, TableRow] = {}
        changed: list[int] = []
        for item in summaries:
            prepared = item if isinstance(item, TableRow) else TableRow.of(item)
            row = self._index.get(prepared.summary.path)
            if row is None:
                new[prepared.summary.path] = prepared
            else:
                self._rows[row] = prepared
                changed.append(row)
        last_column = len(COLUMNS) - 1
        for first, last in _runs(changed):
            self.dataChanged.emit(self.index(first, 0), self.index(last, last_column))
        in_order = all(self._fits(row) for row in changed)
        if new:
            rows = self._ordered(list(new.values()))
            in_order = in_order and (not self._rows or self._in_order(self._rows[-1], rows[0]))
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
            for offset, prepared in enumerate(rows):
                self._index[prepared.summary.path] = first + offset
            self._rows.extend(rows)
            self.endInsertRows()
        if not in_order:
            self._resort()

    def _fits(self, row: int) -> bool:
        """The row still sorts between its neighbours (e.g. resized while the table is sorted by name)."""
        rows = self._rows
        return (row == 0 or self._in_order(rows[row - 1], rows[row])) and (
            row == len(rows) - 1 or self._in_order(rows[row], rows[row + 1])
        )

    def remove_paths(self, paths: Iterable[str]) -> None:
        rows = [self._index[p] for p in paths if p in self._index]
        for first, last in reversed(_runs(rows)):
            self.beginRemoveRows(QModelIndex(), first, last)
            del self._rows[first : last + 1]
            self.endRemoveRows()
        if rows:
            self._index = {r.summary.path: i for i, r in enumerate(self._rows)}

    def clear(self) -> None:
        self.beginResetModel()
        self._rows, self._index = [], {}
        self.endResetModel()


def _runs(rows: Iterable[int]) -> list[tuple[int, int]]:
    """Distinct row numbers as (first, last) runs of consecutive rows, in order."""
    runs: list[tuple[int, int]] = []
    for row in sorted(set(rows)):
        if runs and runs[-1][1] == row - 1:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    return runs

"""The artifact table's item model: a thin adapter over app.core.scan's ArtifactSummary rows."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from app.core.artifact import Status
from app.core.scan import ArtifactSummary
from app.core.sizes import format_bytes, format_bytes_exact

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


def _bytes_text(value: object) -> str:
    return "?" if value is None else format_bytes(int(value))  # type: ignore[call-overload]


def _bytes_exact(value: object) -> str:
    return "unknown" if value is None else format_bytes_exact(int(value))  # type: ignore[call-overload]


def _count(value: object) -> str:
    return "?" if value is None else f"{value:,}"


COLUMNS: tuple[Column, ...] = (
    Column("Name", lambda s: s.name),
    Column("Model", lambda s: s.model),
    Column("NPU", lambda s: s.npu),
    Column("Devices", lambda s: s.num_devices, numeric=True),
    Column("Batch", lambda s: s.batch_size, numeric=True),
    Column("max_seq_len", lambda s: s.max_seq_len, _count, numeric=True),
    Column("Block size", lambda s: s.block_size, _count, numeric=True),
    Column("Attention", lambda s: s.attn_impl),
    Column("kvcache_num_blocks", lambda s: s.kvcache_num_blocks, numeric=True),
    Column("Floor", lambda s: s.num_min_blocks, numeric=True),
    Column("Full pool", lambda s: s.num_full_blocks, numeric=True),
    Column("KV cache / NPU", lambda s: s.kv_bytes_per_npu, _bytes_text, numeric=True, exact=_bytes_exact),
    Column("Size on disk", lambda s: s.size_on_disk, _bytes_text, numeric=True, exact=_bytes_exact),
    Column("Status", lambda s: s.status.value),
)
NAME_COLUMN = 0
STATUS_COLUMN = len(COLUMNS) - 1


class ArtifactTableModel(QAbstractTableModel):
    """Rows keyed by artifact path; upserts and removals arrive in batches from scan jobs."""

    def __init__(self, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._rows: list[ArtifactSummary] = []
        self._index: dict[str, int] = {}

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
        if not index.isValid() or not (0 <= index.row() < len(self._rows)) or not 0 <= index.column() < len(COLUMNS):
            return None
        row = self._rows[index.row()]
        column = COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.text(column.value(row))
        if role == SORT_ROLE:
            value = column.value(row)
            if value is None:
                return -1 if column.numeric else ""
            return value if column.numeric else str(value).lower()
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, index.column())
        if role == Qt.ItemDataRole.TextAlignmentRole and column.numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == STATUS_COLUMN:
            return QBrush(QColor(STATUS_COLOURS[row.status]))
        if role == PATH_ROLE:
            return row.path
        if role == SEARCH_ROLE:
            return " ".join(str(v) for v in (row.name, row.model, row.npu, row.attn_impl, row.status.value) if v)
        return None

    def _tooltip(self, row: ArtifactSummary, column: int) -> str:
        if column == STATUS_COLUMN:
            return "\n".join(row.problems) if row.problems else "No problems found."
        if column == NAME_COLUMN:
            return row.path
        exact = COLUMNS[column].exact
        return exact(COLUMNS[column].value(row)) if exact else ""

    # ---- updates from scans --------------------------------------------------------------------------

    def summary(self, row: int) -> ArtifactSummary:
        return self._rows[row]

    def row_of(self, path: str) -> int | None:
        return self._index.get(path)

    def paths(self) -> list[str]:
        return [r.path for r in self._rows]

    def upsert(self, summaries: Iterable[ArtifactSummary]) -> None:
        """Replace rows whose path is known, append the others in one insert."""
        new: dict[str, ArtifactSummary] = {}
        for summary in summaries:
            row = self._index.get(summary.path)
            if row is None:
                new[summary.path] = summary
                continue
            self._rows[row] = summary
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))
        if new:
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(new) - 1)
            for offset, path in enumerate(new):
                self._index[path] = first + offset
            self._rows.extend(new.values())
            self.endInsertRows()

    def remove_paths(self, paths: Iterable[str]) -> None:
        rows = sorted({self._index[p] for p in paths if p in self._index}, reverse=True)
        for row in rows:
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._rows[row]
            self.endRemoveRows()
        if rows:
            self._index = {r.path: i for i, r in enumerate(self._rows)}

    def clear(self) -> None:
        self.beginResetModel()
        self._rows, self._index = [], {}
        self.endResetModel()

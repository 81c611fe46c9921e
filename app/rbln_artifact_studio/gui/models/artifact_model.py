"""The artifact table's item model: a thin adapter over ArtifactSummary rows, with the columns of
rbln_artifact_studio.core.fleet.columns."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Slot
from PySide6.QtGui import QBrush, QColor

from rbln_artifact_studio.core.display.matching import folded
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.columns import COLUMNS, TITLES
from rbln_artifact_studio.core.fleet.summary import ArtifactSummary
from rbln_artifact_studio.core.location import LOCAL, host_of, is_local, parse_location
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.gui.app.tones import Tone, is_dark, tone
from rbln_artifact_studio.gui.models.table_rows import TableRow

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
PATH_ROLE = Qt.ItemDataRole.UserRole + 2
SEARCH_ROLE = Qt.ItemDataRole.UserRole + 3

STATUS_TONES = {
    Status.OK: Tone.OK,
    Status.WARNING: Tone.WARNING,
    Status.INVALID: Tone.ERROR,
    Status.CHECKING: Tone.NEUTRAL,
}


class _StatusColours(Mapping[Status, str]):
    """Status -> #rrggbb for the palette in use (a dark palette gets light tones)."""

    def __getitem__(self, status: Status) -> str:
        return tone(STATUS_TONES[status])

    def __iter__(self) -> Iterator[Status]:
        return iter(STATUS_TONES)

    def __len__(self) -> int:
        return len(STATUS_TONES)


STATUS_COLOURS = _StatusColours()

Index = QModelIndex | QPersistentModelIndex


# Bumped when COLUMNS or their default order in the view change, so a saved header layout is not applied to others.
COLUMNS_VERSION = 5  # 5: the Host column beside the names (gui/window/place_column.py)
NAME_COLUMN = TITLES.index("Name")
STATUS_COLUMN = TITLES.index("Status")
HOST_COLUMN = TITLES.index("Host")
PLACE_MARK = "\x1f"  # in a row's search text, before the place's name the table added (the scan knows no roots)
STALE_TIP = (
    "A job is writing here, or this place has not been read since a write or since a read of it failed: these "
    "figures may no longer hold. Refresh (F5) reads it again."
)
STALE_ROLES = [Qt.ItemDataRole.ForegroundRole]  # what a change of a row's stale mark changes (its look)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_STATUS_BRUSHES: dict[tuple[bool, Status], QBrush] = {}


def _status_brush(status: Status) -> QBrush:
    key = (is_dark(), status)
    brush = _STATUS_BRUSHES.get(key)
    if brush is None:
        brush = _STATUS_BRUSHES[key] = QBrush(QColor(STATUS_COLOURS[status]))
    return brush


def _place(root: str) -> tuple[str, str, list[str]]:
    """root as rows are matched to it, what its rows' Host cells say without a name, and the names of its path."""
    if is_local(root):
        key = os.path.normpath(root)
        return key, LOCAL, [p for p in key.split(os.sep) if p]
    try:
        key = str(parse_location(root)).rstrip("/")
    except StudioError:
        key = root.rstrip("/")
    path = key.split("://", 1)[-1].partition("/")[2]  # a server's path, a bucket's prefix
    return key, host_of(key) or LOCAL, [p for p in path.split("/") if p]


def place_labels(roots: Sequence[str]) -> dict[str, str]:
    """Each root shown (a folder here, a server's folder, a bucket's prefix) -> its rows' Host cell where its host
    shows more than one: "local: NAME", "gpu1: NAME", "BUCKET-URL: NAME" (the parents' names as well where names
    repeat), so the rows of two folders tell which they are from. A host with one root keeps its plain cell
    ("local", the server, the bucket), as the CLI prints it."""
    groups: dict[str, dict[str, list[str]]] = {}
    for root in dict.fromkeys(roots):
        key, host, names = _place(root)
        groups.setdefault(host, {})[key] = names or ["/"]
    labels: dict[str, str] = {}
    for host, parts in groups.items():
        if len(parts) < 2:
            continue
        for key, names in parts.items():
            depth = 1
            while depth < len(names) and any(
                other != key and other_names[-depth:] == names[-depth:] for other, other_names in parts.items()
            ):
                depth += 1
            labels[key] = f"{host}: {'/'.join(names[-depth:])}"
    return labels


def _root_of(path: str, roots: Iterable[str]) -> str | None:
    """The deepest of roots that holds path."""
    held = [r for r in roots if path == r or path.startswith((r + "/", r + os.sep))]
    return max(held, key=len) if held else None


def _labelled(row: TableRow, labels: dict[str, str]) -> TableRow:
    """row with the Host cell of the root it is from (its plain cell where its host shows one root); the same
    row when that is what it says."""
    path = row.path
    root = _root_of(path, labels)
    label = labels[root] if root is not None else host_of(path) or LOCAL
    if row.texts[HOST_COLUMN] == label:
        return row
    search = row.search.split(PLACE_MARK, 1)[0]
    if root is not None:
        search += PLACE_MARK + folded(label)
    texts, keys = list(row.texts), list(row.keys)
    texts[HOST_COLUMN], keys[HOST_COLUMN] = label, label.lower()
    return row._replace(texts=tuple(texts), keys=tuple(keys), search=search)


def _tooltip(row: ArtifactSummary, column: int) -> str:
    """A cell's tooltip: the status's reasons, the full path, or the exact figure the cell rounds."""
    if column == STATUS_COLUMN:
        return "\n".join(row.problems) if row.problems else "No problems found."
    if column == NAME_COLUMN:
        return row.path
    exact, value = COLUMNS[column].exact, COLUMNS[column].value(row)
    if value is None and COLUMNS[column].missing is not None and row.kv_note:
        return row.kv_note  # why a KV figure is missing, in words
    if exact is None:
        return ""
    return "unknown" if value is None else exact(value)


@dataclass(frozen=True)
class RowOrder:
    """The table's sort: a column (-1: none) and its direction; ties by name, then as they came."""

    column: int = -1
    order: Qt.SortOrder = Qt.SortOrder.AscendingOrder

    def _key(self, row: TableRow) -> tuple[Any, Any]:  # a column's keys are all numbers or all strings
        return (row.keys[self.column], row.keys[NAME_COLUMN])

    def ordered(self, rows: list[TableRow]) -> list[TableRow]:
        if not 0 <= self.column < len(COLUMNS):
            return rows
        return sorted(rows, key=self._key, reverse=self.order == Qt.SortOrder.DescendingOrder)

    def in_order(self, before: TableRow, after: TableRow) -> bool:
        """True when a stable sort keeps `before` ahead of `after` (ties keep their order)."""
        if not 0 <= self.column < len(COLUMNS):
            return True
        if self.order == Qt.SortOrder.DescendingOrder:
            return not self._key(before) < self._key(after)
        return not self._key(after) < self._key(before)


class ArtifactTableModel(QAbstractTableModel):
    """Rows keyed by artifact path; upserts and removals arrive in batches from scan jobs.

    The model sorts itself (sort()), keeping rows in order as batches arrive: a sorting proxy would call
    data() from C++ for every comparison, which stalls the GUI thread on tables of thousands of rows.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[TableRow] = []
        self._index: dict[str, int] = {}
        self._order = RowOrder()
        self._roots: dict[str, tuple[str, ...]] = {}  # who shows them (folders, servers, places) -> the roots
        self._labels: dict[str, str] = {}  # root -> its rows' Host cell, where its host shows several roots
        self.writes = WrittenPlaces(self._mark_stale)  # where jobs write or wrote since the last read
        self.stale: set[str] = set()  # rows at or under those places: their figures may be out of date

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
                return (
                    "ok / warning / invalid (checking: the full check is still running); hover a status for the reason"
                )
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        r, c = index.row(), index.column()
        if not index.isValid() or not (0 <= r < len(self._rows)) or not 0 <= c < len(COLUMNS):
            return None
        return self._value(self._rows[r], c, role)

    def _value(self, row: TableRow, c: int, role: int) -> object:
        stale = bool(self.stale) and row.path in self.stale
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{row.texts[c]} · {self.writes.word(row.path)}" if stale and c == STATUS_COLUMN else row.texts[c]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if COLUMNS[c].numeric else None
        if role == Qt.ItemDataRole.ForegroundRole:
            if stale:
                return _status_brush(Status.CHECKING)  # greyed: a figure that may no longer hold
            return _status_brush(row.status) if c == STATUS_COLUMN else None
        if role == Qt.ItemDataRole.ToolTipRole and stale:
            return STALE_TIP
        if role == Qt.ItemDataRole.ToolTipRole:
            if c == HOST_COLUMN:
                root = _root_of(row.path, self._labels)
                here = is_local(row.path)
                if root is not None:
                    return f"On this computer, in {root}" if here else f"In {root}"
                return "On this computer" if here else ""
            return _tooltip(row.summary, c)
        if role == SORT_ROLE:
            return row.keys[c]
        if role == PATH_ROLE:
            return row.path
        if role == SEARCH_ROLE:
            return row.search
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._order = RowOrder(column, order)
        self._resort()

    def _resort(self) -> None:
        ordered = self._order.ordered(self._rows)
        if all(a is b for a, b in zip(ordered, self._rows, strict=True)):
            return
        self.layoutAboutToBeChanged.emit()
        new_row = {id(r): i for i, r in enumerate(ordered)}
        old = self.persistentIndexList()
        new = [self.index(new_row[id(self._rows[i.row()])], i.column()) for i in old]
        self._rows = ordered
        self._index = {r.path: i for i, r in enumerate(ordered)}
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    # ---- rows a write may have changed -------------------------------------------------------------------

    def _mark_stale(self) -> None:
        """The rows under a location being written or not read since: greyed, their status says so."""
        stale = {r.path for r in self._rows if self.writes.covers(r.path)} if self.writes else set()
        changed = [self._index[p] for p in stale ^ self.stale if p in self._index]
        self.stale = stale
        for first, last in _runs(changed):  # the look only: the rows' figures are as they were (STALE_ROLES)
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(COLUMNS) - 1), STALE_ROLES)

    # ---- which folder a row is from ----------------------------------------------------------------------

    def set_roots(self, owner: str, roots: Sequence[str]) -> None:
        """The roots one part of the window shows ("folders": the workspace's, "servers", "places": buckets):
        where a host shows several, each row's Host cell names its root, and the filter and the Host column's sort
        follow that name."""
        self._roots[owner] = tuple(roots)
        labels = place_labels([r for shown in self._roots.values() for r in shown])
        if labels == self._labels:
            return
        self._labels = labels
        changed: list[int] = []
        for i, row in enumerate(self._rows):
            labelled = _labelled(row, self._labels)
            if labelled is not row:
                self._rows[i] = labelled
                changed.append(i)
        for first, last in _runs(changed):
            self.dataChanged.emit(self.index(first, HOST_COLUMN), self.index(last, HOST_COLUMN))
        if changed and self._order.column == HOST_COLUMN:
            self._resort()

    @Slot(list)
    def set_folders(self, roots: list[str]) -> None:
        """The workspace's folders (its rootsChanged)."""
        self.set_roots("folders", roots)

    def add_root(self, owner: str, root: str) -> None:
        """One more root shown by owner (a bucket opened beside the others)."""
        self.set_roots(owner, [*self._roots.get(owner, ()), root])

    # ---- updates from scans --------------------------------------------------------------------------

    def summary(self, row: int) -> ArtifactSummary:
        return self._rows[row].summary

    def table_row(self, row: int) -> TableRow | None:
        """The row's prepared texts (None for a row the model does not have)."""
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_of(self, path: str) -> int | None:
        return self._index.get(path)

    def paths(self) -> list[str]:
        return [r.path for r in self._rows]

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
            if self._labels:
                prepared = _labelled(prepared, self._labels)
            row = self._index.get(prepared.path)
            if self.writes and self.writes.covers(prepared.path):
                self.stale.add(prepared.path)  # read while a write there runs, or before its read again
            if row is None:
                new[prepared.path] = prepared
            else:
                self._rows[row] = prepared
                changed.append(row)
        last_column = len(COLUMNS) - 1
        for first, last in _runs(changed):
            self.dataChanged.emit(self.index(first, 0), self.index(last, last_column))
        in_order = all(self._fits(row) for row in changed)
        if new:
            rows = self._order.ordered(list(new.values()))
            in_order = in_order and (not self._rows or self._order.in_order(self._rows[-1], rows[0]))
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
            for offset, prepared in enumerate(rows):
                self._index[prepared.path] = first + offset
            self._rows.extend(rows)
            self.endInsertRows()
        if not in_order:
            self._resort()

    def _fits(self, row: int) -> bool:
        """The row still sorts between its neighbours (e.g. resized while the table is sorted by name)."""
        rows = self._rows
        in_order = self._order.in_order
        return (row == 0 or in_order(rows[row - 1], rows[row])) and (
            row == len(rows) - 1 or in_order(rows[row], rows[row + 1])
        )

    def remove_paths(self, paths: Iterable[str]) -> None:
        paths = list(paths)
        self.stale.difference_update(paths)
        rows = [self._index[p] for p in paths if p in self._index]
        for first, last in reversed(_runs(rows)):
            self.beginRemoveRows(QModelIndex(), first, last)
            del self._rows[first : last + 1]
            self.endRemoveRows()
        if rows:
            self._index = {r.path: i for i, r in enumerate(self._rows)}

    def clear(self) -> None:
        self.beginResetModel()
        self._rows, self._index = [], {}
        self.stale = set()
        self.endResetModel()


class WrittenPlaces:
    """The places jobs are writing now, and those written since their last read: a row under one may show a figure
    the place no longer holds. Plain data; on_change is told whenever the set of such places changes."""

    def __init__(self, on_change: Callable[[], None]) -> None:
        self._on_change = on_change
        self._writing: dict[str, int] = {}  # locations jobs are writing now -> how many jobs
        self._unread: dict[str, int] = {}  # locations written since last read -> the generation their write ended
        self._generation = 0

    def __bool__(self) -> bool:
        return bool(self._writing or self._unread)

    def writing(self, location: str) -> None:
        """A job starts writing at location: its rows may be stale from now until it is read again."""
        self._writing[location] = self._writing.get(location, 0) + 1
        self._on_change()

    def written(self, location: str) -> None:
        """That job ended: its rows stay stale until a read asked from now on (read_again) has ended."""
        left = self._writing.get(location, 0) - 1
        if left > 0:
            self._writing[location] = left
        else:
            self._writing.pop(location, None)
        self.unconfirmed(location)

    def unconfirmed(self, location: str) -> None:
        """A read of location failed: its rows keep what they said, marked stale until a read of it ends well."""
        self._generation += 1
        self._unread[location] = self._generation
        self._on_change()

    def generation(self) -> int:
        """Stamps a read asked now: it covers the writes that ended up to here."""
        return self._generation

    def read_again(self, location: str, generation: int) -> None:
        """A read of location, asked at generation, has ended: writes there that ended before it no longer make
        its rows stale (those still running do)."""
        done = [w for w, ended in self._unread.items() if ended <= generation and is_under(w, location)]
        for w in done:
            del self._unread[w]
        if done:
            self._on_change()

    def word(self, path: str) -> str:
        """What a stale row's status adds: still being written, or written and not read since."""
        return "writing…" if any(is_under(path, w) for w in self._writing) else "stale"

    def covers(self, path: str) -> bool:
        return any(is_under(path, w) for w in (*self._writing, *self._unread))


def is_under(path: str, location: str) -> bool:
    """path is location or below it (a folder here, a server's folder, a bucket's prefix)."""
    return path == location or path.startswith((location.rstrip("/") + "/", location.rstrip(os.sep) + os.sep))


def _runs(rows: Iterable[int]) -> list[tuple[int, int]]:
    """Distinct row numbers as (first, last) runs of consecutive rows, in order."""
    runs: list[tuple[int, int]] = []
    for row in sorted(set(rows)):
        if runs and runs[-1][1] == row - 1:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    return runs

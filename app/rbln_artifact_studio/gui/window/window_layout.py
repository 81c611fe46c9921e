"""The main window's saved layout restored only where it is valid: a saved splitter or header that would hide the
details or the table (a quit while the start page held the table's place saved three panes for two) is repaired."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QDataStream
from PySide6.QtWidgets import QHeaderView, QSplitter

MIN_PANE = 150  # pixels: the narrowest table or details a restored layout may leave
SPLITTER_MARKER = 0xFF  # the first value of QSplitter.saveState
TABLE_SHARE = 60  # percent of the width: the table's share in the default layout (the details take the rest)


def default_split(splitter: QSplitter, width: int) -> None:
    """The first start's split: the table 55 %, the details 45 % of the window's width."""
    splitter.setSizes([width * TABLE_SHARE // 100, width - width * TABLE_SHARE // 100])


def saved_sizes(state: QByteArray) -> list[int]:
    """The pane sizes a QSplitter.saveState holds (its marker, its version, then the sizes); [] for other bytes."""
    stream = QDataStream(state)
    if stream.readInt32() != SPLITTER_MARKER or stream.readInt32() not in (0, 1):  # Qt 5 wrote 0, Qt 6 writes 1
        return []
    count = stream.readUInt32()
    sizes = [stream.readInt32() for _ in range(min(count, 16))]
    return sizes if stream.status() == QDataStream.Status.Ok else []


def usable(sizes: list[int], panes: int, width: int) -> bool:
    """As many sizes as panes, each at least MIN_PANE pixels of a window this wide."""
    total = sum(sizes)
    return len(sizes) == panes and total > 0 and all(s * width >= MIN_PANE * total for s in sizes)


def restore_split(splitter: QSplitter, state: QByteArray | None, width: int) -> bool:
    """The saved split where each pane keeps at least MIN_PANE pixels of a window this wide; else the default one.

    A split saved while the start page held the table's place has three sizes, the table's 0: the two others are
    the table's room and the details'. Returns whether the saved sizes were used. The sizes read back are those Qt
    scaled to the splitter's present width (not yet the window's before the first show): the shares are checked."""
    if state is not None and splitter.restoreState(state) and usable(splitter.sizes(), splitter.count(), width):
        return True
    shown = [s for s in saved_sizes(state) if s > 0] if state is not None else []
    if usable(shown, splitter.count(), width):
        splitter.setSizes(shown)
        return True
    default_split(splitter, width)
    return False


def restore_header(header: QHeaderView, state: QByteArray | None) -> bool:
    """The saved columns unless they hide the first (the artifact's name) or every column; then Qt's defaults."""
    if state is None:
        return False
    default = header.saveState()
    if not header.restoreState(state):
        return False
    logical_name = 0
    if header.isSectionHidden(logical_name) or header.sectionSize(logical_name) < header.minimumSectionSize():
        header.restoreState(default)
        return False
    return True

"""The main window's saved layout restored only where it is valid: a saved splitter or header that would hide the
details or the table (a quit while the start page held the table's place saved three panes for two) is repaired."""

from __future__ import annotations

from PySide6.QtCore import QByteArray
from PySide6.QtWidgets import QHeaderView, QSplitter

MIN_PANE = 150  # pixels: the narrowest table or details a restored layout may leave
TABLE_SHARE = 55  # percent of the width: the table's share in the default layout (the details take the rest)


def default_split(splitter: QSplitter, width: int) -> None:
    """The first start's split: the table 55 %, the details 45 % of the window's width."""
    splitter.setSizes([width * TABLE_SHARE // 100, width - width * TABLE_SHARE // 100])


def restore_split(splitter: QSplitter, state: QByteArray | None, width: int) -> bool:
    """The saved split where each pane keeps at least MIN_PANE pixels of a window this wide; else the default one.

    Returns whether the saved state was used. The sizes read back are those Qt scaled to the splitter's present
    width (not yet the window's before the first show): the shares are what is checked."""
    if state is not None and splitter.restoreState(state):
        sizes = splitter.sizes()
        total = sum(sizes)
        if len(sizes) == splitter.count() and total > 0 and all(s * width >= MIN_PANE * total for s in sizes):
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

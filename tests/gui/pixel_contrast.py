"""Contrast measured on rendered pixels: each visible text item is drawn twice, with and without its text, and every
pixel the text changed is compared with the pixel behind it in the text-less drawing.

The pixels a text changes are grouped by the direction of their change (a text's anti-aliased edge lies between the
background and the text's colour, so it changes the same way, only less); the strongest pixel of each group is that
colour's full strength. Each group's contrast with the background behind it must reach WCAG 2.1 AA: 4.5:1, or 3:1
for large text (18 pt, or 14 pt bold). Disabled controls are exempt, as WCAG exempts inactive components.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, QRectF, QSignalBlocker, QSize
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QIcon,
    QImage,
    QPainter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemDelegate,
    QAbstractItemView,
    QCommandLinkButton,
    QGroupBox,
    QLabel,
    QLineEdit,
    QProgressBar,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionGroupBox,
    QStyleOptionViewItem,
    QTextEdit,
    QWidget,
)

from .layout_audit import contrast

TEXT, LARGE = 4.5, 3.0
SAME_COLOUR = math.cos(math.radians(20))  # changes this close in direction come from one text colour
GROUND = 24  # per channel: a pixel this close to the text's own background is that background (a frame's shading)
MIN_PIXELS = 4
FAINT = 12.0  # a change this small (in 0-255 steps) is an anti-aliased fringe no one reads, whatever its direction  # fewer changed pixels of a colour are a fringe where two colours meet, not a text of its own


@dataclass(frozen=True)
class Measured:
    """One text colour of one item: its strongest pixel, the pixel behind it, and how many pixels it changed."""

    where: str
    ink: QColor
    behind: QColor
    pixels: int
    needed: float

    @property
    def ratio(self) -> float:
        return contrast(self.ink, self.behind)

    def __str__(self) -> str:
        return f"{self.where}: {self.ink.name()} on {self.behind.name()} {self.ratio:.2f}:1 (needs {self.needed})"


def _rgb(image: QImage) -> QImage:
    return image.convertToFormat(QImage.Format.Format_RGB32)


def colours(normal: QImage, textless: QImage, ground: QColor | None = None) -> list[tuple[QColor, QColor, int]]:
    """(ink, behind, pixels) per text colour: the pixels that differ between the two drawings, grouped; a pixel of
    the ground colour is where the text's own background covered something (a group box's frame), not ink."""
    normal, textless = _rgb(normal), _rgb(textless)
    near = (ground.red(), ground.green(), ground.blue()) if ground is not None else None
    width, height = min(normal.width(), textless.width()), min(normal.height(), textless.height())
    changed: list[tuple[float, tuple[int, int, int], int, int]] = []
    n_bits, t_bits = normal.constBits(), textless.constBits()
    n_line, t_line = normal.bytesPerLine(), textless.bytesPerLine()
    for y in range(height):
        n_row = bytes(n_bits[y * n_line : y * n_line + width * 4])
        t_row = bytes(t_bits[y * t_line : y * t_line + width * 4])
        if n_row == t_row:
            continue
        for x in range(width):
            i = 4 * x
            if n_row[i : i + 3] != t_row[i : i + 3]:
                b, g, r = n_row[i], n_row[i + 1], n_row[i + 2]  # little-endian 0xAARRGGBB
                bb, bg, br = t_row[i], t_row[i + 1], t_row[i + 2]
                if near is not None and max(abs(r - near[0]), abs(g - near[1]), abs(b - near[2])) <= GROUND:
                    continue
                v = (r - br, g - bg, b - bb)
                changed.append(
                    (math.sqrt(sum(c * c for c in v)), v, (r << 16) | (g << 8) | b, (br << 16) | (bg << 8) | bb)
                )
    changed.sort(key=lambda c: -c[0])
    groups: list[list[object]] = []  # [vector, magnitude, ink, behind, count]
    for size, v, ink, behind in changed:
        if size < FAINT:
            break  # sorted: the rest are fainter still
        for group in groups:
            head, head_size = group[0], group[1]
            assert isinstance(head, tuple) and isinstance(head_size, float)
            if sum(a * b for a, b in zip(v, head, strict=True)) >= SAME_COLOUR * size * head_size:
                group[4] = int(str(group[4])) + 1
                break
        else:
            groups.append([v, size, ink, behind, 1])
    return [(QColor.fromRgb(int(str(g[2]))), QColor.fromRgb(int(str(g[3]))), int(str(g[4]))) for g in groups]


def _large(widget: QWidget) -> bool:
    font = widget.font()
    points = font.pointSizeF() if font.pointSizeF() > 0 else font.pixelSize() * 0.75
    return points >= 18 or (points >= 14 and font.bold())


def _name(widget: QWidget) -> str:
    text = ""
    for getter in ("text", "title", "format"):
        if hasattr(widget, getter):
            value = getattr(widget, getter)()
            if isinstance(value, str) and value:
                text = value[:40]
                break
    return f"{type(widget).__name__}({widget.objectName() or text!r})"


def _blank_text(widget: QWidget) -> Callable[[], None] | None:
    """Remove the widget's own text (signals blocked: nothing in the app hears it); what puts it back, or None for a
    widget that draws no text of its own."""
    put_back: Callable[[], None] | None = None
    blocker = QSignalBlocker(widget)
    if isinstance(widget, QLabel) and widget.text():
        label, text = widget, widget.text()
        label.setText("")
        put_back = partial(label.setText, text)
    elif isinstance(widget, QCommandLinkButton) and widget.text():
        link, text, description = widget, widget.text(), widget.description()
        link.setText("")
        link.setDescription("")

        def link_back() -> None:
            link.setText(text)
            link.setDescription(description)

        put_back = link_back
    elif isinstance(widget, QAbstractButton) and widget.text():
        button, text = widget, widget.text()
        button.setText("")
        put_back = partial(button.setText, text)
    elif isinstance(widget, QLineEdit) and (widget.text() or widget.placeholderText()):
        edit, text, placeholder, cursor = widget, widget.text(), widget.placeholderText(), widget.cursorPosition()
        edit.setText("")
        edit.setPlaceholderText("")

        def edit_back() -> None:
            edit.setText(text)
            edit.setPlaceholderText(placeholder)
            edit.setCursorPosition(cursor)

        put_back = edit_back
    elif isinstance(widget, QProgressBar) and widget.isTextVisible() and widget.text():
        widget.setTextVisible(False)
        put_back = partial(widget.setTextVisible, True)
    elif isinstance(widget, QGroupBox) and widget.title():
        box, title = widget, widget.title()
        box.setTitle("")
        put_back = partial(box.setTitle, title)
    if put_back is None:
        blocker.unblock()
        return None
    restore = put_back

    def back() -> None:
        restore()
        blocker.unblock()

    return back


def _no_icon(widget: QWidget) -> Callable[[], None]:
    """A button's icon set aside for both drawings: a centred icon moves when the text goes."""
    if isinstance(widget, QAbstractButton) and not widget.icon().isNull():
        icon = widget.icon()
        widget.setIcon(QIcon())
        return lambda: widget.setIcon(icon)
    return lambda: None


def widget_texts(widget: QWidget) -> list[Measured]:
    """The text colours of one widget's own text, drawn with and without it."""
    if isinstance(widget, QTextEdit):
        return _document_texts(widget)
    # Drawn as the window shows it (a label in a list's row lies on the list's colour, not its own).
    window = widget.window()
    where = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
    if isinstance(widget, QGroupBox):  # its title only: the rest is its children's
        option = QStyleOptionGroupBox()
        widget.initStyleOption(option)
        label = widget.style().subControlRect(
            QStyle.ComplexControl.CC_GroupBox, option, QStyle.SubControl.SC_GroupBoxLabel, widget
        )
        where = QRect(where.topLeft() + label.topLeft(), label.size())
    restore_icon = _no_icon(widget)
    try:
        normal = window.grab(where).toImage()
        restore = _blank_text(widget)
        if restore is None:
            return []
        try:
            textless = window.grab(where).toImage()
        finally:
            restore()
    finally:
        restore_icon()
    needed = LARGE if _large(widget) else TEXT
    ground = widget.palette().color(widget.backgroundRole()) if isinstance(widget, QGroupBox) else None
    return [Measured(_name(widget), ink, behind, n, needed) for ink, behind, n in colours(normal, textless, ground)]


def _document_texts(edit: QTextEdit) -> list[Measured]:
    """A text page's visible part drawn as its viewport draws it, then again with every character transparent:
    the page's colours, code blocks and pictures stay, only the text goes."""
    viewport, source = edit.viewport(), edit.document()
    offset = QPoint(edit.horizontalScrollBar().value(), edit.verticalScrollBar().value())

    def drawn(document: QTextDocument) -> QImage:
        image = QImage(viewport.size(), QImage.Format.Format_RGB32)
        image.fill(viewport.palette().color(viewport.backgroundRole()))
        painter = QPainter(image)
        painter.translate(-offset.x(), -offset.y())
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette = edit.palette()
        context.clip = QRectF(QRect(offset, viewport.size()))
        document.documentLayout().draw(painter, context)
        painter.end()
        return image

    copy = source.clone()
    copy.setDefaultFont(source.defaultFont())
    copy.setDocumentMargin(source.documentMargin())
    copy.setTextWidth(source.textWidth())
    normal = drawn(copy)
    unseen = QTextCharFormat()
    unseen.setForeground(QColor(0, 0, 0, 0))
    everything = QTextCursor(copy)
    everything.select(QTextCursor.SelectionType.Document)
    everything.mergeCharFormat(unseen)
    textless = drawn(copy)
    return [Measured(_name(edit), ink, behind, n, TEXT) for ink, behind, n in colours(normal, textless)]


class _NoTextPainter(QPainter):
    """Draws everything a delegate draws but its text (a delegate of ours draws text from Python)."""

    def drawText(self, *args: object) -> None:  # type: ignore[override]
        pass

    def drawStaticText(self, *args: object) -> None:
        pass


class _BlankDelegate(QStyledItemDelegate):
    """Qt's own delegate with no text (for the cells a delegate leaves to Qt)."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        option.text = ""


@dataclass(frozen=True)
class _Cell:
    """One cell drawn alone by a delegate, on the colour the view draws behind it."""

    size: QSize
    behind: QColor
    option: QStyleOptionViewItem
    index: QModelIndex

    def draw(self, painter_class: type[QPainter], delegate: QAbstractItemDelegate) -> QImage:
        image = QImage(self.size, QImage.Format.Format_RGB32)
        image.fill(self.behind)
        painter = painter_class(image)
        delegate.paint(painter, QStyleOptionViewItem(self.option), self.index)
        painter.end()
        return image


def view_texts(view: QAbstractItemView) -> list[Measured]:
    """Each visible cell's text colours, drawn by the view's delegate with and without its text."""
    model, viewport = view.model(), view.viewport()
    if model is None:
        return []
    found: list[Measured] = []
    blank = _BlankDelegate()
    selection = view.selectionModel()
    try:
        columns = model.columnCount(view.rootIndex())
    except TypeError:  # a list's model (QListWidget's) keeps columnCount private: one column
        columns = 1
    for row in range(model.rowCount(view.rootIndex())):
        for column in range(columns):
            index = model.index(row, column, view.rootIndex())
            rect = view.visualRect(index)
            if not rect.isValid() or not rect.intersects(viewport.rect()) or view.indexWidget(index) is not None:
                continue
            if not index.data():  # no text (a chart drawn in the cell): nothing to read
                continue
            option = QStyleOptionViewItem()
            option.initFrom(viewport)
            option.rect = QRect(QPoint(0, 0), rect.size())
            option.widget = view
            option.font = view.font()
            if selection is not None and selection.isSelected(index):
                option.state |= QStyle.StateFlag.State_Selected
            alternate = view.alternatingRowColors() and row % 2 == 1
            if alternate:
                option.features |= QStyleOptionViewItem.ViewItemFeature.Alternate
            behind = viewport.palette().color(
                viewport.palette().ColorRole.AlternateBase if alternate else viewport.palette().ColorRole.Base
            )
            delegate = view.itemDelegateForIndex(index)
            cell = _Cell(rect.size(), behind, option, index)
            normal = cell.draw(QPainter, delegate)
            textless = cell.draw(_NoTextPainter, delegate)
            if textless == normal:  # the text was drawn by Qt's own delegate
                textless = cell.draw(QPainter, blank)
            where = f"{_name(view)}[{row}, {column}]"
            found += [Measured(where, ink, b, n, TEXT) for ink, b, n in colours(normal, textless)]
    return found


TEXT_WIDGETS = (QLabel, QAbstractButton, QLineEdit, QProgressBar, QGroupBox, QTextEdit)


def visible_texts(top: QWidget) -> list[Measured]:
    """Every text colour drawn by the visible, enabled widgets under top (top included)."""
    found: list[Measured] = []
    for widget in [top, *top.findChildren(QWidget)]:
        if not widget.isVisible() or not widget.isEnabled() or widget.width() < 2 or widget.height() < 2:
            continue
        if isinstance(widget, QAbstractItemView) and not isinstance(widget, QTextEdit):
            found += view_texts(widget)
        elif isinstance(widget, TEXT_WIDGETS):
            found += widget_texts(widget)
    return found


def low_text_contrast(top: QWidget) -> list[str]:
    """Each text colour below its ratio, as '<widget>: <ink> on <behind> <ratio>:1 (needs <ratio>)'."""
    return [str(m) for m in visible_texts(top) if m.pixels >= MIN_PIXELS and m.ratio < m.needed]

"""Layout checks measured, not eyeballed: text that does not fit its widget, widgets that overlap, charts whose
labels leave the chart or overlap each other, windows larger than the screen, colours without contrast."""

from __future__ import annotations

import re

from PySide6.QtCore import QPoint, QRect, QRectF
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QLabel,
    QProgressBar,
    QStyle,
    QStyleOptionProgressBar,
    QToolButton,
    QWidget,
)

SLACK = 1  # pixels of rounding allowed
MIN_CONTRAST = 3.0  # WCAG's threshold for large text and graphics: legible, if not comfortable


def _luminance(c: QColor) -> float:
    def lin(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF())


def contrast(a: QColor, b: QColor) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _name(widget: QWidget) -> str:
    chain: list[str] = []
    w: QWidget | None = widget
    while w is not None and len(chain) < 4:
        chain.append(w.objectName() or type(w).__name__)
        w = w.parentWidget()
    return "/".join(reversed(chain))


def _short(text: str) -> str:
    text = re.sub(r"<[^>]+>", "", text)
    return text if len(text) <= 60 else text[:57] + "..."


def clipped_texts(top: QWidget) -> list[str]:
    """Labels, buttons, progress bars and chart labels whose text does not fit where it is drawn."""
    problems: list[str] = []
    for w in [top, *top.findChildren(QWidget)]:
        if not w.isVisible() or w.width() <= 0:
            continue
        if isinstance(w, QLabel) and w.text() and w.pixmap().isNull():
            if w.wordWrap():
                need_h = w.heightForWidth(w.width())
                if need_h > w.height() + SLACK:
                    problems.append(f"{_name(w)}: '{_short(w.text())}' needs {need_h}px of height, has {w.height()}")
            else:
                need_w = w.sizeHint().width()
                if need_w > w.width() + SLACK:
                    problems.append(f"{_name(w)}: '{_short(w.text())}' needs {need_w}px of width, has {w.width()}")
        elif isinstance(w, QAbstractButton) and w.text() and not isinstance(w, QToolButton):
            need = w.sizeHint()
            if need.width() > w.width() + SLACK or need.height() > w.height() + SLACK:
                problems.append(
                    f"{_name(w)}: button '{w.text()}' needs {need.width()}x{need.height()}, has {w.width()}x{w.height()}"
                )
        elif isinstance(w, QProgressBar) and w.isTextVisible() and w.maximum() > 0:
            option = QStyleOptionProgressBar()
            w.initStyleOption(option)
            text_rect = w.style().subElementRect(QStyle.SubElement.SE_ProgressBarLabel, option, w)
            text_need = w.fontMetrics().horizontalAdvance(w.text())
            if text_need > text_rect.width() + SLACK:
                problems.append(f"{_name(w)}: progress text '{w.text()}' needs {text_need}px, has {text_rect.width()}")
        label_rects = getattr(w, "label_rects", None)
        if callable(label_rects):
            problems += chart_problems(w, label_rects())
    return problems


def chart_problems(chart: QWidget, rects: list[tuple[str, QRectF]]) -> list[str]:
    """A painted chart's texts: each inside the chart, none over another."""
    problems = []
    bounds = QRectF(chart.rect()).adjusted(-SLACK, -SLACK, SLACK, SLACK)
    for text, rect in rects:
        if not bounds.contains(rect):
            problems.append(
                f"{_name(chart)}: '{text}' at {rect.getRect()} leaves the chart ({chart.width()}x{chart.height()})"
            )
    for i, (text, rect) in enumerate(rects):
        for other, orect in rects[i + 1 :]:
            shared = rect.intersected(orect)
            if shared.width() > SLACK and shared.height() > SLACK:
                problems.append(f"{_name(chart)}: '{text}' overlaps '{other}'")
    return problems


def overlapping_widgets(top: QWidget) -> list[str]:
    """Visible labels and buttons (text bearers) of one parent whose rectangles overlap."""
    problems = []
    by_parent: dict[int, list[QWidget]] = {}
    for w in top.findChildren(QWidget):
        if w.isVisible() and isinstance(w, (QLabel, QAbstractButton)) and w.parentWidget() is not None:
            by_parent.setdefault(id(w.parentWidget()), []).append(w)
    for siblings in by_parent.values():
        for i, a in enumerate(siblings):
            for b in siblings[i + 1 :]:
                shared = a.geometry().intersected(b.geometry())
                if shared.width() > SLACK and shared.height() > SLACK:
                    problems.append(f"{_name(a)} overlaps {_name(b)}")
    return problems


def too_large(top: QWidget, width: int = 1280, height: int = 800) -> list[str]:
    size = top.size()  # the window's own size; a window manager's frame is not ours to count
    if size.width() > width or size.height() > height:
        return [f"{_name(top)} is {size.width()}x{size.height()}, larger than {width}x{height}"]
    hint = top.minimumSizeHint()
    if hint.width() > width or hint.height() > height:
        return [f"{_name(top)} needs at least {hint.width()}x{hint.height()}, more than {width}x{height}"]
    return []


def _scrolls(widget: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None:
        if (
            isinstance(parent, QAbstractScrollArea)
            and parent.isWindow() is False
            and parent.viewport().isAncestorOf(widget)
        ):
            return True
        parent = parent.parentWidget()
    return False


def off_screen(top: QWidget) -> list[str]:
    """The window beyond its screen's available area, or a button of it below (or beside) the screen's edge:
    a button the user cannot reach without moving the window by keyboard tricks."""
    screen = top.screen()
    if screen is None:
        return []
    area = screen.availableGeometry()
    frame = top.frameGeometry()
    problems = []
    if not area.contains(frame):
        problems.append(f"{_name(top)} at {frame.getRect()} leaves the screen's available area {area.getRect()}")
    for button in top.findChildren(QAbstractButton):
        if not button.isVisible() or isinstance(button, QToolButton) or not button.text():
            continue
        if button.window() is not top or _scrolls(button):
            continue  # another window's, or reached by scrolling its scroll area
        rect = QRect(button.mapToGlobal(QPoint(0, 0)), button.size())
        if not area.contains(rect):
            problems.append(
                f"{_name(button)}: button '{button.text()}' at {rect.getRect()} is off the screen {area.getRect()}"
            )
    return problems


_COLOUR = re.compile(r"color:\s*(#[0-9a-fA-F]{6})")


def low_contrast(top: QWidget) -> list[str]:
    """Coloured rich text (ok / warning / error) that does not stand out from its background."""
    problems = []
    for w in [top, *top.findChildren(QLabel)]:
        if not isinstance(w, QLabel) or not w.isVisible():
            continue
        background = w.palette().color(w.backgroundRole())
        for colour in set(_COLOUR.findall(w.text())):
            ratio = contrast(QColor(colour), background)
            if ratio < MIN_CONTRAST:
                problems.append(f"{_name(w)}: {colour} on {background.name()} has contrast {ratio:.2f}")
    return problems


def audit(top: QWidget, screen: tuple[int, int] | None = (1280, 800)) -> list[str]:
    """Everything above for one window (the size check only where the screen is 1280x800 logical pixels, or the
    given size); no button off its screen."""
    QGuiApplication.processEvents()
    problems = clipped_texts(top) + overlapping_widgets(top) + low_contrast(top) + off_screen(top)
    if screen is not None:
        problems += too_large(top, *screen)
    return problems

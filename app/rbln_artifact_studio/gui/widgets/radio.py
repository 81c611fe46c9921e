"""Radio buttons whose indicator reads on any palette, and whose label may carry a tone (a destructive choice).

Fusion rings its radio indicator in the window colour darkened (1.2:1 on the dark palette, 2:1 on the light one),
so "To a copy" and "In place" were barely told apart. Only the radio buttons get this style: a proxy style set on
the application would call into Python for every primitive every widget paints.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QRectF
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QProxyStyle, QRadioButton, QStyle, QStyleOption, QWidget

from rbln_artifact_studio.gui.app.tones import Tone, tone

TONE_PROPERTY = "labelTone"  # a Tone's value: the label is drawn in that tone


def ring_colour(palette: QPalette, enabled: bool = True) -> QColor:
    """The indicator's ring: the text colour a third of the way to the window (over 3:1 on it)."""
    group = QPalette.ColorGroup.Active if enabled else QPalette.ColorGroup.Disabled
    text, window = palette.color(group, QPalette.ColorRole.WindowText), palette.color(QPalette.ColorRole.Window)
    return QColor.fromRgbF(
        text.redF() * 0.7 + window.redF() * 0.3,
        text.greenF() * 0.7 + window.greenF() * 0.3,
        text.blueF() * 0.7 + window.blueF() * 0.3,
    )


def label_colour(button: QRadioButton) -> QColor:
    """The colour the button's label is drawn in on its palette."""
    kind = button.property(TONE_PROPERTY)
    if kind:
        return QColor(tone(Tone(kind), button.palette()))
    return button.palette().color(QPalette.ColorRole.WindowText)


class _LegibleRadioStyle(QProxyStyle):
    """The application's style, with the radio indicator and a toned label drawn from the palette in use."""

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        if element != QStyle.PrimitiveElement.PE_IndicatorRadioButton:
            super().drawPrimitive(element, option, painter, widget)
            return
        enabled = bool(option.state & QStyle.StateFlag.State_Enabled)
        rect = QRectF(option.rect).adjusted(1.5, 1.5, -1.5, -1.5)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(ring_colour(option.palette, enabled))
        painter.setBrush(option.palette.color(QPalette.ColorRole.Base))
        painter.drawEllipse(rect)
        if option.state & QStyle.StateFlag.State_On:
            painter.setPen(QColor(0, 0, 0, 0))
            painter.setBrush(option.palette.color(QPalette.ColorRole.Text))
            inner = rect.width() * 0.25
            painter.drawEllipse(rect.adjusted(inner, inner, -inner, -inner))
        painter.restore()

    def drawControl(
        self,
        element: QStyle.ControlElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        if element == QStyle.ControlElement.CE_RadioButtonLabel and isinstance(widget, QRadioButton):
            kind = widget.property(TONE_PROPERTY)
            if kind:
                option.palette.setColor(QPalette.ColorRole.WindowText, label_colour(widget))
        super().drawControl(element, option, painter, widget)


_STYLE: list[_LegibleRadioStyle] = []


def _style() -> _LegibleRadioStyle:
    if not _STYLE:
        style = _LegibleRadioStyle()
        app = QApplication.instance()
        if isinstance(app, QObject):
            style.setParent(app)  # lives as long as the application; a widget does not own its style
        _STYLE.append(style)
    return _STYLE[0]


def legible_radio(text: str, object_name: str = "", label_tone: Tone | None = None) -> QRadioButton:
    """A radio button with a legible indicator; its label in label_tone when one is given."""
    button = QRadioButton(text)
    if object_name:
        button.setObjectName(object_name)
    if label_tone is not None:
        button.setProperty(TONE_PROPERTY, label_tone.value)
    button.setStyle(_style())
    return button

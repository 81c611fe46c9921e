"""Light or dark: follows the desktop's color scheme live (Qt's QStyleHints.colorScheme), or the user's choice.

View ▸ Theme offers System / Light / Dark; the choice is remembered in the settings file and `--theme` sets it
for one run. Widgets read colours from the palette (tones.py, chart colours), so a new palette repaints them.
"""

from __future__ import annotations

from enum import Enum

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QAction, QActionGroup, QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QMenu, QWidget

from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.app.tones import is_dark, retone

THEME_KEY = "view/theme"


class Theme(str, Enum):
    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"


def _palette(colours: dict[QPalette.ColorRole, str], disabled: str) -> QPalette:
    p = QPalette()
    for role, colour in colours.items():
        p.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(disabled))
    return p


R = QPalette.ColorRole


def dark_palette() -> QPalette:
    """A dark palette close to KDE Breeze Dark and GNOME's dark style."""
    return _palette(
        {
            R.Window: "#353535",
            R.WindowText: "#eeeeee",
            R.Base: "#2a2a2a",
            R.AlternateBase: "#323232",
            R.Text: "#eeeeee",
            R.Button: "#454545",
            R.ButtonText: "#eeeeee",
            R.ToolTipBase: "#2a2a2a",
            R.ToolTipText: "#eeeeee",
            R.PlaceholderText: "#9e9e9e",
            R.Highlight: "#1d5e9e",  # white text on it (a selected row, a progress bar's chunk) at 6.7:1
            R.HighlightedText: "#ffffff",
            R.Link: "#64b5f6",
            R.BrightText: "#ff8a80",
            R.Light: "#505050",
            R.Midlight: "#404040",
            R.Mid: "#2f2f2f",
            R.Dark: "#1f1f1f",
            R.Shadow: "#141414",
        },
        "#7f7f7f",
    )


def light_palette() -> QPalette:
    """Fusion's light palette, whatever scheme the desktop is in, with its text on a selection and its placeholders
    at 4.5:1 or more."""
    return _palette(
        {
            R.Window: "#efefef",
            R.WindowText: "#000000",
            R.Base: "#ffffff",
            R.AlternateBase: "#f7f7f7",
            R.Text: "#000000",
            R.Button: "#efefef",
            R.ButtonText: "#000000",
            R.ToolTipBase: "#ffffdc",
            R.ToolTipText: "#000000",
            R.PlaceholderText: "#6b6b6b",  # 5.3:1 on the white of a field (Fusion's #7f7f7f: 4.0)
            R.Highlight: "#1c64a0",  # white text on it at 6.2:1 (Fusion's #308cc6: 3.7)
            R.HighlightedText: "#ffffff",
            R.Link: "#0000ff",
            R.BrightText: "#ffffff",
            R.Light: "#ffffff",
            R.Midlight: "#cacaca",
            R.Mid: "#b8b8b8",
            R.Dark: "#9f9f9f",
            R.Shadow: "#767676",
        },
        "#bebebe",
    )


_SYSTEM_PALETTE: list[QPalette] = []


def system_palette() -> QPalette:
    """The palette the desktop gave the application, as it was before a theme was first applied."""
    if not _SYSTEM_PALETTE:
        _SYSTEM_PALETTE.append(QPalette(QGuiApplication.palette()))
    return _SYSTEM_PALETTE[0]


def saved_theme(settings: Settings) -> Theme:
    value = settings.store.value(THEME_KEY, Theme.SYSTEM.value)
    try:
        return Theme(str(value))
    except ValueError:
        return Theme.SYSTEM


class ThemeControl(QObject):
    """Applies the theme to the application's palette, and again whenever the desktop's scheme changes."""

    changed = Signal(Theme)

    def __init__(self, settings: Settings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.theme = saved_theme(settings)
        self._system_palette = system_palette()
        self._scheme = QGuiApplication.styleHints().colorScheme()
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_scheme_changed)
        self.menu = self._build_menu()
        self._apply(written_dark=is_dark())  # the window's texts so far carry the application palette's tones

    def _build_menu(self) -> QMenu:
        parent = self.parent()
        menu = QMenu("T&heme", parent if isinstance(parent, QWidget) else None)
        menu.setObjectName("themeMenu")
        group = QActionGroup(menu)
        self.actions: dict[Theme, QAction] = {}
        for theme, text in ((Theme.SYSTEM, "&System"), (Theme.LIGHT, "&Light"), (Theme.DARK, "&Dark")):
            action = QAction(text, menu)
            action.setObjectName(f"actionTheme{theme.value.title()}")
            action.setCheckable(True)
            action.setChecked(theme is self.theme)
            action.triggered.connect(lambda _checked=False, t=theme: self.choose(t))
            group.addAction(action)
            menu.addAction(action)
            self.actions[theme] = action
        return menu

    def choose(self, theme: Theme, remember: bool = True) -> None:
        """Use this theme from now on; remembered in the settings unless it is for this run only (--theme)."""
        self.theme = theme
        self.actions[theme].setChecked(True)
        if remember:
            self.settings.store.setValue(THEME_KEY, theme.value)
        self._apply()

    @property
    def dark(self) -> bool:
        if self.theme is Theme.SYSTEM:
            return self._scheme == Qt.ColorScheme.Dark
        return self.theme is Theme.DARK

    @Slot(Qt.ColorScheme)
    def _on_scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        self._scheme = scheme
        window = self.parent()
        if isinstance(window, QWidget) and not window.isVisible():
            return  # a closed window's choice no longer sets the application's palette
        if self.theme is Theme.SYSTEM:
            self._apply()

    def _apply(self, written_dark: bool | None = None) -> None:
        """The theme's palette for the application; the tones in texts rewritten unless they were written for a
        palette as dark as this one (written_dark, known at start: the walk over every widget is ~25 M
        instructions before the first paint, docs/performance.md row 7)."""
        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return
        # The desktop's own palette where it matches the scheme (a platform theme that follows it), else ours.
        system = self._system_palette if self.theme is Theme.SYSTEM else None
        if system is not None and is_dark(system) == self.dark:
            palette = system
        else:
            palette = dark_palette() if self.dark else light_palette()
        app.setPalette(palette)
        if written_dark is None or written_dark != is_dark(palette):
            retone(app.topLevelWidgets(), is_dark(palette))
        self.changed.emit(self.theme)

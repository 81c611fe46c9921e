"""The Help menu: Getting Started (a page inside the app), Keyboard Shortcuts (listed from the window's actions, so
it never drifts from them), Documentation (the guide in docs/, shown inside the app), Copy Version Information, and
About."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QMenu, QStatusBar, QWidget

from rbln_artifact_studio.core.resources import docs_dir
from rbln_artifact_studio.gui.app.tones import escaped
from rbln_artifact_studio.gui.models.backend_status import BackendStatus
from rbln_artifact_studio.gui.window.window_actions import add_action

if TYPE_CHECKING:  # types only: the help pages load when the first is shown
    from rbln_artifact_studio.gui.window.help_page import GuideViewer, HelpPage
    from rbln_artifact_studio.gui.window.window_dialogs import DialogLauncher

DOCS_PAGE = "desktop.md"  # the desktop app's page; the others are linked from it


def plain(text: str) -> str:
    """A menu text as read: "&Open Folder…" → "Open Folder…" ("&&" stays one "&")."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def shortcut_rows(window: QWidget) -> list[tuple[str, str]]:
    """(action, keys) for every action of the window that has a shortcut, in menu order where it has one."""
    seen: set[int] = set()
    rows: list[tuple[str, str]] = []
    actions = [a for menu in window.findChildren(QMenu) for a in menu.actions()] + window.findChildren(QAction)
    for action in actions:
        keys = [k for k in action.shortcuts() if not k.isEmpty()]
        if id(action) in seen or not keys or action.isSeparator() or not action.text():
            continue
        seen.add(id(action))
        text = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in keys)
        rows.append((plain(action.text()), text))
    return rows


def getting_started_html(shortcuts: dict[str, str]) -> str:
    """The three jobs the app exists for, each with the action (and its keys) that starts it."""

    def act(name: str) -> str:
        keys = shortcuts.get(name)
        return f"<b>{escaped(name)}</b>" + (f" ({escaped(keys)})" if keys else "")

    return f"""
<h2>Getting started</h2>
<p>RBLN Artifact Studio is for three jobs on the artifacts optimum-rbln compiles for Rebellions NPUs.
No NPU is needed: the built-in simulator stands in for the compiler.</p>
<h3>1. See how an artifact fills its NPUs</h3>
<p>{act("Open Folder…")} a folder of compiled artifacts (or <a href="action:actionOpenDemo">open the demo
workspace</a>), then select a row: the panel on the right shows <code>kvcache_num_blocks</code> against the floor
and the full pool, and the DRAM of each NPU: reserve, weights, workspace, KV cache and free. Type a budget in
<i>If compiled at memory_budget =</i> to see what a compile at that budget would give; nothing is written.</p>
<h3>2. Compile with a memory budget that leaves headroom</h3>
<p>{act("Compile…")}: a model, a target, a shape and a memory budget (a fraction like 0.8, a percentage like 80%,
or bytes like 10GB, which optimum-rbln reads as 10 GiB), previewed before anything runs.
<a href="action:actionCompile">Compile now</a>.</p>
<h3>3. Resize the KV cache of a compiled artifact</h3>
<p>{act("Resize KV Cache…")}: a new block count or a budget to fit, checked against the floor and the NPU's DRAM as
you type, written into a copy or (overwriting it) in place. {act("Plan Co-location…")} tells whether several
artifacts fit one NPU together.</p>
<p>Artifacts can also sit on NPU servers over SSH (File ▸ Connect to Server…) and in S3 buckets
(File ▸ Open Bucket…). Every action has its <code>rbln-studio-cli</code> command: a job's right-click menu copies
it. Help ▸ Keyboard Shortcuts lists the keys; Help ▸ Documentation shows the full guide.</p>
"""


def demo_tour_html(shortcuts: dict[str, str]) -> str:
    """What to try on the demo workspace (`rbln-studio --demo`), each step on one of its five artifacts."""

    def keys(name: str) -> str:
        found = shortcuts.get(name)
        return f" ({escaped(found)})" if found else ""

    return f"""
<h2>Try the demo workspace</h2>
<p>Five simulator artifacts, built on this computer; nothing here needs an NPU, and the demo is yours to change.</p>
<ol>
<li><b>See how an artifact fills its NPUs.</b> Select <code>qwen3-8b-rbln-cr13</code>: the panel on the right shows
kvcache_num_blocks 21 against the floor and the full pool, and the DRAM of each of RBLN-CR13's four chiplets.</li>
<li><b>Ask what a budget would give.</b> Type <code>0.5</code> in <i>If compiled at memory_budget =</i>: a compile
at that budget gives more blocks; nothing is written.</li>
<li><b>Read a warning.</b> Select <code>llama-3.2-1b-rbln-ca25-kv18</code>: it was grown past its full pool, and
its status says so (hover it for the reason).</li>
<li><b>Resize.</b> With a row selected, <a href="action:actionResize">Resize KV Cache…</a>{keys("Resize KV Cache…")}
checks a new count against the floor and the NPU's DRAM as you type; to a copy, nothing is overwritten.</li>
<li><b>Plan.</b> Select two or more of the RBLN-CA25 artifacts and <a href="action:actionPlan">Plan Co-location…</a>
{keys("Plan Co-location…")}: do they fit one NPU together?</li>
<li><b>Compile.</b> <a href="action:actionCompile">Compile a model</a>{keys("Compile…")} with the built-in
simulator: a model, a target, a shape and a budget, previewed before anything runs.</li>
</ol>
<p>Help ▸ Getting Started has the same jobs for your own artifacts; Help ▸ Documentation the whole guide.</p>
"""


class HelpMenu(QObject):
    """Builds the Help menu's actions on the window and opens what they show."""

    def __init__(
        self, window: QWidget, status: QStatusBar, backend_status: BackendStatus, dialogs: Callable[[], DialogLauncher]
    ) -> None:
        """window: holds the actions (its own, listed as shortcuts) and parents the pages; dialogs: the window's
        launcher, which opens the guide and words the About box's text."""
        super().__init__(window)
        self.window, self.status, self.backend_status, self.dialogs = window, status, backend_status, dialogs
        a = partial(add_action, window)
        self.action_getting_started = a(
            "actionGettingStarted", "&Getting Started", self.show_getting_started, QKeySequence.StandardKey.HelpContents
        )
        self.action_shortcuts = a("actionShortcuts", "&Keyboard Shortcuts", self.show_shortcuts, "Ctrl+/")
        self.action_docs = a("actionDocumentation", "&Documentation", self.open_documentation)
        self.action_copy_version = a("actionCopyVersion", "&Copy Version Information", self.copy_version)
        self.last_page: HelpPage | None = None
        self.last_guide: GuideViewer | None = None

    def fill(self, menu: QMenu, about: QAction) -> None:
        """The Help menu's actions, then the window's About."""
        menu.addActions([self.action_getting_started, self.action_shortcuts, self.action_docs])
        menu.addSeparator()
        menu.addAction(self.action_copy_version)
        menu.addAction(about)

    def _open(self, title: str, name: str, body: str) -> HelpPage:
        """A page of help (rich text whose action: links trigger the window's actions), shown."""
        # deferred: the help pages (a QTextBrowser and its styles) load when the first is shown, after the first paint
        from rbln_artifact_studio.gui.window.help_page import HelpPage

        page = HelpPage(title, name, body, self.window)
        page.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        page.actionRequested.connect(self._trigger)
        page.show()
        self.last_page = page
        return page

    @Slot(str)
    def _trigger(self, name: str) -> None:
        action = self.window.findChild(QAction, name)
        if action is not None and action.isEnabled():
            action.trigger()

    @Slot()
    def show_getting_started(self) -> HelpPage:
        shortcuts = dict(shortcut_rows(self.window))
        return self._open("Getting Started", "gettingStarted", getting_started_html(shortcuts))

    @Slot()
    def show_demo_tour(self) -> HelpPage:
        """What to try on the demo workspace: shown by `rbln-studio --demo`."""
        shortcuts = dict(shortcut_rows(self.window))
        return self._open("Try the Demo", "demoTour", demo_tour_html(shortcuts))

    @Slot()
    def show_shortcuts(self) -> HelpPage:
        rows = "".join(
            f"<tr><td>{escaped(name)}</td><td>&nbsp;&nbsp;<b>{escaped(keys)}</b></td></tr>"
            for name, keys in shortcut_rows(self.window)
        )
        body = f"<h2>Keyboard shortcuts</h2><table cellspacing='4'>{rows}</table>"
        return self._open("Keyboard Shortcuts", "keyboardShortcuts", body)

    @Slot()
    def open_documentation(self) -> GuideViewer | None:
        """The desktop app's guide inside the app (no launcher needed): docs/ of the checkout, or the copy the wheel
        ships in the package."""
        folder = docs_dir()
        if folder is None:
            self.status.showMessage("The documentation is not installed with this copy of the app.", 8_000)
            return None
        self.last_guide = self.dialogs().open_guide(folder / DOCS_PAGE)
        return self.last_guide

    @Slot()
    def copy_version(self) -> None:
        """The About box's text on the clipboard, for a report; the backends' lines once detection answers."""
        status = self.backend_status

        def copy() -> None:
            QGuiApplication.clipboard().setText(self.dialogs().version_text())
            self.status.showMessage("Copied the version information", 5_000)

        if status.backends is not None or status.error is not None:
            copy()
            return

        def when_detected() -> None:
            if not status.detecting:
                status.changed.disconnect(when_detected)
                copy()

        status.changed.connect(when_detected)
        status.detect()

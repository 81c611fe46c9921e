"""File ▸ Open vLLM Cache…: vllm-rbln's compiled-model cache as a place, its entries with their status, which entry a
`vllm serve` command will use, and a prune previewed before anything is removed. Every read and removal runs in a
job; the dialog shows what core/vllm_cache computed."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import S3_SCHEME, SSH_SCHEME, Location
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.core.vllm_cache.command import parse_serve
from rbln_artifact_studio.core.vllm_cache.entries import CacheEntry
from rbln_artifact_studio.core.vllm_cache.lookup import Lookup, difference_line, lookup, would_compile_lines
from rbln_artifact_studio.core.vllm_cache.prune import PrunePlan, plan_prune
from rbln_artifact_studio.gui.app.remedies import one_line
from rbln_artifact_studio.gui.models.jobs import JobFailure, JobManager
from rbln_artifact_studio.places.vllm_cache import CacheListing, cache_root, default_root, read_cache, remove_entries
from rbln_artifact_studio.places.vllm_cache import seed as seed_entry

COLUMNS = ("Status", "Entry", "Model", "Size", "Last used", "Owner", "Why")
STATUS_COLUMN = 0


def _when(seconds: int | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds)) if seconds else "—"


def _fill(table: QTableWidget, rows: list[list[str]]) -> None:
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            item = QTableWidgetItem(text)
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            table.setItem(r, c, item)
    table.resizeColumnsToContents()


def _table(columns: tuple[str, ...], parent: QWidget) -> QTableWidget:
    table = QTableWidget(0, len(columns), parent)
    table.setHorizontalHeaderLabels(list(columns))
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.verticalHeader().hide()
    table.horizontalHeader().setStretchLastSection(True)
    return table


def lookup_text(found: Lookup) -> str:
    """The answer to "Which entry will this serve?" in a few lines."""
    lines = [f"{found.result}: {found.key}"]
    lines += [f"warning: {w}" for w in found.warnings]
    lines += [f"near: {difference_line(d)}" for d in found.differences]
    lines += would_compile_lines(found.would_compile) if found.would_compile else []
    lines += [f"assumed: {a}" for a in found.assumed]
    return "\n".join(lines)


class PrunePreview(QDialog):
    """What a prune would remove, with each entry's size and the total freed, before anything is removed; the rules
    change the list as they are ticked. Accepted: `plan.remove` is what the user agreed to remove."""

    def __init__(self, parent: QWidget, entries: list[CacheEntry]) -> None:
        super().__init__(parent)
        self.setObjectName("prunePreview")
        self.setWindowTitle("Prune vLLM Cache")
        self.entries = entries
        self.stale = QCheckBox("Stale entries", self)
        self.incomplete = QCheckBox("Incomplete entries", self)
        self.older = QSpinBox(self)
        self.older.setRange(0, 3650)
        self.older.setSpecialValueText("any age")
        self.older.setSuffix(" days unused")
        self.keep_last = QSpinBox(self)
        self.keep_last.setObjectName("pruneKeepLast")
        self.keep_last.setRange(0, 1000)
        self.keep_last.setSpecialValueText("keep any number")
        self.keep_last.setPrefix("keep the last ")
        self.keep_last.setSuffix(" of each model")
        for box in (self.stale, self.incomplete):
            box.setChecked(True)
            box.toggled.connect(self._update)
        self.older.valueChanged.connect(self._update)
        self.keep_last.valueChanged.connect(self._update)
        self.table = _table(("Action", "Entry", "Size", "Why"), self)
        self.total = QLabel(self)
        self.total.setObjectName("pruneTotal")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.remove = self.buttons.addButton("Remove", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        rules = QHBoxLayout()
        for w in (self.stale, self.incomplete, QLabel("older than:", self), self.older, self.keep_last):
            rules.addWidget(w)
        layout = QVBoxLayout(self)
        layout.addLayout(rules)
        layout.addWidget(self.table)
        layout.addWidget(self.total)
        layout.addWidget(self.buttons)
        self.plan: PrunePlan
        self._update()

    @Slot()
    def _update(self) -> None:
        days = self.older.value()
        self.plan = plan_prune(
            self.entries,
            time.time(),
            self.stale.isChecked(),
            self.incomplete.isChecked(),
            days * 86400.0 if days else None,
            self.keep_last.value() or None,
        )
        rows = [["remove", e.key, format_bytes(e.size), why] for e, why in self.plan.remove]
        rows += [["keep", e.key, format_bytes(e.size), why] for e, why in self.plan.keep]
        _fill(self.table, rows)
        count = len(self.plan.remove)
        self.total.setText(f"{count} entries to remove, {format_bytes(self.plan.freed)} freed. Nothing is removed yet.")
        self.remove.setText(f"Remove {count} Entries")
        self.remove.setEnabled(count > 0)


class VllmCacheDialog(QDialog):
    """A vLLM cache's entries (Status column), "Which entry will this serve?" and Prune…; Show in Artifacts opens its
    compiled_models/ in the main table, where inspect, resize and details work on each entry."""

    listed = Signal()  # the table shows a new reading
    lookedUp = Signal(str)  # the answer to "Which entry will this serve?"
    pruned = Signal(list)  # the removal's results, one dict per entry
    seeded = Signal(str)  # the entry a compile wrote for the command line

    def __init__(
        self,
        parent: QWidget,
        jobs: JobManager,
        root: Location | None,
        open_in_table: Callable[[Location], object] | None = None,
    ) -> None:
        """root: the cache's folder (None: this computer's, $VLLM_CACHE_ROOT else ~/.cache/vllm)."""
        super().__init__(parent)
        self.setObjectName("vllmCacheDialog")
        self.setWindowTitle("vLLM Cache")
        self.jobs, self.open_in_table = jobs, open_in_table
        self.listing: CacheListing | None = None
        self._note = ""  # what the last removal did, said with the next reading
        layout = QVBoxLayout(self)
        layout.addLayout(self._build_root(root or default_root()))
        self.table = _table(COLUMNS, self)
        self.table.setObjectName("vllmCacheTable")
        layout.addWidget(self.table, 1)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        layout.addLayout(self._build_serve())
        self.answer = QLabel(self)
        self.answer.setObjectName("lookupAnswer")
        self.answer.setWordWrap(True)
        self.answer.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.answer)
        layout.addLayout(self._build_actions())
        self.resize(900, 520)
        self._set_busy(False)

    def _build_root(self, root: Location) -> QHBoxLayout:
        """The cache's root, as typed, and Read."""
        self.root_edit = QLineEdit(str(root), self)
        self.root_edit.setToolTip(f"The cache's root: a folder here, {SSH_SCHEME}HOST/PATH or {S3_SCHEME}BUCKET/PREFIX")
        self.read_button = QPushButton("&Read", self)
        self.read_button.clicked.connect(self.read)
        self.root_edit.returnPressed.connect(self.read)
        row = QHBoxLayout()
        row.addWidget(QLabel("Cache:", self))
        row.addWidget(self.root_edit, 1)
        row.addWidget(self.read_button)
        return row

    def _build_serve(self) -> QHBoxLayout:
        """The command line, Which Entry Will This Serve? and Compile as Its Entry (with its block count)."""
        self.command_edit = QLineEdit(self)
        self.command_edit.setPlaceholderText("vllm serve MODEL --max-num-seqs 8 --max-model-len 8192 --block-size 4096")
        self.lookup_button = QPushButton("Which Entry Will This &Serve?", self)
        self.lookup_button.clicked.connect(self.look_up)
        self.seed_blocks = QSpinBox(self)
        self.seed_blocks.setRange(0, 1 << 20)
        self.seed_blocks.setSpecialValueText("blocks: fit the budget")
        self.seed_blocks.setPrefix("blocks: ")
        self.seed_button = QPushButton("&Compile as Its Entry", self)
        self.seed_button.setToolTip(
            "Compile the model into the folder this command will hit, with the block count chosen (0: what "
            "--gpu-memory-utilization fits), so vllm-rbln finds it instead of compiling on first start"
        )
        self.seed_button.clicked.connect(self.seed)
        row = QHBoxLayout()
        for w in (self.command_edit, self.lookup_button, self.seed_blocks, self.seed_button):
            row.addWidget(w, 1 if w is self.command_edit else 0)
        return row

    def _build_actions(self) -> QHBoxLayout:
        """Show in Artifacts and Prune…"""
        self.prune_button = QPushButton("&Prune…", self)
        self.prune_button.clicked.connect(self.open_prune)
        self.show_button = QPushButton("Show in &Artifacts", self)
        self.show_button.setToolTip("Open its compiled_models/ in the main table: inspect, resize and details there")
        self.show_button.clicked.connect(self.show_in_table)
        self.show_button.setEnabled(self.open_in_table is not None)
        row = QHBoxLayout()
        row.addWidget(self.show_button)
        row.addStretch(1)
        row.addWidget(self.prune_button)
        return row

    def _set_busy(self, busy: bool) -> None:
        for w in (self.read_button, self.lookup_button, self.seed_button):
            w.setEnabled(not busy)
        self.prune_button.setEnabled(not busy and bool(self.listing and self.listing.entries))

    def _root(self) -> Location | None:
        try:
            return cache_root(self.root_edit.text().strip())
        except StudioError as exc:
            self.message.setText(one_line(exc))
            return None

    @Slot()
    def read(self) -> None:
        """Read the cache's entries in a job; the table shows them when it is done."""
        root = self._root()
        if root is None:
            return
        self._set_busy(True)
        self.message.setText(f"Reading {root}…")
        job = self.jobs.submit(f"Read vLLM cache {root}", lambda ctx: read_cache(root))
        job.succeeded.connect(self._show)
        job.failed.connect(self._failed)

    @Slot(object)
    def _failed(self, failure: JobFailure) -> None:
        self._set_busy(False)
        self.message.setText(failure.reason)

    @Slot(object)
    def _show(self, listing: CacheListing) -> None:
        self.listing = listing
        rows = [
            [e.status, e.key, e.model or "—", format_bytes(e.size), _when(e.used), e.owner or "—", "; ".join(e.reasons)]
            for e in listing.entries
        ]
        _fill(self.table, rows)
        counts: dict[str, int] = {}
        for e in listing.entries:
            counts[e.status] = counts.get(e.status, 0) + 1
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no entries"
        total = format_bytes(sum(e.size for e in listing.entries))
        self.message.setText(f"{listing.root}: {summary}, {total}.{self._note}")
        self._note = ""
        self._set_busy(False)
        self.listed.emit()

    @Slot()
    def look_up(self) -> None:
        """Which entry the command line will use, in a job (it may read the model's config.json)."""
        words = self._command_words()
        if words is None:
            return
        entries = list(self.listing.entries) if self.listing else []
        self._set_busy(True)
        job = self.jobs.submit(
            "Which entry will this serve?", lambda ctx: lookup_text(lookup(parse_serve(words), entries))
        )
        job.succeeded.connect(self._answered)
        job.failed.connect(lambda failure: self._answered(failure.reason))

    @Slot(object)
    def _answered(self, text: str) -> None:
        self._set_busy(False)
        self.answer.setText(text)
        self.lookedUp.emit(text)

    def _command_words(self) -> list[str] | None:
        text = self.command_edit.text().strip()
        if not text:
            self.answer.setText("Type the `vllm serve` command line first.")
            return None
        try:
            return shlex.split(text)
        except ValueError as exc:
            self.answer.setText(f"The command line does not parse: {exc}.")
            return None

    @Slot()
    def seed(self) -> None:
        """Compile into the entry the command will hit (a job that writes), then read the cache again."""
        root, words = self._root(), self._command_words()
        if root is None or words is None:
            return
        blocks = self.seed_blocks.value() or None
        self._set_busy(True)
        job = self.jobs.submit(
            f"Compile into vLLM cache {root}", lambda ctx: seed_entry(root, parse_serve(words), blocks)[0], writes=True
        )
        job.succeeded.connect(self._seeded)
        job.failed.connect(self._failed)

    @Slot(object)
    def _seeded(self, where: object) -> None:
        self._note = f" Wrote {where}."
        self.seeded.emit(str(where))
        self.read()

    @Slot()
    def open_prune(self) -> PrunePreview | None:
        """The preview; on Remove, the removal runs in a job and the cache is read again."""
        if self.listing is None:
            return None
        preview = PrunePreview(self, self.listing.entries)
        preview.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        preview.accepted.connect(lambda: self._remove(preview.plan))
        preview.open()
        return preview

    def _remove(self, plan: PrunePlan) -> None:
        assert self.listing is not None
        root, chosen = self.listing.root, [e for e, _ in plan.remove]
        self._set_busy(True)
        job = self.jobs.submit(f"Prune vLLM cache {root}", lambda ctx: remove_entries(root, chosen), writes=True)
        job.succeeded.connect(self._removed)
        job.failed.connect(self._failed)

    @Slot(object)
    def _removed(self, results: list[dict[str, object]]) -> None:
        kept = [f"{r['name']}: {r.get('reason')}" for r in results if not r.get("removed")]
        freed = sum(int(str(r.get("freed") or 0)) for r in results)
        self._note = f" Freed {format_bytes(freed)}." + (" Kept: " + "; ".join(kept) if kept else "")
        self.pruned.emit(results)
        self.read()

    @Slot()
    def show_in_table(self) -> None:
        root = self._root()
        if root is not None and self.open_in_table is not None:
            self.open_in_table(root.child("compiled_models"))

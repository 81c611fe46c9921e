"""What a scan of an opened place is asked (ScanRequest) and what it sends back, message by message: rows found or
gone (with the folders to watch), progress, log lines, how it ended.

Light on purpose, and tuples: the window's models name these at its first paint (docs/performance.md, row 7), the
scan process and the workers that read places elsewhere make them, and a batch unpickles as plain tuples. The reader
that sends them is folder_scan.scan_folders.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from rbln_artifact_studio.gui.models.table_rows import TableRow


class ScanRequest(NamedTuple):
    """What to read: parts (folders) of the opened location root (a folder here, on a server, in a bucket), and the
    artifacts the table already shows there (paths as scanned)."""

    root: str
    folders: list[str]
    known: Sequence[str] = ()
    opening: bool = False  # the root itself is opened: a root that is no folder is an error
    whole: bool = False
    """Read every artifact of folders again (F5), not only what changed (a folder here's rescan after a change on
    disk); a place elsewhere is always read whole. Known rows under folders that the read does not find are gone."""


class RowsRemoved(NamedTuple):
    """Scan message: artifacts gone from a rescanned folder, and folders to watch."""

    paths: list[str]
    watch: list[str]


class RowsFound(NamedTuple):
    """Scan message: a batch of rows to add or update, and the folders above them to watch."""

    rows: list[TableRow]
    watch: list[str]


class RowsRead(NamedTuple):
    """Scan message: every artifact has its row; the full checks of the rows still "checking" follow."""

    artifacts: int  # how many (not `count`: a tuple has that method)


class Progress(NamedTuple):
    done: int
    total: int
    message: str


class Logged(NamedTuple):
    line: str


class Finished(NamedTuple):
    """The last message of a scan that ran to its end: how many artifacts it read."""

    artifacts: int


class Failed(NamedTuple):
    """The last message of a scan that stopped on an error the user can act on."""

    message: str
    hint: str | None = None


Message = RowsRemoved | RowsFound | RowsRead | Progress | Logged | Finished | Failed
Send = Callable[[Message], None]

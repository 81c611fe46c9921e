"""The artifact row: the one definition of the columns (titles, order, cell text) that the GUI's table, the CLI's
`scan` and every export (CSV, Markdown) show."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.location import LOCAL, host_of, is_local
from rbln_artifact_studio.core.sizes import format_bytes, format_bytes_exact

if TYPE_CHECKING:  # the table's module loads before the first paint; the scan's loads with the scan, in a worker
    from rbln_artifact_studio.core.fleet.scan import ArtifactSummary

Value = int | str | None


def _plain(value: int | str) -> str:
    return str(value)


def _count(value: int | str) -> str:
    return f"{value:,}" if isinstance(value, int) else value


def _bytes(value: int | str) -> str:
    return format_bytes(value) if isinstance(value, int) else value


def _bytes_exact(value: int | str) -> str:
    return format_bytes_exact(value) if isinstance(value, int) else value


def _local_time(value: int | str) -> str:
    """'2026-12-03 19:50' in the local time zone (sorted by the number behind it)."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(value)) if isinstance(value, int) else value


def _local_time_exact(value: int | str) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(value)) if isinstance(value, int) else value


@dataclass(frozen=True)
class Column:
    """One column: its title, how a row fills it (None when unknown) and how the value reads."""

    title: str
    value: Callable[[ArtifactSummary], Value]
    readable: Callable[[int | str], str] = _plain  # the table, the CLI and Markdown; CSV and JSON keep the value
    numeric: bool = False  # right-aligned, sorted as numbers
    exact: Callable[[int | str], str] | None = None  # the table's tooltip, where `readable` rounds
    width: int = 80  # the table's least default width in pixels (wider when the title needs it)
    missing: Callable[[ArtifactSummary], str | None] | None = None  # words for a value that is None for a reason

    def text(self, row: ArtifactSummary, unknown: str = "?") -> str:
        value = self.value(row)
        if value is None:
            return (self.missing(row) if self.missing else None) or unknown
        return self.readable(value)


DECODER_KIND = "decoder-only"


def _not_applicable(row: ArtifactSummary) -> str | None:
    """Floor and full pool of a model without a KV cache: a dash, not '?' (nothing is unknown)."""
    return "—" if row.kv_note and row.kind not in (None, DECODER_KIND, "multimodal") else None


def row_host(row: ArtifactSummary) -> str:
    """The Host column's text ('' here): a row on this computer is told from its path alone, without parsing it."""
    return "" if is_local(row.path) else host_of(row.where)


def _no_kv(row: ArtifactSummary) -> str | None:
    """A KV cell without a figure: 'no KV cache' for kinds without one, 'unknown' where the figure is unknown."""
    if not row.kv_note:
        return None
    return "unknown" if row.kind in (None, DECODER_KIND, "multimodal") else "no KV cache"


# What an ops engineer reads first comes first: status and the KV cache figures fit in the table's part of a
# 1280-pixel window; the long model id and the size on disk come last.
COLUMNS: tuple[Column, ...] = (
    Column("Name", lambda s: s.display_name, width=185),  # a linked folder shows its target
    Column("Status", lambda s: s.status.value, width=70),
    Column("kvcache_num_blocks", lambda s: s.kvcache_num_blocks, numeric=True, width=130, missing=_no_kv),
    Column("Floor", lambda s: s.num_min_blocks, numeric=True, width=50, missing=_not_applicable),
    Column("Full pool", lambda s: s.num_full_blocks, numeric=True, width=70, missing=_not_applicable),
    Column(
        "KV cache / NPU",
        lambda s: s.kv_bytes_per_npu,
        _bytes,
        numeric=True,
        exact=_bytes_exact,
        width=105,
        missing=_no_kv,
    ),
    Column("NPU", lambda s: s.npu, width=90),
    Column("Devices", lambda s: s.num_devices, numeric=True, width=60),
    Column("Host", lambda s: row_host(s) or LOCAL, width=0),  # as wide as its places (gui/window/place_column.py)
    Column("Batch", lambda s: s.batch_size, numeric=True, width=50),
    Column("max_seq_len", lambda s: s.max_seq_len, _count, numeric=True, width=90),
    Column("Block size", lambda s: s.block_size, _count, numeric=True),
    Column("Attention", lambda s: s.attn_impl),
    Column("Kind", lambda s: s.kind or DECODER_KIND, width=110),
    Column("Model", lambda s: s.model, width=170),
    Column("Size on disk", lambda s: s.size_on_disk, _bytes, numeric=True, exact=_bytes_exact, width=90),
    Column("Modified", lambda s: s.modified, _local_time, numeric=True, exact=_local_time_exact, width=120),
)
"""The artifact table's columns, in its order."""
TITLES = tuple(c.title for c in COLUMNS)

REASON = Column("Reason", lambda s: "; ".join([*s.problems, *([s.kv_note] if s.kv_note else [])]))
"""What the table shows as the status's tooltip; the reports give it a column of its own."""

REPORT_COLUMNS: tuple[Column, ...] = (*COLUMNS, REASON)
"""The columns of every export (CSV and Markdown): the table's, then the reason."""

CLI_COLUMNS: tuple[Column, ...] = COLUMNS[:8]
"""What `scan` prints per artifact: the table's first columns (the problems follow on their own lines)."""

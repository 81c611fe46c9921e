"""Fleet report: the artifact table as CSV, JSON or Markdown, for the CLI's scan --format and the GUI's Export."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rbln_artifact_studio.core.display.sizes import format_bytes
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary

FORMATS = ("csv", "json", "markdown")


@dataclass(frozen=True)
class Column:
    """One column of the artifact table: its header and how a row fills it (None when unknown)."""

    header: str
    value: Callable[[ArtifactSummary], object]
    human: Callable[[object], str] = str


def _bytes(value: object) -> str:
    return format_bytes(value) if isinstance(value, int) else str(value)


COLUMNS: tuple[Column, ...] = (
    Column("name", lambda r: r.name),
    Column("model", lambda r: r.model),
    Column("kind", lambda r: r.kind),
    Column("NPU", lambda r: r.npu),
    Column("devices", lambda r: r.num_devices),
    Column("batch", lambda r: r.batch_size),
    Column("max_seq_len", lambda r: r.max_seq_len),
    Column("block size", lambda r: r.block_size),
    Column("attention", lambda r: r.attn_impl),
    Column("kvcache_num_blocks", lambda r: r.kvcache_num_blocks),
    Column("floor", lambda r: r.num_min_blocks),
    Column("full pool", lambda r: r.num_full_blocks),
    Column("KV cache per NPU", lambda r: r.kv_bytes_per_npu, _bytes),
    Column("size on disk", lambda r: r.size_on_disk, _bytes),
    Column("status", lambda r: r.status.value),
    Column("reason", lambda r: "; ".join([*r.problems, *([r.kv_note] if r.kv_note else [])])),
)
"""The table's columns, in the table's order; byte columns are exact in CSV and JSON, readable in Markdown."""


def to_csv(rows: Iterable[ArtifactSummary]) -> str:
    """One header line and one line per artifact (exact integers; the folder path last), RFC 4180 quoting."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([c.header for c in COLUMNS] + ["path"])
    for row in rows:
        writer.writerow(["" if (v := c.value(row)) is None else v for c in COLUMNS] + [row.path])
    return out.getvalue()


def escape_markdown(text: str) -> str:
    """A table cell: pipes and backslashes escaped, line breaks flattened."""
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").split())


def to_markdown(rows: Iterable[ArtifactSummary]) -> str:
    """A GitHub-flavoured Markdown table with readable sizes; the folder path last, as in CSV."""
    lines = ["| " + " | ".join([*(c.header for c in COLUMNS), "path"]) + " |", "|" + "---|" * (len(COLUMNS) + 1)]
    for row in rows:
        cells = []
        for c in COLUMNS:
            value = c.value(row)
            cells.append("" if value is None or value == "" else escape_markdown(c.human(value)))
        cells.append(escape_markdown(row.path))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def to_json(rows: Iterable[ArtifactSummary]) -> str:
    """The `scan --json` array: every field of each row, exact integers, one compact row per line.

    Compact rows keep json on its C encoder (it falls back to Python with indent): fleets have thousands.
    """
    return "[\n" + ",\n".join(json.dumps(row.to_json()) for row in rows) + "\n]\n"


def render(rows: Iterable[ArtifactSummary], fmt: str) -> str:
    """The report in one of FORMATS."""
    writers = {"csv": to_csv, "json": to_json, "markdown": to_markdown}
    if fmt not in writers:
        raise StudioError(f"Unknown report format {fmt!r}; use one of {', '.join(FORMATS)}.")
    return writers[fmt](rows)

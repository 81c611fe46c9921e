"""Fleet report: the artifact table as CSV, JSON or Markdown, for the CLI's scan --format and the GUI's Export."""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.columns import CLI_COLUMNS, REPORT_COLUMNS
from rbln_artifact_studio.core.fleet.summary import ArtifactSummary
from rbln_artifact_studio.core.shown import line_shown, name_shown

HOST_COLUMN = next(c for c in REPORT_COLUMNS if c.title == "Host")
"""Where a row is: `local`, the server, or the bucket's URL; the text output shows it when several servers are read."""
_HOST_AT = REPORT_COLUMNS.index(HOST_COLUMN)

FORMATS = ("csv", "json", "markdown")


Hosts = Mapping[str, str]
"""A row's Host text by its path, where a reader names more than the plain host (the desktop's table, showing two
folders of one host, names each row's folder): the report says what the table says."""


def _host(row: ArtifactSummary, hosts: Hosts | None) -> str:
    """The row's Host text: hosts' where it names one, else the plain host."""
    return (hosts.get(row.path) if hosts else None) or HOST_COLUMN.text(row)


def to_csv(rows: Iterable[ArtifactSummary], hosts: Hosts | None = None) -> str:
    """One header line and one line per artifact (exact integers; the folder path last), RFC 4180 quoting."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([c.title for c in REPORT_COLUMNS] + ["Path"])
    for row in rows:
        cells = ["" if (v := c.value(row)) is None else v for c in REPORT_COLUMNS]
        cells[_HOST_AT] = _host(row, hosts)
        writer.writerow([*cells, row.path])
    return out.getvalue()


def escape_markdown(text: str) -> str:
    """A table cell: pipes and backslashes escaped, line breaks flattened."""
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").split())


def to_markdown(rows: Iterable[ArtifactSummary], hosts: Hosts | None = None) -> str:
    """A GitHub-flavoured Markdown table with readable sizes; the folder path last, as in CSV (names repeat)."""
    titles = [*(c.title for c in REPORT_COLUMNS), "Path"]
    lines = ["| " + " | ".join(titles) + " |", "|" + "---|" * len(titles)]
    for row in rows:
        cells = [*(c.text(row, unknown="") for c in REPORT_COLUMNS), row.path]
        cells[_HOST_AT] = _host(row, hosts)
        lines.append("| " + " | ".join(escape_markdown(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def display_width(text: str) -> int:
    """Terminal columns: wide (CJK) characters take two, combining marks none."""
    return sum(
        0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text
    )


def _pad(cell: str, width: int, right: bool) -> str:
    fill = " " * max(width - display_width(cell), 0)
    return fill + cell if right else cell + fill


def text_lines(rows: Iterable[ArtifactSummary], with_host: bool = False) -> Iterator[str]:
    """`scan`'s plain output: a title line, then per artifact a line of CLI_COLUMNS and its problems below it.
    Cells are aligned by display width, control characters escaped as ls does. with_host (several servers at
    once) adds the Host column after the name: the same folder on two servers is two rows."""
    columns = (CLI_COLUMNS[0], HOST_COLUMN, *CLI_COLUMNS[1:]) if with_host else CLI_COLUMNS
    widths = [max(len(c.title), 30 if i == 0 else 8) for i, c in enumerate(columns)]

    def line(cells: Iterable[str]) -> str:
        return "  ".join(
            _pad(name_shown(cell), w, c.numeric) for c, cell, w in zip(columns, cells, widths, strict=True)
        ).rstrip()

    yield line(c.title for c in columns)
    for row in rows:
        yield line(c.text(row) for c in columns)
        for problem in row.problems:
            yield f"    {line_shown(problem)}"


def json_pieces(rows: Iterable[ArtifactSummary]) -> Iterator[str]:
    """The `scan --json` array in pieces, a row at a time: a 50,000-artifact report never sits in memory whole.

    Compact rows keep json on its C encoder (it falls back to Python with indent): fleets have thousands.
    """
    separator = "[\n"
    for row in rows:
        yield separator + json.dumps(row.to_json())
        separator = ",\n"
    yield "[\n\n]\n" if separator == "[\n" else "\n]\n"


def write_json(
    rows: Iterable[ArtifactSummary], write: Callable[[str], object], reason: Callable[[BaseException], str]
) -> None:
    """The `scan --json` array written a row at a time, and whole even when the run stops early (a failure, Ctrl-C,
    SIGTERM, also while a write waits): its last element is then {"incomplete": true, "error": reason(exc)}, so a
    consumer can tell, and the exception goes on. Only a SIGKILL leaves the array open (no JSON parser takes it)."""
    started = False
    try:
        for piece in json_pieces(rows):
            started = True  # before the write: a write stopped midway has its text in the buffer
            write(piece)
    except (Exception, KeyboardInterrupt) as exc:
        if isinstance(exc, BrokenPipeError):
            raise  # nobody reads on
        write(("[\n" if not started else ",\n") + json.dumps({"incomplete": True, "error": reason(exc)}) + "\n]\n")
        raise


def to_json(rows: Iterable[ArtifactSummary]) -> str:
    """The `scan --json` array: every field of each row, exact integers, one compact row per line."""
    return "".join(json_pieces(rows))


def render(rows: Iterable[ArtifactSummary], fmt: str, hosts: Hosts | None = None) -> str:
    """The report in one of FORMATS (JSON has no Host field: its rows carry their full path or URL)."""
    if fmt == "csv":
        return to_csv(rows, hosts)
    if fmt == "markdown":
        return to_markdown(rows, hosts)
    if fmt == "json":
        return to_json(rows)
    raise StudioError(f"Unknown report format {fmt!r}; use one of {', '.join(FORMATS)}.")

"""Save the fleet report to a file: the format from the file's suffix, written atomically."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.fleet_report import FORMATS, Hosts, render
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
from rbln_artifact_studio.core.storage.fsutil import atomic_write_bytes, describe_os_error

SUFFIXES = {"csv": ".csv", "json": ".json", "markdown": ".md"}
FILTERS = {"csv": "CSV (*.csv)", "json": "JSON (*.json)", "markdown": "Markdown (*.md *.markdown)"}


def format_for(path: str | Path, default: str = "csv") -> str:
    """The report format a file name asks for (.csv, .json, .md or .markdown); `default` for any other suffix."""
    suffix = Path(path).suffix.lower()
    if suffix == ".markdown":
        return "markdown"
    for fmt, known in SUFFIXES.items():
        if suffix == known:
            return fmt
    if default not in FORMATS:
        raise StudioError(f"Unknown report format {default!r}; use one of {', '.join(FORMATS)}.")
    return default


def with_suffix(path: str | Path, fmt: str) -> Path:
    """The path, given the format's suffix when it has none of the known ones."""
    path = Path(path)
    return (
        path if path.suffix.lower() in (*SUFFIXES.values(), ".markdown") else path.with_name(path.name + SUFFIXES[fmt])
    )


def write_report(rows: Iterable[ArtifactSummary], path: str | Path, fmt: str, hosts: Hosts | None = None) -> Path:
    """Render the rows (their Host text from hosts where it names more than the host) and replace the file in one
    rename: a failure leaves the old file (or none), never half."""
    path = Path(path)
    data = render(list(rows), fmt, hosts).encode("utf-8")
    if not path.parent.is_dir():
        raise StudioError(f"{path.parent} is not a folder; choose where to save the report.")
    try:
        atomic_write_bytes(path, data, step="report")
    except OSError as exc:
        raise StudioError(describe_os_error(exc, f"saving the report to {path}")) from None
    return path

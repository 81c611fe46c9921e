"""A Kind around every built-in one that marks the rows it hands out: a row the desktop shows with the marks came
through the Kind of its place (its scan, then its verify for the rows the scan left "checking")."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
from rbln_artifact_studio.core.location import Location
from rbln_artifact_studio.places import dispatch
from rbln_artifact_studio.places.kind import Kind, ScanOptions

LISTED = " ·listed by its kind"
CHECKED = " ·checked by its kind"


def _marked(row: ArtifactSummary, mark: str) -> ArtifactSummary:
    return row if row.name.endswith(mark) else dataclasses.replace(row, name=row.name + mark)


class Marking:
    """The wrapped Kind's every answer, with scan's and verify's rows marked."""

    def __init__(self, inner: Kind) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def scan(self, root: Location, options: ScanOptions) -> Iterator[ArtifactSummary]:
        return (_marked(row, LISTED) for row in self.inner.scan(root, options))

    def verify(self, root: Location, rows: list[ArtifactSummary], options: ScanOptions) -> Iterator[ArtifactSummary]:
        return (_marked(row, CHECKED) for row in self.inner.verify(root, rows, options))


def marking(kind_of: Callable[..., Kind]) -> Callable[..., Kind]:
    """dispatch.kind_of, giving each Kind wrapped in Marking."""
    return lambda where, kind=None: Marking(kind_of(where, kind))


def mark_every_kind() -> None:
    """In a process of its own (the desktop's scan process): every Kind dispatch finds is marked from now on."""
    dispatch.kind_of = marking(dispatch.kind_of)

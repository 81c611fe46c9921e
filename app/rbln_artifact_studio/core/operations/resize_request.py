"""A resize as the user asked for it: built once (by the CLI or the resize dialog) and carried unchanged to the
writer of the source's kind of place (places/dispatch.py), down to the backend or the bucket's crossing."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.location import LocalFolder, Location, expect

if TYPE_CHECKING:
    from rbln_artifact_studio.core.model.budget import MemoryBudget


@dataclass(frozen=True)
class ResizeRequest:
    """A count or a budget text, in place (output None) or into a copy at output, by a backend (a BackendChoice's
    value: the core sits below the backends, and BackendChoice is a str)."""

    source: Location
    target: int | None = None
    budget_text: str | None = None
    output: Location | None = None
    backend: str = "auto"  # "auto": the tool that wrote the artifact

    @property
    def as_it_is(self) -> bool:
        """Neither a count nor a budget: the artifact keeps its count (a compile delivered to a bucket)."""
        return self.target is None and self.budget_text is None

    @cached_property
    def budget(self) -> MemoryBudget | None:
        """The budget text parsed (BudgetError for a bad one), None for a request by count; parsed once, when a
        writer first asks (a frozen dataclass keeps a cached_property in its __dict__)."""
        from rbln_artifact_studio.core.model.budget import parse_budget

        return None if self.budget_text is None else parse_budget(self.budget_text)

    @property
    def folder(self) -> Path:
        """The source's folder on this computer (for a writer here: the source is a LocalFolder)."""
        return expect(self.source, LocalFolder).path

    @property
    def output_folder(self) -> Path | None:
        """The copy's folder on this computer, None in place (for a writer here: the output is a LocalFolder)."""
        if self.output is None:
            return None
        return expect(self.output, LocalFolder).path

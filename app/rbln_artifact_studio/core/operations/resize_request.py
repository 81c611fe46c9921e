"""A resize as the user asked for it: built once (by the CLI or the resize dialog) and carried unchanged to the
writer of the source's kind of place (places/dispatch.py), down to the backend or the bucket's crossing; and what
it made (ResizeResult), here so that a writer elsewhere (a server, a bucket) names it without the local resize."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from rbln_artifact_studio.core.location import LocalFolder, Location, expect
from rbln_artifact_studio.core.model.budget import MemoryBudget, parse_budget


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


@dataclass(frozen=True)
class ResizeResult:
    """What a resize made: where, the count before and after, its warnings and what it had to copy."""

    path: Path
    previous: int
    target: int
    warnings: list[str]
    bytes_copied: int = 0
    unshared: tuple[str, ...] = ()  # files copied-on-write because another path shared them
    already_done: bool = False  # the output already held exactly this result; nothing was written

    @property
    def where(self) -> Location:
        """Where the result lives (a subclass for a resize done elsewhere says where)."""
        return LocalFolder(self.path)

    def to_json(self) -> dict[str, object]:
        return {
            "path": str(self.where),
            "previous_kvcache_num_blocks": self.previous,
            "kvcache_num_blocks": self.target,
            "warnings": self.warnings,
            "bytes_copied": self.bytes_copied,
            "unshared": list(self.unshared),
            "already_done": self.already_done,
        }

    def summary(self) -> str:
        """optimum-rbln-cli's own last line for a resize (or that a repeated copy found its result there)."""
        if self.already_done:
            return f"{self.where} already holds this copy with kvcache_num_blocks={self.target}; nothing to do"
        return f"Set kvcache_num_blocks to {self.target} for artifact at {self.where}"

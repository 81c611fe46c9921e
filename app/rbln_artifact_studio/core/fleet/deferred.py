"""A reader of real compiler graphs chosen when the first artifact that has such graphs needs it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from rbln_artifact_studio.core.estimation.estimator import GraphAllocations

GraphReader: TypeAlias = "Callable[[Path, list[Path]], dict[str, GraphAllocations]]"


class DeferredInspector:
    """Chooses the reader (which loads the backends, ~30 ms of CPU) only when a graph of the real compiler is read:
    a scan of simulator artifacts never does. Resolved once, in the process that first needs it."""

    def __init__(self, choose: Callable[[], GraphReader | None]) -> None:
        self._choose = choose
        self._chosen: tuple[GraphReader | None] | None = None

    def get(self) -> GraphReader | None:
        if self._chosen is None:
            self._chosen = (self._choose(),)
        return self._chosen[0]


def chosen(inspector: GraphReader | DeferredInspector | None) -> GraphReader | None:
    """The reader itself, choosing a deferred one now."""
    return inspector.get() if isinstance(inspector, DeferredInspector) else inspector

"""What the compile wizard's pages ask of the wizard they sit in: the model, the request the pages describe, the
first field in error, the device count's sizing, the plan and the backend that compiles.

The pages are given this at construction and never name the wizard (which names them): each asks it only once it
sits in the wizard, not while the wizard is still being built.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QWizardPage

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.core.errors import Fix
from rbln_artifact_studio.core.model.modelspec import ResolvedModel
from rbln_artifact_studio.core.simulator.compiler import CompilePlan, CompileRequest


class WizardState(Protocol):
    """The compile wizard as its pages see it (CompileWizard is one)."""

    @property
    def model(self) -> ResolvedModel | None:
        """The model read on the first page (None until it is)."""
        ...

    def request(self) -> CompileRequest | None:
        """The request the pages describe right now, or None before the model is read."""
        ...

    def input_problem(self) -> str | None:
        """The first number field whose text is not a number in range."""
        ...

    def device_sizing(self) -> tuple[str, tuple[Fix, ...]]:
        """What the Target page says about the device count, and the count to offer when the chosen one is short."""
        ...

    def plan(self) -> CompilePlan | None:
        """The plan the sizing page previewed (None while it cannot be made)."""
        ...

    def backend(self) -> BackendChoice:
        """The backend chosen on the Target page."""
        ...

    def effective_backend(self) -> BackendChoice:
        """The backend that will compile, as the Target page resolved its choice."""
        ...


class StatePage(QWizardPage):
    """A page of the compile wizard, given the wizard's state."""

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self._state = state

    def state(self) -> WizardState | None:
        """The wizard's state once this page sits in the wizard (None while the wizard is still being built)."""
        return self._state if self.wizard() is not None else None

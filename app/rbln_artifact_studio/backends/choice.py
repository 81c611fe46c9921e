"""Which backend does the work: the names `--backend` takes, the compile wizard offers and the jobs carry."""

from __future__ import annotations

from enum import Enum

from rbln_artifact_studio.core.errors import StudioError


class BackendChoice(str, Enum):
    """A backend as the user chooses it; AUTO is decided per compile or resize (see backends.registry)."""

    AUTO = "auto"
    SIM = "sim"
    OPTIMUM = "optimum"

    @classmethod
    def parse(cls, name: str) -> BackendChoice:
        try:
            return cls(name)
        except ValueError:
            raise StudioError(f"Unknown backend {name!r}; choose one of {', '.join(c.value for c in cls)}.") from None

    @property
    def label(self) -> str:
        """How the compile wizard names it."""
        return _LABELS[self]


_LABELS = {
    BackendChoice.AUTO: "Automatic: optimum-rbln-cli when installed, else the built-in simulator",
    BackendChoice.SIM: "Built-in simulator",
    BackendChoice.OPTIMUM: "optimum-rbln-cli",
}

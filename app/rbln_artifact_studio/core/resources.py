"""Where the shipped resources are (icons, model presets, the optimum-rbln config table): in the package or the checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]


@cache
def resource_dir() -> Path:
    """The resources folder: inside the package (a wheel, a bundle), else resources/ at the top of the checkout.

    A checkout keeps resources/ beside app/ (the editable install is a plain path entry to app/, with no import hook
    to map it into the package), while a wheel ships it as rbln_artifact_studio/resources."""
    for folder in (_PACKAGE / "resources", _PACKAGE.parents[1] / "resources"):
        if (folder / "model-configs").is_dir():
            return folder
    raise FileNotFoundError(
        f"the studio's resources are missing (looked in {_PACKAGE / 'resources'} and {_PACKAGE.parents[1] / 'resources'}):"
        " reinstall the package"
    )


@cache
def docs_dir() -> Path | None:
    """The user documentation (docs/): inside the package where it was shipped, else at the top of the checkout;
    None where neither has it (a wheel without it)."""
    for folder in (_PACKAGE / "docs", _PACKAGE.parents[1] / "docs"):
        if (folder / "desktop.md").is_file():
            return folder
    return None

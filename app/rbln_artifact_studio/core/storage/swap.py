"""Swap a staged folder in for an existing one with one atomic exchange (core/portable/exchange.py), when it can."""

from __future__ import annotations

import contextlib
import secrets
import shutil
from pathlib import Path

from rbln_artifact_studio.core.errors import TO_A_COPY, Remedy, ResizeError, StudioError
from rbln_artifact_studio.core.portable.exchange import exchange
from rbln_artifact_studio.core.sizes import format_bytes, format_bytes_exact
from rbln_artifact_studio.core.storage.fsutil import tree_size

__all__ = ["can_exchange", "exchange", "free_bytes", "require_exchange", "staging_room", "staging_room_problem"]


def can_exchange(parent: Path) -> bool:
    """Whether the file system under parent swaps folders atomically (tried on two empty folders there)."""
    token = secrets.token_hex(4)
    a, b = parent / f".rbln-studio-swap-a-{token}", parent / f".rbln-studio-swap-b-{token}"
    try:
        a.mkdir()
        b.mkdir()
        (a / "a").touch()
        exchange(a, b)
        return (b / "a").exists()
    except OSError:
        return False
    finally:
        shutil.rmtree(a, ignore_errors=True)
        shutil.rmtree(b, ignore_errors=True)


def require_exchange(parent: Path, what: str) -> None:
    """Refuse before any work when the swap at the end could not be atomic."""
    if not can_exchange(parent):
        raise StudioError(
            f"The file system of {parent} cannot swap folders atomically, so {what} could not guarantee the old "
            "or the new artifact after a crash",
            remedy=TO_A_COPY,
            unchanged=True,
        )


def free_bytes(folder: Path) -> int:
    with contextlib.suppress(OSError):
        return shutil.disk_usage(folder).free
    return 0


def staging_room(folder: Path) -> tuple[int, int]:
    """(bytes a staged copy of the artifact takes, bytes free on its disk) for a staged in-place resize."""
    return tree_size(folder, dereference=True), free_bytes(folder.parent)


def staging_room_problem(folder: Path, tool: str) -> ResizeError | None:
    """Why a staged in-place resize does not fit the disk, with the numbers, as the refusal to raise or show; None
    when it fits."""
    needed, free = staging_room(folder)
    if needed <= free:
        return None
    return ResizeError(
        f"Resizing {folder.name} in place through {tool} first writes the resized artifact beside it "
        f"({format_bytes_exact(needed)}) and then swaps it in, so a crash leaves the old or the new one; the "
        f"disk has {format_bytes_exact(free)} free",
        remedy=Remedy(
            f"Free {format_bytes(needed - free)} more, or resize to a copy on another disk ({{option}}).", "output"
        ),
        unchanged=True,
    )

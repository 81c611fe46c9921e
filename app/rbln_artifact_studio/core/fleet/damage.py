"""Damaged .rbln files: an empty, truncated or broken one is named as such, never taken for real-compiler output."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rbln_artifact_studio.core.simulator.container import MAGIC, PREAMBLE_SIZE, SLOT_MAGIC, ReadAt
from rbln_artifact_studio.core.status import Problem, Status


def damaged_message(file_name: str, why: str) -> str:
    """The one wording for a damaged graph file: 'damaged: FILE (why)'."""
    return f"damaged: {file_name} ({why.rstrip('.')})"


def empty_graph_problem(graph: str) -> Problem:
    return Problem(Status.INVALID, damaged_message(f"{graph}.rbln", "empty: 0 bytes; copy it again or recompile"))


def simulator_marks(path: Path) -> tuple[bool, bool]:
    """(has the container magic at 0, has a header slot's magic where the first slot starts)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(MAGIC))
            f.seek(PREAMBLE_SIZE)  # header slot 0 starts here and is never erased
            slot = f.read(len(SLOT_MAGIC))
    except OSError:
        return False, False
    return head == MAGIC, slot == SLOT_MAGIC


def damage_without_magic(path: Path) -> str | None:
    """Why a .rbln without the container magic is damaged (empty, or the simulator's slots without their
    preamble: overwritten); None when it has none of the container's marks (real-compiler output)."""
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    return _damage(size, lambda: simulator_marks(path))


def damage_read(size: int, read_at: ReadAt) -> str | None:
    """damage_without_magic for a file of `size` bytes read through read_at (a server's, from what it sent)."""
    return _damage(
        size, lambda: (read_at(len(MAGIC), 0) == MAGIC, read_at(len(SLOT_MAGIC), PREAMBLE_SIZE) == SLOT_MAGIC)
    )


def _damage(size: int, marks: Callable[[], tuple[bool, bool]]) -> str | None:
    """The damage a file of `size` bytes shows; its simulator marks are read only when it is not empty."""
    if size == 0:
        return "empty: 0 bytes; copy it again or recompile"
    magic, slot = marks()
    if not magic and slot:
        return "broken header: the simulator container's preamble was overwritten; copy it again or recompile"
    return None


def is_real_compiler_output(path: Path) -> bool:
    """A non-empty, readable .rbln with none of the simulator container's marks (one that cannot be read is
    damaged as far as anyone here can tell: the artifact reader names why)."""
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError:
        return False
    magic, _ = simulator_marks(path)
    return not magic and damage_without_magic(path) is None

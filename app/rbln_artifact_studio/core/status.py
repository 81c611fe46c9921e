"""Artifact health: ok / warning / invalid, and the problems behind it (no heavy imports: scans use it)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Status(str, Enum):
    OK = "ok"
    WARNING = "warning"
    INVALID = "invalid"
    CHECKING = "checking"  # a fast scan row whose full check (the one inspect runs) has not run yet


@dataclass(frozen=True)
class Problem:
    severity: Status
    message: str


def worst(problems: list[Problem]) -> Status:
    severities = {p.severity for p in problems}
    for status in (Status.INVALID, Status.WARNING):
        if status in severities:
            return status
    return Status.OK

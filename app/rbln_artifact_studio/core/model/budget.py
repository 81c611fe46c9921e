"""memory_budget: parse every accepted form, resolve it against an NPU, and warn about likely mistakes."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from rbln_artifact_studio.core.errors import BudgetError, StudioError
from rbln_artifact_studio.core.model.npu import Npu
from rbln_artifact_studio.core.sizes import MIB, format_bytes, parse_bytes

# ASCII digits only, and byte counts of at most 30 digits (Python will not even convert 4,300).
_INT_RE = re.compile(r"^\+?\d{1,30}$", re.ASCII)
_FLOAT_RE = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][+-]?\d+|nan|inf|infinity)$", re.IGNORECASE | re.ASCII)
_SIZE_RE = re.compile(r"^\d{1,30}(\.\d{1,30})?\s*[a-z]{1,9}$", re.IGNORECASE | re.ASCII)  # one number, one unit

MAX_DIGITS = 4000  # below Python's int-from-text limit (4,300 digits)
HOW_TO_WRITE = "Give a fraction like 0.8, a percentage like 80%, or bytes like 10GB or 512MB."
BINARY_UNITS = "10GB means 10 GiB (10 × 1,073,741,824 bytes), as optimum-rbln reads it; 512MB means 512 MiB."

EXCLUSIVE_MESSAGE = (
    "`memory_budget` and an explicit `kvcache_num_blocks` are mutually exclusive. "
    "`memory_budget` only guides automatic block estimation, which runs when `kvcache_num_blocks` is unset."
)


@dataclass(frozen=True)
class MemoryBudget:
    """A parsed memory_budget: a fraction of the NPU's available DRAM, a byte count, or unset (whole NPU)."""

    fraction: float | None = None
    nbytes: int | None = None
    text: str = ""

    @property
    def is_set(self) -> bool:
        return self.fraction is not None or self.nbytes is not None

    def bytes_per_npu(self, npu: Npu) -> int:
        """Budget in bytes on each NPU; a byte count above the NPU's available DRAM is rejected."""
        available = npu.available_per_npu
        if self.fraction is not None:
            return int(available * self.fraction)
        if self.nbytes is not None:
            if self.nbytes > available:
                raise BudgetError(
                    f"memory_budget ({self.nbytes} bytes) exceeds the target NPU's available DRAM ({available} bytes)."
                )
            return self.nbytes
        return available

    def bytes_per_chiplet(self, npu: Npu) -> int:
        """Budget each chiplet gets: the NPU budget split evenly, with no further reserve."""
        return self.bytes_per_npu(npu) // npu.chiplets

    def describe(self) -> str:
        """'0.3 (30% of available DRAM)', '10 GiB', 'unset (whole NPU)'."""
        if self.fraction is not None:
            return f"{self.fraction:g} ({self.fraction * 100:g}% of available DRAM)"
        if self.nbytes is not None:
            return f"{format_bytes(self.nbytes)} ({self.nbytes:,} bytes)"
        return "unset (whole NPU)"

    def warnings(self) -> list[str]:
        """Likely mistakes worth telling the user before they cost a compile."""
        if self.nbytes is None or self.nbytes >= MIB:
            return []
        n = self.nbytes
        if n == 1:
            return [
                "memory_budget=1 is read as 1 byte, not 100% of the NPU. "
                "Write 1.0 or 100% for the whole NPU, or a fraction like 0.8."
            ]
        if n <= 100:
            return [f"memory_budget={n} is read as {n} bytes. Did you mean {n / 100:g} or {n}%?"]
        return [f"memory_budget={n} is only {n} bytes; sizes need a unit, e.g. {n}MB or {n}GB."]


UNSET = MemoryBudget()


def _fraction(value: float, shown: str) -> MemoryBudget:
    if not (math.isfinite(value) and 0 < value <= 1):
        raise BudgetError(f"memory_budget fraction must be in (0, 1] (or (0%, 100%]), got {shown}.")
    return MemoryBudget(fraction=value, text=shown)


def _nbytes(value: int, shown: str) -> MemoryBudget:
    if value <= 0:
        raise BudgetError(f"memory_budget must be a positive number of bytes, got {shown}. {HOW_TO_WRITE}")
    return MemoryBudget(nbytes=value, text=shown)


def parse_budget(value: object) -> MemoryBudget:
    """Parse a memory_budget as given in Python, JSON or on a command line; raises BudgetError only."""
    if value is None:
        return UNSET
    if isinstance(value, bool):
        raise BudgetError(f"memory_budget cannot be a boolean ({value}). {HOW_TO_WRITE}")
    if isinstance(value, int):
        return _nbytes(value, str(value))
    if isinstance(value, float):
        return _fraction(value, repr(value))
    if not isinstance(value, str):
        raise BudgetError(f"memory_budget must be a number or a string, got {type(value).__name__}. {HOW_TO_WRITE}")
    text = value.strip()
    if not text:
        raise BudgetError(f"memory_budget is empty. Leave it unset for the whole NPU. {HOW_TO_WRITE}")
    if text.endswith("%"):
        number = text[:-1].strip()
        if not _FLOAT_RE.match(number) and not _INT_RE.match(number.lstrip("-")):
            raise BudgetError(f"Cannot read memory_budget {_shorten(value)!r} as a percentage. {HOW_TO_WRITE}")
        return _fraction(float(number) / 100, text)
    if _INT_RE.match(text):
        if len(text) > MAX_DIGITS:  # int() refuses them with a ValueError; no NPU has that many bytes anyway
            raise BudgetError(
                f"memory_budget is a {len(text):,}-digit number of bytes, more than any NPU has. {HOW_TO_WRITE}"
            )
        return _nbytes(int(text), text)
    if _FLOAT_RE.match(text):
        return _fraction(float(text), text)
    if text.startswith("-"):
        raise BudgetError(f"memory_budget must be positive, got {_shorten(text)}. {HOW_TO_WRITE}")
    try:
        if not _SIZE_RE.match(text):
            raise ValueError(text)
        nbytes = parse_bytes(text)
    except (ValueError, OverflowError):
        raise BudgetError(f"Cannot read memory_budget {_shorten(value)!r}. {HOW_TO_WRITE}") from None
    return _nbytes(nbytes, text)


def _shorten(text: str, limit: int = 40) -> str:
    """A value as quoted in a message: long input must not make a screen-long error line."""
    return text if len(text) <= limit else text[:limit] + "..."


def with_budget_warnings(exc: StudioError, budget: MemoryBudget) -> StudioError:
    """Put the budget's likely-mistake warnings into an error's hint: `1` failing as one byte must say so."""
    notes = budget.warnings()
    if notes:
        exc.hint = " ".join([*notes, exc.hint or ""]).strip()
    return exc


def check_exclusive(budget: MemoryBudget, kvcache_num_blocks: int | None) -> None:
    """An explicit block count skips estimation, so a budget beside it would be silently ignored."""
    if budget.is_set and kvcache_num_blocks:
        raise BudgetError(EXCLUSIVE_MESSAGE)

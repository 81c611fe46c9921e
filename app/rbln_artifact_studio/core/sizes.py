"""Byte counts for people: humanfriendly's binary units (the ecosystem's 'GB' means GiB)."""

from __future__ import annotations

from types import ModuleType

MIB = 1 << 20
ALIGN = 2 * MIB


def align_2mib(nbytes: int) -> int:
    """Round a DRAM allocation up to the 2 MiB granularity the NPU allocator uses."""
    return -(-nbytes // ALIGN) * ALIGN


def _humanfriendly() -> ModuleType:
    """humanfriendly, loaded with the first size formatted or parsed or count pluralized."""
    # The GUI's window modules show sizes, but its first sizes are worked out in a worker, so the window paints
    # without it (tests/gui/test_gui_startup.py).
    # deferred: humanfriendly (~10-20 ms), a third-party library, loaded with the first size formatted
    import humanfriendly

    return humanfriendly


def pluralize(count: int, singular: str) -> str:
    """'1 block', '21 blocks': humanfriendly's words for a count."""
    return str(_humanfriendly().text.pluralize(count, singular))


def format_bytes(nbytes: int) -> str:
    """'15.72 GiB', '-288 MiB': binary units, two decimals at most."""
    if abs(nbytes) >= 1 << 100:  # beyond any disk; humanfriendly would overflow converting it to float
        return f"{'-' if nbytes < 0 else ''}more than 2^100 bytes"
    text = _humanfriendly().format_size(abs(nbytes), binary=True)
    return f"-{text}" if nbytes < 0 else text


def format_bytes_exact(nbytes: int) -> str:
    """'16,877,879,296 B (15.72 GiB)': exact count first, for tooltips and reports."""
    return f"{nbytes:,} B ({format_bytes(nbytes)})"


def parse_bytes(text: str) -> int:
    """'10GB', '512 MiB', '1tb' -> bytes (binary units); raises ValueError on anything else."""
    humanfriendly = _humanfriendly()
    try:
        return int(humanfriendly.parse_size(text, binary=True))
    except humanfriendly.InvalidSize as exc:
        raise ValueError(str(exc)) from None

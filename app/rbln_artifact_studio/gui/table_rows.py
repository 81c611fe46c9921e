"""A table row with its cell texts and sort keys prepared where the row is read (Qt-free: the scan process makes
them, the window only looks them up)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rbln_artifact_studio.core.fleet.columns import COLUMNS
from rbln_artifact_studio.core.location import host_of

if TYPE_CHECKING:
    from rbln_artifact_studio.core.fleet.scan import ArtifactSummary


class TableRow:
    """One summary with its cell texts and sort keys worked out once (in the scan worker), so data() is a lookup."""

    __slots__ = ("keys", "search", "summary", "texts")

    def __init__(self, summary: ArtifactSummary, texts: tuple[str, ...], keys: tuple[object, ...], search: str):
        self.summary, self.texts, self.keys, self.search = summary, texts, keys, search

    @classmethod
    def of(cls, s: ArtifactSummary) -> TableRow:
        values = [c.value(s) for c in COLUMNS]
        texts = tuple(c.text(s) if v is None else c.readable(v) for c, v in zip(COLUMNS, values, strict=True))
        keys = tuple(
            (-1 if c.numeric else "") if v is None else (v if c.numeric else str(v).lower())
            for c, v in zip(COLUMNS, values, strict=True)
        )
        target = f"{s.npu} x{s.num_devices}" if s.npu else None  # as the CLI prints targets: "RBLN-CA25 x4"
        search = " ".join(
            str(v) for v in (s.name, host_of(s.path), s.model, target, s.attn_impl, s.status.value, s.kind) if v
        )
        return cls(s, texts, keys, search)

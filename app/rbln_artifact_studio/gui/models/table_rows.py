"""A table row with its cell texts and sort keys prepared where the row is read (Qt-free: the scan process makes
them, the window only looks them up)."""

from __future__ import annotations

from typing import NamedTuple

from rbln_artifact_studio.core.display.matching import folded
from rbln_artifact_studio.core.fleet.columns import COLUMNS, row_host
from rbln_artifact_studio.core.fleet.summary import ArtifactSummary, row_values
from rbln_artifact_studio.core.status import Status

_STATUS, _PROBLEMS = 2, 3  # positions in ArtifactSummary's fields


class TableRow(NamedTuple):
    """One summary with its cell texts and sort keys worked out once (in the scan process), so data() is a lookup.

    Tuples of strings and numbers only, the summary's fields too (its status by value, its problems a tuple): the
    garbage collector stops tracking such tuples after their first pass, so a table of 50,000 rows adds one tracked
    object a row (this tuple) to what its full passes walk, not five, and a batch unpickles as plain tuples.
    """

    fields: tuple[object, ...]  # ArtifactSummary's field values, in order
    texts: tuple[str, ...]
    keys: tuple[object, ...]
    search: str

    @property
    def path(self) -> str:
        return str(self.fields[0])

    @property
    def status(self) -> Status:
        return Status(self.fields[_STATUS])

    @property
    def summary(self) -> ArtifactSummary:
        """The row's ArtifactSummary, made anew on each call (for details, tooltips, exports: not per painted cell)."""
        values = list(self.fields)
        values[_STATUS], values[_PROBLEMS] = self.status, list(values[_PROBLEMS])  # type: ignore[call-overload]  # fields are typed object; this one is the problems tuple
        return ArtifactSummary(*values)  # type: ignore[arg-type]  # the values are the summary's own fields, in order

    @classmethod
    def of(cls, s: ArtifactSummary) -> TableRow:
        values = [c.value(s) for c in COLUMNS]
        texts = tuple(c.text(s) if v is None else c.readable(v) for c, v in zip(COLUMNS, values, strict=True))
        keys = tuple(
            (-1 if c.numeric else "") if v is None else (v if c.numeric else str(v).lower())
            for c, v in zip(COLUMNS, values, strict=True)
        )
        target = f"{s.npu} x{s.num_devices}" if s.npu else None  # as the CLI prints targets: "RBLN-CA25 x4"
        search = folded(
            " ".join(str(v) for v in (s.name, row_host(s), s.model, target, s.attn_impl, s.status.value, s.kind) if v)
        )  # folded once here; the filter folds its text the same way (core/display/matching.py)
        fields = list(row_values(s))  # the fields in order (its __dict__ may also hold the parsed `where`)
        fields[_STATUS], fields[_PROBLEMS] = s.status.value, tuple(s.problems)
        return cls(tuple(fields), texts, keys, search)

"""Keep the garbage collector's full passes short while a table of tens of thousands of rows fills.

Each table row is a few objects the collector tracks, and a full pass walks every tracked object while it holds
the interpreter lock: at 40,000 rows one took 60-120 ms here (on the GUI thread or in the scan worker, stalling
the GUI either way). The rows live as long as the folder is open, so as the table takes them they are moved out of
the collector's sight (gc.freeze, as rbln_artifact_studio.gui.main does for start-up objects) every FIRST_FREEZE rows
(new ones, or verdicts replacing them): what the full passes walk stays bounded by that step and what the scan job
holds beside it (its scan cache), not by the table. Each freeze is a young-generation collection (so fresh garbage
is not frozen) and a list splice, ~n/4,000 per scan. The price: an object alive at a freeze that later ends up in
a reference cycle is never collected (rows and their texts hold no cycles; refcounting frees them as ever).
"""

from __future__ import annotations

import gc

FIRST_FREEZE = 4000  # rows between two freezes: a full pass over this many costs a few milliseconds


class LongLivedRows:
    """Told how many rows the table has taken after each batch (new rows and rows replacing others); freezes what is
    alive when that has grown enough."""

    def __init__(self, first: int | None = None) -> None:
        self.first = FIRST_FREEZE if first is None else first
        self.frozen_at = 0

    def grown_to(self, rows: int) -> bool:
        """True when this call froze."""
        if rows < self.frozen_at + self.first:
            return False
        gc.collect(1)
        gc.freeze()
        self.frozen_at = rows
        return True

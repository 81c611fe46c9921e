"""Keep the garbage collector's full passes short while a table of tens of thousands of rows fills.

Each table row is a few objects the collector tracks, and a full pass walks every tracked object while it holds
the interpreter lock: at 40,000 rows one took 60-120 ms here (on the GUI thread or in the scan worker, stalling
the GUI either way). The rows live as long as the folder is open, so as the table grows they are moved out of the
collector's sight (gc.freeze, as rbln_artifact_studio.gui.main does for start-up objects) each time it has grown
by a quarter: O(log n) freezes per scan, each a young-generation collection (so fresh garbage is not frozen) and
a list splice. The price: an object alive at a freeze that later ends up in a reference cycle is never collected
(a scan job's worth per freeze), against full passes that no longer grow with the table.
"""

from __future__ import annotations

import gc

FIRST_FREEZE = 4000  # below this, a full pass over the rows costs a few milliseconds: nothing to do


class LongLivedRows:
    """Told the table's size after each batch; freezes what is alive when it has grown enough."""

    def __init__(self, first: int | None = None) -> None:
        self.first = FIRST_FREEZE if first is None else first
        self.frozen_at = 0

    def grown_to(self, rows: int) -> bool:
        """True when this call froze."""
        if rows < max(self.first, self.frozen_at + self.frozen_at // 4):
            return False
        gc.collect(1)
        gc.freeze()
        self.frozen_at = rows
        return True

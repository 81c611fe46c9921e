"""Row 3: `scan ROOT --json` when nothing changed since the last scan (the cache) against the same minimal walker."""

from __future__ import annotations

import sys

from _scan import measure

if __name__ == "__main__":
    sys.exit(measure("warm", __doc__))

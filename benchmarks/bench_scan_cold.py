"""Row 2: `scan ROOT --json --no-cache` over 5,000 Qwen3-8B-sized artifacts against a walker that json.loads each config."""

from __future__ import annotations

import sys

from _scan import measure

if __name__ == "__main__":
    sys.exit(measure("cold", __doc__))

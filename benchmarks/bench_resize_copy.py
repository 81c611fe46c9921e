"""Row 5: resize to a copy of an artifact with a ~4 GiB payload against `cp -r` of the same folder, and progress rate.

Our copy is durable before it is published (every file fsynced, then one rename): `cp -r` leaves its data in
the page cache for the kernel to write later. So row 5's baseline is `cp -r` followed by `sync` of the copied
files (the same data on disk), printed last; `cp -r` alone is printed for reference. `sync` runs untimed before
every action, so no round pays for the previous round's write-back.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import compile_payload_pair, interleave, machine, report, require_space, scratch

from rbln_artifact_studio.core.model.rbln_config import load_config
from rbln_artifact_studio.core.operations.resize import resize_to_copy
from rbln_artifact_studio.core.progress import Progress


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    require_space(Path(tempfile.gettempdir()), 10 * 2**30)
    with scratch("copy") as root:
        heavy, _ = compile_payload_pair(root)
        target = load_config(heavy).model.kvcache_num_blocks - 1
        out = root / "out"
        gaps: list[float] = []
        updates: list[int] = []

        def fresh() -> None:
            shutil.rmtree(out, ignore_errors=True)
            subprocess.run(["sync"], check=True)

        def ours() -> None:
            ticks = [time.perf_counter()]
            resize_to_copy(
                heavy, out, target, progress=Progress(lambda done, total, msg: ticks.append(time.perf_counter()))
            )
            ticks.append(time.perf_counter())
            gaps.append(max(b - a for a, b in itertools.pairwise(ticks)))
            updates.append(len(ticks) - 2)

        def cp() -> None:
            subprocess.run(["cp", "-r", str(heavy), str(out)], check=True)

        def cp_sync() -> None:
            cp()
            subprocess.run(["sync", *map(str, out.iterdir()), str(out)], check=True)

        times = interleave(
            {"ours": ours, "cp": cp, "cp+sync": cp_sync},
            args.runs,
            before_each={"ours": fresh, "cp": fresh, "cp+sync": fresh},
        )
        fresh()
        print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        size = sum(p.stat().st_size for p in heavy.iterdir())
        print(f"{size / 2**30:.2f} GiB per copy; {updates[-1]} progress updates per copy")
        print(
            f"longest gap between progress updates: median {statistics.median(gaps) * 1000:.0f} ms, "
            f"worst {max(gaps) * 1000:.0f} ms over {len(gaps)} copies (goal <= 500 ms)"
        )
        report("resize to a copy vs cp -r alone (its data still in the page cache)", times["ours"], times["cp"], 1.05)
        report("resize to a copy vs cp -r && sync of the copy (row 5)", times["ours"], times["cp+sync"], 1.05)
    return 0


if __name__ == "__main__":
    sys.exit(main())

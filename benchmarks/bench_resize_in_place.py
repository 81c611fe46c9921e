"""Row 4: resize in place of an artifact with a ~4 GiB weights payload against the same resize of a metadata-only one."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _common import compile_payload_pair, interleave, machine, report, require_space, scratch

from rbln_artifact_studio.core.model.rbln_config import load_config
from rbln_artifact_studio.core.operations.resize import resize_in_place


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    print(machine())
    require_space(Path(tempfile.gettempdir()), 5 * 2**30)
    with scratch("inplace") as root:
        heavy, light = compile_payload_pair(root)
        size = sum(p.stat().st_size for p in heavy.iterdir())
        print(
            f"artifact with weights: {size / 2**30:.2f} GiB on disk; metadata-only: "
            f"{sum(p.stat().st_size for p in light.iterdir()) / 2**20:.2f} MiB"
        )
        blocks = {a: load_config(a).model.kvcache_num_blocks for a in (heavy, light)}
        assert blocks[heavy] == blocks[light]
        start = blocks[heavy]
        flip = {a: [start - 1, start] for a in (heavy, light)}  # each round changes the count (a real rewrite)

        def resize(artifact: Path) -> None:
            target = flip[artifact].pop(0)
            flip[artifact].append(target)
            result = resize_in_place(artifact, target)
            assert result.target == target

        times = interleave({"payload": lambda: resize(heavy), "metadata": lambda: resize(light)}, args.runs, warmup=2)
        report("resize in place, ~4 GiB payload vs metadata only (row 4)", times["payload"], times["metadata"], 1.1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

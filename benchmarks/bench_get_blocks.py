"""Row 1: `rbln-studio-cli get-kvcache-num-blocks DIR`, whole process, against the one-liner the seed document uses."""

from __future__ import annotations

import argparse
import sys

from _common import cli, compile_reference, interleave, machine, python, report, run, scratch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    print(machine())
    with scratch("get") as root:
        artifact = compile_reference(root / "qwen3-8b")
        one_liner = f"import json; print(json.load(open({str(artifact / 'rbln_config.json')!r}))['kvcache_num_blocks'])"
        times = interleave(
            {
                "ours": run([*cli(), "get-kvcache-num-blocks", str(artifact)]),
                "baseline": run([python(), "-c", one_liner]),
            },
            args.runs,
            warmup=3,
        )
        report("get-kvcache-num-blocks, whole process (row 1)", times["ours"], times["baseline"], 1.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())

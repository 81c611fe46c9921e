"""Row 1 against another checkout: `get-kvcache-num-blocks DIR` of this checkout and of OLD, side by side.

    .venv/bin/python benchmarks/bench_get_blocks_against.py OLD_PARENT

OLD_PARENT is a folder whose `rbln_artifact_studio` is the other checkout's package (for a checkout from before the
`app/rbln_artifact_studio/` layout, a symlink named rbln_artifact_studio to its `app/`). Interleaved rounds, the CPU
time of each child process (user + system), medians; the seed's one-liner as the common baseline. Prints both ratios.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GET = "from rbln_artifact_studio.cli.main import main; main(['get-kvcache-num-blocks', {d!r}])"
ONE_LINER = "import json; print(json.load(open({c!r}))['kvcache_num_blocks'])"


def child_cpu(argv: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old_parent", type=Path)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "app"))
    from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "qwen3-8b"
        write_artifact(plan_compile(CompileRequest("Qwen/Qwen3-8B", npu="RBLN-CR13", memory_budget=0.3)), folder)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode, as installed
        runs = {
            "this checkout": ([sys.executable, "-c", GET.format(d=str(folder))], str(REPO / "app")),
            "old checkout": ([sys.executable, "-c", GET.format(d=str(folder))], str(args.old_parent)),
            "one-liner": ([sys.executable, "-c", ONE_LINER.format(c=str(folder / "rbln_config.json"))], ""),
        }
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        for r in range(args.rounds):
            order = list(runs) if r % 2 else list(reversed(runs))  # the order flipped every round
            for name in order:
                argv, path = runs[name]
                cpu[name].append(child_cpu(argv, {**env, "PYTHONPATH": path}))
    median = {name: statistics.median(v) * 1000 for name, v in cpu.items()}
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load average {load}; {args.rounds} interleaved rounds")
    for name, ms in median.items():
        print(f"  {name:14s} CPU median {ms:6.1f} ms")
    print(f"old checkout / one-liner {median['old checkout'] / median['one-liner']:.2f}")
    print(f"ratio {median['this checkout'] / median['one-liner']:.2f} (this checkout / one-liner, CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
